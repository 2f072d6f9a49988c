// The plugin's KernelTable, written once over a launch policy `Dev`: cuda/plugin.cu runs the
// bodies as CUDA grids (one thread per index), cuda/emulation.cc runs them as host loops. Dev
// provides:
//   template <class Body> static int Launch(size_t n, const Body& body);  // body(i), i < n
//   static void* Alloc(size_t bytes); static void Release(void* p);       // device memory
//   static int CopyToDevice(void*, const void*, size_t); static int CopyToHost(...);
//   static const MathTables& Tables();  static const char* LastError();
//   static int Fail(const char* message);  // records the message, returns nonzero
#ifndef LOCKSTEP_CUDA_KERNEL_TABLE_IMPL_H_
#define LOCKSTEP_CUDA_KERNEL_TABLE_IMPL_H_

#include "core/backend/kernel_table.h"
#include "cuda/kernels/conv.h"
#include "cuda/kernels/elementwise.h"
#include "cuda/kernels/gemm.h"
#include "cuda/kernels/layers.h"
#include "cuda/kernels/math.h"
#include "cuda/kernels/norm_pool.h"
#include "cuda/kernels/optimizer.h"
#include "cuda/kernels/philox.h"
#include "cuda/kernels/reduce.h"

namespace lockstep {
namespace cuda {

template <class Dev>
struct TableImpl {
  // Device scratch for one call, released on every path.
  struct Scratch {
    void* ptr = nullptr;
    explicit Scratch(size_t bytes) : ptr(Dev::Alloc(bytes == 0 ? 4 : bytes)) {}
    ~Scratch() { Dev::Release(ptr); }
    float* f() const { return static_cast<float*>(ptr); }
  };

