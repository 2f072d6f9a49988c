// The SiLU gradient per target (simd/silu_backward.h): each element's operations in the
// definition's order, NaN canonical at the end (every step propagates a NaN, so the composed
// steps' canonical NaNs come out the same).
#include "simd/silu_backward.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/silu_backward.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "simd/contract-inl.h"
#include "simd/elementwise-inl.h"
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
    size_t i = first;
    const size_t end = first + count;
    for (; i + N <= end; i += N) {
      hn::StoreU(SiluGradientFn()(df, hn::LoadU(df, x + i), hn::LoadU(df, s + i), hn::LoadU(df, g + i)), df, out + i);
    }
    for (; i < end; ++i) out[i] = SiluGradientScalar(x[i], s[i], g[i]);
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
