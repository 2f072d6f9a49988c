// Small helpers the operator families share: typed access to inputs, axes, and the integer
// arithmetic that shape computations do on the host (exact, no floating point).
#ifndef LOCKSTEP_ONNX_OP_HELPERS_H_
#define LOCKSTEP_ONNX_OP_HELPERS_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "core/tensor.h"
#include "onnx/op_registry.h"
#include "onnx/value.h"

namespace lockstep {
namespace onnx {

// The float tensor of an input; throws naming the operator when the input is another type.
Tensor FloatInput(const Value& v, const char* op);
// Throws unless the input is defined.
const Value& Input(const Values& inputs, size_t i, const char* op);
// Both inputs float, or both the same integer type: throws otherwise.
void RequireSameElem(const Value& a, const Value& b, const char* op);

// An axis in [-rank, rank) made non-negative, or a format error naming the node.
int64_t Axis(int64_t axis, int64_t rank, const std::string& where);

// Integer arithmetic and comparisons with NumPy broadcasting, computed in 64 bits on the host,
// unsigned for uint64 (the result has a's integer type, wrapped into its range as C's fixed-width
// types wrap; comparisons give bool). Division truncates toward zero and refuses a zero divisor;
// kMod is C's % (the dividend's sign), kFloorMod Python's (the divisor's); shifts of the type's
// width or more give 0.
enum class IntOp { kAdd, kSub, kMul, kDiv, kMod, kMax, kMin, kEq, kLt, kLe, kGt, kGe, kFloorMod, kShl, kShr };
Value IntBinary(IntOp op, const Value& a, const Value& b, const char* name);
// cond ? x : y on host integer values (cond a bool value).
Value IntWhere(const Value& cond, const Value& x, const Value& y);
// An integer value of shape `shape` with these contents, of element type `elem`.
Value IntTensor(const Shape& shape, const std::vector<int64_t>& values, Elem elem = Elem::kInt64);
// Converts a value to another element type (ONNX's Cast): float to integer truncates toward zero
// (NaN to 0, clamped to int64, then wrapped into the type), integer to float rounds to nearest
// float32 (then to float16 or bfloat16), float to float16 or bfloat16 rounds to nearest even, to
// bool is `x != 0`.
Value CastValue(const Value& v, Elem to);

// ONNX's Gather: out = x.shape[:axis] + index_shape + x.shape[axis + 1:], each index in
// [-n, n) for n = x.shape[axis]. Float values are gathered with lockstep's embedding op, so the
// gradient adds rows back in index order.
Value Take(const Value& x, int64_t axis, const std::vector<int64_t>& indices, const Shape& index_shape,
           const char* op);

// Refuses (kind kState) an op that lockstep computes without a gradient, when one is needed.
void RequireNoGrad(const std::vector<Tensor>& inputs, const char* op);

}  // namespace onnx
}  // namespace lockstep

#endif  // LOCKSTEP_ONNX_OP_HELPERS_H_