  static int Binary(BinaryOp op, const float* a, const float* b, float* out, size_t n) {
    return Dev::Launch(n, BinaryBody{op, a, b, out});
  }
  static int BinaryScalarRight(BinaryOp op, const float* a, float s, float* out, size_t n) {
    return Dev::Launch(n, BinaryScalarRightBody{op, a, s, out});
  }
  static int BinaryScalarLeft(BinaryOp op, float s, const float* b, float* out, size_t n) {
    return Dev::Launch(n, BinaryScalarLeftBody{op, s, b, out});
  }
  static int Unary(UnaryOp op, const float* a, float* out, size_t n) {
    return Dev::Launch(n, UnaryBody{op, a, out});
  }
  static int Clamp(const float* x, float lo, float hi, float* out, size_t n) {
    return Dev::Launch(n, ClampBody{x, lo, hi, out});
  }
  static int ClampBackward(const float* x, float lo, float hi, const float* g, float* out, size_t n) {
    return Dev::Launch(n, ClampBackwardBody{x, lo, hi, g, out});
  }
  static int Hardtanh(const float* x, float lo, float hi, float* out, size_t n) {
    return Dev::Launch(n, HardtanhBody{x, lo, hi, out});
  }
  static int HardtanhBackward(const float* x, float lo, float hi, const float* g, float* out, size_t n) {
    return Dev::Launch(n, HardtanhBackwardBody{x, lo, hi, g, out});
  }
  static int Select(const float* cond, const float* a, const float* b, float* out, size_t n) {
    return Dev::Launch(n, SelectBody{cond, a, b, out});
  }
  static int BinaryBroadcast(BinaryOp op, backend::BroadcastOperand a, backend::BroadcastOperand b,
                             float* out, size_t n) {
    return Dev::Launch(n, BinaryBroadcastBody{op, a, b, out});
  }
  static int Fill(uint32_t word, uint32_t* out, size_t words) { return Dev::Launch(words, FillBody{word, out}); }
  static int StridedCopy(const backend::StridedCopyCall* c) {
    if (c->rank < 0 || c->rank > backend::kMaxCopyRank) return Dev::Fail("strided copy: rank out of range");
    size_t n = 1;
    for (int d = 0; d < c->rank; ++d) n *= static_cast<size_t>(c->shape[d]);
    return Dev::Launch(n, StridedCopyBody{*c});
  }
  static int Im2Col(const backend::ConvCall* g, const float* x, float* cols) {
    const size_t n = static_cast<size_t>(g->samples * g->c_in_group * g->kh * g->kw * g->h_out * g->w_out);
    return Dev::Launch(n, Im2ColBody{*g, x, cols});
  }
  static int Col2ImAdd(const backend::ConvCall* g, const float* cols, float* dx) {
    return Dev::Launch(static_cast<size_t>(g->samples * g->c_in_group * g->h * g->w), Col2ImBody{*g, cols, dx});
  }
  // A call's groups one launch each, the pointers offset to the group's channels and weights.
  // SiLU's sigmoid runs as a second pass over the outputs (ConvSiluBody).
  static int Conv2dForward(const backend::Conv2dCall* c, const float* x, const float* w, const float* bias, float* y) {
    const size_t n = static_cast<size_t>(c->conv.samples * c->c_out_group * c->conv.h_out * c->conv.w_out);
    const backend::Conv2dGroupStrides o = backend::GroupStridesOf(*c);
    backend::Conv2dCall call = *c;
    const bool silu = call.epilogue.activation == backend::kConvSilu;
    if (silu) call.epilogue.activation = backend::kConvNoActivation;
    for (int64_t g = 0; g < c->groups; ++g) {
      const int status = Dev::Launch(n, Conv2dForwardBody{call, x + g * o.x, w + g * o.w,
                                                          bias == nullptr ? nullptr : bias + g * c->c_out_group, y + g * o.y,
                                                          g * c->c_out_group});
      if (status != 0) return status;
    }
    if (!silu) return 0;
    const int64_t per_sample = c->groups * o.y;
    return Dev::Launch(static_cast<size_t>(c->conv.samples * per_sample),
                       ConvSiluBody{Dev::Tables(), y, per_sample, c->out_sample_stride});
  }
  static int Conv2dInputGrad(const backend::Conv2dCall* c, const float* dy, const float* w, float* dx) {
    const size_t n = static_cast<size_t>(c->conv.samples * c->conv.c_in_group * c->conv.h * c->conv.w);
    const backend::Conv2dGroupStrides o = backend::GroupStridesOf(*c);
    for (int64_t g = 0; g < c->groups; ++g) {
      const int status = Dev::Launch(n, Conv2dInputGradBody{*c, dy + g * o.y, w + g * o.w, dx + g * o.x});
      if (status != 0) return status;
    }
    return 0;
  }
  static int Conv2dWeightGrad(const backend::Conv2dCall* c, const float* dy, const float* x, float* dw) {
    const backend::Conv2dGroupStrides o = backend::GroupStridesOf(*c);
    for (int64_t g = 0; g < c->groups; ++g) {
      const int status = Conv2dWeightGradGroup(c, dy + g * o.y, x + g * o.x, dw + g * o.w);
      if (status != 0) return status;
    }
    return 0;
  }
  static int Conv2dWeightGradGroup(const backend::Conv2dCall* c, const float* dy, const float* x, float* dw) {
    const size_t outputs = static_cast<size_t>(c->c_out_group * c->conv.c_in_group * c->conv.kh * c->conv.kw);
    if (c->conv.samples == 0 || c->conv.h_out * c->conv.w_out == 0) {  // an empty sum: +0
      return Dev::Launch(outputs, Conv2dZeroBody{dw});
    }
    const int64_t per_group = c->samples_per_group > 0 ? c->samples_per_group : c->conv.samples;
    const size_t groups = static_cast<size_t>((c->conv.samples + per_group - 1) / per_group);
    Scratch partials(outputs * groups * sizeof(float));
    if (partials.ptr == nullptr) return Dev::Fail("out of device memory for the convolution's weight gradient");
    backend::Conv2dCall call = *c;
    call.samples_per_group = per_group;
    const int status = Dev::Launch(outputs * groups, Conv2dWeightGradBody{call, dy, x, groups, partials.f()});
    if (status != 0) return status;
    return Dev::Launch(outputs, Conv2dCombineGroupsBody{partials.f(), groups, dw});
  }
  static int MaxPoolForward(const backend::PoolCall* p, const float* x, float* out, int64_t* argmax) {
    return Dev::Launch(static_cast<size_t>(p->planes * p->h_out * p->w_out), MaxPoolForwardBody{*p, x, out, argmax});
  }
  static int MaxPoolBackward(const backend::PoolCall* p, const float* grad, const int64_t* argmax, float* dx) {
    return Dev::Launch(static_cast<size_t>(p->planes), MaxPoolBackwardBody{*p, grad, argmax, dx});
  }
  static int AvgPoolForward(const backend::PoolCall* p, const float* x, float* out) {
    return Dev::Launch(static_cast<size_t>(p->planes * p->h_out * p->w_out), AvgPoolForwardBody{*p, x, out});
  }
  static int AvgPoolBackward(const backend::PoolCall* p, const float* grad, float* dx) {
    return Dev::Launch(static_cast<size_t>(p->planes * p->h * p->w), AvgPoolBackwardBody{*p, grad, dx});
  }
  // SiLU after the normalisation: its sigmoid (into sigmoid_out, or scratch), then the product in place.
  static int ChannelNormalize(const backend::ChannelNormCall* c) {
    const size_t n = c->outer * c->channels * c->inner;
    int status = Dev::Launch(n, ChannelNormalizeBody{*c});
    if (status != 0 || c->activation != backend::kConvSilu) return status;
    Scratch scratch(c->sigmoid_out == nullptr ? n * sizeof(float) : 0);
    if (scratch.ptr == nullptr) return Dev::Fail("out of device memory for batch_norm's SiLU");
    float* const s = c->sigmoid_out != nullptr ? c->sigmoid_out : scratch.f();
    status = Math(MathFn::kSigmoid, c->out, s, n);
    return status != 0 ? status : Binary(BinaryOp::kMul, c->out, s, c->out, n);
  }
  static int ChannelNormalizeBackward(const backend::ChannelNormCall* c) {
    return Dev::Launch(c->outer * c->channels * c->inner, ChannelNormalizeBackwardBody{*c});
  }
  static int GatherRows(const float* table, const int64_t* ids, size_t count, size_t dim, float* out) {
    return Dev::Launch(count * dim, GatherRowsBody{table, ids, dim, out});
  }
  static int ScatterAddRows(const int64_t* ids, size_t count, size_t dim, const float* grad, float* table_grad) {
    return Dev::Launch(dim, ScatterAddRowsBody{ids, count, dim, grad, table_grad});
  }
  static int NllForward(const float* log_probs, const int64_t* targets, size_t n, size_t c, int64_t ignore_index,
                        float* losses) {
    return Dev::Launch(n, NllForwardBody{log_probs, targets, c, ignore_index, losses});
  }
  static int NllBackward(const int64_t* targets, size_t n, size_t c, int64_t ignore_index, const float* grad,
                         size_t grad_step, float divisor, float* grad_log_probs) {
    return Dev::Launch(n, NllBackwardBody{targets, c, ignore_index, grad, grad_step, divisor, grad_log_probs});
  }
  static int Math(MathFn fn, const float* in, float* out, size_t n) {
    return Dev::Launch(n, MathBody{Dev::Tables(), fn, in, out});
  }
  // The operation sequence of simd/gelu_backward.h, step by step over two scratch arrays.
  static int GeluErfBackward(const float* x, const float* g, float* out, size_t n) {
    Scratch cdf_buffer(n * sizeof(float)), pdf_buffer(n * sizeof(float));
    if (cdf_buffer.ptr == nullptr || pdf_buffer.ptr == nullptr) return Dev::Fail("out of device memory for gelu backward");
    float* cdf = cdf_buffer.f();
    float* pdf = pdf_buffer.f();
    int status = BinaryScalarRight(BinaryOp::kMul, x, 0.70710678118654752f, cdf, n);
    if (status == 0) status = Math(MathFn::kErf, cdf, cdf, n);
    if (status == 0) status = BinaryScalarRight(BinaryOp::kAdd, cdf, 1.0f, cdf, n);
    if (status == 0) status = BinaryScalarRight(BinaryOp::kMul, cdf, 0.5f, cdf, n);
    if (status == 0) status = Binary(BinaryOp::kMul, x, x, pdf, n);
    if (status == 0) status = BinaryScalarRight(BinaryOp::kMul, pdf, -0.5f, pdf, n);
    if (status == 0) status = Math(MathFn::kExp, pdf, pdf, n);
    if (status == 0) status = BinaryScalarRight(BinaryOp::kMul, pdf, 0.39894228040143268f, pdf, n);
    if (status == 0) status = Binary(BinaryOp::kMul, x, pdf, pdf, n);
    if (status == 0) status = Binary(BinaryOp::kAdd, cdf, pdf, cdf, n);
    if (status == 0) status = Binary(BinaryOp::kMul, g, cdf, out, n);
    return status;
  }
  // The operation sequence of simd/silu_backward.h, step by step over two scratch arrays; out is
  // written last (it may alias an input).
  static int SiluBackward(const float* x, const float* s, const float* g, float* out, size_t n) {
    Scratch first_buffer(n * sizeof(float)), second_buffer(n * sizeof(float));
    if (first_buffer.ptr == nullptr || second_buffer.ptr == nullptr) return Dev::Fail("out of device memory for silu backward");
    float* one_minus_s = first_buffer.f();
    float* through_sigmoid = second_buffer.f();
    int status = Unary(UnaryOp::kNeg, s, one_minus_s, n);
    if (status == 0) status = BinaryScalarRight(BinaryOp::kAdd, one_minus_s, 1.0f, one_minus_s, n);
    if (status == 0) status = Binary(BinaryOp::kMul, g, x, through_sigmoid, n);
    if (status == 0) status = Binary(BinaryOp::kMul, through_sigmoid, one_minus_s, through_sigmoid, n);
    if (status == 0) status = Binary(BinaryOp::kMul, through_sigmoid, s, through_sigmoid, n);
    float* direct = one_minus_s;  // no longer needed
    if (status == 0) status = Binary(BinaryOp::kMul, g, s, direct, n);
    if (status == 0) status = Binary(BinaryOp::kAdd, direct, through_sigmoid, out, n);
    return status;
  }
  // The steps of simd/layer_norm.h one after another over scratch arrays.
  static int LayerNormRows(const float* x, const float* weight, const float* bias, float eps, size_t rows, size_t d,
                           float* xhat, float* rstd, float* out) {
    if (rows == 0 || d == 0) return 0;
    const size_t n = rows * d;
    Scratch mean_buffer(rows * sizeof(float)), squares_buffer(n * sizeof(float));
    if (mean_buffer.ptr == nullptr || squares_buffer.ptr == nullptr) return Dev::Fail("out of device memory for layer_norm");
    float* mean = mean_buffer.f();
    float* squares = squares_buffer.f();
    const backend::BroadcastOperand whole_xhat{xhat, 1, n}, per_row_rstd{rstd, d, rows};
    int status = MeanAxis(x, rows, d, 1, mean);
    if (status == 0) status = BinaryBroadcast(BinaryOp::kSub, {x, 1, n}, {mean, d, rows}, xhat, n);
    if (status == 0) status = Unary(UnaryOp::kSquare, xhat, squares, n);
    if (status == 0) status = SumAxis(squares, rows, d, 1, rstd);
    if (status == 0) status = BinaryScalarRight(BinaryOp::kDiv, rstd, static_cast<float>(d), rstd, rows);
    if (status == 0) status = BinaryScalarRight(BinaryOp::kAdd, rstd, eps, rstd, rows);
    if (status == 0) status = Math(MathFn::kRsqrt, rstd, rstd, rows);
    if (status == 0) status = BinaryBroadcast(BinaryOp::kMul, whole_xhat, per_row_rstd, xhat, n);
    if (status == 0) {
      status = weight != nullptr ? BinaryBroadcast(BinaryOp::kMul, whole_xhat, {weight, 1, d}, out, n)
                                 : Unary(UnaryOp::kCanonicalize, xhat, out, n);
    }
    if (status == 0 && bias != nullptr) status = BinaryBroadcast(BinaryOp::kAdd, {out, 1, n}, {bias, 1, d}, out, n);
    return status;
  }
  static int LayerNormRowsBackward(const float* g, const float* weight, const float* xhat, const float* rstd,
                                   size_t rows, size_t d, float* dx) {
    if (rows == 0 || d == 0) return 0;
    const size_t n = rows * d;
    Scratch dxhat_buffer(n * sizeof(float)), prod_buffer(n * sizeof(float)), means_buffer(2 * rows * sizeof(float));
    if (dxhat_buffer.ptr == nullptr || prod_buffer.ptr == nullptr || means_buffer.ptr == nullptr) {
      return Dev::Fail("out of device memory for layer_norm backward");
    }
    float* dxhat = dxhat_buffer.f();
    float* prod = prod_buffer.f();
    float* mean_dxhat = means_buffer.f();
    float* mean_prod = mean_dxhat + rows;
    int status = weight != nullptr ? BinaryBroadcast(BinaryOp::kMul, {g, 1, n}, {weight, 1, d}, dxhat, n)
                                   : Unary(UnaryOp::kCanonicalize, g, dxhat, n);
    if (status == 0) status = Binary(BinaryOp::kMul, dxhat, xhat, prod, n);
    if (status == 0) status = MeanAxis(dxhat, rows, d, 1, mean_dxhat);
    if (status == 0) status = MeanAxis(prod, rows, d, 1, mean_prod);
    if (status == 0) status = BinaryBroadcast(BinaryOp::kSub, {dxhat, 1, n}, {mean_dxhat, d, rows}, dx, n);
    if (status == 0) status = BinaryBroadcast(BinaryOp::kMul, {xhat, 1, n}, {mean_prod, d, rows}, prod, n);
    if (status == 0) status = Binary(BinaryOp::kSub, dx, prod, dx, n);
    if (status == 0) status = BinaryBroadcast(BinaryOp::kMul, {dx, 1, n}, {rstd, d, rows}, dx, n);
    return status;
  }
  static int PowInt(const float* in, int32_t exponent, float* out, size_t n) {
    return Dev::Launch(n, PowIntBody{Dev::Tables(), exponent, in, out});
  }

