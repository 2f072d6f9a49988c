// The SiLU gradient per target (simd/silu_backward.h): each element's operations in the
// definition's order, NaN canonical at the end (every step propagates a NaN, so the composed
// steps' canonical NaNs come out the same).
#include "simd/silu_backward.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/silu_backward.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "simd/contract-inl.h"
#include "simd/thread_pool.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void SiluBackwardTarget(const float* x, const float* s, const float* g, float* out, size_t n) {
  constexpr size_t kChunk = size_t{1} << 15;  // as the elementwise kernels: worth a task
  ForEachChunk(n, kChunk, [&](size_t first, size_t count) {
    const hn::ScalableTag<float> df;
    const size_t N = hn::Lanes(df);
    const auto one = hn::Set(df, 1.0f);
    size_t i = first;
    const size_t end = first + count;
    for (; i + N <= end; i += N) {
      const auto vx = hn::LoadU(df, x + i), vs = hn::LoadU(df, s + i), vg = hn::LoadU(df, g + i);
      const auto sigmoid_part = hn::Mul(hn::Mul(hn::Mul(vg, vx), hn::Add(hn::Neg(vs), one)), vs);
      hn::StoreU(Canonicalize(df, hn::Add(hn::Mul(vg, vs), sigmoid_part)), df, out + i);
    }
    for (; i < end; ++i) {
      const float sigmoid_part = ((g[i] * x[i]) * (-s[i] + 1.0f)) * s[i];
      out[i] = CanonicalScalar(g[i] * s[i] + sigmoid_part);
    }
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lockstep {
namespace simd {

HWY_EXPORT(SiluBackwardTarget);

void SiluBackward(const float* x, const float* s, const float* g, float* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(SiluBackwardTarget)(x, s, g, out, n);
}

}  // namespace simd
}  // namespace lockstep
#endif  // HWY_ONCE
