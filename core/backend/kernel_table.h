// The backend interface: one table of function pointers per device, holding the memory functions
// and the kernel families every training run calls on tensor data. The CPU table wraps simd/; a
// device plugin (cuda/) fills the same table from its own kernels, written under the same contract
// (docs/numerics.md), so any device computes the same bits. Self-contained on purpose: a plugin
// compiles against this header alone and is loaded at run time (core/backend/device.h).
//
// Every pointer a kernel receives was allocated by the same table's alloc (or is host memory for
// the CPU table). Kernels return when their results are visible to the host: the core may read
// and write device allocations directly between calls (a plugin allocates memory the host can
// address, e.g. CUDA managed memory).
#ifndef LOCKSTEP_CORE_BACKEND_KERNEL_TABLE_H_
#define LOCKSTEP_CORE_BACKEND_KERNEL_TABLE_H_

#include <stddef.h>
#include <stdint.h>

namespace lockstep {
namespace backend {

// Bumped whenever the table's layout or a kernel's meaning changes; a plugin built for another
// version is refused with both versions named.
constexpr uint32_t kKernelTableAbi = 5;

// The same values as simd::BinaryOp, simd::UnaryOp and simd::MathFn (checked where the CPU table
// is built).
enum class BinaryOp : int32_t { kAdd, kSub, kMul, kDiv, kMax, kMin, kEq, kNe, kLt, kLe, kGt, kGe };
enum class UnaryOp : int32_t { kNeg, kAbs, kSqrt, kRelu, kCanonicalize, kReciprocal, kSquare };
enum class MathFn : int32_t { kExp, kLog, kTanh, kSigmoid, kErf, kGeluErf, kGeluTanh, kSoftplus, kRsqrt };

// C = op(A) op(B), row-major, each output summing its K products in increasing k (simd/gemm.h).
struct GemmCall {
  int32_t trans_a, trans_b;  // A stored [k, m] / B stored [n, k] when set
  size_t m, n, k;
  const float* a;
  size_t lda;
  const float* b;
  size_t ldb;
  float* c;
  size_t ldc;
  // The operands of the next product of a batch (same shapes and strides), or null: a device may
  // start loading them while this product runs. Results never depend on them.
  const float* next_a;
  const float* next_b;
  // [n] or null (gemm only): each output is its sum plus bias[j] (one more rounded addition).
  const float* bias;
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

// One group of a convolution over a batch: x at the group's first input channel of the first
// sample, samples conv.sample_stride floats apart (conv.ld unused); y / dy at the group's first
// output channel, samples out_sample_stride floats apart; w [c_out_group, c_in_group, kh, kw].
// The weight gradient sums over the batch in groups of samples_per_group samples (kBatchGroup)
// combined pairwise.
struct Conv2dCall {
  ConvCall conv;
  int64_t c_out_group, out_sample_stride, samples_per_group;
};

struct PoolCall {
  int64_t planes, h, w, h_out, w_out, kernel_h, kernel_w, stride_h, stride_w, padding_h, padding_w;
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

  // Elementwise (simd/elementwise.h): out may alias an input.
  int (*binary)(BinaryOp op, const float* a, const float* b, float* out, size_t n);
  int (*binary_scalar_right)(BinaryOp op, const float* a, float s, float* out, size_t n);
  int (*binary_scalar_left)(BinaryOp op, float s, const float* b, float* out, size_t n);
  int (*unary)(UnaryOp op, const float* a, float* out, size_t n);
  int (*select)(const float* cond, const float* a, const float* b, float* out, size_t n);
  // out[i] = a[i] op b[i] over broadcast operands (BroadcastOperand), i < n.
  int (*binary_broadcast)(BinaryOp op, BroadcastOperand a, BroadcastOperand b, float* out, size_t n);
  int (*strided_copy)(const StridedCopyCall* call);

  // Correctly rounded elementary functions (simd/math.h).
  int (*math)(MathFn fn, const float* in, float* out, size_t n);
  int (*pow_int)(const float* in, int32_t exponent, float* out, size_t n);
  // The gradient of GELU (erf form), out = g * (cdf + x * pdf), in the operation sequence of
  // simd/gelu_backward.h (out may alias x or g).
  int (*gelu_erf_backward)(const float* x, const float* g, float* out, size_t n);
  // LayerNorm over the rows of [rows, d], forward and input gradient, in the operation sequence of
  // simd/layer_norm.h (weight, bias: d floats or null).
  int (*layer_norm_rows)(const float* x, const float* weight, const float* bias, float eps, size_t rows, size_t d,
                         float* xhat, float* rstd, float* out);
  int (*layer_norm_rows_backward)(const float* g, const float* weight, const float* xhat, const float* rstd,
                                  size_t rows, size_t d, float* dx);

  // Canonical reductions over the middle axis of [outer, len, inner] (simd/reduce.h).
  int (*sum_axis)(const float* x, size_t outer, size_t len, size_t inner, float* out);
  int (*mean_axis)(const float* x, size_t outer, size_t len, size_t inner, float* out);
  int (*variance_axis)(const float* x, size_t outer, size_t len, size_t inner, size_t correction,
                       float* out);
  int (*max_axis)(const float* x, size_t outer, size_t len, size_t inner, float* out);
  int (*min_axis)(const float* x, size_t outer, size_t len, size_t inner, float* out);
  int (*argmax_axis)(const float* x, size_t outer, size_t len, size_t inner, int64_t* out);

