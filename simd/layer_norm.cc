// LayerNorm rows (simd/layer_norm.h): per target, the elementwise steps in registers, the sums by
// the canonical block sum of simd/reduce-inl.h over a row kept in an L1 buffer.
#include "simd/layer_norm.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/layer_norm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "simd/contract-inl.h"
#include "simd/reduce-inl.h"

#include <vector>

#include "simd/math.h"
#include "simd/thread_pool.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace {

// Rows per task and per rsqrt call: the rows' variances are gathered, then one Math call.
constexpr size_t kRowBlock = 64;

// The canonical sum of a row (NaN canonical) divided by d: SumAxis, then a division.
HWY_INLINE float RowMean(const float* row, size_t d) {
  return CanonicalScalar(SumContiguous(row, d)) / static_cast<float>(d);
}

}  // namespace

void LayerNormRowsTarget(const float* x, const float* weight, const float* bias, float eps, size_t rows, size_t d,
                         float* xhat, float* rstd, float* out) {
  const hn::ScalableTag<float> df;
  const size_t N = hn::Lanes(df);
  ForEachChunk(rows, kRowBlock, [&](size_t first, size_t count) {
    thread_local std::vector<float> squares;
    squares.resize(d);
    float* sq = squares.data();
    for (size_t r0 = first; r0 < first + count; r0 += kRowBlock) {
      const size_t block = first + count - r0 < kRowBlock ? first + count - r0 : kRowBlock;
      float means[kRowBlock];
      for (size_t r = 0; r < block; ++r) {
        const float* row = x + (r0 + r) * d;
        const float mean = RowMean(row, d);
        means[r] = mean;
        const auto vm = hn::Set(df, mean);
        size_t j = 0;
        for (; j + N <= d; j += N) {
          const auto c = hn::Sub(hn::LoadU(df, row + j), vm);
          hn::StoreU(hn::Mul(c, c), df, sq + j);
        }
        for (; j < d; ++j) {
          const float c = row[j] - mean;
          sq[j] = c * c;
        }
        rstd[r0 + r] = RowMean(sq, d) + eps;
      }
      Math(MathFn::kRsqrt, rstd + r0, rstd + r0, block);
      for (size_t r = 0; r < block; ++r) {
        const float* row = x + (r0 + r) * d;
        float* xh = xhat + (r0 + r) * d;
        float* o = out + (r0 + r) * d;
        const auto vm = hn::Set(df, means[r]), vr = hn::Set(df, rstd[r0 + r]);
        size_t j = 0;
        for (; j + N <= d; j += N) {
          const auto v = hn::Mul(hn::Sub(hn::LoadU(df, row + j), vm), vr);
          hn::StoreU(Canonicalize(df, v), df, xh + j);
          auto y = weight != nullptr ? hn::Mul(v, hn::LoadU(df, weight + j)) : v;
          if (bias != nullptr) y = hn::Add(y, hn::LoadU(df, bias + j));
          hn::StoreU(Canonicalize(df, y), df, o + j);
        }
        for (; j < d; ++j) {
          const float v = (row[j] - means[r]) * rstd[r0 + r];
          float y = weight != nullptr ? v * weight[j] : v;
          if (bias != nullptr) y = y + bias[j];
          xh[j] = CanonicalScalar(v);
          o[j] = CanonicalScalar(y);
        }
      }
    }
  });
}

void LayerNormRowsBackwardTarget(const float* g, const float* weight, const float* xhat, const float* rstd,
                                 size_t rows, size_t d, float* dx) {
  const hn::ScalableTag<float> df;
  const size_t N = hn::Lanes(df);
  ForEachChunk(rows, kRowBlock, [&](size_t first, size_t count) {
    thread_local std::vector<float> buffers;
    buffers.resize(2 * d);
    float* dxhat = buffers.data();
    float* prod = dxhat + d;
    for (size_t r = first; r < first + count; ++r) {
      const float* gr = g + r * d;
      const float* xr = xhat + r * d;
      size_t j = 0;
      for (; j + N <= d; j += N) {
        const auto gv = hn::LoadU(df, gr + j);
        const auto dh = weight != nullptr ? hn::Mul(gv, hn::LoadU(df, weight + j)) : gv;
        hn::StoreU(dh, df, dxhat + j);
        hn::StoreU(hn::Mul(dh, hn::LoadU(df, xr + j)), df, prod + j);
      }
      for (; j < d; ++j) {
        dxhat[j] = weight != nullptr ? gr[j] * weight[j] : gr[j];
        prod[j] = dxhat[j] * xr[j];
      }
      const float m1 = RowMean(dxhat, d), m2 = RowMean(prod, d);
      const auto v1 = hn::Set(df, m1), v2 = hn::Set(df, m2), vr = hn::Set(df, rstd[r]);
      float* out = dx + r * d;
      j = 0;
      for (; j + N <= d; j += N) {
        const auto centered = hn::Sub(hn::LoadU(df, dxhat + j), v1);
        const auto projected = hn::Mul(hn::LoadU(df, xr + j), v2);
        hn::StoreU(Canonicalize(df, hn::Mul(hn::Sub(centered, projected), vr)), df, out + j);
      }
      for (; j < d; ++j) out[j] = CanonicalScalar(((dxhat[j] - m1) - xr[j] * m2) * rstd[r]);
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

HWY_EXPORT(LayerNormRowsTarget);
HWY_EXPORT(LayerNormRowsBackwardTarget);

void LayerNormRows(const float* x, const float* weight, const float* bias, float eps, size_t rows, size_t d,
                   float* xhat, float* rstd, float* out) {
  if (rows == 0 || d == 0) return;
  HWY_DYNAMIC_DISPATCH(LayerNormRowsTarget)(x, weight, bias, eps, rows, d, xhat, rstd, out);
}

void LayerNormRowsBackward(const float* g, const float* weight, const float* xhat, const float* rstd, size_t rows,
                           size_t d, float* dx) {
  if (rows == 0 || d == 0) return;
  HWY_DYNAMIC_DISPATCH(LayerNormRowsBackwardTarget)(g, weight, xhat, rstd, rows, d, dx);
}

}  // namespace simd
}  // namespace lockstep
#endif  // HWY_ONCE
