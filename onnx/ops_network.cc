// Network layers: Gemm, MatMul, Conv, pooling, normalisation and softmax, on lockstep's layer ops
// (the contract's GEMM, im2col convolution, canonical reductions, correctly rounded rsqrt/exp).
#include <string>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "onnx/conv_block.h"
#include "onnx/op_helpers.h"
#include "onnx/op_registry.h"
#include "onnx/window.h"

namespace lockstep {
namespace onnx {

namespace {

Kernel MatMulKernel(const NodeView& node) {
  node.RequireInputs(2, 2);
  return [](const Values& in, RunContext&) -> Values {
    Tensor a = FloatInput(Input(in, 0, "MatMul"), "MatMul");
    Tensor b = FloatInput(Input(in, 1, "MatMul"), "MatMul");
    LOCKSTEP_REQUIRE(a.dim() >= 1 && b.dim() >= 1, "MatMul: scalar operands");
    // NumPy's matmul: a vector operand gains a dimension that the result then loses.
    const bool a_vector = a.dim() == 1, b_vector = b.dim() == 1;
    if (a_vector) a = a.Unsqueeze(0);
    if (b_vector) b = b.Unsqueeze(1);
    if (b.dim() > 2 || a.dim() < b.dim()) {
      const Shape a_batch(a.shape().begin(), a.shape().end() - 2), b_batch(b.shape().begin(), b.shape().end() - 2);
      Shape batch = BroadcastShapes(a_batch, b_batch, "MatMul");
      Shape a_full = batch, b_full = batch;
      a_full.insert(a_full.end(), a.shape().end() - 2, a.shape().end());
      b_full.insert(b_full.end(), b.shape().end() - 2, b.shape().end());
      if (a.shape() != a_full) a = a.Expand(a_full);
      if (b.shape() != b_full) b = b.Expand(b_full);
    }
    Tensor y = Matmul(a, b);
    if (b_vector) y = y.Squeeze(-1);
    if (a_vector) y = y.Squeeze(y.dim() - (b_vector ? 1 : 2));
    return {FloatValue(y)};
  };
}

Kernel GemmKernel(const NodeView& node) {
  node.RequireInputs(2, 3);
  const bool trans_a = node.Int("transA", 0) != 0, trans_b = node.Int("transB", 0) != 0;
  const float alpha = node.Float("alpha", 1.0f), beta = node.Float("beta", 1.0f);
  node.Int("broadcast", 1);  // opsets before 7: C broadcasts by NumPy's rules either way
  return [trans_a, trans_b, alpha, beta](const Values& in, RunContext&) -> Values {
    Tensor a = FloatInput(Input(in, 0, "Gemm"), "Gemm");
    Tensor b = FloatInput(Input(in, 1, "Gemm"), "Gemm");
    LOCKSTEP_REQUIRE(a.dim() == 2 && b.dim() == 2, "Gemm: expected 2-D A and B, got " << ShapeString(a.shape())
                                                                                       << " and " << ShapeString(b.shape()));
    const Tensor c = in.size() > 2 && in[2].defined() ? FloatInput(in[2], "Gemm") : Tensor();
    Tensor y;
    if (!trans_a && trans_b && alpha == 1.0f && beta == 1.0f && (!c.defined() || c.dim() == 1)) {
      // A Linear layer: x W^T + b (what PyTorch's nn.Linear exports).
      y = Linear(a, b, c.defined() && c.size(0) == b.size(0) ? c : Tensor());
      if (c.defined() && c.size(0) != b.size(0)) y = Add(y, c);
      return {FloatValue(y)};
    }
    y = Matmul(trans_a ? a.Transpose(0, 1) : a, trans_b ? b.Transpose(0, 1) : b);
    if (alpha != 1.0f) y = MulScalar(y, alpha);
    if (c.defined()) y = Add(y, beta != 1.0f ? MulScalar(c, beta) : c);
    return {FloatValue(y)};
  };
}

Kernel ConvKernel(const NodeView& node) {
  node.RequireInputs(2, 3);
  const Window w = ReadWindow(node, 0, false);
  const int64_t group = node.Int("group", 1);
  node.Require(group >= 1, "group must be >= 1");
  return [w, group](const Values& in, RunContext&) -> Values {
    Tensor x = FloatInput(Input(in, 0, "Conv"), "Conv");
    Tensor weight = FloatInput(Input(in, 1, "Conv"), "Conv");
    const Tensor bias = in.size() > 2 && in[2].defined() ? FloatInput(in[2], "Conv") : Tensor();
    LOCKSTEP_REQUIRE(x.dim() == weight.dim() && x.dim() >= 3,
                     "Conv: input " << ShapeString(x.shape()) << " and weight " << ShapeString(weight.shape())
                                    << " must both be [N, C, spatial...] of the same rank");
    if (x.dim() == 5) {
      Window geo = w;
      if (geo.kernel.empty()) geo.kernel.assign(weight.shape().begin() + 2, weight.shape().end());
      if (geo.strides.size() != 3) geo.strides.assign(3, 1);
      if (geo.dilations.size() != 3) geo.dilations.assign(3, 1);
      return {FloatValue(Conv3dBySlices(x, weight, bias, geo, group))};
    }
    if (x.dim() > 5) RunUnsupported("Conv: unsupported: " + std::to_string(x.dim() - 2) + "-D convolution");
    return {FloatValue(ConvPlanar(w, group, x, weight, bias, nullptr))};
  };
}

}  // namespace

Tensor ConvPlanar(const Window& w, int64_t group, Tensor x, Tensor weight, const Tensor& bias,
                  const ConvNormActivation* after) {
  LOCKSTEP_REQUIRE(x.dim() == weight.dim() && (x.dim() == 3 || x.dim() == 4),
                   "Conv: input " << ShapeString(x.shape()) << " and weight " << ShapeString(weight.shape())
                                  << " must both be [N, C, L] or [N, C, H, W]");
  const size_t k = static_cast<size_t>(x.dim() - 2);
  Window geo = w;
  if (geo.kernel.empty()) geo.kernel.assign(weight.shape().begin() + 2, weight.shape().end());
  if (geo.strides.size() != k) geo.strides.assign(k, 1);
  if (geo.dilations.size() != k) geo.dilations.assign(k, 1);
  LOCKSTEP_REQUIRE(geo.kernel.size() == k && Shape(weight.shape().begin() + 2, weight.shape().end()) == geo.kernel,
                   "Conv: kernel_shape does not match the weight " << ShapeString(weight.shape()));
  const bool one_d = k == 1;
  x = As2d(x);
  weight = As2d(weight);
  std::vector<int64_t> begin(2, 0), end(2, 0), stride(2, 1), dilation(2, 1);
  for (size_t i = 0; i < k; ++i) {
    const size_t axis = one_d ? 1 : i;
    geo.Padding(i, x.size(2 + axis), &begin[axis], &end[axis]);
    stride[axis] = geo.strides[i];
    dilation[axis] = geo.dilations[i];
  }
  Conv2dOptions o{stride[0], stride[1], 0, 0, dilation[0], dilation[1], group};
  for (int a = 0; a < 2; ++a) {
    if (begin[a] == end[a]) {
      (a == 0 ? o.padding_h : o.padding_w) = begin[a];
    } else {
      x = PadWith(x, 2 + a, begin[a], end[a], 0.0f);
    }
  }
  const Tensor y = after != nullptr ? Conv2dNormActivation(x, weight, bias, o, *after) : Conv2d(x, weight, bias, o);
  return one_d ? y.Squeeze(2) : y;
}

namespace {

// ConvTranspose: lockstep's transposed convolution without padding (the whole output a kernel
// reaches), then cut to ONNX's output (pads, output_padding, output_shape or auto_pad), zeros where
// that reaches past it, then the bias.
Kernel ConvTransposeKernel(const NodeView& node) {
  node.RequireInputs(2, 3);
  const Window w = ReadWindow(node, 0, false);
  const int64_t group = node.Int("group", 1);
  node.Require(group >= 1, "group must be >= 1");
  const std::vector<int64_t> output_padding = node.Ints("output_padding", {});
  const std::vector<int64_t> output_shape = node.Ints("output_shape", {});
  return [w, group, output_padding, output_shape](const Values& in, RunContext&) -> Values {
    Tensor x = FloatInput(Input(in, 0, "ConvTranspose"), "ConvTranspose");
    Tensor weight = FloatInput(Input(in, 1, "ConvTranspose"), "ConvTranspose");
    const Tensor bias = in.size() > 2 && in[2].defined() ? FloatInput(in[2], "ConvTranspose") : Tensor();
    LOCKSTEP_REQUIRE(x.dim() == weight.dim() && x.dim() >= 3,
                     "ConvTranspose: input " << ShapeString(x.shape()) << " and weight " << ShapeString(weight.shape())
                                             << " must both be [N, C, spatial...] of the same rank");
    if (x.dim() > 4) {
      RunUnsupported("ConvTranspose: unsupported: " + std::to_string(x.dim() - 2) +
                     "-D convolution; lockstep computes 1-D and 2-D");
    }
    const size_t k = static_cast<size_t>(x.dim() - 2);
    const Shape kernel(weight.shape().begin() + 2, weight.shape().end());
    LOCKSTEP_REQUIRE(w.kernel.empty() || Shape(w.kernel.begin(), w.kernel.end()) == kernel,
                     "ConvTranspose: kernel_shape does not match the weight " << ShapeString(weight.shape()));
    const auto at = [k](const std::vector<int64_t>& v, size_t i, int64_t fallback) {
      return v.size() == k ? v[i] : fallback;
    };
    const bool one_d = k == 1;
    x = As2d(x);
    weight = As2d(weight);
    ConvTranspose2dOptions o;
    o.groups = group;
    std::vector<int64_t> begin(2, 0), size(2, 1);
    for (size_t i = 0; i < k; ++i) {
      const size_t axis = one_d ? 1 : i;
      const int64_t n = x.size(2 + axis), stride = at(w.strides, i, 1), dilation = at(w.dilations, i, 1);
      const int64_t extra = at(output_padding, i, 0);
      const int64_t natural = stride * (n - 1) + extra + (kernel[i] - 1) * dilation + 1;
      int64_t pad_begin = 0, pad_end = 0;
      const bool same = w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER";
      if (!output_shape.empty() || same) {
        const int64_t wanted = !output_shape.empty() ? output_shape[output_shape.size() - k + i] : n * stride;
        const int64_t total = natural - wanted;
        const int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);  // floor(total / 2), as ONNX's
        pad_begin = w.auto_pad == "SAME_UPPER" ? half : total - half;
        pad_end = total - pad_begin;
      } else if (w.auto_pad != "VALID" && !w.pads.empty()) {
        pad_begin = w.pads[i];
        pad_end = w.pads[i + k];
      }
      (axis == 0 ? o.stride_h : o.stride_w) = stride;
      (axis == 0 ? o.dilation_h : o.dilation_w) = dilation;
      begin[axis] = pad_begin;
      size[axis] = natural - pad_begin - pad_end;
      LOCKSTEP_REQUIRE(size[axis] >= 1, "ConvTranspose: the padding leaves no output along spatial axis " << i);
    }
    Tensor y = ConvTranspose2d(x, weight, Tensor(), o);
    for (int a = 0; a < 2; ++a) {  // rows [begin, begin + size) of y, zeros past its ends
      const int64_t full = y.size(2 + a);
      const int64_t lo = std::max<int64_t>(begin[a], 0), hi = std::min<int64_t>(begin[a] + size[a], full);
      y = y.Slice(2 + a, lo, std::max(lo, hi));
      y = PadWith(y, 2 + a, lo - begin[a], begin[a] + size[a] - std::max(lo, hi), 0.0f);
    }
    if (bias.defined()) {
      LOCKSTEP_REQUIRE(bias.shape() == Shape{y.size(1)}, "ConvTranspose: bias " << ShapeString(bias.shape()) << " for "
                                                                                << y.size(1) << " output channels");
      y = Add(y, bias.Reshape({y.size(1), 1, 1}));
    }
    return {FloatValue(one_d ? y.Squeeze(2) : y)};
  };
}

Kernel MaxPoolKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  const Window w = ReadWindow(node, 0, true);
  bool by_slices = w.kernel.size() == 3;  // 3-D and dilated windows: one strided slice per offset
  for (int64_t d : w.dilations) by_slices = by_slices || d != 1;
  const bool want_indices = node.HasOutput(1), column_major = node.Int("storage_order", 0) != 0;
  return [w, by_slices, want_indices, column_major](const Values& in, RunContext&) -> Values {
    if (want_indices) {  // the values by slices, the indices on the host, both by the contract's order
      const Tensor x = FloatInput(Input(in, 0, "MaxPool"), "MaxPool");
      return {FloatValue(PoolBySlices(x, w, true, false)), MaxPoolIndices(x, w, column_major)};
    }
    // Integers of up to 16 bits are exact in float32, and a maximum only selects: pooled as floats.
    const Value& input = Input(in, 0, "MaxPool");
    const bool small_int = input.elem == Elem::kInt8 || input.elem == Elem::kUInt8 || input.elem == Elem::kInt16 ||
                           input.elem == Elem::kUInt16;
    Tensor x = small_int ? CastValue(input, Elem::kFloat).tensor : FloatInput(input, "MaxPool");
    if (by_slices) {
      const Value pooled = FloatValue(PoolBySlices(x, w, true, false));
      return {small_int ? CastValue(pooled, input.elem) : pooled};
    }
    const size_t k = w.kernel.size();
    LOCKSTEP_REQUIRE(x.dim() == static_cast<int64_t>(k) + 2, "MaxPool: input " << ShapeString(x.shape()) << " for a "
                                                                              << k << "-D window");
    const bool one_d = k == 1;
    x = As2d(x);
    std::vector<int64_t> begin(2, 0), end(2, 0), kernel(2, 1), stride(2, 1);
    for (size_t i = 0; i < k; ++i) {
      const size_t axis = one_d ? 1 : i;
      w.Padding(i, x.size(2 + axis), &begin[axis], &end[axis]);
      kernel[axis] = w.kernel[i];
      stride[axis] = w.strides[i];
    }
    Pool2dOptions o{kernel[0], kernel[1], stride[0], stride[1]};
    const float lowest = -__builtin_inff();
    for (int a = 0; a < 2; ++a) {
      if (begin[a] == end[a] && 2 * begin[a] <= kernel[a]) {
        (a == 0 ? o.padding_h : o.padding_w) = begin[a];
      } else {
        x = PadWith(x, 2 + a, begin[a], end[a], lowest);  // padding never wins a maximum
      }
    }
    const Tensor y = MaxPool2d(x, o);
    const Value pooled = FloatValue(one_d ? y.Squeeze(2) : y);
    return {small_int ? CastValue(pooled, input.elem) : pooled};
  };
}

Kernel AveragePoolKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  const Window w = ReadWindow(node, 0, true);
  // 3-D, dilated and ceil_mode windows: one strided slice per offset, added in offset order.
  bool by_slices = w.kernel.size() == 3 || w.ceil_mode;
  for (int64_t d : w.dilations) by_slices = by_slices || d != 1;
  const bool count_include_pad = node.Int("count_include_pad", 0) != 0;
  return [w, count_include_pad, by_slices](const Values& in, RunContext&) -> Values {
    Tensor x = FloatInput(Input(in, 0, "AveragePool"), "AveragePool");
    if (by_slices) return {FloatValue(PoolBySlices(x, w, false, count_include_pad))};
    const size_t k = w.kernel.size();
    LOCKSTEP_REQUIRE(x.dim() == static_cast<int64_t>(k) + 2, "AveragePool: input " << ShapeString(x.shape())
                                                                                  << " for a " << k << "-D window");
    const bool one_d = k == 1;
    x = As2d(x);
    std::vector<int64_t> begin(2, 0), end(2, 0), kernel(2, 1), stride(2, 1);
    for (size_t i = 0; i < k; ++i) {
      const size_t axis = one_d ? 1 : i;
      w.Padding(i, x.size(2 + axis), &begin[axis], &end[axis]);
      kernel[axis] = w.kernel[i];
      stride[axis] = w.strides[i];
    }
    for (int a = 0; a < 2; ++a) {
      if (begin[a] >= kernel[a] || end[a] >= kernel[a]) {
        RunUnsupported("AveragePool: padding as large as the window (a window of padding only)");
      }
    }
    Pool2dOptions o{kernel[0], kernel[1], stride[0], stride[1], begin[0], begin[1], end[0], end[1], count_include_pad};
    const Tensor y = AvgPool2d(x, o);
    return {FloatValue(one_d ? y.Squeeze(2) : y)};
  };
}

