#include "simd/softmax.h"

#include <vector>

#include "simd/elementwise.h"
#include "simd/math.h"
#include "simd/reduce.h"

namespace lockstep {
namespace simd {

namespace {

// Writes s = x - max(x) to shifted and e = exp(s) to exps; returns the canonical sum of e.
float ShiftAndExponentiate(const float* x, size_t cols, float* shifted, float* exps) {
  float max;
  MaxAxis(x, 1, cols, 1, &max);
  BinaryScalarRight(BinaryOp::kSub, x, max, shifted, cols);
  Math(MathFn::kExp, shifted, exps, cols);
  return Sum(exps, cols);
}

}  // namespace

void Softmax(const float* x, size_t rows, size_t cols, float* out) {
  std::vector<float> shifted(cols);
  for (size_t r = 0; r < rows; ++r) {
    float* row_out = out + r * cols;
    const float total = ShiftAndExponentiate(x + r * cols, cols, shifted.data(), row_out);
    BinaryScalarRight(BinaryOp::kDiv, row_out, total, row_out, cols);
  }
}

void LogSoftmax(const float* x, size_t rows, size_t cols, float* out) {
  std::vector<float> exps(cols);
  for (size_t r = 0; r < rows; ++r) {
    float* row_out = out + r * cols;
    float total = ShiftAndExponentiate(x + r * cols, cols, row_out, exps.data());
    Math(MathFn::kLog, &total, &total, 1);
    BinaryScalarRight(BinaryOp::kSub, row_out, total, row_out, cols);
  }
}

}  // namespace simd
}  // namespace lockstep
