// The differentiable functional API (PyTorch's torch.* and torch.nn.functional.* in C++). Every op
// validates its arguments (errors name the op, what was expected and what was given), computes
// with the simd/ kernels, and records a Node when gradients are needed. Backward rules for all of
// them are in backward_rules.cc.
#ifndef LOCKSTEP_CORE_OPS_H_
#define LOCKSTEP_CORE_OPS_H_

#include <stdint.h>

#include <vector>

#include "core/tensor.h"

namespace lockstep {

// Samples per group in batch-dimension reductions (weight and bias gradients): each group is
// reduced in the kernel's order and the group results are combined by a pairwise tree, so a run
// that splits a batch over machines along group boundaries can reproduce the same bits
// (docs/numerics.md, rule 4).
constexpr int64_t kBatchGroup = 32;

// ---- elementwise, with NumPy broadcasting
Tensor Add(const Tensor& a, const Tensor& b);
Tensor Sub(const Tensor& a, const Tensor& b);
Tensor Mul(const Tensor& a, const Tensor& b);
Tensor Div(const Tensor& a, const Tensor& b);
Tensor AddScalar(const Tensor& a, float s);
Tensor MulScalar(const Tensor& a, float s);
Tensor PowScalar(const Tensor& a, int exponent);  // correctly rounded, exponent in [-4, 4]
// x^exponent for the exponents lockstep computes correctly rounded: the integers -4..4 and 0.5
// (IEEE sqrt, with pow's pow(-0, 0.5) = +0 and pow(-inf, 0.5) = +inf). Any other exponent throws
// naming the supported ones: never a silently truncated exponent.
Tensor Pow(const Tensor& a, double exponent);
Tensor Neg(const Tensor& a);
Tensor Relu(const Tensor& a);
Tensor GeluErf(const Tensor& a);
Tensor GeluTanh(const Tensor& a);
Tensor Tanh(const Tensor& a);
Tensor Sigmoid(const Tensor& a);
Tensor Exp(const Tensor& a);
Tensor Log(const Tensor& a);
Tensor Sqrt(const Tensor& a);
Tensor Abs(const Tensor& a);    // sign bit cleared; gradient g * sign(x), 0 at 0
Tensor Erf(const Tensor& a);    // correctly rounded
Tensor Rsqrt(const Tensor& a);  // 1 / sqrt(x), correctly rounded
// Trigonometric and hyperbolic functions and their inverses (radians), correctly rounded.
Tensor Sin(const Tensor& a);
Tensor Cos(const Tensor& a);
Tensor Tan(const Tensor& a);
Tensor Asin(const Tensor& a);
Tensor Acos(const Tensor& a);
Tensor Atan(const Tensor& a);
Tensor Sinh(const Tensor& a);
Tensor Cosh(const Tensor& a);
Tensor Asinh(const Tensor& a);
Tensor Acosh(const Tensor& a);
Tensor Atanh(const Tensor& a);
// Not differentiable: rounding to an integer (exact; the result keeps x's sign: floor(-0.5) = -1,
// ceil(-0.5) = -0), and comparisons, which give 1.0 / 0.0.
Tensor Floor(const Tensor& a);
Tensor Ceil(const Tensor& a);
Tensor Round(const Tensor& a);  // to nearest, ties to even (torch.round, ONNX Round)
// Remainders of a / b: fmod has a's sign (torch.fmod, C), remainder b's (torch.remainder, Python);
// exact but for remainder's one added b (simd/elementwise.h).
Tensor Fmod(const Tensor& a, const Tensor& b);
Tensor Remainder(const Tensor& a, const Tensor& b);
// The nearest float16 or bfloat16 value (ties to even), held as float32: the contract's rounding of
// a narrow float tensor's every result (docs/numerics.md). The gradient passes through, as a cast's.
Tensor RoundToFloat16(const Tensor& a);
Tensor RoundToBFloat16(const Tensor& a);
Tensor Maximum(const Tensor& a, const Tensor& b);
Tensor Minimum(const Tensor& a, const Tensor& b);
Tensor Equal(const Tensor& a, const Tensor& b);
Tensor NotEqual(const Tensor& a, const Tensor& b);
Tensor Greater(const Tensor& a, const Tensor& b);
Tensor GreaterEqual(const Tensor& a, const Tensor& b);
Tensor Less(const Tensor& a, const Tensor& b);
Tensor LessEqual(const Tensor& a, const Tensor& b);
// out = cond != 0 ? a : b, the three broadcast together (a NaN condition counts as true);
// differentiable in a and b (the gradient goes to the chosen operand).
Tensor Where(const Tensor& cond, const Tensor& a, const Tensor& b);
// out = mask != 0 ? value : x (mask broadcast to x).
Tensor MaskedFill(const Tensor& x, const Tensor& mask, float value);
// ONNX's Clip and PyTorch's clamp in one pass: y = x < lo ? lo : x, then y > hi ? hi : y (NaN
// kept, -0 kept at a bound of +0; ±infinity for no bound). The gradient passes where neither
// x < lo nor x > hi (at the bounds and at NaN too), +0 elsewhere.
Tensor Clamp(const Tensor& x, float lo, float hi);

inline Tensor operator+(const Tensor& a, const Tensor& b) { return Add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return Sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return Mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return Div(a, b); }
inline Tensor operator-(const Tensor& a) { return Neg(a); }

// ---- reductions (canonical order, docs/numerics.md rule 3)
Tensor Sum(const Tensor& a);  // all elements -> scalar
Tensor Sum(const Tensor& a, int64_t dim, bool keepdim = false);
Tensor Mean(const Tensor& a);
Tensor Mean(const Tensor& a, int64_t dim, bool keepdim = false);
// Mean over several dimensions (torch.mean(x, dims)): the dimensions (any order, negative
// allowed, duplicates refused) are moved last and merged into one, whose canonical mean is taken;
// empty dims: every element. Composed of the ops above, so differentiable.
Tensor Mean(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim = false);
// Not differentiable.
Tensor Variance(const Tensor& a, int64_t dim, int64_t correction = 1, bool keepdim = false);
Tensor Max(const Tensor& a, int64_t dim, bool keepdim = false);
Tensor Argmax(const Tensor& a, int64_t dim, bool keepdim = false);  // int64

// ---- linear algebra
// [..., m, k] x [..., k, n] with equal batch dims, or any [..., m, k] x [k, n].
Tensor Matmul(const Tensor& a, const Tensor& b);
// x [..., in] * weight [out, in]^T + bias [out] (bias may be undefined).
Tensor Linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

// ---- shapes
Tensor Concat(const std::vector<Tensor>& tensors, int64_t dim);

// ---- neural-network functions
Tensor Softmax(const Tensor& x, int64_t dim = -1);
Tensor LogSoftmax(const Tensor& x, int64_t dim = -1);

struct Conv2dOptions {
  int64_t stride_h = 1, stride_w = 1, padding_h = 0, padding_w = 0, dilation_h = 1, dilation_w = 1,
          groups = 1;
};
// x [N, C_in, H, W], weight [C_out, C_in / groups, kh, kw], bias [C_out] or undefined.
Tensor Conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dOptions& options);

