// The CPU's kernel table: the simd/ kernels behind the backend interface.
#include <stdlib.h>
#include <string.h>

#include <algorithm>

#include "core/backend/cpu_layers.h"
#include "core/backend/device.h"
#include "simd/elementwise.h"
#include "simd/gelu_backward.h"
#include "simd/layer_norm.h"
#include "simd/gemm.h"
#include "simd/math.h"
#include "simd/optimizer.h"
#include "simd/philox.h"
#include "simd/reduce.h"
#include "simd/silu_backward.h"
#include "simd/softmax.h"

namespace lockstep {
namespace {

namespace be = backend;

static_assert(static_cast<int>(be::BinaryOp::kRemainder) == static_cast<int>(simd::BinaryOp::kRemainder) &&
                  static_cast<int>(be::BinaryOp::kMax) == static_cast<int>(simd::BinaryOp::kMax),
              "backend::BinaryOp must mirror simd::BinaryOp");
static_assert(static_cast<int>(be::UnaryOp::kSquare) == static_cast<int>(simd::UnaryOp::kSquare) &&
                  static_cast<int>(be::UnaryOp::kRoundBFloat16) == static_cast<int>(simd::UnaryOp::kRoundBFloat16),
              "backend::UnaryOp must mirror simd::UnaryOp");
static_assert(static_cast<int>(be::MathFn::kRsqrt) == static_cast<int>(simd::MathFn::kRsqrt) &&
                  static_cast<int>(be::MathFn::kAtanh) == static_cast<int>(simd::MathFn::kAtanh) &&
                  simd::kMathFnCount == be::kMathFnCount,
              "backend::MathFn must mirror simd::MathFn");

simd::BinaryOp B(be::BinaryOp op) { return static_cast<simd::BinaryOp>(op); }

// simd/ behind the table's entry names.
struct Cpu {
  static void* Alloc(size_t bytes) {
    const size_t rounded = (bytes + 63) / 64 * 64;
    return aligned_alloc(64, rounded == 0 ? 64 : rounded);
  }
  static void Release(void* p) { free(p); }
  static int CopyToDevice(void* dst, const void* src, size_t bytes) {
    if (bytes != 0) memcpy(dst, src, bytes);
    return 0;
  }
  static const char* LastError() { return ""; }

