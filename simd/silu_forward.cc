// SiLU in place per target (simd/silu_forward.h): the sigmoid in blocks through a buffer in the
// cache (the math kernel's own evaluation, on this thread), then the products.
#include "simd/silu_forward.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/silu_forward.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "simd/contract-inl.h"
#include "simd/math.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void SiluInPlaceTarget(float* v, float* sigmoid_out, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  constexpr size_t kBlock = 1024;
  HWY_ALIGN float buffer[kBlock];
  for (size_t p0 = 0; p0 < n; p0 += kBlock) {
    const size_t len = n - p0 < kBlock ? n - p0 : kBlock;
    float* const run = v + p0;
    float* const s = sigmoid_out != nullptr ? sigmoid_out + p0 : buffer;
    MathOnThisThread(MathFn::kSigmoid, run, s, len);
    size_t p = 0;
    for (; p + N <= len; p += N) {
      hn::StoreU(Canonicalize(d, hn::Mul(hn::LoadU(d, run + p), hn::LoadU(d, s + p))), d, run + p);
    }
    for (; p < len; ++p) run[p] = CanonicalScalar(run[p] * s[p]);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lockstep {
namespace simd {

HWY_EXPORT(SiluInPlaceTarget);

void SiluInPlace(float* v, float* sigmoid_out, size_t n) { HWY_DYNAMIC_DISPATCH(SiluInPlaceTarget)(v, sigmoid_out, n); }

}  // namespace simd
}  // namespace lockstep
#endif  // HWY_ONCE
