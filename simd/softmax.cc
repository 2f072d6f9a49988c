// Softmax rows (simd/softmax.h) per target: blocks of rows, so that one exp call serves many short
// rows (an attention row has 64 values; six kernel calls per row cost more than the arithmetic),
// each row's max and sum by the same per-target reductions as MaxAxis and SumAxis.
#include "simd/softmax.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/softmax.cc"
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

// Elements per block of rows: a block's shifted values and exponentials stay in L1, and its exp
// call stays below the math kernel's thread-pool threshold (blocks run as pool tasks).
constexpr size_t kBlockElements = 4096;

// out = canonical(a op s) over n elements, op subtraction or division.
template <bool kDivide>
HWY_INLINE void RowScalar(const float* a, float s, float* out, size_t n) {
  const hn::ScalableTag<float> df;
  const size_t N = hn::Lanes(df);
  const auto vs = hn::Set(df, s);
  size_t j = 0;
  for (; j + N <= n; j += N) {
    const auto v = hn::LoadU(df, a + j);
    hn::StoreU(Canonicalize(df, kDivide ? hn::Div(v, vs) : hn::Sub(v, vs)), df, out + j);
  }
  for (; j < n; ++j) out[j] = CanonicalScalar(kDivide ? a[j] / s : a[j] - s);
}

template <bool kLog>
void SoftmaxRows(const float* x, size_t rows, size_t cols, float* out) {
  const size_t block_rows = cols >= kBlockElements ? 1 : kBlockElements / cols;
  auto run = [&](size_t first, size_t count) {
    thread_local std::vector<float> scratch;
    scratch.resize(2 * block_rows * cols + 2 * block_rows);
    float* shifted_scratch = scratch.data();
    float* exps = shifted_scratch + block_rows * cols;
    float* maxes = exps + block_rows * cols;
    float* totals = maxes + block_rows;
    for (size_t r0 = first; r0 < first + count; r0 += block_rows) {
      const size_t block = first + count - r0 < block_rows ? first + count - r0 : block_rows;
      // log-softmax keeps s = x - m in its output; softmax needs it only for exp.
      float* shifted = kLog ? out + r0 * cols : shifted_scratch;
      for (size_t r = 0; r < block; ++r) {
        ExtremeSlice<true>(x + (r0 + r) * cols, cols, 1, &maxes[r]);
        RowScalar<false>(x + (r0 + r) * cols, maxes[r], shifted + r * cols, cols);
      }
      Math(MathFn::kExp, shifted, exps, block * cols);
      for (size_t r = 0; r < block; ++r) totals[r] = CanonicalScalar(SumContiguous(exps + r * cols, cols));
      if (kLog) {
        Math(MathFn::kLog, totals, totals, block);
        for (size_t r = 0; r < block; ++r) RowScalar<false>(shifted + r * cols, totals[r], shifted + r * cols, cols);
      } else {
        for (size_t r = 0; r < block; ++r) RowScalar<true>(exps + r * cols, totals[r], out + (r0 + r) * cols, cols);
      }
    }
  };
  if (cols >= kBlockElements) {
    run(0, rows);  // one row at a time; the exp call of a long row may use the pool itself
  } else {
    ForEachChunk(rows, block_rows, run);
  }
}

}  // namespace

void SoftmaxTarget(const float* x, size_t rows, size_t cols, float* out) { SoftmaxRows<false>(x, rows, cols, out); }
void LogSoftmaxTarget(const float* x, size_t rows, size_t cols, float* out) { SoftmaxRows<true>(x, rows, cols, out); }

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lockstep {
namespace simd {

HWY_EXPORT(SoftmaxTarget);
HWY_EXPORT(LogSoftmaxTarget);

void Softmax(const float* x, size_t rows, size_t cols, float* out) {
  if (rows == 0 || cols == 0) return;
  HWY_DYNAMIC_DISPATCH(SoftmaxTarget)(x, rows, cols, out);
}

void LogSoftmax(const float* x, size_t rows, size_t cols, float* out) {
  if (rows == 0 || cols == 0) return;
  HWY_DYNAMIC_DISPATCH(LogSoftmaxTarget)(x, rows, cols, out);
}

}  // namespace simd
}  // namespace lockstep
#endif  // HWY_ONCE