  static int Binary(be::BinaryOp op, const float* a, const float* b, float* out, size_t n) {
    simd::Binary(B(op), a, b, out, n);
    return 0;
  }
  static int BinaryScalarRight(be::BinaryOp op, const float* a, float s, float* out, size_t n) {
    simd::BinaryScalarRight(B(op), a, s, out, n);
    return 0;
  }
  static int BinaryScalarLeft(be::BinaryOp op, float s, const float* b, float* out, size_t n) {
    simd::BinaryScalarLeft(B(op), s, b, out, n);
    return 0;
  }
  static int Unary(be::UnaryOp op, const float* a, float* out, size_t n) {
    simd::Unary(static_cast<simd::UnaryOp>(op), a, out, n);
    return 0;
  }
  static int Clamp(const float* x, float lo, float hi, float* out, size_t n) {
    simd::Clamp(x, lo, hi, out, n);
    return 0;
  }
  static int ClampBackward(const float* x, float lo, float hi, const float* g, float* out, size_t n) {
    simd::ClampBackward(x, lo, hi, g, out, n);
    return 0;
  }
  static int Hardtanh(const float* x, float lo, float hi, float* out, size_t n) {
    simd::Hardtanh(x, lo, hi, out, n);
    return 0;
  }
  static int HardtanhBackward(const float* x, float lo, float hi, const float* g, float* out, size_t n) {
    simd::HardtanhBackward(x, lo, hi, g, out, n);
    return 0;
  }
  static int Select(const float* cond, const float* a, const float* b, float* out, size_t n) {
    simd::Select(cond, a, b, out, n);
    return 0;
  }
  static int Math(be::MathFn fn, const float* in, float* out, size_t n) {
    simd::Math(static_cast<simd::MathFn>(fn), in, out, n);
    return 0;
  }
  static int GeluErfBackward(const float* x, const float* g, float* out, size_t n) {
    simd::GeluErfBackward(x, g, out, n);
    return 0;
  }
  static int SiluBackward(const float* x, const float* s, const float* g, float* out, size_t n) {
    simd::SiluBackward(x, s, g, out, n);
    return 0;
  }
  static int LayerNormRows(const float* x, const float* weight, const float* bias, float eps, size_t rows, size_t d,
                           float* xhat, float* rstd, float* out) {
    simd::LayerNormRows(x, weight, bias, eps, rows, d, xhat, rstd, out);
    return 0;
  }
  static int LayerNormRowsBackward(const float* g, const float* weight, const float* xhat, const float* rstd,
                                   size_t rows, size_t d, float* dx) {
    simd::LayerNormRowsBackward(g, weight, xhat, rstd, rows, d, dx);
    return 0;
  }
  static int PowInt(const float* in, int32_t exponent, float* out, size_t n) {
    simd::PowInt(in, exponent, out, n);
    return 0;
  }
  static int ChannelNormBackwardSums(const be::ChannelNormSumsCall* c) {
    simd::ChannelNormSums a;
    a.samples = c->samples;
    a.channels = c->channels;
    a.positions = c->positions;
    a.g = c->g;
    a.xhat = c->xhat;
    a.weight = c->weight;
    a.bias = c->bias;
    a.sigmoid = c->sigmoid;
    a.activation.kind = static_cast<simd::NormActivation::Kind>(c->activation);
    a.activation.lo = c->lo;
    a.activation.hi = c->hi;
    a.dxhat_out = c->dxhat_out;
    a.sum_dxhat = c->sum_dxhat;
    a.sum_dxhat_xhat = c->sum_dxhat_xhat;
    a.sum_g_xhat = c->sum_g_xhat;
    a.sum_g = c->sum_g;
    simd::ChannelNormBackwardSums(a);
    return 0;
  }
  static int ChannelSums(const float* x, size_t samples, size_t channels, size_t positions, float* out) {
    simd::ChannelSums(x, samples, channels, positions, out);
    return 0;
  }
  static int ChannelDeviationSquareSums(const float* x, const float* mean, size_t samples, size_t channels,
                                        size_t positions, float* out) {
    simd::ChannelDeviationSquareSums(x, mean, samples, channels, positions, out);
    return 0;
  }
  static int SumAxis(const float* x, size_t outer, size_t len, size_t inner, float* out) {
    simd::SumAxis(x, outer, len, inner, out);
    return 0;
  }
  static int MeanAxis(const float* x, size_t outer, size_t len, size_t inner, float* out) {
    simd::MeanAxis(x, outer, len, inner, out);
    return 0;
  }
  static int VarianceAxis(const float* x, size_t outer, size_t len, size_t inner, size_t correction, float* out) {
    simd::VarianceAxis(x, outer, len, inner, correction, out);
    return 0;
  }
  static int MaxAxis(const float* x, size_t outer, size_t len, size_t inner, float* out) {
    simd::MaxAxis(x, outer, len, inner, out);
    return 0;
  }
  static int MinAxis(const float* x, size_t outer, size_t len, size_t inner, float* out) {
    simd::MinAxis(x, outer, len, inner, out);
    return 0;
  }
  static int ArgmaxAxis(const float* x, size_t outer, size_t len, size_t inner, int64_t* out) {
    simd::ArgmaxAxis(x, outer, len, inner, out);
    return 0;
  }
  static simd::GemmArgs Args(const be::GemmCall* c) {
    simd::GemmArgs g;
    g.trans_a = c->trans_a != 0;
    g.trans_b = c->trans_b != 0;
    g.m = c->m;
    g.n = c->n;
    g.k = c->k;
    g.a = c->a;
    g.lda = c->lda;
    g.b = c->b;
    g.ldb = c->ldb;
    g.c = c->c;
    g.ldc = c->ldc;
    g.next_a = c->next_a;
    g.next_b = c->next_b;
    g.bias = c->bias;
    return g;
  }
  static int Gemm(const be::GemmCall* c) {
    simd::Gemm(Args(c));
    return 0;
  }
  static int GemmBatchGrouped(const be::GemmCall* c, size_t k_per_group) {
    simd::GemmBatchGrouped(Args(c), k_per_group);
    return 0;
  }
  static int Softmax(const float* x, size_t rows, size_t cols, float* out) {
    simd::Softmax(x, rows, cols, out);
    return 0;
  }
  static int LogSoftmax(const float* x, size_t rows, size_t cols, float* out) {
    simd::LogSoftmax(x, rows, cols, out);
    return 0;
  }
  static int DropoutMask(uint64_t seed, uint64_t stream, uint64_t first, float p, float* out, size_t n) {
    simd::PhiloxDropoutMask(seed, stream, first, p, out, n);
    return 0;
  }
  static int AdamUpdate(const be::AdamCall* a) {
    simd::AdamUpdate(a->param, a->grad, a->exp_avg, a->exp_avg_sq, a->n, a->lr, a->beta1, a->beta2,
                     a->eps, a->weight_decay, a->decoupled != 0, a->step_size, a->sqrt_bias_correction2);
    return 0;
  }
  static int SgdUpdate(const be::SgdCall* s) {
    simd::SgdUpdate(s->param, s->grad, s->momentum_buffer, s->n, s->lr, s->momentum, s->dampening,
                    s->weight_decay, s->nesterov != 0, s->first_step != 0);
    return 0;
  }
  static int CopyToHost(void* dst, const void* src, size_t bytes) { return CopyToDevice(dst, src, bytes); }

