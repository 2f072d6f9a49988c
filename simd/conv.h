// Direct convolution kernels, NCHW, one group of channels (docs/numerics.md, rule 4,
// "Convolution"). They compute the bits of im2col + the contract's GEMM without building the
// columns: every sum runs in the contract's order, only where the data lives changes.
//  - forward: each output sums its c_in * kh * kw products in increasing (channel, kernel row,
//    kernel column) order from -0.0 (padding reads as +0.0, so its products are computed too),
//    then adds the bias;
//  - input gradient: column (c, i, j) at each output position is sum over output channels
//    (increasing) of w * dy from -0.0; each input element starts at +0.0 and adds the column
//    entries that land on it in increasing (c, i, j) order;
//  - weight gradient: the batch-grouped GEMM dY cols^T: each output sums its products over
//    (sample, output row, output column) in increasing order within groups of samples_per_group
//    samples from -0.0; the group sums are combined by the pairwise tree over adjacent groups.
// Every stored NaN is canonical. Work is split over threads by samples or by independent outputs,
// so the thread count never changes a bit. Any stride, padding and dilation; stride 1 takes the
// fastest paths (the padded input's rows stand in for the columns).
#ifndef LOCKSTEP_SIMD_CONV_H_
#define LOCKSTEP_SIMD_CONV_H_

#include <stddef.h>

namespace lockstep {
namespace simd {

class ThreadPool;

// What follows a forward sum and its bias, per output channel c (over every group), each step one
// rounded operation, the result canonical (core/backend/kernel_table.h, ConvEpilogue): batch
// normalisation in evaluation (mean not null: v = (v - mean[c]) * rstd[c], then v * weight[c] +
// bias[c], weight null meaning 1 and bias null +0), then an activation.
enum class ConvActivation { kNone, kRelu, kClamp, kSilu };
struct ConvEpilogue {
  const float* mean = nullptr;
  const float* rstd = nullptr;
  const float* weight = nullptr;
  const float* bias = nullptr;
  ConvActivation activation = ConvActivation::kNone;
  float lo = 0.0f, hi = 0.0f;  // kClamp: v < lo ? lo : v, then v > hi ? hi : v (NaN kept)
  // kSilu: v * sigmoid(v) with the contract's sigmoid (simd/math.h), the product rounded.
};

struct ConvShape {
  size_t samples = 0;
  size_t c_in = 0, h = 0, w = 0;  // the group's input channels and the input plane
  size_t c_out = 0;               // the group's output channels
  size_t kh = 0, kw = 0, h_out = 0, w_out = 0;
  size_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
  size_t x_sample_stride = 0;  // floats from one sample's first input channel to the next (x, dx)
  size_t y_sample_stride = 0;  // the same for the output (y, dy)
  // This many groups, each the convolution of its own channels: group g reads x + g c_in h w and
  // w + g c_out c_in kh kw, adds bias[g c_out + co], writes y + g c_out h_out w_out (and the
  // gradients at the same offsets).
  size_t groups = 1;
  // ConvForward only: applied to every output after its bias (null: none).
  const ConvEpilogue* epilogue = nullptr;
};

// y[n, co, p] = canonical(epilogue(sum + bias[co])) (bias and epilogue may be null); w [c_out,
// c_in, kh, kw]; every group. y must not overlap x (a pointwise layer sums into y as it reads x).
void ConvForward(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
                 ThreadPool* pool = nullptr);
// Writes every element of dx (no zero-fill needed). Every group (depthwise layers' in one pass:
// simd/conv_depthwise.h).
void ConvInputGrad(const ConvShape& s, const float* dy, const float* w, float* dx, ThreadPool* pool = nullptr);
// dw [groups * c_out, c_in * kh * kw].
void ConvWeightGrad(const ConvShape& s, const float* dy, const float* x, size_t samples_per_group, float* dw,
                    ThreadPool* pool = nullptr);

// The row length of the direct forward pass's frame (simd/conv.cc, Phases): its output rows are
// this many positions apart, w_out of them kept.
size_t ConvForwardFrameWidth(const ConvShape& s);

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_CONV_H_
