// The GELU (erf) gradient per target over L1 chunks: one pass forms both function arguments, the
// correctly rounded erf and exp run over the chunk, one pass combines. Each operation is the
// definition's (simd/gelu_backward.h), in its order, so the bits are those of its eleven steps.
#include "simd/gelu_backward.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/gelu_backward.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "simd/contract-inl.h"

#include <vector>

#include "simd/math.h"
#include "simd/thread_pool.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void GeluErfBackwardTarget(const float* x, const float* g, float* out, size_t n) {
  // Chunks of 2048 (two 8 KiB buffers stay in L1), each call below the math kernel's thread-pool
  // threshold; the chunks themselves are spread over the pool.
  constexpr size_t kChunk = 2048;
  ForEachChunk(n, kChunk, [&](size_t first, size_t count) {
    const hn::ScalableTag<float> df;
    const size_t N = hn::Lanes(df);
    thread_local std::vector<float> buffers;
    buffers.resize(2 * kChunk);
    for (size_t at = first; at < first + count; at += kChunk) {
      const size_t m = first + count - at < kChunk ? first + count - at : kChunk;
      const float* xs = x + at;
      float* cdf = buffers.data();
      float* pdf = cdf + kChunk;
      // cdf = x * (1/sqrt 2);  pdf = (x * x) * -0.5
      size_t i = 0;
      for (; i + N <= m; i += N) {
        const auto v = hn::LoadU(df, xs + i);
        hn::StoreU(hn::Mul(v, hn::Set(df, kGeluInvSqrt2)), df, cdf + i);
        hn::StoreU(hn::Mul(hn::Mul(v, v), hn::Set(df, -0.5f)), df, pdf + i);
      }
      for (; i < m; ++i) {
        cdf[i] = xs[i] * kGeluInvSqrt2;
        pdf[i] = (xs[i] * xs[i]) * -0.5f;
      }
      Math(MathFn::kErf, cdf, cdf, m);
      Math(MathFn::kExp, pdf, pdf, m);
      // out = g * ((erf + 1) * 0.5 + x * (exp * (1/sqrt(2 pi))))
      i = 0;
      for (; i + N <= m; i += N) {
        const auto c = hn::Mul(hn::Add(hn::LoadU(df, cdf + i), hn::Set(df, 1.0f)), hn::Set(df, 0.5f));
        const auto p = hn::Mul(hn::LoadU(df, xs + i), hn::Mul(hn::LoadU(df, pdf + i), hn::Set(df, kGeluInvSqrt2Pi)));
        hn::StoreU(Canonicalize(df, hn::Mul(hn::LoadU(df, g + at + i), hn::Add(c, p))), df, out + at + i);
      }
      for (; i < m; ++i) {
        const float c = (cdf[i] + 1.0f) * 0.5f, p = xs[i] * (pdf[i] * kGeluInvSqrt2Pi);
        out[at + i] = CanonicalScalar(g[at + i] * (c + p));
      }
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

HWY_EXPORT(GeluErfBackwardTarget);

void GeluErfBackward(const float* x, const float* g, float* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(GeluErfBackwardTarget)(x, g, out, n);
}

}  // namespace simd
}  // namespace lockstep
#endif  // HWY_ONCE