  // Canonical sums of every column, block results first, then their pairwise combination divided
  // by divisor (1: none). With means, sums the squared deviations from them.
  static int ColumnSums(const float* x, size_t outer, size_t len, size_t inner, const float* means,
                        float divisor, float* out) {
    const size_t columns = outer * inner, blocks = BlockCount(len);
    Scratch partials(columns * blocks * sizeof(float));
    if (partials.ptr == nullptr) return Dev::Fail("out of device memory for reduction partials");
    int status = Dev::Launch(columns * blocks, BlockSumBody{x, len, inner, blocks, means, partials.f()});
    if (status != 0) return status;
    return Dev::Launch(columns, CombineBody{partials.f(), blocks, divisor, out});
  }
  static int SumAxis(const float* x, size_t outer, size_t len, size_t inner, float* out) {
    return ColumnSums(x, outer, len, inner, nullptr, 1.0f, out);
  }
  // The broadcast subtraction and the square over a scratch array, then channel_sums.
  static int ChannelDeviationSquareSums(const float* x, const float* mean, size_t samples, size_t channels,
                                        size_t positions, float* out) {
    const size_t n = samples * channels * positions;
    Scratch squares(n * sizeof(float));
    if (squares.ptr == nullptr) return Dev::Fail("out of device memory for batch_norm variance");
    int status = BinaryBroadcast(BinaryOp::kSub, {x, 1, n}, {mean, positions, channels}, squares.f(), n);
    if (status == 0) status = Unary(UnaryOp::kSquare, squares.f(), squares.f(), n);
    if (status == 0) status = ChannelSums(squares.f(), samples, channels, positions, out);
    return status;
  }
  // Each channel's values copied out in (sample, position) order, then summed as sum_axis sums rows.
  static int ChannelSums(const float* x, size_t samples, size_t channels, size_t positions, float* out) {
    const size_t n = samples * channels * positions;
    Scratch channel_major(n * sizeof(float));
    if (channel_major.ptr == nullptr) return Dev::Fail("out of device memory for batch_norm channel sums");
    backend::StridedCopyCall copy{};
    copy.rank = 3;
    copy.shape[0] = static_cast<int64_t>(channels);
    copy.shape[1] = static_cast<int64_t>(samples);
    copy.shape[2] = static_cast<int64_t>(positions);
    copy.src_strides[0] = static_cast<int64_t>(positions);
    copy.src_strides[1] = static_cast<int64_t>(channels * positions);
    copy.src_strides[2] = 1;
    copy.dst_strides[0] = static_cast<int64_t>(samples * positions);
    copy.dst_strides[1] = static_cast<int64_t>(positions);
    copy.dst_strides[2] = 1;
    copy.src = x;
    copy.dst = channel_major.f();
    const int status = n == 0 ? 0 : StridedCopy(&copy);
    if (status != 0) return status;
    return SumAxis(channel_major.f(), channels, samples * positions, 1, out);
  }
  // The products into scratch (dxhat into dxhat_out when given), then channel_sums of each; with
  // an activation, its gradient of g first, into scratch, as the g of the rest.
  static int ChannelNormBackwardSums(const backend::ChannelNormSumsCall* given) {
    const size_t n = given->samples * given->channels * given->positions;
    const bool activated = given->activation != backend::kConvNoActivation;
    Scratch gradient(activated ? n * sizeof(float) : 0);
    if (activated && gradient.ptr == nullptr) return Dev::Fail("out of device memory for batch_norm gradient sums");
    backend::ChannelNormSumsCall masked = *given;
    if (activated) {
      const int status = Dev::Launch(n, NormActivationGradientBody{*given, gradient.f()});
      if (status != 0) return status;
      masked.g = gradient.f();
    }
    const backend::ChannelNormSumsCall* const c = &masked;
    Scratch dxhat_scratch(c->dxhat_out == nullptr ? n * sizeof(float) : 0), product(n * sizeof(float));
    if ((c->dxhat_out == nullptr && dxhat_scratch.ptr == nullptr) || product.ptr == nullptr) {
      return Dev::Fail("out of device memory for batch_norm gradient sums");
    }
    float* const dxhat = c->dxhat_out != nullptr ? c->dxhat_out : dxhat_scratch.f();
    int status = Dev::Launch(n, ChannelScaleBody{c->g, c->weight, c->channels, c->positions, dxhat});
    if (status == 0 && c->sum_dxhat != nullptr) status = ChannelSums(dxhat, c->samples, c->channels, c->positions, c->sum_dxhat);
    if (status == 0 && c->sum_dxhat_xhat != nullptr) {
      status = Binary(BinaryOp::kMul, dxhat, c->xhat, product.f(), n);
      if (status == 0) status = ChannelSums(product.f(), c->samples, c->channels, c->positions, c->sum_dxhat_xhat);
    }
    if (status == 0 && c->sum_g_xhat != nullptr) {
      status = Binary(BinaryOp::kMul, c->g, c->xhat, product.f(), n);
      if (status == 0) status = ChannelSums(product.f(), c->samples, c->channels, c->positions, c->sum_g_xhat);
    }
    if (status == 0 && c->sum_g != nullptr) status = ChannelSums(c->g, c->samples, c->channels, c->positions, c->sum_g);
    return status;
  }
  static int MeanAxis(const float* x, size_t outer, size_t len, size_t inner, float* out) {
    const int status = ColumnSums(x, outer, len, inner, nullptr, 1.0f, out);
    if (status != 0) return status;
    return Dev::Launch(outer * inner, BinaryScalarRightBody{BinaryOp::kDiv, out, static_cast<float>(len), out});
  }
  static int VarianceAxis(const float* x, size_t outer, size_t len, size_t inner, size_t correction,
                          float* out) {
    Scratch means(outer * inner * sizeof(float));
    if (means.ptr == nullptr) return Dev::Fail("out of device memory for variance means");
    int status = MeanAxis(x, outer, len, inner, means.f());
    if (status != 0) return status;
    const float divisor = len > correction ? static_cast<float>(len - correction) : 0.0f;
    return ColumnSums(x, outer, len, inner, means.f(), divisor, out);
  }
  static int MaxAxis(const float* x, size_t outer, size_t len, size_t inner, float* out) {
    return Dev::Launch(outer * inner, ExtremeBody{x, len, inner, true, out});
  }
  static int MinAxis(const float* x, size_t outer, size_t len, size_t inner, float* out) {
    return Dev::Launch(outer * inner, ExtremeBody{x, len, inner, false, out});
  }
  static int ArgmaxAxis(const float* x, size_t outer, size_t len, size_t inner, int64_t* out) {
    return Dev::Launch(outer * inner, ArgmaxBody{x, len, inner, out});
  }

