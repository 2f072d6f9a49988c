// Dispatch for the reduction family, and the reductions built from the dispatched ones.
#include "simd/reduce.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/reduce.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "simd/reduce-inl.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {

void SumAxisTarget(const float* x, size_t outer, size_t len, size_t inner, float* out) {
  SumAxisImpl(x, outer, len, inner, out);
}
void MaxAxisTarget(const float* x, size_t outer, size_t len, size_t inner, float* out) {
  ExtremeAxisImpl<true>(x, outer, len, inner, out);
}
void MinAxisTarget(const float* x, size_t outer, size_t len, size_t inner, float* out) {
  ExtremeAxisImpl<false>(x, outer, len, inner, out);
}

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <string.h>

#include <vector>

#include "simd/elementwise.h"
#include "simd/thread_pool.h"

namespace lockstep {
namespace simd {

HWY_EXPORT(SumAxisTarget);
HWY_EXPORT(MaxAxisTarget);
HWY_EXPORT(MinAxisTarget);

float Sum(const float* x, size_t n) {
  float out;
  SumAxis(x, 1, n, 1, &out);
  return out;
}

void SumAxis(const float* x, size_t outer, size_t len, size_t inner, float* out) {
  // Each outer slice is its own sums, so groups of slices run on the thread pool.
  const size_t slice = len * inner;
  ForEachItemChunk(outer, slice, [&](size_t first, size_t count) {
    HWY_DYNAMIC_DISPATCH(SumAxisTarget)(x + first * slice, count, len, inner, out + first * inner);
  });
  Unary(UnaryOp::kCanonicalize, out, out, outer * inner);  // NaN payloads differ by platform
}

void MeanAxis(const float* x, size_t outer, size_t len, size_t inner, float* out) {
  SumAxis(x, outer, len, inner, out);
  BinaryScalarRight(BinaryOp::kDiv, out, static_cast<float>(len), out, outer * inner);
}

void VarianceAxis(const float* x, size_t outer, size_t len, size_t inner, size_t correction,
                  float* out) {
  std::vector<float> mean(inner), deviations(len * inner);
  for (size_t o = 0; o < outer; ++o) {
    const float* slice = x + o * len * inner;
    MeanAxis(slice, 1, len, inner, mean.data());
    for (size_t i = 0; i < len; ++i) {
      float* row = deviations.data() + i * inner;
      Binary(BinaryOp::kSub, slice + i * inner, mean.data(), row, inner);
      Unary(UnaryOp::kSquare, row, row, inner);
    }
    SumAxis(deviations.data(), 1, len, inner, out + o * inner);
  }
  // len - correction <= 0: a zero divisor, +inf (or the canonical NaN for 0 / 0), as PyTorch gives.
  const float divisor = len > correction ? static_cast<float>(len - correction) : 0.0f;
  if (divisor == 0.0f) {
    for (size_t k = 0; k < outer * inner; ++k) out[k] = 0.0f;
  }
  BinaryScalarRight(BinaryOp::kDiv, out, divisor, out, outer * inner);
}

void MaxAxis(const float* x, size_t outer, size_t len, size_t inner, float* out) {
  HWY_DYNAMIC_DISPATCH(MaxAxisTarget)(x, outer, len, inner, out);
}

void MinAxis(const float* x, size_t outer, size_t len, size_t inner, float* out) {
  HWY_DYNAMIC_DISPATCH(MinAxisTarget)(x, outer, len, inner, out);
}

namespace {

// True when a comes after b in the contract's order (NaN above all, +0 above -0).
bool GreaterByContract(float a, float b) {
  const bool a_nan = a != a, b_nan = b != b;
  if (a_nan || b_nan) return a_nan && !b_nan;
  if (a == b) {
    uint32_t a_bits, b_bits;
    memcpy(&a_bits, &a, 4);
    memcpy(&b_bits, &b, 4);
    return a == 0.0f && (a_bits >> 31) == 0 && (b_bits >> 31) == 1;
  }
  return a > b;
}

}  // namespace

void ArgmaxAxis(const float* x, size_t outer, size_t len, size_t inner, int64_t* out) {
  for (size_t o = 0; o < outer; ++o) {
    for (size_t j = 0; j < inner; ++j) {
      const float* column = x + o * len * inner + j;
      size_t best = 0;
      for (size_t i = 1; i < len; ++i) {
        if (GreaterByContract(column[i * inner], column[best * inner])) best = i;
      }
      out[o * inner + j] = static_cast<int64_t>(best);
    }
  }
}

}  // namespace simd
}  // namespace lockstep
#endif  // HWY_ONCE
