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
#include "onnx/window.h"

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

// The zero point of input i (a scalar; 0 when absent).
int64_t ZeroPoint(const Values& in, size_t i, const char* op) {
  if (in.size() <= i || !in[i].defined()) return 0;
  const std::vector<int64_t> z = IntValues(in[i]);
  LOCKSTEP_REQUIRE(z.size() == 1, op << ": a per-channel zero point is not supported");
  return z[0];
}

// (X - x_zero_point) convolved with (W - w_zero_point), exactly in 64 bits: [N, C, H, W] by
// [M, C / group, kh, kw] with strides, pads, dilations and groups, int32 out.
std::vector<int64_t> IntegerConv(const Value& x, const Value& w, int64_t xz, int64_t wz, const Window& win, int64_t group,
                                 Shape* out_shape, const char* op) {
  LOCKSTEP_REQUIRE(x.shape().size() == 4 && w.shape().size() == 4, op << ": 2-D convolution only, got X "
                                                                      << ShapeString(x.shape()));
  const int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], wd = x.shape()[3];
  const int64_t m = w.shape()[0], cg = w.shape()[1], kh = w.shape()[2], kw = w.shape()[3];
  LOCKSTEP_REQUIRE(cg * group == c && m % group == 0, op << ": X " << ShapeString(x.shape()) << " and W "
                                                          << ShapeString(w.shape()) << " do not match with group " << group);
  Window geo = win;
  if (geo.kernel.empty()) geo.kernel = {kh, kw};
  if (geo.strides.size() != 2) geo.strides.assign(2, 1);
  if (geo.dilations.size() != 2) geo.dilations.assign(2, 1);
  int64_t pt, pb, pl, pr;
  geo.Padding(0, h, &pt, &pb);
  geo.Padding(1, wd, &pl, &pr);
  const int64_t ho = (h + pt + pb - (kh - 1) * geo.dilations[0] - 1) / geo.strides[0] + 1;
  const int64_t wo = (wd + pl + pr - (kw - 1) * geo.dilations[1] - 1) / geo.strides[1] + 1;
  LOCKSTEP_REQUIRE(ho >= 1 && wo >= 1, op << ": the kernel does not fit the input");
  const std::vector<int64_t> xv = IntValues(x), wv = IntValues(w);
  std::vector<int64_t> out(static_cast<size_t>(n * m * ho * wo), 0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < m; ++o)
      for (int64_t i = 0; i < ho; ++i)
        for (int64_t j = 0; j < wo; ++j) {
          int64_t acc = 0;
          const int64_t g = o / (m / group);
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t e = 0; e < kw; ++e) {
                const int64_t y = i * geo.strides[0] + a * geo.dilations[0] - pt;
                const int64_t xx = j * geo.strides[1] + e * geo.dilations[1] - pl;
                // A padded position holds the zero point: it contributes nothing.
                if (y < 0 || y >= h || xx < 0 || xx >= wd) continue;
                acc += (xv[((b * c + g * cg + ci) * h + y) * wd + xx] - xz) * (wv[((o * cg + ci) * kh + a) * kw + e] - wz);
              }
          out[((b * m + o) * ho + i) * wo + j] = acc;
        }
  *out_shape = {n, m, ho, wo};
  return out;
}

Kernel ConvIntegerKernel(const NodeView& node) {
  node.RequireInputs(2, 4);
  const Window win = ReadWindow(node, 2, false);
  const int64_t group = node.Int("group", 1);
  return [win, group](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "ConvInteger");
    const Value& w = Input(in, 1, "ConvInteger");
    LOCKSTEP_REQUIRE(x.is_int() && w.is_int(), "ConvInteger: expected integer inputs");
    Shape shape;
    const std::vector<int64_t> out = IntegerConv(x, w, ZeroPoint(in, 2, "ConvInteger"), ZeroPoint(in, 3, "ConvInteger"),
                                                 win, group, &shape, "ConvInteger");
    return {IntTensor(shape, out, Elem::kInt32)};
  };
}

// The requantisation of QLinearMatMul and QLinearConv: round(acc * (a_scale * b_scale / y_scale))
// + y_zero_point, saturated: the multiplier two float32 roundings, acc (exact in float32 below
// 2^24) times it one more, then rounding ties to even (exact).
Value Requantize(const std::vector<int64_t>& acc, const Shape& shape, float a_scale, float b_scale, float y_scale,
                 const Value& y_zero_point, const char* op) {
  float lo, hi;
  Range(y_zero_point.elem, &lo, &hi, op);
  const float multiplier = a_scale * b_scale / y_scale;
  const float zp = static_cast<float>(IntValues(y_zero_point)[0]);
  std::vector<float> scaled(acc.size());
  for (size_t i = 0; i < acc.size(); ++i) {
    LOCKSTEP_REQUIRE(acc[i] > -(int64_t{1} << 24) && acc[i] < (int64_t{1} << 24),
                     op << ": an accumulator " << acc[i] << " beyond 2^24 (not exact in float32)");
    scaled[i] = static_cast<float>(acc[i]) * multiplier;
  }
  const Tensor q = AddScalar(Round(Tensor::FromVector(shape, scaled)), zp);
  return CastValue(FloatValue(Minimum(Maximum(q, Tensor::Scalar(lo)), Tensor::Scalar(hi))), y_zero_point.elem);
}