// [N, C, spatial...] -> [N, C, 1, S]: global pooling as one window.
Kernel GlobalPoolKernel(const NodeView& node, bool max) {
  node.RequireInputs(1, 1);
  return [max](const Values& in, RunContext&) -> Values {
    const Tensor x = FloatInput(Input(in, 0, "GlobalPool"), max ? "GlobalMaxPool" : "GlobalAveragePool");
    LOCKSTEP_REQUIRE(x.dim() >= 3, "global pooling: expected [N, C, spatial...], got " << ShapeString(x.shape()));
    const int64_t n = x.size(0), c = x.size(1), s = x.numel() / (n * c == 0 ? 1 : n * c);
    Shape out(x.shape().size(), 1);
    out[0] = n;
    out[1] = c;
    Tensor y;
    if (max) {
      y = MaxPool2d(x.Reshape({n, c, 1, s}), Pool2dOptions{1, s, 1, s});
    } else {
      y = Mean(x.Reshape({n, c, s}), 2, true);  // the canonical mean over the positions
    }
    return {FloatValue(y.Reshape(out))};
  };
}

Kernel BatchNormKernel(const NodeView& node) { return BatchNormActivationKernel(node, BatchNormActivation()); }

}  // namespace

Kernel BatchNormActivationKernel(const NodeView& node, const BatchNormActivation& after) {
  node.RequireInputs(5, 5);
  if (node.Int("training_mode", 0) != 0 || node.outputs() > 1) {
    node.Unsupported("BatchNormalization in training mode (extra outputs); lockstep uses batch statistics while "
                     "the module trains and the running ones otherwise");
  }
  if (node.opset() < 9 && node.Int("spatial", 1) != 1) node.Unsupported("spatial = 0 (per-position statistics)");
  if (node.opset() < 7 && node.Int("is_test", 0) == 0) {
    node.Unsupported("is_test = 0 (training mode) in a graph: lockstep uses batch statistics while the module trains");
  }
  const float eps = node.Float("epsilon", 1e-5f);
  const float momentum = 1.0f - node.Float("momentum", 0.9f);  // ONNX keeps the running share
  return [eps, momentum, after](const Values& in, RunContext& context) -> Values {
    const Tensor x = FloatInput(Input(in, 0, "BatchNormalization"), "BatchNormalization");
    Tensor t[4];
    for (int i = 0; i < 4; ++i) t[i] = FloatInput(Input(in, i + 1, "BatchNormalization"), "BatchNormalization");
    LOCKSTEP_REQUIRE(x.dim() >= 2, "BatchNormalization: expected [N, C, ...], got " << ShapeString(x.shape()));
    const Tensor x4 = x.dim() == 2 || x.dim() == 4 ? x : x.Reshape({x.size(0), x.size(1), -1, 1});
    const Tensor y = BatchNorm(x4, t[2], t[3], t[0], t[1], context.training, momentum, eps, after);
    return {FloatValue(y.Reshape(x.shape()))};
  };
}