  static int Gemm(const backend::GemmCall* g) {
    const size_t groups = (g->n + kGemmColumns - 1) / kGemmColumns;
    const size_t row_tiles = (g->m + kGemmRows - 1) / kGemmRows;
    return Dev::Launch(row_tiles * groups, GemmBody{*g, groups});
  }
  // A Gemm per group into scratch, then adjacent pairs level by level (an odd last one moves up).
  static int GemmBatchGrouped(const backend::GemmCall* g, size_t k_per_group) {
    if (k_per_group == 0 || g->k <= k_per_group) return Gemm(g);
    if (g->m == 0 || g->n == 0) return 0;
    const size_t groups = (g->k + k_per_group - 1) / k_per_group, mn = g->m * g->n;
    Scratch partials(groups * mn * sizeof(float));
    if (partials.ptr == nullptr) return Dev::Fail("out of device memory for a batch-grouped gemm");
    for (size_t group = 0; group < groups; ++group) {
      backend::GemmCall part = *g;
      const size_t first = group * k_per_group;
      part.k = g->k - first < k_per_group ? g->k - first : k_per_group;
      part.a = g->trans_a ? g->a + first * g->lda : g->a + first;
      part.b = g->trans_b ? g->b + first : g->b + first * g->ldb;
      part.c = partials.f() + group * mn;
      part.ldc = g->n;
      const int status = Gemm(&part);
      if (status != 0) return status;
    }
    float* p = partials.f();
    for (size_t count = groups; count > 1;) {
      size_t next = 0;
      for (size_t i = 0; i + 1 < count; i += 2, ++next) {
        const int status = Binary(BinaryOp::kAdd, p + i * mn, p + (i + 1) * mn, p + next * mn, mn);
        if (status != 0) return status;
      }
      if (count % 2 == 1) {
        const int status = Dev::Launch(mn, CopyBody{p + (count - 1) * mn, p + next * mn});
        if (status != 0) return status;
        ++next;
      }
      count = next;
    }
    return Dev::Launch(mn, RowCopyBody{p, g->n, g->c, g->ldc});
  }

