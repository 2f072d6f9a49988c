// Kernels (core/ops_internal.h): the current device's table behind simd/'s signatures.
#include "core/ops_internal.h"

namespace lockstep {

namespace be = backend;

namespace {
be::BinaryOp B(simd::BinaryOp op) { return static_cast<be::BinaryOp>(op); }
}  // namespace

void Kernels::Binary(simd::BinaryOp op, const float* a, const float* b, float* out, size_t n) const {
  CheckKernel(k_, k_.binary(B(op), a, b, out, n), "binary");
}
void Kernels::BinaryScalarRight(simd::BinaryOp op, const float* a, float s, float* out, size_t n) const {
  CheckKernel(k_, k_.binary_scalar_right(B(op), a, s, out, n), "binary");
}
void Kernels::BinaryScalarLeft(simd::BinaryOp op, float s, const float* b, float* out, size_t n) const {
  CheckKernel(k_, k_.binary_scalar_left(B(op), s, b, out, n), "binary");
}
void Kernels::Unary(simd::UnaryOp op, const float* a, float* out, size_t n) const {
  CheckKernel(k_, k_.unary(static_cast<be::UnaryOp>(op), a, out, n), "unary");
}
void Kernels::Select(const float* cond, const float* a, const float* b, float* out, size_t n) const {
  CheckKernel(k_, k_.select(cond, a, b, out, n), "select");
}
void Kernels::Math(simd::MathFn fn, const float* in, float* out, size_t n) const {
  CheckKernel(k_, k_.math(static_cast<be::MathFn>(fn), in, out, n), simd::MathFnName(fn));
}
void Kernels::PowInt(const float* in, int exponent, float* out, size_t n) const {
  CheckKernel(k_, k_.pow_int(in, exponent, out, n), "pow");
}
void Kernels::SumAxis(const float* x, size_t outer, size_t len, size_t inner, float* out) const {
  CheckKernel(k_, k_.sum_axis(x, outer, len, inner, out), "sum");
}
void Kernels::MeanAxis(const float* x, size_t outer, size_t len, size_t inner, float* out) const {
  CheckKernel(k_, k_.mean_axis(x, outer, len, inner, out), "mean");
}
void Kernels::VarianceAxis(const float* x, size_t outer, size_t len, size_t inner, size_t correction,
                           float* out) const {
  CheckKernel(k_, k_.variance_axis(x, outer, len, inner, correction, out), "variance");
}
void Kernels::MaxAxis(const float* x, size_t outer, size_t len, size_t inner, float* out) const {
  CheckKernel(k_, k_.max_axis(x, outer, len, inner, out), "max");
}
void Kernels::ArgmaxAxis(const float* x, size_t outer, size_t len, size_t inner, int64_t* out) const {
  CheckKernel(k_, k_.argmax_axis(x, outer, len, inner, out), "argmax");
}
void Kernels::GeluErfBackward(const float* x, const float* g, float* out, size_t n) const {
  CheckKernel(k_, k_.gelu_erf_backward(x, g, out, n), "gelu backward");
}
void Kernels::LayerNormRows(const float* x, const float* weight, const float* bias, float eps, size_t rows,
                            size_t d, float* xhat, float* rstd, float* out) const {
  CheckKernel(k_, k_.layer_norm_rows(x, weight, bias, eps, rows, d, xhat, rstd, out), "layer_norm");
}
void Kernels::LayerNormRowsBackward(const float* g, const float* weight, const float* xhat, const float* rstd,
                                    size_t rows, size_t d, float* dx) const {
  CheckKernel(k_, k_.layer_norm_rows_backward(g, weight, xhat, rstd, rows, d, dx), "layer_norm backward");
}
void Kernels::Gemm(const simd::GemmArgs& a) const {
  be::GemmCall call{a.trans_a, a.trans_b, a.m, a.n, a.k, a.a, a.lda, a.b, a.ldb, a.c, a.ldc, a.next_a, a.next_b, a.bias};
  CheckKernel(k_, k_.gemm(&call), "gemm");
}
void Kernels::GemmBatchGrouped(const simd::GemmArgs& a, size_t k_per_group) const {
  be::GemmCall call{a.trans_a, a.trans_b, a.m, a.n, a.k, a.a, a.lda, a.b, a.ldb, a.c, a.ldc, a.next_a, a.next_b, a.bias};
  CheckKernel(k_, k_.gemm_batch_grouped(&call, k_per_group), "gemm (batch-grouped)");
}
void Kernels::Softmax(const float* x, size_t rows, size_t cols, float* out) const {
  CheckKernel(k_, k_.softmax(x, rows, cols, out), "softmax");
}
void Kernels::LogSoftmax(const float* x, size_t rows, size_t cols, float* out) const {
  CheckKernel(k_, k_.log_softmax(x, rows, cols, out), "log_softmax");
}
void Kernels::DropoutMask(uint64_t seed, uint64_t stream, uint64_t first, float p, float* out,
                          size_t n) const {
  CheckKernel(k_, k_.dropout_mask(seed, stream, first, p, out, n), "dropout");
}
void Kernels::BinaryBroadcast(simd::BinaryOp op, be::BroadcastOperand a, be::BroadcastOperand b, float* out,
                              size_t n) const {
  CheckKernel(k_, k_.binary_broadcast(B(op), a, b, out, n), "binary");
}
void Kernels::StridedCopy(const be::StridedCopyCall& call) const {
  CheckKernel(k_, k_.strided_copy(&call), "copy");
}
void Kernels::Im2Col(const be::ConvCall& call, const float* x, float* cols) const {
  CheckKernel(k_, k_.im2col(&call, x, cols), "im2col");
}
void Kernels::Col2ImAdd(const be::ConvCall& call, const float* cols, float* dx) const {
  CheckKernel(k_, k_.col2im_add(&call, cols, dx), "col2im");
}
void Kernels::Conv2dForward(const be::Conv2dCall& call, const float* x, const float* w, const float* bias,
                            float* y) const {
  CheckKernel(k_, k_.conv2d_forward(&call, x, w, bias, y), "conv2d");
}
void Kernels::Conv2dInputGrad(const be::Conv2dCall& call, const float* dy, const float* w, float* dx) const {
  CheckKernel(k_, k_.conv2d_input_grad(&call, dy, w, dx), "conv2d backward");
}
void Kernels::Conv2dWeightGrad(const be::Conv2dCall& call, const float* dy, const float* x, float* dw) const {
  CheckKernel(k_, k_.conv2d_weight_grad(&call, dy, x, dw), "conv2d backward");
}
void Kernels::MaxPoolForward(const be::PoolCall& call, const float* x, float* out, int64_t* argmax) const {
  CheckKernel(k_, k_.max_pool_forward(&call, x, out, argmax), "max_pool2d");
}
void Kernels::MaxPoolBackward(const be::PoolCall& call, const float* grad, const int64_t* argmax, float* dx) const {
  CheckKernel(k_, k_.max_pool_backward(&call, grad, argmax, dx), "max_pool2d backward");
}
void Kernels::GatherRows(const float* table, const int64_t* ids, size_t count, size_t dim, float* out) const {
  CheckKernel(k_, k_.gather_rows(table, ids, count, dim, out), "embedding");
}
void Kernels::ScatterAddRows(const int64_t* ids, size_t count, size_t dim, const float* grad,
                             float* table_grad) const {
  CheckKernel(k_, k_.scatter_add_rows(ids, count, dim, grad, table_grad), "embedding backward");
}
void Kernels::NllForward(const float* log_probs, const int64_t* targets, size_t n, size_t c, int64_t ignore_index,
                         float* losses) const {
  CheckKernel(k_, k_.nll_forward(log_probs, targets, n, c, ignore_index, losses), "nll_loss");
}
void Kernels::NllBackward(const int64_t* targets, size_t n, size_t c, int64_t ignore_index, const float* grad,
                          size_t grad_step, float divisor, float* grad_log_probs) const {
  CheckKernel(k_, k_.nll_backward(targets, n, c, ignore_index, grad, grad_step, divisor, grad_log_probs),
              "nll_loss backward");
}
void Kernels::AdamUpdate(const be::AdamCall& call) const {
  CheckKernel(k_, k_.adam_update(&call), "adam update");
}
void Kernels::SgdUpdate(const be::SgdCall& call) const {
  CheckKernel(k_, k_.sgd_update(&call), "sgd update");
}

}  // namespace lockstep