namespace {

Kernel LayerNormKernel(const NodeView& node) {
  node.RequireInputs(2, 3);
  const int64_t axis_attr = node.Int("axis", -1);
  const float eps = node.Float("epsilon", 1e-5f);
  node.Require(node.Int("stash_type", 1) == 1, "stash_type must be 1 (float)");
  const std::string where = node.Where();
  const bool want_stats = node.HasOutput(1) || node.HasOutput(2);
  return [axis_attr, eps, where, want_stats](const Values& in, RunContext&) -> Values {
    const Tensor x = FloatInput(Input(in, 0, "LayerNormalization"), "LayerNormalization");
    const int64_t axis = Axis(axis_attr, x.dim(), where);
    const Shape normalized(x.shape().begin() + axis, x.shape().end());
    Tensor scale = FloatInput(Input(in, 1, "LayerNormalization"), "LayerNormalization");
    Tensor bias = in.size() > 2 && in[2].defined() ? FloatInput(in[2], "LayerNormalization") : Tensor();
    if (scale.shape() != normalized) scale = scale.Expand(normalized);
    if (bias.defined() && bias.shape() != normalized) bias = bias.Expand(normalized);
    Values out{FloatValue(LayerNorm(x, x.dim() - axis, scale, bias, eps))};
    if (want_stats) {
      // The statistics the normalisation used, computed the same way (canonical mean, rsqrt).
      const int64_t d = NumElements(normalized), rows = d == 0 ? 0 : x.numel() / d;
      Shape stat_shape(x.shape().begin(), x.shape().begin() + axis);
      stat_shape.resize(x.shape().size(), 1);
      const Tensor flat = x.Reshape({rows, d});
      const Tensor mean = Mean(flat, 1, true);
      const Tensor centered = Sub(flat, mean);
      const Tensor inv_std = Rsqrt(AddScalar(Mean(Mul(centered, centered), 1, true), eps));
      out.push_back(FloatValue(mean.Reshape(stat_shape)));
      out.push_back(FloatValue(inv_std.Reshape(stat_shape)));
    }
    return out;
  };
}

Kernel InstanceNormKernel(const NodeView& node) {
  node.RequireInputs(3, 3);
  const float eps = node.Float("epsilon", 1e-5f);
  return [eps](const Values& in, RunContext&) -> Values {
    const Tensor x = FloatInput(Input(in, 0, "InstanceNormalization"), "InstanceNormalization");
    const Tensor scale = FloatInput(Input(in, 1, "InstanceNormalization"), "InstanceNormalization");
    const Tensor bias = FloatInput(Input(in, 2, "InstanceNormalization"), "InstanceNormalization");
    LOCKSTEP_REQUIRE(x.dim() >= 3 && scale.shape() == Shape{x.size(1)} && bias.shape() == Shape{x.size(1)},
                     "InstanceNormalization: expected [N, C, ...] with scale and bias [C]");
    // Each (sample, channel) normalised over its positions, then the channel's affine map.
    const int64_t n = x.size(0), c = x.size(1);
    const Tensor normalized = LayerNorm(x.Reshape({n, c, -1}), 1, Tensor(), Tensor(), eps);
    const Tensor y = Add(Mul(normalized, scale.Reshape({c, 1})), bias.Reshape({c, 1}));
    return {FloatValue(y.Reshape(x.shape()))};
  };
}

Kernel SoftmaxKernel(const NodeView& node, bool log) {
  node.RequireInputs(1, 1);
  const bool coerced = node.opset() < 13;  // before opset 13: softmax of the 2-D [outer, axis...] view
  const int64_t axis_attr = node.Int("axis", coerced ? 1 : -1);
  const std::string where = node.Where();
  return [coerced, axis_attr, log, where](const Values& in, RunContext&) -> Values {
    const Tensor x = FloatInput(Input(in, 0, log ? "LogSoftmax" : "Softmax"), log ? "LogSoftmax" : "Softmax");
    const int64_t axis = Axis(axis_attr, x.dim(), where);
    if (!coerced) return {FloatValue(log ? LogSoftmax(x, axis) : Softmax(x, axis))};
    const int64_t outer = NumElements(Shape(x.shape().begin(), x.shape().begin() + axis));
    const Tensor rows = x.Reshape({outer, NumElements(Shape(x.shape().begin() + axis, x.shape().end()))});
    const Tensor y = log ? LogSoftmax(rows, 1) : Softmax(rows, 1);
    return {FloatValue(y.Reshape(x.shape()))};
  };
}

// One-hot of the first maximum along the axis (opsets before 13: of the [outer, axis...] rows).
Kernel HardmaxKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  const bool coerced = node.opset() < 13;
  const int64_t axis_attr = node.Int("axis", coerced ? 1 : -1);
  const std::string where = node.Where();
  return [coerced, axis_attr, where](const Values& in, RunContext&) -> Values {
    const Tensor x = FloatInput(Input(in, 0, "Hardmax"), "Hardmax");
    const int64_t axis = Axis(axis_attr, x.dim(), where);
    Tensor rows = x;
    int64_t d = axis;
    if (coerced) {
      const int64_t outer = NumElements(Shape(x.shape().begin(), x.shape().begin() + axis));
      rows = x.Reshape({outer, NumElements(Shape(x.shape().begin() + axis, x.shape().end()))});
      d = 1;
    }
    const int64_t n = rows.size(d);
    Shape position(static_cast<size_t>(rows.dim()), 1);
    position[d] = n;
    const Tensor index = Tensor::Arange(n, DType::kFloat32).Reshape(position);
    const Tensor first = Argmax(rows, d, true).To(DType::kFloat32);
    return {FloatValue(Equal(index, first).Reshape(x.shape()))};
  };
}

}  // namespace