  int (*gemm)(const GemmCall* call);
  // The batch-grouped product of weight gradients (simd/gemm.h GemmBatchGrouped): K in groups of
  // k_per_group, each group summed as by gemm, the group results combined by adjacent pairs level
  // by level (an odd last one moving up).
  int (*gemm_batch_grouped)(const GemmCall* call, size_t k_per_group);

  // Over the last axis of [rows, cols] (simd/softmax.h).
  int (*softmax)(const float* x, size_t rows, size_t cols, float* out);
  int (*log_softmax)(const float* x, size_t rows, size_t cols, float* out);

  // Philox4x32-10 dropout mask (simd/philox.h).
  int (*dropout_mask)(uint64_t seed, uint64_t stream, uint64_t first, float p, float* out, size_t n);

  // Data movement of the layers (core/conv_internal.h, core/ops_conv.cc, core/ops_nn.cc):
  // im2col writes zero padding; col2im adds each input element's column entries in increasing
  // (kernel row, kernel column) order, each addition canonical.
  int (*im2col)(const ConvCall* call, const float* x, float* cols);
  int (*col2im_add)(const ConvCall* call, const float* cols, float* dx);
  // Convolution of one group (Conv2dCall), in the contract's orders (docs/numerics.md: im2col +
  // GEMM, without the columns where a kernel can). Forward: y = sum + bias (bias may be null).
  // Input gradient: writes every element of dx. Weight gradient: dw [c_out_group, k].
  int (*conv2d_forward)(const Conv2dCall* call, const float* x, const float* w, const float* bias, float* y);
  int (*conv2d_input_grad)(const Conv2dCall* call, const float* dy, const float* w, float* dx);
  int (*conv2d_weight_grad)(const Conv2dCall* call, const float* dy, const float* x, float* dw);
  // Max pooling: the first maximum in row-major window order by the contract's order (NaN above
  // all, +0 above -0) wins; argmax is its index in the plane. The backward pass writes every
  // element of dx: +0, then each output gradient added at its argmax, in increasing output order
  // per plane (since ABI 5; it used to add into a dx the caller had zeroed).
  int (*max_pool_forward)(const PoolCall* call, const float* x, float* out, int64_t* argmax);
  int (*max_pool_backward)(const PoolCall* call, const float* grad, const int64_t* argmax, float* dx);
  // Embedding: out[i] = table[ids[i]] (rows of dim); the backward pass adds grad row i to
  // table_grad[ids[i]] in increasing i, each addition canonical.
  int (*gather_rows)(const float* table, const int64_t* ids, size_t count, size_t dim, float* out);
  int (*scatter_add_rows)(const int64_t* ids, size_t count, size_t dim, const float* grad, float* table_grad);
  // Negative log-likelihood over [n, c] log-probabilities: losses[i] = -log_probs[i, targets[i]]
  // (0 where targets[i] == ignore_index); the backward pass writes -(grad[i * grad_step] / divisor)
  // at [i, targets[i]] of a zeroed [n, c] (grad_step 0: one gradient for every row; divisor 1 for
  // none). Canonical NaN.
  int (*nll_forward)(const float* log_probs, const int64_t* targets, size_t n, size_t c, int64_t ignore_index,
                     float* losses);
  int (*nll_backward)(const int64_t* targets, size_t n, size_t c, int64_t ignore_index, const float* grad,
                      size_t grad_step, float divisor, float* grad_log_probs);

  // Optimizer updates (simd/optimizer.h).
  int (*adam_update)(const AdamCall* call);
  int (*sgd_update)(const SgdCall* call);
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
  t.binary = &Impl::Binary;
  t.binary_scalar_right = &Impl::BinaryScalarRight;
  t.binary_scalar_left = &Impl::BinaryScalarLeft;
  t.unary = &Impl::Unary;
  t.select = &Impl::Select;
  t.binary_broadcast = &Impl::BinaryBroadcast;
  t.strided_copy = &Impl::StridedCopy;
  t.math = &Impl::Math;
  t.pow_int = &Impl::PowInt;
  t.gelu_erf_backward = &Impl::GeluErfBackward;
  t.layer_norm_rows = &Impl::LayerNormRows;
  t.layer_norm_rows_backward = &Impl::LayerNormRowsBackward;
  t.sum_axis = &Impl::SumAxis;
  t.mean_axis = &Impl::MeanAxis;
  t.variance_axis = &Impl::VarianceAxis;
  t.max_axis = &Impl::MaxAxis;
  t.min_axis = &Impl::MinAxis;
  t.argmax_axis = &Impl::ArgmaxAxis;
  t.gemm = &Impl::Gemm;
  t.gemm_batch_grouped = &Impl::GemmBatchGrouped;
  t.softmax = &Impl::Softmax;
  t.log_softmax = &Impl::LogSoftmax;
  t.dropout_mask = &Impl::DropoutMask;
  t.im2col = &Impl::Im2Col;
  t.col2im_add = &Impl::Col2ImAdd;
  t.conv2d_forward = &Impl::Conv2dForward;
  t.conv2d_input_grad = &Impl::Conv2dInputGrad;
  t.conv2d_weight_grad = &Impl::Conv2dWeightGrad;
  t.max_pool_forward = &Impl::MaxPoolForward;
  t.max_pool_backward = &Impl::MaxPoolBackward;
  t.gather_rows = &Impl::GatherRows;
  t.scatter_add_rows = &Impl::ScatterAddRows;
  t.nll_forward = &Impl::NllForward;
  t.nll_backward = &Impl::NllBackward;
  t.adam_update = &Impl::AdamUpdate;
  t.sgd_update = &Impl::SgdUpdate;
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
