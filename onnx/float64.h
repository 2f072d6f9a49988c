// The contract's float64 (docs/numerics.md, "1. Types"): a float64 value is held as the 64 bits of
// an IEEE binary64 in an int64 tensor, so data movement (reshapes, slices, gathers, concatenation)
// carries it unchanged, and arithmetic is host binary64 arithmetic, one rounding per operation in
// the order written here (no fused multiply-add: the build forbids contraction), with the
// contract's NaN (0x7FF8000000000000) and its ordering of -0 below +0. Operators that compute
// something else from float64 inputs (functions, reductions) are refused until they have a float64
// form under the same rules.
#ifndef LOCKSTEP_ONNX_FLOAT64_H_
#define LOCKSTEP_ONNX_FLOAT64_H_

#include <string>
#include <vector>

#include "onnx/op_registry.h"
#include "onnx/value.h"

namespace lockstep {
namespace onnx {

std::vector<double> Float64Values(const Value& v);
// A float64 value of this shape and contents (every NaN made the contract's NaN).
Value Float64Tensor(const Shape& shape, const std::vector<double>& values);

// Elementwise with NumPy broadcasting: + - * /, max and min (NaN propagates, -0 < +0), fmod
// (exact, the dividend's sign).
enum class Float64Op { kAdd, kSub, kMul, kDiv, kMax, kMin, kFmod };
Value Float64Binary(Float64Op op, const Value& a, const Value& b, const char* name);
// Cumulative sums along an axis, each output the sum of its inputs from the first in order
// (exclusive: without the element itself; reverse: from the last).
Value Float64CumSum(const Value& x, int64_t axis, bool exclusive, bool reverse);

// Casts to and from float64. To float64: every float, bool and 32-bit integer exactly, 64-bit
// integers rounded to nearest even. From float64: to float32, float16 and bfloat16 rounded once,
// to nearest even (never through float32: that would round twice); to integers by truncation
// toward zero (NaN to 0, clamped to int64, then wrapped like a C cast); to bool `x != 0`.
Value CastToFloat64(const Value& v);
Value CastFromFloat64(const Value& v, Elem to);

// The kernel of an operator, made to honour float64 inputs: operators that compute float64
// themselves (those that call the functions above) are returned unchanged; operators that only move
// elements run on the bits; any other operator given a float64 input is refused (unsupported).
Kernel HandlingFloat64(const std::string& op_type, Kernel kernel);

}  // namespace onnx
}  // namespace lockstep

#endif  // LOCKSTEP_ONNX_FLOAT64_H_
