#include "onnx/op_helpers.h"

#include <algorithm>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "onnx/float64.h"

namespace lockstep {
namespace onnx {

Tensor FloatInput(const Value& v, const char* op) {
  LOCKSTEP_REQUIRE(v.defined(), op << ": a required input is missing");
  // ONNX allows integer inputs to many operators that lockstep computes in float only: those are
  // unsupported, not invalid.
  const bool other_number = v.is_int() || v.is_float64();
  LOCKSTEP_REQUIRE_KIND(other_number ? ErrorKind::kUnavailable : ErrorKind::kArgument, v.elem == Elem::kFloat,
                        op << ": " << (other_number ? "unsupported: " : "") << "expected a float input, got "
                           << ElemName(v.elem) << " of shape " << ShapeString(v.shape()));
  return v.tensor;
}

const Value& Input(const Values& inputs, size_t i, const char* op) {
  LOCKSTEP_REQUIRE(i < inputs.size() && inputs[i].defined(), op << ": input " << i << " is missing");
  return inputs[i];
}

void RequireSameElem(const Value& a, const Value& b, const char* op) {
  LOCKSTEP_REQUIRE(a.elem == b.elem, op << ": inputs of different types (" << ElemName(a.elem) << " and "
                                        << ElemName(b.elem) << ")");
}

int64_t Axis(int64_t axis, int64_t rank, const std::string& where) {
  LOCKSTEP_REQUIRE_FORMAT(axis >= -rank && axis < (rank == 0 ? 1 : rank),
                          where << ": axis " << axis << " is out of range for rank " << rank);
  return axis < 0 ? axis + rank : axis;
}

namespace {

std::vector<int64_t> Broadcast(const Value& v, const Shape& shape) {
  NoGradGuard no_grad;
  return v.tensor.Expand(shape).Contiguous().ToInt64Vector();
}

int64_t Apply(IntOp op, int64_t a, int64_t b, bool is_unsigned, const char* name) {
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case IntOp::kAdd: return static_cast<int64_t>(ua + ub);
    case IntOp::kSub: return static_cast<int64_t>(ua - ub);
    case IntOp::kMul: return static_cast<int64_t>(ua * ub);
    case IntOp::kDiv:
    case IntOp::kMod:
    case IntOp::kFloorMod: {
      LOCKSTEP_REQUIRE(b != 0, name << ": integer division by zero");
      if (is_unsigned) return static_cast<int64_t>(op == IntOp::kDiv ? ua / ub : ua % ub);
      if (a == INT64_MIN && b == -1) return op == IntOp::kDiv ? INT64_MIN : 0;
      if (op == IntOp::kDiv) return a / b;
      const int64_t r = a % b;
      return op == IntOp::kFloorMod && r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
    }
    case IntOp::kMax: return (is_unsigned ? ua > ub : a > b) ? a : b;
    case IntOp::kMin: return (is_unsigned ? ua < ub : a < b) ? a : b;
    case IntOp::kEq: return a == b;
    case IntOp::kLt: return is_unsigned ? ua < ub : a < b;
    case IntOp::kLe: return is_unsigned ? ua <= ub : a <= b;
    case IntOp::kGt: return is_unsigned ? ua > ub : a > b;
    case IntOp::kGe: return is_unsigned ? ua >= ub : a >= b;
    case IntOp::kShl: return ub >= 64 ? 0 : static_cast<int64_t>(ua << ub);
    case IntOp::kShr: return ub >= 64 ? 0 : static_cast<int64_t>(ua >> ub);
  }
  return 0;
}

bool IsComparison(IntOp op) { return op >= IntOp::kEq && op <= IntOp::kGe; }

}  // namespace

Value IntTensor(const Shape& shape, const std::vector<int64_t>& values_in, Elem elem) {
  std::vector<int64_t> values = values_in;
  for (int64_t& v : values) v = WrapToElem(elem, v);
  Tensor t = Tensor::FromInt64(shape, values);
  if (elem == Elem::kInt32) return Value{t.To(DType::kInt32), elem};
  if (elem == Elem::kBool) return Value{t.To(DType::kFloat32), elem};  // 0 / 1
  if (IsFloatElem(elem) || elem == Elem::kFloat64) return CastValue(Value{t, Elem::kInt64}, elem);
  return Value{t, elem};
}

Value IntBinary(IntOp op, const Value& a, const Value& b, const char* name) {
  LOCKSTEP_REQUIRE(a.is_int() && b.is_int() && a.elem == b.elem,
                   name << ": expected two inputs of the same integer type, got " << ElemName(a.elem) << " and "
                        << ElemName(b.elem));
  const Shape shape = BroadcastShapes(a.shape(), b.shape(), name);
  const std::vector<int64_t> x = Broadcast(a, shape), y = Broadcast(b, shape);
  std::vector<int64_t> out(x.size());
  if ((op == IntOp::kShl || op == IntOp::kShr) && a.elem != Elem::kUInt64) {
    LOCKSTEP_REQUIRE(IsUnsignedElem(a.elem), name << ": expected unsigned integers, got " << ElemName(a.elem));
  }
  const bool is_unsigned = a.elem == Elem::kUInt64;  // the narrower unsigned types are held nonnegative
  for (size_t i = 0; i < x.size(); ++i) out[i] = Apply(op, x[i], y[i], is_unsigned, name);
  return IntTensor(shape, out, IsComparison(op) ? Elem::kBool : a.elem);
}

Value IntWhere(const Value& cond, const Value& x, const Value& y) {
  LOCKSTEP_REQUIRE(x.is_int() && x.elem == y.elem, "Where: the two branches have different types ("
                                                       << ElemName(x.elem) << " and " << ElemName(y.elem) << ")");
  const Shape shape = BroadcastShapes(BroadcastShapes(cond.shape(), x.shape(), "Where"), y.shape(), "Where");
  NoGradGuard no_grad;
  const std::vector<float> c = cond.tensor.Expand(shape).Contiguous().ToVector();
  const std::vector<int64_t> a = Broadcast(x, shape), b = Broadcast(y, shape);
  std::vector<int64_t> out(c.size());
  for (size_t i = 0; i < c.size(); ++i) out[i] = c[i] != 0.0f ? a[i] : b[i];
  return IntTensor(shape, out, x.elem);
}

Value CastValue(const Value& v, Elem to) {
  if (v.elem == to) return v;
  if (v.is_float64()) return CastFromFloat64(v, to);
  if (to == Elem::kFloat64) return CastToFloat64(v);
  if (to == Elem::kBool) {
    if (v.is_float()) return BoolValue(NotEqual(v.tensor, Tensor::Scalar(0.0f)));
    std::vector<int64_t> x = IntValues(v);
    for (int64_t& e : x) e = e != 0;
    return IntTensor(v.shape(), x, Elem::kBool);
  }
  if (IsFloatElem(to)) {
    Tensor f;
    if (v.elem == Elem::kBool || v.is_float()) {
      f = v.tensor;  // 0.0 / 1.0, or a float of any width (each exact in float32)
    } else if (v.elem == Elem::kUInt64) {  // its 64 bits are unsigned
      const std::vector<int64_t> x = IntValues(v);
      std::vector<float> y(x.size());
      for (size_t i = 0; i < x.size(); ++i) y[i] = static_cast<float>(static_cast<uint64_t>(x[i]));
      f = Tensor::FromVector(v.shape(), y);
    } else {
      f = v.tensor.To(DType::kFloat32);
    }
    if (to == Elem::kFloat16) f = RoundToFloat16(f);
    if (to == Elem::kBFloat16) f = RoundToBFloat16(f);
    return Value{f, to};
  }
  if (v.elem == Elem::kBool) return IntTensor(v.shape(), v.tensor.To(DType::kInt64).ToInt64Vector(), to);
  if (v.is_float()) {
    // Through int64 (truncation toward zero, NaN to 0, clamped), then wrapped like a C cast.
    const Tensor wide = v.tensor.To(DType::kInt64);
    if (to == Elem::kInt64) return Int64Value(wide);
    return IntTensor(v.shape(), IntValues(Int64Value(wide)), to);
  }
  return IntTensor(v.shape(), IntValues(v), to);
}

Value Take(const Value& x, int64_t axis, const std::vector<int64_t>& indices_in, const Shape& index_shape,
           const char* op) {
  const Shape& shape = x.shape();
  const int64_t rank = static_cast<int64_t>(shape.size());
  LOCKSTEP_REQUIRE(axis >= 0 && axis < rank, op << ": axis " << axis << " is out of range for rank " << rank);
  const int64_t n = shape[axis];
  std::vector<int64_t> indices = indices_in;
  for (size_t i = 0; i < indices.size(); ++i) {
    LOCKSTEP_REQUIRE(indices[i] >= -n && indices[i] < n,
                     op << ": index " << indices[i] << " at position " << i << " is out of range [" << -n << ", " << n << ")");
    if (indices[i] < 0) indices[i] += n;
  }
  // [pre..., n, post...] -> [n, pre..., post...] -> [n, rest]; pick rows; back to
  // [index..., pre..., post...] and then [pre..., index..., post...].
  const Shape pre(shape.begin(), shape.begin() + axis), post(shape.begin() + axis + 1, shape.end());
  std::vector<int64_t> to_front{axis};
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis) to_front.push_back(d);
  }
  const int64_t rest = NumElements(pre) * NumElements(post);
  const int64_t m = static_cast<int64_t>(indices.size());
  Shape picked_shape = index_shape;
  picked_shape.insert(picked_shape.end(), pre.begin(), pre.end());
  picked_shape.insert(picked_shape.end(), post.begin(), post.end());
  const int64_t k = static_cast<int64_t>(index_shape.size()), p = static_cast<int64_t>(pre.size());
  std::vector<int64_t> back;
  for (int64_t d = 0; d < p; ++d) back.push_back(k + d);
  for (int64_t d = 0; d < k; ++d) back.push_back(d);
  for (int64_t d = k + p; d < static_cast<int64_t>(picked_shape.size()); ++d) back.push_back(d);
  const Tensor rows = x.tensor.Permute(to_front).Reshape({n, rest});
  Tensor picked;
  if (x.is_int()) {
    const std::vector<int64_t> v = rows.ToInt64Vector();
    std::vector<int64_t> out(static_cast<size_t>(m * rest));
    for (int64_t i = 0; i < m; ++i) {
      std::copy(v.begin() + indices[i] * rest, v.begin() + (indices[i] + 1) * rest, out.begin() + i * rest);
    }
    picked = IntTensor({m, rest}, out, x.elem).tensor;
  } else if (m == 0 || rest == 0) {
    picked = Tensor::Zeros({m, rest});
  } else {
    picked = Embedding(Tensor::FromInt64({m}, indices), rows);
  }
  return Value{picked.Reshape(picked_shape).Permute(back), x.elem};
}

void RequireNoGrad(const std::vector<Tensor>& inputs, const char* op) {
  LOCKSTEP_REQUIRE_STATE(!NeedsGrad(inputs), op << ": lockstep computes no gradient through " << op
                                                << "; it can run in inference or on inputs that need no gradient");
}

}  // namespace onnx
}  // namespace lockstep