// The transposed convolution (PyTorch's conv_transpose2d): the gradient of Conv2d with respect to
// its input, so computed by the same kernel (conv2d_input_grad) in the same order, then the bias
// added. x [N, C_in, H, W], weight [C_in, C_out / groups, kh, kw], bias [C_out] or undefined;
// output [N, C_out, (H - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1, ...].
struct ConvTranspose2dOptions {
  int64_t stride_h = 1, stride_w = 1, padding_h = 0, padding_w = 0, output_padding_h = 0, output_padding_w = 0,
          dilation_h = 1, dilation_w = 1, groups = 1;
};
Tensor ConvTranspose2d(const Tensor& x, const Tensor& weight, const Tensor& bias, const ConvTranspose2dOptions& options);

struct Pool2dOptions {
  int64_t kernel_h, kernel_w, stride_h, stride_w, padding_h = 0, padding_w = 0;
  // Average pooling only: the bottom and right padding where it differs from the top and left
  // (-1: the same), and whether padded positions count in the divisor (PyTorch's
  // count_include_pad; otherwise each window divides by its positions inside the input).
  int64_t padding_h_end = -1, padding_w_end = -1;
  bool count_include_pad = true;
  // Max pooling only: PyTorch's ceil_mode (outputs ceil((in + 2 padding - kernel) / stride) + 1,
  // less one when the last window would start past the input and its left padding); windows
  // reaching past the input take the maximum of their positions inside it.
  bool ceil_mode = false;
};
Tensor MaxPool2d(const Tensor& x, const Pool2dOptions& options);  // symmetric padding only
Tensor AvgPool2d(const Tensor& x, const Pool2dOptions& options);  // padding counted by default (PyTorch)

// Inverted dropout with a Philox mask: element i of x (row-major) keeps by draw (offset + i) of
// stream `stream` under `seed`. Identity when !training or p == 0.
Tensor Dropout(const Tensor& x, float p, bool training, uint64_t seed, uint64_t stream,
               uint64_t offset);

// PyTorch's hardtanh in one pass (min_val <= max_val): x >= max_val ? max_val : x <= min_val ?
// min_val : x, NaN kept (-0 becomes min_val at a bound of +0); the gradient is 0 where x <= min_val
// or x >= max_val (PyTorch's hardtanh_backward). The bits of its two masked fills, each testing x.
// ReLU6 is Hardtanh(x, 0, 6).
Tensor Hardtanh(const Tensor& x, float min_val, float max_val);
Tensor Relu6(const Tensor& x);