void AddNetworkOps(std::vector<OpSpec>* t) {
  t->push_back(OpSpec{"MatMul", 1, MatMulKernel}.Scope("N-D, NumPy broadcasting, vectors"));
  t->push_back(OpSpec{"Gemm", 1, GemmKernel}.Reads({"alpha", "beta", "broadcast", "transA", "transB"}));
  t->push_back(OpSpec{"Conv", 1, ConvKernel}
                   .Reads({"auto_pad", "ceil_mode", "dilations", "group", "kernel_shape", "pads", "strides"})
                   .Scope("1-D, 2-D and 3-D"));
  t->push_back(OpSpec{"MaxPool", 1, MaxPoolKernel}
                   .Reads({"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order",
                           "strides"})
                   .Scope("1-D to 3-D; the Indices output"));
  t->push_back(OpSpec{"ConvTranspose", 1, ConvTransposeKernel}
                   .Reads({"auto_pad", "ceil_mode", "dilations", "group", "kernel_shape", "output_padding",
                           "output_shape", "pads", "strides"})
                   .Scope("1-D and 2-D"));
  t->push_back(OpSpec{"AveragePool", 1, AveragePoolKernel}
                   .Reads({"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape", "pads",
                           "strides"})
                   .Scope("1-D to 3-D"));
  t->push_back({"GlobalAveragePool", 1, [](const NodeView& n) { return GlobalPoolKernel(n, false); }});
  t->push_back({"GlobalMaxPool", 1, [](const NodeView& n) { return GlobalPoolKernel(n, true); }});
  t->push_back(OpSpec{"BatchNormalization", 1, BatchNormKernel, {}, {3, 4}}
                   .Reads({"epsilon", "is_test", "momentum", "spatial", "training_mode"})
                   .Scope("inference and lockstep training; not ONNX's training-mode outputs"));
  t->push_back(OpSpec{"LayerNormalization", 17, LayerNormKernel}
                   .Reads({"axis", "epsilon", "stash_type"})
                   .Scope("the Mean and InvStdDev outputs too"));
  t->push_back(OpSpec{"InstanceNormalization", 1, InstanceNormKernel}.Reads({"epsilon"}));
  t->push_back(OpSpec{"Softmax", 1, [](const NodeView& n) { return SoftmaxKernel(n, false); }}
                   .Reads({"axis"}));
  t->push_back(OpSpec{"LogSoftmax", 1, [](const NodeView& n) { return SoftmaxKernel(n, true); }}
                   .Reads({"axis"}));
  t->push_back(OpSpec{"Hardmax", 1, HardmaxKernel}.Reads({"axis"}));
}

}  // namespace onnx
}  // namespace lockstep