float ScalarOf(const Values& in, size_t i, const char* op) {
  const Tensor t = FloatInput(Input(in, i, op), op);
  LOCKSTEP_REQUIRE(t.numel() == 1, op << ": a per-channel scale is not supported");
  return t.ToVector()[0];
}

Kernel QLinearMatMulKernel(const NodeView& node) {
  node.RequireInputs(8, 8);
  return [](const Values& in, RunContext&) -> Values {
    const char* op = "QLinearMatMul";
    const Value& a = Input(in, 0, op);
    const Value& b = Input(in, 3, op);
    const Shape& as = a.shape();
    const Shape& bs = b.shape();
    const bool shared_b = bs.size() == 2;  // one B for every batch entry, or one per entry
    LOCKSTEP_REQUIRE(a.is_int() && b.is_int() && as.size() >= 2 && (shared_b || bs.size() == as.size()) &&
                         as.back() == bs[bs.size() - 2] &&
                         (shared_b || Shape(as.begin(), as.end() - 2) == Shape(bs.begin(), bs.end() - 2)),
                     op << ": expected integer A [..., M, K] and B [..., K, N] (or [K, N]), got " << ShapeString(as)
                        << " and " << ShapeString(bs));
    const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back(), batches = NumElements(as) / (m * k);
    const int64_t az = ZeroPoint(in, 2, op), bz = ZeroPoint(in, 5, op);
    const std::vector<int64_t> av = IntValues(a), bv = IntValues(b);
    std::vector<int64_t> acc(static_cast<size_t>(batches * m * n), 0);
    for (int64_t t = 0; t < batches; ++t) {
      const int64_t* ap = av.data() + t * m * k;
      const int64_t* bp = bv.data() + (shared_b ? 0 : t * k * n);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          for (int64_t p = 0; p < k; ++p) acc[(t * m + i) * n + j] += (ap[i * k + p] - az) * (bp[p * n + j] - bz);
    }
    Shape shape(as.begin(), as.end() - 1);
    shape.push_back(n);
    return {Requantize(acc, shape, ScalarOf(in, 1, op), ScalarOf(in, 4, op), ScalarOf(in, 6, op), Input(in, 7, op), op)};
  };
}

Kernel QLinearConvKernel(const NodeView& node) {
  node.RequireInputs(8, 9);
  const Window win = ReadWindow(node, 2, false);
  const int64_t group = node.Int("group", 1);
  return [win, group](const Values& in, RunContext&) -> Values {
    const char* op = "QLinearConv";
    const Value& x = Input(in, 0, op);
    const Value& w = Input(in, 3, op);
    LOCKSTEP_REQUIRE(x.is_int() && w.is_int(), op << ": expected integer X and W");
    Shape shape;
    std::vector<int64_t> acc = IntegerConv(x, w, ZeroPoint(in, 2, op), ZeroPoint(in, 5, op), win, group, &shape, op);
    if (in.size() > 8 && in[8].defined()) {  // the int32 bias, one per output channel
      const std::vector<int64_t> bias = IntValues(in[8]);
      LOCKSTEP_REQUIRE(static_cast<int64_t>(bias.size()) == shape[1], op << ": a bias of " << bias.size() << " for "
                                                                         << shape[1] << " channels");
      const int64_t plane = shape[2] * shape[3];
      for (size_t i = 0; i < acc.size(); ++i) acc[i] += bias[(static_cast<int64_t>(i) / plane) % shape[1]];
    }
    return {Requantize(acc, shape, ScalarOf(in, 1, op), ScalarOf(in, 4, op), ScalarOf(in, 6, op), Input(in, 7, op), op)};
  };
}

}  // namespace

void AddQuantizeOps(std::vector<OpSpec>* t) {
  t->push_back({"QLinearMatMul", 10, QLinearMatMulKernel});
  t->push_back(OpSpec{"QLinearConv", 10, QLinearConvKernel}
                   .Reads({"auto_pad", "ceil_mode", "dilations", "group", "kernel_shape", "pads", "strides"}));
  t->push_back(OpSpec{"ConvInteger", 10, ConvIntegerKernel}
                   .Reads({"auto_pad", "ceil_mode", "dilations", "group", "kernel_shape", "pads", "strides"}));
  t->push_back(OpSpec{"QuantizeLinear", 10, QuantizeLinearKernel}
                   .Reads({"axis"})
                   .Scope("per tensor or per axis; uint8 and int8"));
  t->push_back(OpSpec{"DequantizeLinear", 10, DequantizeLinearKernel}
                   .Reads({"axis"})
                   .Scope("per tensor or per axis"));
  t->push_back({"DynamicQuantizeLinear", 11, DynamicQuantizeLinearKernel});
  t->push_back({"MatMulInteger", 10, MatMulIntegerKernel});
}

}  // namespace onnx
}  // namespace lockstep
