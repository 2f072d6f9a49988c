// Convolution (the contract's im2col + GEMM, computed by the kernel table's convolution entries)
// and pooling. Reduction orders (docs/numerics.md):
//  - forward: each output sums its C_in/groups * kh * kw products in increasing (channel, kernel
//    row, kernel column) order, then adds the bias;
//  - input gradient: columns = W^T dY (K = output channels, increasing), then each input element
//    starts at +0 and adds its column entries in increasing (channel, kernel row, kernel column,
//    output row, output column) order;
//  - weight gradient: K runs over (sample, output row, output column) in groups of kBatchGroup
//    samples combined pairwise; bias gradient likewise.
#include <algorithm>
#include <vector>

#include "core/autograd.h"
#include "core/conv_internal.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/trace/trace.h"
#include "core/ops_internal.h"

namespace lockstep {

ConvGeometry MakeConvGeometry(const Shape& x, const Shape& w, const Conv2dOptions& o) {
  ConvGeometry g;
  g.n = x[0]; g.c_in = x[1]; g.h = x[2]; g.w = x[3];
  g.c_out = w[0]; g.kh = w[2]; g.kw = w[3];
  g.o = o;
  g.c_in_group = g.c_in / o.groups;
  g.c_out_group = g.c_out / o.groups;
  g.h_out = (g.h + 2 * o.padding_h - o.dilation_h * (g.kh - 1) - 1) / o.stride_h + 1;
  g.w_out = (g.w + 2 * o.padding_w - o.dilation_w * (g.kw - 1) - 1) / o.stride_w + 1;
  g.k = g.c_in_group * g.kh * g.kw;
  g.positions = g.h_out * g.w_out;
  return g;
}

backend::ConvCall ConvCallOf(const ConvGeometry& g, int64_t samples, int64_t ld) {
  const Conv2dOptions& o = g.o;
  return backend::ConvCall{g.c_in_group, g.h, g.w, g.kh, g.kw, g.h_out, g.w_out,
                           o.stride_h, o.stride_w, o.padding_h, o.padding_w, o.dilation_h, o.dilation_w,
                           samples, g.c_in * g.h * g.w, ld};
}

backend::Conv2dCall Conv2dCallOf(const ConvGeometry& g, int64_t groups) {
  backend::Conv2dCall call{};
  call.conv = ConvCallOf(g, g.n, 0);
  call.c_out_group = g.c_out_group;
  call.out_sample_stride = g.c_out * g.positions;
  call.samples_per_group = kBatchGroup;
  call.groups = groups;
  return call;
}

// Index space [sample, channel, position]: in the GEMM layout element (s, c, p) is at
// c * width + s * positions + p, in the tensor at (s * total_channels + c) * positions + p.
backend::StridedCopyCall GemmLayoutCopy(const float* from, float* to, int64_t samples, int64_t channels,
                                        int64_t positions, int64_t total_channels, bool gemm_to_tensor) {
  const int64_t gemm_strides[3] = {positions, samples * positions, 1};
  const int64_t tensor_strides[3] = {total_channels * positions, positions, 1};
  backend::StridedCopyCall call{};
  call.rank = 3;
  call.shape[0] = samples;
  call.shape[1] = channels;
  call.shape[2] = positions;
  for (int d = 0; d < 3; ++d) {
    call.src_strides[d] = gemm_to_tensor ? gemm_strides[d] : tensor_strides[d];
    call.dst_strides[d] = gemm_to_tensor ? tensor_strides[d] : gemm_strides[d];
  }
  call.src = from;
  call.dst = to;
  return call;
}

Tensor Conv2d(const Tensor& x_in, const Tensor& w_in, const Tensor& bias_in, const Conv2dOptions& o) {
  return trace::Op("conv2d", [&] { return Conv2dWith(x_in, w_in, bias_in, o, backend::ConvEpilogue{}); });
}

Tensor Conv2dWith(const Tensor& x_in, const Tensor& w_in, const Tensor& bias_in, const Conv2dOptions& o,
                  const backend::ConvEpilogue& epilogue) {
  const Tensor x = ContiguousData(x_in, "conv2d"), w = ContiguousData(w_in, "conv2d");
  LOCKSTEP_REQUIRE(x.dim() == 4, "conv2d: expected input [N, C, H, W], got " << ShapeString(x.shape()));
  LOCKSTEP_REQUIRE(w.dim() == 4, "conv2d: expected weight [C_out, C_in/groups, kh, kw], got " << ShapeString(w.shape()));
  LOCKSTEP_REQUIRE(o.groups >= 1 && o.stride_h >= 1 && o.stride_w >= 1 && o.dilation_h >= 1 &&
                       o.dilation_w >= 1 && o.padding_h >= 0 && o.padding_w >= 0,
                   "conv2d: stride, dilation and groups must be >= 1 and padding >= 0");
  LOCKSTEP_REQUIRE(x.size(1) % o.groups == 0 && w.size(0) % o.groups == 0 && w.size(1) * o.groups == x.size(1),
                   "conv2d: input " << ShapeString(x.shape()) << " and weight " << ShapeString(w.shape())
                                    << " do not match with groups=" << o.groups);
  const ConvGeometry g = MakeConvGeometry(x.shape(), w.shape(), o);
  LOCKSTEP_REQUIRE(g.h_out >= 1 && g.w_out >= 1, "conv2d: the kernel " << ShapeString(w.shape())
                                                                      << " does not fit the padded input "
                                                                      << ShapeString(x.shape()));
  Tensor bias;
  if (bias_in.defined()) {
    bias = ContiguousData(bias_in, "conv2d");
    LOCKSTEP_REQUIRE(bias.shape() == Shape{g.c_out}, "conv2d: bias shape " << ShapeString(bias.shape())
                                                                           << " does not match " << g.c_out << " output channels");
  }
  Tensor out = Tensor::Empty({g.n, g.c_out, g.h_out, g.w_out});
  // Every group in one call: a depthwise layer is hundreds of groups, each too small for a call.
  backend::Conv2dCall call = Conv2dCallOf(g, o.groups);
  call.epilogue = epilogue;
  Kernels().Conv2dForward(&call, x.data_f32(), w.data_f32(), bias.defined() ? bias.data_f32() : nullptr,
                          out.data_f32());
  if (NeedsGrad({x_in, w_in, bias_in})) {
    LOCKSTEP_ASSERT(epilogue.mean == nullptr && epilogue.activation == backend::kConvNoActivation);
    Node& node = RecordNode(out, OpKind::kConv2d, {x_in, w_in, bias_in});
    node.ints = {o.stride_h, o.stride_w, o.padding_h, o.padding_w, o.dilation_h, o.dilation_w, o.groups};
  }
  return out;
}

Tensor ConvTranspose2d(const Tensor& x_in, const Tensor& w_in, const Tensor& bias, const ConvTranspose2dOptions& t) {
  return trace::Op("conv_transpose2d", [&]() -> Tensor {
    const Tensor x = ContiguousData(x_in, "conv_transpose2d"), w = ContiguousData(w_in, "conv_transpose2d");
    LOCKSTEP_REQUIRE(x.dim() == 4, "conv_transpose2d: expected input [N, C_in, H, W], got " << ShapeString(x.shape()));
    LOCKSTEP_REQUIRE(w.dim() == 4, "conv_transpose2d: expected weight [C_in, C_out/groups, kh, kw], got "
                                       << ShapeString(w.shape()));
    LOCKSTEP_REQUIRE(t.groups >= 1 && t.stride_h >= 1 && t.stride_w >= 1 && t.dilation_h >= 1 && t.dilation_w >= 1 &&
                         t.padding_h >= 0 && t.padding_w >= 0 && t.output_padding_h >= 0 && t.output_padding_w >= 0,
                     "conv_transpose2d: stride, dilation and groups must be >= 1, padding and output_padding >= 0");
    LOCKSTEP_REQUIRE((t.output_padding_h < t.stride_h || t.output_padding_h < t.dilation_h) &&
                         (t.output_padding_w < t.stride_w || t.output_padding_w < t.dilation_w),
                     "conv_transpose2d: output_padding must be smaller than the stride or the dilation (as PyTorch's)");
    LOCKSTEP_REQUIRE(x.size(1) == w.size(0) && x.size(1) % t.groups == 0,
                     "conv_transpose2d: input " << ShapeString(x.shape()) << " and weight " << ShapeString(w.shape())
                                                << " do not match with groups=" << t.groups
                                                << " (weight [C_in, C_out/groups, kh, kw])");
    const int64_t c_out = w.size(1) * t.groups;
    const int64_t h_out = (x.size(2) - 1) * t.stride_h - 2 * t.padding_h + t.dilation_h * (w.size(2) - 1) +
                          t.output_padding_h + 1;
    const int64_t w_out = (x.size(3) - 1) * t.stride_w - 2 * t.padding_w + t.dilation_w * (w.size(3) - 1) +
                          t.output_padding_w + 1;
    LOCKSTEP_REQUIRE(h_out >= 1 && w_out >= 1, "conv_transpose2d: the padding leaves no output for input "
                                                   << ShapeString(x.shape()) << " and weight " << ShapeString(w.shape()));
    // The convolution whose input gradient this is: from [N, C_out, h_out, w_out] to x's shape.
    const Conv2dOptions o{t.stride_h, t.stride_w, t.padding_h, t.padding_w, t.dilation_h, t.dilation_w, t.groups};
    const ConvGeometry geo = MakeConvGeometry({x.size(0), c_out, h_out, w_out}, w.shape(), o);
    LOCKSTEP_ASSERT(geo.h_out == x.size(2) && geo.w_out == x.size(3));
    Tensor out = Tensor::Empty({x.size(0), c_out, h_out, w_out});  // every element written
    const backend::Conv2dCall call = Conv2dCallOf(geo);
    const Kernels kernels;
    for (int64_t grp = 0; grp < t.groups; ++grp) {
      kernels.Conv2dInputGrad(&call, x.data_f32() + grp * geo.c_out_group * geo.positions,
                              w.data_f32() + grp * geo.c_out_group * geo.k,
                              out.data_f32() + grp * geo.c_in_group * geo.h * geo.w);
    }
    if (NeedsGrad({x_in, w_in})) {
      Node& node = RecordNode(out, OpKind::kConvTranspose2d, {x_in, w_in});
      node.ints = {o.stride_h, o.stride_w, o.padding_h, o.padding_w, o.dilation_h, o.dilation_w, o.groups};
    }
    return bias.defined() ? Add(out, bias.Reshape({c_out, 1, 1})) : out;
  });
}

namespace {

// Max pooling keeps PyTorch's rule (padding at most half the kernel); average pooling allows any
// padding smaller than the kernel, so every window holds at least one input position.
void ValidatePool(const Tensor& x, const Pool2dOptions& o, const char* name, bool average = false) {
  LOCKSTEP_REQUIRE(x.dim() == 4, name << ": expected input [N, C, H, W], got " << ShapeString(x.shape()));
  const int64_t ph_end = o.padding_h_end < 0 ? o.padding_h : o.padding_h_end;
  const int64_t pw_end = o.padding_w_end < 0 ? o.padding_w : o.padding_w_end;
  const auto fits = [average](int64_t padding, int64_t kernel) {
    return padding >= 0 && (average ? padding < kernel : 2 * padding <= kernel);
  };
  LOCKSTEP_REQUIRE(o.kernel_h >= 1 && o.kernel_w >= 1 && o.stride_h >= 1 && o.stride_w >= 1 &&
                       fits(o.padding_h, o.kernel_h) && fits(o.padding_w, o.kernel_w) && fits(ph_end, o.kernel_h) &&
                       fits(pw_end, o.kernel_w),
                   name << ": kernel and stride must be >= 1 and padding at most "
                        << (average ? "the kernel size - 1" : "half the kernel"));
  LOCKSTEP_REQUIRE(x.size(2) + o.padding_h + ph_end >= o.kernel_h && x.size(3) + o.padding_w + pw_end >= o.kernel_w,
                   name << ": the kernel " << o.kernel_h << "x" << o.kernel_w << " does not fit the input "
                        << ShapeString(x.shape()));
}

// PyTorch's output size; with ceil_mode the last window must start inside the input or its left
// padding.
int64_t PoolOut(int64_t size, int64_t kernel, int64_t stride, int64_t padding, bool ceil_mode = false) {
  int64_t out = (size + 2 * padding - kernel + (ceil_mode ? stride - 1 : 0)) / stride + 1;
  if (ceil_mode && (out - 1) * stride >= size + padding) --out;
  return out;
}

}  // namespace

backend::PoolCall MaxPoolCall(const Shape& in, int64_t h_out, int64_t w_out, const Pool2dOptions& o) {
  return backend::PoolCall{in[0] * in[1], in[2], in[3], h_out, w_out, o.kernel_h, o.kernel_w, o.stride_h, o.stride_w,
                           o.padding_h, o.padding_w, o.padding_h, o.padding_w, 1};
}

Tensor MaxPool2d(const Tensor& x_in, const Pool2dOptions& o) {
  return trace::Op("max_pool2d", [&]() -> Tensor {
    const Tensor x = ContiguousData(x_in, "max_pool2d");
    ValidatePool(x, o, "max_pool2d");
    LOCKSTEP_REQUIRE((o.padding_h_end < 0 || o.padding_h_end == o.padding_h) &&
                         (o.padding_w_end < 0 || o.padding_w_end == o.padding_w) && o.count_include_pad,
                     "max_pool2d: padding must be the same on both sides (and count_include_pad is for average pooling)");
    const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
    const int64_t ho = PoolOut(h, o.kernel_h, o.stride_h, o.padding_h, o.ceil_mode);
    const int64_t wo = PoolOut(w, o.kernel_w, o.stride_w, o.padding_w, o.ceil_mode);
    // The window maxima's indices only where the backward pass will need them (inference: the
    // ResNet stem pool's indices cost as much as its values).
    const bool grad = NeedsGrad({x_in});
    Tensor out = Tensor::Empty({n, c, ho, wo});
    Tensor argmax = grad ? Tensor::Empty({n, c, ho, wo}, DType::kInt64) : Tensor();
    const backend::PoolCall call = MaxPoolCall(x.shape(), ho, wo, o);
    Kernels().MaxPoolForward(&call, x.data_f32(), out.data_f32(), grad ? argmax.data_i64() : nullptr);
    if (grad) {
      Node& node = RecordNode(out, OpKind::kMaxPool2d, {x_in});
      node.saved = {argmax};
      node.ints = {o.kernel_h, o.kernel_w, o.stride_h, o.stride_w, o.padding_h, o.padding_w};
    }
    return out;
  });
}

Tensor AvgPool2d(const Tensor& x_in, const Pool2dOptions& o) {
  return trace::Op("avg_pool2d", [&]() -> Tensor {
    const Tensor x = ContiguousData(x_in, "avg_pool2d");
    ValidatePool(x, o, "avg_pool2d", true);
    LOCKSTEP_REQUIRE(!o.ceil_mode, "avg_pool2d: ceil_mode is not supported (max_pool2d has it)");
    const int64_t ph_end = o.padding_h_end < 0 ? o.padding_h : o.padding_h_end;
    const int64_t pw_end = o.padding_w_end < 0 ? o.padding_w : o.padding_w_end;
    const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
    const int64_t ho = (h + o.padding_h + ph_end - o.kernel_h) / o.stride_h + 1;
    const int64_t wo = (w + o.padding_w + pw_end - o.kernel_w) / o.stride_w + 1;
    Tensor out = Tensor::Empty({n, c, ho, wo});
    const backend::PoolCall call{n * c,      h,          w,          ho,          wo,          o.kernel_h, o.kernel_w,
                                 o.stride_h, o.stride_w, o.padding_h, o.padding_w, ph_end,      pw_end,
                                 o.count_include_pad ? 1 : 0};
    Kernels().AvgPoolForward(&call, x.data_f32(), out.data_f32());
    if (NeedsGrad({x_in})) {
      RecordNode(out, OpKind::kAvgPool2d, {x_in}).ints = {o.kernel_h, o.kernel_w, o.stride_h, o.stride_w,
                                                          o.padding_h, o.padding_w, ph_end, pw_end,
                                                          o.count_include_pad ? 1 : 0};
    }
    return out;
  });
}

}  // namespace lockstep