  // The steps of simd/softmax.cc: max, shift, exp, canonical sum, then divide (softmax) or
  // subtract the log of the sum (log-softmax).
  static int SoftmaxImpl(const float* x, size_t rows, size_t cols, float* out, bool take_log) {
    Scratch row_values(rows * sizeof(float)), exps(take_log ? rows * cols * sizeof(float) : 4);
    if (row_values.ptr == nullptr || exps.ptr == nullptr) return Dev::Fail("out of device memory for softmax");
    float* e = take_log ? exps.f() : out;
    int status = MaxAxis(x, rows, cols, 1, row_values.f());
    if (status == 0) status = Dev::Launch(rows * cols, RowSubBody{x, row_values.f(), cols, out});
    if (status == 0) status = Math(MathFn::kExp, out, e, rows * cols);
    if (status == 0) status = SumAxis(e, rows, cols, 1, row_values.f());
    if (status != 0) return status;
    if (!take_log) return Dev::Launch(rows * cols, RowDivBody{e, row_values.f(), cols, out});
    status = Math(MathFn::kLog, row_values.f(), row_values.f(), rows);
    if (status != 0) return status;
    return Dev::Launch(rows * cols, RowSubBody{out, row_values.f(), cols, out});
  }
  static int Softmax(const float* x, size_t rows, size_t cols, float* out) {
    return SoftmaxImpl(x, rows, cols, out, false);
  }
  static int LogSoftmax(const float* x, size_t rows, size_t cols, float* out) {
    return SoftmaxImpl(x, rows, cols, out, true);
  }