// ---- composed of the ops above (ops_composite.cc): PyTorch's values, and its gradients at the
// bounds, with no kernel of their own.
Tensor Silu(const Tensor& x);  // x * sigmoid(x)
// min(max(x + 3, 0), 6) / 6; gradient 1/6 for -3 < x < 3, else 0.
Tensor Hardsigmoid(const Tensor& x);
// x * min(max(x + 3, 0), 6) / 6; gradient 0 for x < -3, x/3 + 1/2 for -3 <= x < 3 (the ops'
// rounding), 1 from 3 on (PyTorch's vectorised kernel; its scalar tail gives 1.5 at exactly 3).
Tensor Hardswish(const Tensor& x);
// x [N, C, H, W] or [C, H, W] -> [..., out_h, out_w] with PyTorch's windows: rows
// floor(i * H / out_h) .. ceil((i + 1) * H / out_h), columns alike, each the mean of its
// elements. Output 1 x 1: one mean over H and W; sizes that divide: AvgPool2d with kernel = stride
// = in / out; otherwise one mean per window, concatenated.
Tensor AdaptiveAvgPool2d(const Tensor& x, int64_t out_h, int64_t out_w);
// x [N, C, ...]: [N, groups, C / groups, ...] transposed to [N, C / groups, groups, ...] and
// flattened back (torch.nn.ChannelShuffle, torchvision's ShuffleNetV2).
Tensor ChannelShuffle(const Tensor& x, int64_t groups);
// torchvision.ops.stochastic_depth: in training, x * mask with mask of shape [N, 1, ..., 1]
// (row_mode) or [1, ..., 1], each entry 0 with probability p, else 1 / (1 - p) (float32), drawn
// as Dropout draws (row n keeps by draw offset + n; a data-parallel share by its rows' draws).
// Identity when !training or p == 0.
Tensor StochasticDepth(const Tensor& x, float p, bool row_mode, bool training, uint64_t seed, uint64_t stream,
                       uint64_t offset);

// Normalises over the last `normalized_dims` dimensions; weight/bias of that shape or undefined.
Tensor LayerNorm(const Tensor& x, int64_t normalized_dims, const Tensor& weight, const Tensor& bias,
                 float eps);

// The activation BatchNorm may apply to its output: Relu, Clamp(lo, hi), Silu or Hardtanh(lo, hi).
struct BatchNormActivation {
  enum class Kind { kNone, kRelu, kClamp, kSilu, kHardtanh } kind = Kind::kNone;
  float lo = 0.0f, hi = 0.0f;  // kClamp's and kHardtanh's bounds
};

// x [N, C] or [N, C, H, W]. In training, batch statistics are used and the running statistics
// (when defined) are updated in place: running = (1 - momentum) * running + momentum * batch
// (unbiased variance), as PyTorch does. With `after`, the activation is applied as the output is
// stored and its gradient folded into the normalisation's backward passes: the bits and gradients
// of BatchNorm, then Relu, Clamp, Silu or Hardtanh, with passes over memory fewer each way (the
// trace names the op batch_norm_relu, batch_norm_clip, batch_norm_silu or batch_norm_hardtanh).
Tensor BatchNorm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                 const Tensor& weight, const Tensor& bias, bool training, float momentum, float eps,
                 const BatchNormActivation& after = {});

// Inference's convolution block in one pass over its output: the bits of Conv2d, then (when
// `normalize`) BatchNorm with the running statistics (training false), then Relu, Clamp(lo, hi) or SiLU,
// one after another; each output's steps are those ops' steps in their order, applied as the sum
// leaves the convolution's registers. Where a gradient is needed the three ops run one after
// another instead (the same bits, and their graph).
struct ConvNormActivation {
  bool normalize = false;
  Tensor running_mean, running_var, weight, bias;  // [C_out]; weight and bias may be undefined
  float eps = 1e-5f;
  enum class Activation { kNone, kRelu, kClamp, kSilu } activation = Activation::kNone;  // kSilu: Mul(y, Sigmoid(y))
  float lo = 0.0f, hi = 0.0f;  // kClamp's bounds
};
Tensor Conv2dNormActivation(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dOptions& options,
                            const ConvNormActivation& after);

// indices (int64, any shape) into weight [num, dim] -> [..., dim].
Tensor Embedding(const Tensor& indices, const Tensor& weight);

enum class Reduction { kMean, kSum, kNone };
// log_probs [N, C], target int64 [N].
Tensor NllLoss(const Tensor& log_probs, const Tensor& target, Reduction reduction = Reduction::kMean,
               int64_t ignore_index = -100);
Tensor CrossEntropy(const Tensor& logits, const Tensor& target,
                    Reduction reduction = Reduction::kMean, int64_t ignore_index = -100,
                    float label_smoothing = 0.0f);
Tensor MseLoss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::kMean);

// ---- helpers shared by the ops and the backward rules (no history recorded)
// Contiguous float32 data of t (t itself when it already is).
Tensor ContiguousData(const Tensor& t, const char* op);
// Sums a gradient of a broadcast result back to `shape` (batch-grouped over leading dims).
Tensor SumToShape(const Tensor& grad, const Shape& shape);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_OPS_H_
