// Linear quantisation: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear and MatMulInteger.
// The float steps are lockstep's ops, each one rounding (a division, then rounding to an integer
// ties to even, which is exact); integer products are exact on the host in 64 bits.
#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "onnx/op_helpers.h"
#include "onnx/op_registry.h"

namespace lockstep {
namespace onnx {

namespace {

// The scale or zero point as a tensor that broadcasts over x: a scalar, or 1-D along `axis`.
Tensor AlongAxis(const Tensor& t, const Shape& x_shape, int64_t axis_attr, const std::string& where, const char* op) {
  if (t.numel() == 1) return t.Reshape({});
  const int64_t axis = Axis(axis_attr, static_cast<int64_t>(x_shape.size()), where);
  LOCKSTEP_REQUIRE(t.dim() == 1 && axis >= 0 && axis < static_cast<int64_t>(x_shape.size()) && t.size(0) == x_shape[axis],
                   op << ": a per-axis scale or zero point " << ShapeString(t.shape()) << " must match axis " << axis
                      << " of " << ShapeString(x_shape));
  Shape shape(x_shape.size(), 1);
  shape[axis] = t.size(0);
  return t.Reshape(shape);
}

// The integer range of a quantised type.
void Range(Elem e, float* lo, float* hi, const char* op) {
  LOCKSTEP_REQUIRE(e == Elem::kUInt8 || e == Elem::kInt8, op << ": quantised values are uint8 or int8, got " << ElemName(e));
  *lo = e == Elem::kUInt8 ? 0.0f : -128.0f;
  *hi = e == Elem::kUInt8 ? 255.0f : 127.0f;
}

// round(x / scale) + zero_point, ties to even, saturated to the type: each step one rounding.
Value Quantize(const Tensor& x, const Tensor& scale, const Tensor& zero_point, Elem type, const char* op) {
  float lo, hi;
  Range(type, &lo, &hi, op);
  const Tensor q = Add(Round(Div(x, scale)), zero_point);
  return CastValue(FloatValue(Minimum(Maximum(q, Tensor::Scalar(lo)), Tensor::Scalar(hi))), type);
}

Kernel QuantizeLinearKernel(const NodeView& node) {
  node.RequireInputs(2, 3);
  const int64_t axis_attr = node.Int("axis", 1);
  const std::string where = node.Where();
  return [axis_attr, where](const Values& in, RunContext&) -> Values {
    const Tensor x = FloatInput(Input(in, 0, "QuantizeLinear"), "QuantizeLinear");
    const int64_t axis = axis_attr;
    const Tensor scale = AlongAxis(FloatInput(Input(in, 1, "QuantizeLinear"), "QuantizeLinear"), x.shape(), axis,
                                   where, "QuantizeLinear");
    Elem type = Elem::kUInt8;
    Tensor zero_point = Tensor::Scalar(0.0f);
    if (in.size() > 2 && in[2].defined()) {
      type = in[2].elem;
      zero_point = AlongAxis(CastValue(in[2], Elem::kFloat).tensor, x.shape(), axis, where, "QuantizeLinear");
    }
    return {Quantize(x, scale, zero_point, type, "QuantizeLinear")};
  };
}

Kernel DequantizeLinearKernel(const NodeView& node) {
  node.RequireInputs(2, 3);
  const int64_t axis_attr = node.Int("axis", 1);
  const std::string where = node.Where();
  return [axis_attr, where](const Values& in, RunContext&) -> Values {
    const Value& xv = Input(in, 0, "DequantizeLinear");
    LOCKSTEP_REQUIRE(xv.is_int(), "DequantizeLinear: expected integers, got " << ElemName(xv.elem));
    const Tensor x = CastValue(xv, Elem::kFloat).tensor;  // exact for |x| <= 2^24 (uint8, int8; int32 beyond rounds)
    const int64_t axis = axis_attr;
    const Tensor scale = AlongAxis(FloatInput(Input(in, 1, "DequantizeLinear"), "DequantizeLinear"), x.shape(), axis,
                                   where, "DequantizeLinear");
    Tensor shifted = x;
    if (in.size() > 2 && in[2].defined()) {
      shifted = Sub(x, AlongAxis(CastValue(in[2], Elem::kFloat).tensor, x.shape(), axis, where, "DequantizeLinear"));
    }
    return {FloatValue(Mul(shifted, scale))};
  };
}

// DynamicQuantizeLinear: scale = (max(0, max x) - min(0, min x)) / 255, zero point
// round(-min / scale) saturated to uint8, then QuantizeLinear's uint8 values.
Kernel DynamicQuantizeLinearKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  return [](const Values& in, RunContext&) -> Values {
    const Tensor x = FloatInput(Input(in, 0, "DynamicQuantizeLinear"), "DynamicQuantizeLinear");
    LOCKSTEP_REQUIRE(x.numel() > 0, "DynamicQuantizeLinear: an empty input has no range");
    const Tensor flat = x.Reshape({x.numel()});
    const Tensor zero = Tensor::Scalar(0.0f);
    const Tensor hi = Maximum(Max(flat, 0), zero), lo = Minimum(Neg(Max(Neg(flat), 0)), zero);
    const Tensor scale = Div(Sub(hi, lo), Tensor::Scalar(255.0f));
    const Tensor zero_point = Minimum(Maximum(Round(Div(Neg(lo), scale)), zero), Tensor::Scalar(255.0f));
    return {Quantize(x, scale, zero_point, Elem::kUInt8, "DynamicQuantizeLinear"), FloatValue(scale),
            CastValue(FloatValue(zero_point), Elem::kUInt8)};
  };
}

// MatMulInteger: (A - a_zero_point) (B - b_zero_point) exactly, int32 (2-D, or batches of them
// with equal batch shapes).
Kernel MatMulIntegerKernel(const NodeView& node) {
  node.RequireInputs(2, 4);
  return [](const Values& in, RunContext&) -> Values {
    const Value& a = Input(in, 0, "MatMulInteger");
    const Value& b = Input(in, 1, "MatMulInteger");
    LOCKSTEP_REQUIRE(a.is_int() && b.is_int(), "MatMulInteger: expected integer inputs");
    LOCKSTEP_REQUIRE(a.shape().size() >= 2 && b.shape().size() == 2,
                     "MatMulInteger: A [..., M, K] and B [K, N], got " << ShapeString(a.shape()) << " and "
                                                                      << ShapeString(b.shape()));
    const int64_t k = a.shape().back(), m = a.tensor.numel() / (k == 0 ? 1 : k), n = b.shape()[1];
    LOCKSTEP_REQUIRE(b.shape()[0] == k, "MatMulInteger: inner dimensions " << k << " and " << b.shape()[0] << " differ");
    const auto zero = [&](size_t i) -> std::vector<int64_t> {
      if (in.size() <= i || !in[i].defined()) return {0};
      return IntValues(in[i]);
    };
    const std::vector<int64_t> az = zero(2), bz = zero(3);
    LOCKSTEP_REQUIRE(az.size() == 1 && (bz.size() == 1 || static_cast<int64_t>(bz.size()) == n),
                     "MatMulInteger: zero points must be scalars (B's may be one per column)");
    const std::vector<int64_t> av = IntValues(a), bv = IntValues(b);
    std::vector<int64_t> out(static_cast<size_t>(m * n), 0);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t acc = 0;
        for (int64_t p = 0; p < k; ++p) acc += (av[i * k + p] - az[0]) * (bv[p * n + j] - bz[bz.size() == 1 ? 0 : j]);
        out[i * n + j] = acc;
      }
    }
    Shape shape = a.shape();
    shape.back() = n;
    return {IntTensor(shape, out, Elem::kInt32)};
  };
}

}  // namespace

void AddQuantizeOps(std::vector<OpSpec>* t) {
  t->push_back({"QuantizeLinear", 10, QuantizeLinearKernel});
  t->push_back({"DequantizeLinear", 10, DequantizeLinearKernel});
  t->push_back({"DynamicQuantizeLinear", 11, DynamicQuantizeLinearKernel});
  t->push_back({"MatMulInteger", 10, MatMulIntegerKernel});
}

}  // namespace onnx
}  // namespace lockstep
