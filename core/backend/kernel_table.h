// The backend interface: one table of function pointers per device, holding the memory functions
// and the kernel families every training run calls on tensor data. The CPU table wraps simd/; a
// device plugin (cuda/) fills the same table from its own kernels, written under the same contract
// (docs/numerics.md), so any device computes the same bits. Self-contained on purpose: a plugin
// compiles against this header alone and is loaded at run time (core/backend/device.h).
//
// Every pointer a kernel receives was allocated by the same table's alloc (or is host memory for
// the CPU table). The core never dereferences a device allocation: data crosses between host and
// device only through copy_to_device and copy_to_host, and everything else runs as a kernel. The
// kernels themselves are listed once, in core/backend/kernel_list.h.
#ifndef LOCKSTEP_CORE_BACKEND_KERNEL_TABLE_H_
#define LOCKSTEP_CORE_BACKEND_KERNEL_TABLE_H_

#include <stddef.h>
#include <stdint.h>

#include "core/backend/kernel_list.h"

namespace lockstep {
namespace backend {

// Bumped whenever the table's layout or a kernel's meaning changes; a plugin built for another
// version is refused with both versions named.
constexpr uint32_t kKernelTableAbi = 14;

// The same values as simd::BinaryOp, simd::UnaryOp and simd::MathFn (checked where the CPU table
// is built).
enum class BinaryOp : int32_t { kAdd, kSub, kMul, kDiv, kMax, kMin, kEq, kNe, kLt, kLe, kGt, kGe, kFmod, kRemainder };
enum class UnaryOp : int32_t {
  kNeg, kAbs, kSqrt, kRelu, kCanonicalize, kReciprocal, kSquare, kFloor, kCeil, kRoundEven, kRoundFloat16,
  kRoundBFloat16
};
enum class MathFn : int32_t {
  kExp, kLog, kTanh, kSigmoid, kErf, kGeluErf, kGeluTanh, kSoftplus, kRsqrt,
  kSin, kCos, kTan, kAsin, kAcos, kAtan, kSinh, kCosh, kAsinh, kAcosh, kAtanh
};
constexpr int32_t kMathFnCount = 20;
inline const char* MathFnName(MathFn fn) {
  static const char* const kNames[] = {"exp",  "log",  "tanh", "sigmoid", "erf",  "gelu_erf", "gelu_tanh",
                                       "softplus", "rsqrt", "sin", "cos", "tan", "asin", "acos",
                                       "atan", "sinh", "cosh", "asinh", "acosh", "atanh"};
  const int32_t i = static_cast<int32_t>(fn);
  return i >= 0 && i < kMathFnCount ? kNames[i] : "math";
}

// C = op(A) op(B), row-major, each output summing its K products in increasing k (simd/gemm.h).
struct GemmCall {
  int32_t trans_a = 0, trans_b = 0;  // A stored [k, m] / B stored [n, k] when set
  size_t m = 0, n = 0, k = 0;
  const float* a = nullptr;
  size_t lda = 0;
  const float* b = nullptr;
  size_t ldb = 0;
  float* c = nullptr;  // [m, n], ldc >= n; must not overlap A or B
  size_t ldc = 0;
  // The operands of the next product of a batch (same shapes and strides), or null: a device may
  // start loading them while this product runs. Results never depend on them.
  const float* next_a = nullptr;
  const float* next_b = nullptr;
  // [n] or null (gemm only): each output is its sum plus bias[j] (one more rounded addition).
  const float* bias = nullptr;
};

struct AdamCall {
  float* param;
  const float* grad;
  float* exp_avg;
  float* exp_avg_sq;
  size_t n;
  float lr, beta1, beta2, eps, weight_decay;
  int32_t decoupled;
  float step_size, sqrt_bias_correction2;
};

struct SgdCall {
  float* param;
  const float* grad;
  float* momentum_buffer;
  size_t n;
  float lr, momentum, dampening, weight_decay;
  int32_t nesterov, first_step;
};

// Element i of a broadcast operand: x[(i / div) % mod]. (div 1, mod n: the whole array; div 1,
// mod m: a trailing block repeated; div d, mod rows: one value per row of d.)
struct BroadcastOperand {
  const float* x;
  size_t div, mod;
};

// Copies the elements of an index space of up to kMaxCopyRank dimensions from one strided layout
// to another (4-byte elements), in row-major index order.
constexpr int kMaxCopyRank = 8;
struct StridedCopyCall {
  int32_t rank;
  int64_t shape[kMaxCopyRank];
  int64_t src_strides[kMaxCopyRank], dst_strides[kMaxCopyRank];  // in elements
  const void* src;
  void* dst;
};

// Convolution geometry for im2col / col2im (core/conv_internal.h): x points at the group's first
// input channel of the first sample; samples lie sample_stride floats apart; sample s's columns
// start at cols + s * h_out * w_out, rows ld floats apart.
struct ConvCall {
  int64_t c_in_group, h, w, kh, kw, h_out, w_out;
  int64_t stride_h, stride_w, padding_h, padding_w, dilation_h, dilation_w;
  int64_t samples, sample_stride, ld;
};

// `groups` groups of a convolution over a batch (1: one group): x at the first group's first input
// channel of the first sample, each group's input channels c_in_group h w floats after the one
// before, samples conv.sample_stride floats apart (conv.ld unused); y / dy at the first group's
// first output channel, each group's c_out_group h_out w_out floats after the one before, samples
// out_sample_stride floats apart; w (and dw) [groups c_out_group, c_in_group, kh, kw], bias
// [groups c_out_group]; dx like x. Every group is the convolution of its own channels. The weight
// gradient sums over the batch in groups of samples_per_group samples (kBatchGroup) combined
// pairwise.
//
// The forward pass's epilogue (inference's Conv -> BatchNormalization -> Relu or Clip as one pass):
// after the sum and the bias, for output channel c (counted over every group), each step one
// rounded operation, as the ops it stands for run one after another (batch_norm in evaluation,
// then relu or clamp), the result canonical:
//   normalize (mean not null): v = (v - mean[c]) * rstd[c]; v = v * weight[c] + bias[c]
//                              (weight null: times 1; bias null: plus +0, as ChannelNormCall)
//   kConvRelu:  v > 0 or NaN ? v : +0
//   kConvClamp: v < lo ? lo : v, then v > hi ? hi : v
//   kConvSilu:  v * sigmoid(v), sigmoid the contract's correctly rounded one (MathFn::kSigmoid)
// A zero epilogue (the default) does nothing; the gradients ignore it.
// kConvHardtanh (batch normalisation's alone, not an epilogue's): PyTorch's hardtanh, the kernel
// table's hardtanh entry.
enum ConvActivation : int32_t { kConvNoActivation = 0, kConvRelu = 1, kConvClamp = 2, kConvSilu = 3, kConvHardtanh = 4 };
struct ConvEpilogue {
  const float* mean = nullptr;
  const float* rstd = nullptr;
  const float* weight = nullptr;
  const float* bias = nullptr;
  int32_t activation = kConvNoActivation;
  float lo = 0.0f, hi = 0.0f;
};
struct Conv2dCall {
  ConvCall conv;
  int64_t c_out_group, out_sample_stride, samples_per_group;
  int64_t groups;
  ConvEpilogue epilogue;
};

// Floats from one group's first input channel (x, dx), output channel (y, dy) and weight (w, dw)
// to the next group's: for the implementations that take the groups one at a time.
struct Conv2dGroupStrides {
  int64_t x, y, w;
};
inline Conv2dGroupStrides GroupStridesOf(const Conv2dCall& c) {
  return Conv2dGroupStrides{c.conv.c_in_group * c.conv.h * c.conv.w, c.c_out_group * c.conv.h_out * c.conv.w_out,
                            c.c_out_group * c.conv.c_in_group * c.conv.kh * c.conv.kw};
}

// Pooling over planes of [h, w] into [h_out, w_out]. Max pooling pads both sides alike (a window
// reaching past the input, as ceil_mode's last one, takes the maximum of its positions inside); average
// pooling pads padding_h / padding_w before and padding_h_end / padding_w_end after, and divides
// each window sum by the window's size (count_include_pad) or by its positions inside the input.
struct PoolCall {
  int64_t planes, h, w, h_out, w_out, kernel_h, kernel_w, stride_h, stride_w, padding_h, padding_w;
  int64_t padding_h_end, padding_w_end;
  int32_t count_include_pad;
};

// Batch normalisation's per-channel arithmetic over [outer, channels, inner] (the channel of
// element i is (i / inner) % channels), each step one rounded operation, NaN canonical:
//   forward:  xhat = (x - mean[c]) * rstd[c]; out = xhat * weight[c] + bias[c]
//             (weight null: times 1; bias null: plus +0, so -0 becomes +0 as with a zero bias)
//   backward: dx = ((x - sum_x[c] / count) - xhat * (sum_x_xhat[c] / count)) * rstd[c], where x is
//             the gradient of xhat (training mode: the statistics came from the batch)
// The forward pass's activation (a Relu, Clip, SiLU or PyTorch's hardtanh that alone reads the
// output, in training too) is applied to out as it is stored, as ConvEpilogue's kConvRelu,
// kConvClamp and kConvSilu and the hardtanh entry (the bits of the op run after it; SiLU's sigmoid(y) goes to sigmoid_out where that is not null,
// for the gradient); xhat_out stays the normalised value. A zero activation (the default) does
// nothing.
struct ChannelNormCall {
  size_t outer, channels, inner;
  const float* x;     // forward: the input; backward: the gradient of xhat
  const float* rstd;  // [channels]
  // Forward.
  const float* mean;                 // [channels]
  const float* weight;               // [channels] or null
  const float* bias;                 // [channels] or null
  float* xhat_out;                   // [outer, channels, inner], or null: not kept (no gradient)
  float* out;                        // forward: y; backward: dx
  int32_t activation;                // forward: kConvNoActivation ... kConvHardtanh
  float lo, hi;                      // kConvClamp's and kConvHardtanh's bounds
  float* sigmoid_out;                // kConvSilu: sigmoid(y), or null: not kept
  // Backward.
  const float* xhat;                 // [outer, channels, inner]
  const float* sum_x;                // [channels]
  const float* sum_x_xhat;           // [channels]
  float count;                       // values per channel in the batch
};

// Batch normalisation's gradient sums over [samples, channels, positions] g and xhat, per channel
// c in (sample, position) order as channel_sums sums: with dxhat = g * weight[c] (weight null: g
// itself), sum_dxhat[c] = sum of dxhat, sum_dxhat_xhat[c] = sum of dxhat * xhat, sum_g_xhat[c] = sum
// of g * xhat, sum_g[c] = sum of g. Each output may be null (not computed); dxhat_out (null: not
// stored) receives dxhat, canonical. With an activation (the forward pass's, ChannelNormCall), g
// is first the activation's gradient of the given one at y = xhat * weight[c] + bias[c] (y formed
// again as the forward pass formed it), canonical, as the op's backward rule forms it:
//   kConvRelu:  g * (y > 0 ? 1 : 0)
//   kConvClamp: y < lo or y > hi ? +0 : g
//   kConvSilu:  g * s + ((g * y) * (-s + 1)) * s, s = sigmoid[i] (the forward pass's sigmoid_out),
//               as silu_backward forms it
//   kConvHardtanh: y <= lo or y >= hi ? +0 : g (hardtanh_backward)
struct ChannelNormSumsCall {
  size_t samples, channels, positions;
  const float* g;
  const float* xhat;
  const float* weight;
  const float* bias;     // [channels] or null (plus +0); read only with an activation
  int32_t activation;    // kConvNoActivation ... kConvHardtanh
  float lo, hi;          // kConvClamp's and kConvHardtanh's bounds
  const float* sigmoid;  // kConvSilu: [samples, channels, positions] sigmoid(y)
  float* dxhat_out;
  float* sum_dxhat;
  float* sum_dxhat_xhat;
  float* sum_g_xhat;
  float* sum_g;
};

// Kernels report failure (a device error) by returning nonzero; last_error() then describes it.
struct KernelTable {
  uint32_t abi_version;     // kKernelTableAbi
  uint32_t table_bytes;     // sizeof(KernelTable) the plugin was built with
  const char* device_name;  // "cpu", "cuda:0 (NVIDIA H200)", ...