  static int BinaryBroadcast(be::BinaryOp op, be::BroadcastOperand a, be::BroadcastOperand b, float* out, size_t n) {
    cpu_layers::BinaryBroadcast(op, a, b, out, n);
    return 0;
  }
  static int Fill(uint32_t word, uint32_t* out, size_t words) {
    std::fill(out, out + words, word);
    return 0;
  }
  static int StridedCopy(const be::StridedCopyCall* c) {
    cpu_layers::StridedCopy(*c);
    return 0;
  }
  static int Im2Col(const be::ConvCall* c, const float* x, float* cols) {
    cpu_layers::Im2Col(*c, x, cols);
    return 0;
  }
  static int Col2ImAdd(const be::ConvCall* c, const float* cols, float* dx) {
    cpu_layers::Col2ImAdd(*c, cols, dx);
    return 0;
  }
  static int Conv2dForward(const be::Conv2dCall* c, const float* x, const float* w, const float* bias, float* y) {
    cpu_layers::Conv2dForward(*c, x, w, bias, y);
    return 0;
  }
  static int Conv2dInputGrad(const be::Conv2dCall* c, const float* dy, const float* w, float* dx) {
    cpu_layers::Conv2dInputGrad(*c, dy, w, dx);
    return 0;
  }
  static int Conv2dWeightGrad(const be::Conv2dCall* c, const float* dy, const float* x, float* dw) {
    cpu_layers::Conv2dWeightGrad(*c, dy, x, dw);
    return 0;
  }
  static int MaxPoolForward(const be::PoolCall* p, const float* x, float* out, int64_t* argmax) {
    cpu_layers::MaxPoolForward(*p, x, out, argmax);
    return 0;
  }
  static int MaxPoolBackward(const be::PoolCall* p, const float* grad, const int64_t* argmax, float* dx) {
    cpu_layers::MaxPoolBackward(*p, grad, argmax, dx);
    return 0;
  }
  static int AvgPoolForward(const be::PoolCall* p, const float* x, float* out) {
    cpu_layers::AvgPoolForward(*p, x, out);
    return 0;
  }
  static int AvgPoolBackward(const be::PoolCall* p, const float* grad, float* dx) {
    cpu_layers::AvgPoolBackward(*p, grad, dx);
    return 0;
  }
  static int ChannelNormalize(const be::ChannelNormCall* c) {
    cpu_layers::ChannelNormalize(*c);
    return 0;
  }
  static int ChannelNormalizeBackward(const be::ChannelNormCall* c) {
    cpu_layers::ChannelNormalizeBackward(*c);
    return 0;
  }
  static int GatherRows(const float* table, const int64_t* ids, size_t count, size_t dim, float* out) {
    cpu_layers::GatherRows(table, ids, count, dim, out);
    return 0;
  }
  static int ScatterAddRows(const int64_t* ids, size_t count, size_t dim, const float* grad, float* table_grad) {
    cpu_layers::ScatterAddRows(ids, count, dim, grad, table_grad);
    return 0;
  }
  static int NllForward(const float* log_probs, const int64_t* targets, size_t n, size_t c, int64_t ignore_index,
                        float* losses) {
    cpu_layers::NllForward(log_probs, targets, n, c, ignore_index, losses);
    return 0;
  }
  static int NllBackward(const int64_t* targets, size_t n, size_t c, int64_t ignore_index, const float* grad,
                         size_t grad_step, float divisor, float* grad_log_probs) {
    cpu_layers::NllBackward(targets, n, c, ignore_index, grad, grad_step, divisor, grad_log_probs);
    return 0;
  }
};

}  // namespace

const backend::KernelTable& CpuKernels() {
  static const backend::KernelTable table = backend::MakeKernelTable<Cpu>("cpu");
  return table;
}

}  // namespace lockstep