  static int DropoutMask(uint64_t seed, uint64_t stream, uint64_t first, float p, float* out, size_t n) {
    // round(p * 2^24), exact in float64, ties to even by adding and subtracting 2^52.
    const double scaled = static_cast<double>(p) * 16777216.0;
    const uint32_t threshold = static_cast<uint32_t>((scaled + 4503599627370496.0) - 4503599627370496.0);
    const float scale = p >= 1.0f ? 0.0f : 1.0f / (1.0f - p);
    return Dev::Launch(n, DropoutBody{seed, stream, first, threshold, scale, out});
  }

  static int AdamUpdate(const backend::AdamCall* a) {
    const float decay_factor = 1.0f - a->lr * a->weight_decay;
    return Dev::Launch(a->n, AdamBody{*a, 1.0f - a->beta1, 1.0f - a->beta2, decay_factor});
  }
  static int SgdUpdate(const backend::SgdCall* s) {
    return Dev::Launch(s->n, SgdBody{*s, 1.0f - s->dampening});
  }

  // The memory entries, as the table wants them.
  static void* Alloc(size_t bytes) { return Dev::Alloc(bytes); }
  static void Release(void* p) { Dev::Release(p); }
  static int CopyToDevice(void* dst, const void* src, size_t bytes) { return Dev::CopyToDevice(dst, src, bytes); }
  static int CopyToHost(void* dst, const void* src, size_t bytes) { return Dev::CopyToHost(dst, src, bytes); }
  static const char* LastError() { return Dev::LastError(); }

  static backend::KernelTable Make(const char* device_name) {
    return backend::MakeKernelTable<TableImpl>(device_name);
  }
};

}  // namespace cuda
}  // namespace lockstep

#endif  // LOCKSTEP_CUDA_KERNEL_TABLE_IMPL_H_
