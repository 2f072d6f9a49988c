// The one list of the kernel table's kernels (core/backend/kernel_table.h). Everything else that
// names every kernel is generated from it: the table's function pointers (KernelTable),
// MakeKernelTable (how the CPU and each plugin fill their tables), the core's Kernels accessors
// (core/ops_internal.h) and the test that every kernel has a battery case and, where it is the
// forward or backward pass of a differentiable op, a gradient check (tests/unit).
//
// X(name, Name, label, (parameters), (arguments)):
//   name        the table's entry (snake_case)
//   Name        the implementation's static function and the Kernels accessor (CamelCase)
//   label       what an error names (an expression over the parameters)
//   parameters  the signature after `int (*name)`; every kernel returns 0, or nonzero on a
//               device error (last_error() says which)
//   arguments   the parameter names, to forward a call
// Types are spelled `backend::...` so that the list expands in any namespace under lockstep.
// The call structures (GemmCall, ConvCall, ...) are defined in kernel_table.h.
#ifndef LOCKSTEP_CORE_BACKEND_KERNEL_LIST_H_
#define LOCKSTEP_CORE_BACKEND_KERNEL_LIST_H_

// clang-format off
#define LOCKSTEP_KERNELS(X) \
  /* Elementwise (simd/elementwise.h): out may alias an input. */ \
  X(binary, Binary, "binary", \
    (backend::BinaryOp op, const float* a, const float* b, float* out, size_t n), (op, a, b, out, n)) \
  X(binary_scalar_right, BinaryScalarRight, "binary", \
    (backend::BinaryOp op, const float* a, float s, float* out, size_t n), (op, a, s, out, n)) \
  X(binary_scalar_left, BinaryScalarLeft, "binary", \
    (backend::BinaryOp op, float s, const float* b, float* out, size_t n), (op, s, b, out, n)) \
  X(unary, Unary, "unary", (backend::UnaryOp op, const float* a, float* out, size_t n), (op, a, out, n)) \
  X(select, Select, "select", \
    (const float* cond, const float* a, const float* b, float* out, size_t n), (cond, a, b, out, n)) \
  /* ONNX's Clip and PyTorch's clamp: y = x[i] < lo ? lo : x[i], then out[i] = y > hi ? hi : y */ \
  /* (NaN kept, -0 kept at a bound of +0, every value hi when lo > hi). */ \
  X(clamp, Clamp, "clip", (const float* x, float lo, float hi, float* out, size_t n), (x, lo, hi, out, n)) \
  /* Clip's gradient: out[i] = x[i] < lo || x[i] > hi ? +0 : g[i], canonical (a NaN x passes g[i]): */ \
  /* the bits of the two masked fills it replaces (out may alias g). */ \
  X(clamp_backward, ClampBackward, "clip backward", \
    (const float* x, float lo, float hi, const float* g, float* out, size_t n), (x, lo, hi, g, out, n)) \
  /* PyTorch's hardtanh (ReLU6 = hardtanh(x, 0, 6)), lo <= hi: out[i] = x[i] >= hi ? hi : */ \
  /* x[i] <= lo ? lo : x[i], canonical (NaN kept; -0 becomes lo at a bound of +0): the bits of */ \
  /* its two masked fills. */ \
  X(hardtanh, Hardtanh, "hardtanh", (const float* x, float lo, float hi, float* out, size_t n), (x, lo, hi, out, n)) \
  /* Its gradient: out[i] = x[i] <= lo || x[i] >= hi ? +0 : g[i], canonical (PyTorch's */ \
  /* hardtanh_backward; the bits of the two fills' gradients; out may alias g). */ \
  X(hardtanh_backward, HardtanhBackward, "hardtanh backward", \
    (const float* x, float lo, float hi, const float* g, float* out, size_t n), (x, lo, hi, g, out, n)) \
  /* out[i] = a[i] op b[i] over broadcast operands (BroadcastOperand), i < n. */ \
  X(binary_broadcast, BinaryBroadcast, "binary", \
    (backend::BinaryOp op, backend::BroadcastOperand a, backend::BroadcastOperand b, float* out, size_t n), \
    (op, a, b, out, n)) \
  X(strided_copy, StridedCopy, "copy", (const backend::StridedCopyCall* call), (call)) \
  /* out[i] = word for i < words: zeros and constants of any 4- or 8-byte type. */ \
  X(fill, Fill, "fill", (uint32_t word, uint32_t* out, size_t words), (word, out, words)) \
  /* Correctly rounded elementary functions (simd/math.h). */ \
  X(math, Math, backend::MathFnName(fn), (backend::MathFn fn, const float* in, float* out, size_t n), \
    (fn, in, out, n)) \
  X(pow_int, PowInt, "pow", (const float* in, int32_t exponent, float* out, size_t n), (in, exponent, out, n)) \
  /* The gradient of GELU (erf form), out = g * (cdf + x * pdf), in the operation sequence of */ \
  /* simd/gelu_backward.h (out may alias x or g). */ \
  X(gelu_erf_backward, GeluErfBackward, "gelu backward", \
    (const float* x, const float* g, float* out, size_t n), (x, g, out, n)) \
  /* The gradient of SiLU (x * sigmoid(x)) from x, s = sigmoid(x) and g: the bits of the rules of */ \
  /* Mul and Sigmoid and the sum of x's two gradients (simd/silu_backward.h; out may alias an input). */ \
  X(silu_backward, SiluBackward, "silu backward", \
    (const float* x, const float* s, const float* g, float* out, size_t n), (x, s, g, out, n)) \
  /* LayerNorm over the rows of [rows, d], forward and input gradient, in the operation sequence */ \
  /* of simd/layer_norm.h (weight, bias: d floats or null). */ \
  X(layer_norm_rows, LayerNormRows, "layer_norm", \
    (const float* x, const float* weight, const float* bias, float eps, size_t rows, size_t d, float* xhat, \
     float* rstd, float* out), \
    (x, weight, bias, eps, rows, d, xhat, rstd, out)) \
  X(layer_norm_rows_backward, LayerNormRowsBackward, "layer_norm backward", \
    (const float* g, const float* weight, const float* xhat, const float* rstd, size_t rows, size_t d, float* dx), \
    (g, weight, xhat, rstd, rows, d, dx)) \
  /* BatchNorm's per-channel arithmetic, forward and input gradient (ChannelNormCall). */ \
  X(channel_normalize, ChannelNormalize, "batch_norm", (const backend::ChannelNormCall* call), (call)) \
  X(channel_normalize_backward, ChannelNormalizeBackward, "batch_norm backward", \
    (const backend::ChannelNormCall* call), (call)) \
  /* Canonical reductions over the middle axis of [outer, len, inner] (simd/reduce.h). */ \
  X(sum_axis, SumAxis, "sum", (const float* x, size_t outer, size_t len, size_t inner, float* out), \
    (x, outer, len, inner, out)) \
  X(mean_axis, MeanAxis, "mean", (const float* x, size_t outer, size_t len, size_t inner, float* out), \
    (x, outer, len, inner, out)) \
  X(variance_axis, VarianceAxis, "variance", \
    (const float* x, size_t outer, size_t len, size_t inner, size_t correction, float* out), \
    (x, outer, len, inner, correction, out)) \
  X(max_axis, MaxAxis, "max", (const float* x, size_t outer, size_t len, size_t inner, float* out), \
    (x, outer, len, inner, out)) \
  X(min_axis, MinAxis, "min", (const float* x, size_t outer, size_t len, size_t inner, float* out), \
    (x, outer, len, inner, out)) \
  X(argmax_axis, ArgmaxAxis, "argmax", (const float* x, size_t outer, size_t len, size_t inner, int64_t* out), \
    (x, outer, len, inner, out)) \
  /* Per-channel sums of [samples, channels, positions]: out[c] is sum_axis over channel c's values */ \
  /* in (sample, position) order, read in place (batch normalisation's statistics of a group). */ \
  X(channel_sums, ChannelSums, "batch_norm", \
    (const float* x, size_t samples, size_t channels, size_t positions, float* out), \
    (x, samples, channels, positions, out)) \
  /* channel_sums of (x - mean[c]) * (x - mean[c]), each operation rounded (batch normalisation's */ \
  /* variance): the bits of the broadcast subtraction, the square and channel_sums, in one pass. */ \
  X(channel_deviation_square_sums, ChannelDeviationSquareSums, "batch_norm", \
    (const float* x, const float* mean, size_t samples, size_t channels, size_t positions, float* out), \
    (x, mean, samples, channels, positions, out)) \
  /* Batch normalisation's gradient sums in one pass over g and xhat (ChannelNormSumsCall): the bits */ \
  /* of the products (each rounded, canonical) and the channel_sums calls they replace. */ \
  X(channel_norm_backward_sums, ChannelNormBackwardSums, "batch_norm backward", \
    (const backend::ChannelNormSumsCall* call), (call)) \
  /* C = op(A) op(B) (GemmCall), each output summing its K products in increasing k (simd/gemm.h). */ \
  X(gemm, Gemm, "gemm", (const backend::GemmCall* call), (call)) \
  /* The batch-grouped product of weight gradients (simd/gemm.h GemmBatchGrouped): K in groups */ \
  /* of k_per_group, each group summed as by gemm, the group results combined by adjacent pairs level */ \
  /* by level (an odd last one moving up). */ \
  X(gemm_batch_grouped, GemmBatchGrouped, "gemm (batch-grouped)", \
    (const backend::GemmCall* call, size_t k_per_group), (call, k_per_group)) \
  /* Over the last axis of [rows, cols] (simd/softmax.h). */ \
  X(softmax, Softmax, "softmax", (const float* x, size_t rows, size_t cols, float* out), (x, rows, cols, out)) \
  X(log_softmax, LogSoftmax, "log_softmax", (const float* x, size_t rows, size_t cols, float* out), \
    (x, rows, cols, out)) \
  /* Philox4x32-10 draws (simd/philox.h). */ \
  X(dropout_mask, DropoutMask, "dropout", \
    (uint64_t seed, uint64_t stream, uint64_t first, float p, float* out, size_t n), \
    (seed, stream, first, p, out, n)) \
  /* Data movement of the layers (core/conv_internal.h, core/ops_conv.cc, core/ops_nn.cc): im2col */ \
  /* writes zero padding; col2im adds each input element's column entries in increasing (kernel */ \
  /* row, kernel column) order, each addition canonical. */ \
  X(im2col, Im2Col, "im2col", (const backend::ConvCall* call, const float* x, float* cols), (call, x, cols)) \
  X(col2im_add, Col2ImAdd, "col2im", (const backend::ConvCall* call, const float* cols, float* dx), \
    (call, cols, dx)) \
  /* Convolution of its groups (Conv2dCall), in the contract's orders (docs/numerics.md: im2col + */ \
  /* GEMM, without the columns where a kernel can). Forward: y = sum + bias (bias may be null), */ \
  /* then the call's epilogue (ConvEpilogue: inference's batch normalisation and Relu, Clip or SiLU). */ \
  /* Input gradient: writes every element of dx. Weight gradient: dw [groups * c_out_group, k]. */ \
  X(conv2d_forward, Conv2dForward, "conv2d", \
    (const backend::Conv2dCall* call, const float* x, const float* w, const float* bias, float* y), \
    (call, x, w, bias, y)) \
  X(conv2d_input_grad, Conv2dInputGrad, "conv2d backward", \
    (const backend::Conv2dCall* call, const float* dy, const float* w, float* dx), (call, dy, w, dx)) \
  X(conv2d_weight_grad, Conv2dWeightGrad, "conv2d backward", \
    (const backend::Conv2dCall* call, const float* dy, const float* x, float* dw), (call, dy, x, dw)) \
  /* Max pooling: the first maximum in row-major window order by the contract's order (NaN above */ \
  /* all, +0 above -0) wins; argmax is its index in the plane, or null where no gradient is */ \
  /* wanted (the outputs alone: the same values). The backward pass writes every */ \
  /* element of dx: +0, then each output gradient added at its argmax, in increasing output order */ \
  /* per plane. */ \
  X(max_pool_forward, MaxPoolForward, "max_pool2d", \
    (const backend::PoolCall* call, const float* x, float* out, int64_t* argmax), (call, x, out, argmax)) \
  X(max_pool_backward, MaxPoolBackward, "max_pool2d backward", \
    (const backend::PoolCall* call, const float* grad, const int64_t* argmax, float* dx), (call, grad, argmax, dx)) \
  /* Average pooling: each window's canonical sum (simd/reduce.h) in row-major window order, */ \
  /* padded positions as +0, divided by the divisor of PoolCall. The backward pass writes every */ \
  /* element of dx: +0, then grad / divisor added at each covered input position, in increasing */ \
  /* output order per plane, each addition canonical. */ \
  X(avg_pool_forward, AvgPoolForward, "avg_pool2d", (const backend::PoolCall* call, const float* x, float* out), \
    (call, x, out)) \
  X(avg_pool_backward, AvgPoolBackward, "avg_pool2d backward", \
    (const backend::PoolCall* call, const float* grad, float* dx), (call, grad, dx)) \
  /* Embedding: out[i] = table[ids[i]] (rows of dim); the backward pass adds grad row i to */ \
  /* table_grad[ids[i]] in increasing i, each addition canonical. */ \
  X(gather_rows, GatherRows, "embedding", \
    (const float* table, const int64_t* ids, size_t count, size_t dim, float* out), (table, ids, count, dim, out)) \
  X(scatter_add_rows, ScatterAddRows, "embedding backward", \
    (const int64_t* ids, size_t count, size_t dim, const float* grad, float* table_grad), \
    (ids, count, dim, grad, table_grad)) \
  /* Negative log-likelihood over [n, c] log-probabilities: losses[i] = -log_probs[i, targets[i]] */ \
  /* (0 where targets[i] == ignore_index); the backward pass writes -(grad[i * grad_step] / divisor) */ \
  /* at [i, targets[i]] of a zeroed [n, c] (grad_step 0: one gradient for every row; divisor 1 for */ \
  /* none). Canonical NaN. */ \
  X(nll_forward, NllForward, "nll_loss", \
    (const float* log_probs, const int64_t* targets, size_t n, size_t c, int64_t ignore_index, float* losses), \
    (log_probs, targets, n, c, ignore_index, losses)) \
  X(nll_backward, NllBackward, "nll_loss backward", \
    (const int64_t* targets, size_t n, size_t c, int64_t ignore_index, const float* grad, size_t grad_step, \
     float divisor, float* grad_log_probs), \
    (targets, n, c, ignore_index, grad, grad_step, divisor, grad_log_probs)) \
  /* Optimizer updates (simd/optimizer.h). */ \
  X(adam_update, AdamUpdate, "adam update", (const backend::AdamCall* call), (call)) \
  X(sgd_update, SgdUpdate, "sgd update", (const backend::SgdCall* call), (call))
// clang-format on

#endif  // LOCKSTEP_CORE_BACKEND_KERNEL_LIST_H_