  // Memory: alloc returns null on failure; copies move bytes between host and this device.
  void* (*alloc)(size_t bytes);
  void (*release)(void* ptr);
  int (*copy_to_device)(void* device_dst, const void* host_src, size_t bytes);
  int (*copy_to_host)(void* host_dst, const void* device_src, size_t bytes);
  const char* (*last_error)();

  // The kernels, in the order of kernel_list.h.
#define LOCKSTEP_KERNEL_POINTER(name, Name, label, parameters, arguments) int(*name) parameters;
  LOCKSTEP_KERNELS(LOCKSTEP_KERNEL_POINTER)
#undef LOCKSTEP_KERNEL_POINTER
};

// A table whose entries are the static functions of Impl with the entries' names in CamelCase
// (Alloc, Release, CopyToDevice, ..., SgdUpdate): how the CPU and every plugin build theirs.
template <class Impl>
KernelTable MakeKernelTable(const char* device_name) {
  KernelTable t{};
  t.abi_version = kKernelTableAbi;
  t.table_bytes = sizeof(KernelTable);
  t.device_name = device_name;
  t.alloc = &Impl::Alloc;
  t.release = &Impl::Release;
  t.copy_to_device = &Impl::CopyToDevice;
  t.copy_to_host = &Impl::CopyToHost;
  t.last_error = &Impl::LastError;
#define LOCKSTEP_KERNEL_ENTRY(name, Name, label, parameters, arguments) t.name = &Impl::Name;
  LOCKSTEP_KERNELS(LOCKSTEP_KERNEL_ENTRY)
#undef LOCKSTEP_KERNEL_ENTRY
  return t;
}

// What a device plugin exports (extern "C", by this name): the table for device `index`, or null
// with a message in `why` (no driver, no device, index out of range, ...).
using PluginEntry = const KernelTable* (*)(int index, char* why, size_t why_bytes);
// Lists the plugin's devices: the count, and for i < count the i-th device's description in
// `names` (one per line). Never fails: a machine without a driver has zero devices and a reason.
using PluginListDevices = int (*)(char* names, size_t names_bytes, char* why, size_t why_bytes);
constexpr const char* kPluginEntryName = "lockstep_plugin_kernel_table_v1";
constexpr const char* kPluginListName = "lockstep_plugin_list_devices_v1";

}  // namespace backend
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_BACKEND_KERNEL_TABLE_H_
