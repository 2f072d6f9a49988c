// Every backward rule, in one table. Each rule maps the gradient of a node's output to gradients
// of its inputs, using the same kernels (and so the same contract) as the forward ops. Rules run
// with history off. Formulas follow PyTorch's (aten's derivatives) unless a comment says otherwise.
#include <algorithm>
#include <vector>

#include "core/autograd.h"
#include "core/conv_internal.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/ops_internal.h"
#include "core/parallel/batch_reduce.h"

namespace lockstep {

namespace {

using Grads = std::vector<Tensor>;

bool Wants(const Node& node, size_t i) {
  return node.inputs[i].defined() && node.inputs[i].requires_grad();
}

Tensor ScalarDiv(const Tensor& t, float s) {
  const Tensor x = ContiguousData(t, "backward");
  Tensor out = Tensor::Empty(x.shape());
  Kernels().BinaryScalarRight(backend::BinaryOp::kDiv, x.data_f32(), s, out.data_f32(), static_cast<size_t>(x.numel()));
  return out;
}

Tensor MathOf(backend::MathFn fn, const Tensor& t) {
  const Tensor x = ContiguousData(t, "backward");
  Tensor out = Tensor::Empty(x.shape());
  Kernels().Math(fn, x.data_f32(), out.data_f32(), static_cast<size_t>(x.numel()));
  return out;
}

Tensor OneMinus(const Tensor& t) { return AddScalar(Neg(t), 1.0f); }

Grads GeluErfGrad(const Tensor& x_in, const Tensor& g_in) {
  // d/dx [x Phi(x)] = Phi(x) + x phi(x); Phi(x) = 0.5 (1 + erf(x / sqrt 2)),
  // phi(x) = exp(-x^2 / 2) / sqrt(2 pi): one kernel, the operation sequence of
  // simd/gelu_backward.h.
  const Tensor x = ContiguousData(x_in, "gelu backward"), g = ContiguousData(g_in, "gelu backward");
  LOCKSTEP_ASSERT(x.shape() == g.shape());
  Tensor out = Tensor::Empty(x.shape());
  Kernels().GeluErfBackward(x.data_f32(), g.data_f32(), out.data_f32(), static_cast<size_t>(x.numel()));
  return {out};
}

Grads SiluGrad(const Tensor& x_in, const Tensor& s, const Tensor& g_in) {
  // The gradients of Mul(x, s) and Sigmoid(x) and their sum in one kernel (simd/silu_backward.h).
  const Tensor x = ContiguousData(x_in, "silu backward"), g = ContiguousData(g_in, "silu backward");
  LOCKSTEP_ASSERT(x.shape() == g.shape() && x.shape() == s.shape());
  Tensor out = Tensor::Empty(x.shape());
  Kernels().SiluBackward(x.data_f32(), s.data_f32(), g.data_f32(), out.data_f32(), static_cast<size_t>(x.numel()));
  return {out};
}

Grads GeluTanhGrad(const Tensor& x, const Tensor& g) {
  const float beta = 0.79788456080286536f, kappa = 0.044715f;  // sqrt(2 / pi), PyTorch's constants
  const Tensor x_sq = Mul(x, x);
  const Tensor inner = MulScalar(Add(x, MulScalar(Mul(x_sq, x), kappa)), beta);
  const Tensor tanh_inner = MathOf(backend::MathFn::kTanh, inner);
  const Tensor left = MulScalar(x, 0.5f), right = AddScalar(tanh_inner, 1.0f);
  const Tensor left_derivative = MulScalar(right, 0.5f);
  const Tensor tanh_derivative = OneMinus(Mul(tanh_inner, tanh_inner));
  const Tensor inner_derivative = MulScalar(AddScalar(MulScalar(x_sq, 3.0f * kappa), 1.0f), beta);
  const Tensor right_derivative = Mul(Mul(left, tanh_derivative), inner_derivative);
  return {Mul(g, Add(left_derivative, right_derivative))};
}

Grads MatmulGrad(const Node& node, const Tensor& g) {
  const Tensor& a = node.inputs[0];
  const Tensor& b = node.inputs[1];
  Grads out(2);
  if (Wants(node, 0)) out[0] = Matmul(g, b.Transpose(-1, -2));
  if (Wants(node, 1)) {
    if (b.dim() == 2) {
      // The right operand's gradient sums over every row of the left operand: a batch reduction.
      const int64_t k = a.size(-1), n = b.size(-1), rows = a.numel() / (k == 0 ? 1 : k);
      const Tensor a2 = ContiguousData(a, "matmul").Reshape({rows, k});
      const Tensor g2 = ContiguousData(g, "matmul").Reshape({rows, n});
      // A right operand that is a transposed view (a Linear layer's W^T) gets its gradient made in
      // W's layout, g2^T a2, and returned transposed, so W gets it contiguous instead of a copy.
      // The same bits: each output's products are those of a2^T g2 (a*b == b*a), in the same order.
      const bool w_layout = b.grad_fn() && b.strides() == Shape{1, k} && k > 1 && n > 1;
      const Tensor& left = w_layout ? g2 : a2;
      const Tensor& right = w_layout ? a2 : g2;
      backend::GemmCall args;
      args.trans_a = true;
      args.m = static_cast<size_t>(left.size(1)); args.n = static_cast<size_t>(right.size(1));
      args.k = static_cast<size_t>(rows);
      Tensor gb = Tensor::Empty({left.size(1), right.size(1)});
      args.a = left.data_f32(); args.lda = args.m;
      args.b = right.data_f32(); args.ldb = args.n;
      args.c = gb.data_f32(); args.ldc = args.n;
      GemmBatchGrouped(args, kBatchGroup);
      out[1] = w_layout ? gb.Transpose(0, 1) : gb;
    } else {
      out[1] = Matmul(a.Transpose(-1, -2), g);
    }
  }
  return out;
}

// The weight gradient of one group when the batch is split over ranks: the batch-grouped GEMM
// dY cols^T over the ranks (GemmBatchGrouped), on dY [c_out_g, N*P] and the columns [k, N*P].
void Conv2dWeightGradOverRanks(const ConvGeometry& geo, const float* x_group, const float* g_group, float* dw_group) {
  const int64_t np = geo.n * geo.positions;
  Tensor dy_buffer = Tensor::Empty({geo.c_out_group * np}), cols_buffer = Tensor::Empty({geo.k * np});
  const Kernels kernels;
  const backend::StridedCopyCall copy =
      GemmLayoutCopy(g_group, dy_buffer.data_f32(), geo.n, geo.c_out_group, geo.positions, geo.c_out, false);
  kernels.StridedCopy(&copy);
  const backend::ConvCall conv = ConvCallOf(geo, geo.n, np);
  kernels.Im2Col(&conv, x_group, cols_buffer.data_f32());
  backend::GemmCall args;  // dW_g [c_out_g, k] = dY [c_out_g, N*P] x cols^T [N*P, k]
  args.trans_b = true;
  args.m = geo.c_out_group; args.n = geo.k; args.k = np;
  args.a = dy_buffer.data_f32(); args.lda = np;
  args.b = cols_buffer.data_f32(); args.ldb = np;
  args.c = dw_group; args.ldc = geo.k;
  GemmBatchGrouped(args, kBatchGroup * geo.positions);
}

Grads Conv2dGrad(const Node& node, const Tensor& g_in) {
  const Tensor x = ContiguousData(node.inputs[0], "conv2d"), w = ContiguousData(node.inputs[1], "conv2d");
  const Tensor g = ContiguousData(g_in, "conv2d");
  const auto& v = node.ints;
  const Conv2dOptions o{v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
  const ConvGeometry geo = MakeConvGeometry(x.shape(), w.shape(), o);
  Grads out(3);
  // dX = col2im(W_g^T dY) and dW = the batch-grouped dY cols^T of every group, by the kernel
  // table's convolution entries (docs/numerics.md gives both orders); across ranks, the weight
  // gradient group by group.
  const bool want_dx = Wants(node, 0), want_dw = Wants(node, 1);
  Tensor dx = want_dx ? Tensor::Empty(x.shape()) : Tensor();  // every element written
  Tensor dw = want_dw ? Tensor::Empty(w.shape()) : Tensor();
  const backend::Conv2dCall call = Conv2dCallOf(geo, o.groups);
  const Kernels kernels;
  if (want_dx) kernels.Conv2dInputGrad(&call, g.data_f32(), w.data_f32(), dx.data_f32());
  if (want_dw && parallel::CurrentBatch() == nullptr) {
    kernels.Conv2dWeightGrad(&call, g.data_f32(), x.data_f32(), dw.data_f32());
  } else if (want_dw) {
    const int64_t group_offset = geo.c_in_group * geo.h * geo.w;  // of a group's first input channel
    for (int64_t grp = 0; grp < o.groups; ++grp) {
      Conv2dWeightGradOverRanks(geo, x.data_f32() + grp * group_offset,
                                g.data_f32() + grp * geo.c_out_group * geo.positions,
                                dw.data_f32() + grp * geo.c_out_group * geo.k);
    }
  }
  if (want_dx) out[0] = dx;
  if (want_dw) out[1] = dw;
  if (Wants(node, 2)) out[2] = ChannelSums(g, geo.n, geo.c_out, geo.positions);
  return out;
}

// The transposed convolution is the input gradient of a convolution (conv): its input gradient is
// that convolution's forward, and its weight gradient that convolution's weight gradient with x in
// the place of the output gradient and g in the place of the input.
Grads ConvTranspose2dGrad(const Node& node, const Tensor& g_in) {
  const Tensor x = ContiguousData(node.inputs[0], "conv_transpose2d"), w = ContiguousData(node.inputs[1], "conv_transpose2d");
  const Tensor g = ContiguousData(g_in, "conv_transpose2d");
  const auto& v = node.ints;
  const Conv2dOptions o{v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
  Grads out(2);
  if (Wants(node, 0)) out[0] = Conv2d(g, w, Tensor(), o);
  if (Wants(node, 1)) {
    const ConvGeometry geo = MakeConvGeometry(g.shape(), w.shape(), o);
    Tensor dw = Tensor::Empty(w.shape());
    const backend::Conv2dCall call = Conv2dCallOf(geo);
    const Kernels kernels;
    for (int64_t grp = 0; grp < o.groups; ++grp) {
      kernels.Conv2dWeightGrad(&call, x.data_f32() + grp * geo.c_out_group * geo.positions,
                               g.data_f32() + grp * geo.c_in_group * geo.h * geo.w, dw.data_f32() + grp * geo.c_out_group * geo.k);
    }
    out[1] = dw;
  }
  return out;
}

Grads LayerNormGrad(const Node& node, const Tensor& g_in) {
  const Tensor g = ContiguousData(g_in, "layer_norm");
  const Tensor& xhat = node.saved[0];
  const Tensor& rstd = node.saved[1];
  const int64_t rows = rstd.numel(), d = rows == 0 ? 0 : xhat.numel() / rows;
  const Tensor& w = node.inputs[1];
  Grads out(3);
  if (Wants(node, 0)) {
    // Per row: dx = ((dxhat - mean(dxhat)) - xhat * mean(dxhat * xhat)) * rstd, dxhat = g * w
    // (simd/layer_norm.h: one pass per row).
    Tensor dx = Tensor::Empty(xhat.shape());
    if (rows > 0) {
      const Tensor wc = w.defined() ? ContiguousData(w, "layer_norm") : Tensor();
      Kernels().LayerNormRowsBackward(g.data_f32(), wc.defined() ? wc.data_f32() : nullptr, xhat.data_f32(),
                                      rstd.data_f32(), static_cast<size_t>(rows), static_cast<size_t>(d),
                                      dx.data_f32());
    }
    out[0] = dx;
  }
  if (Wants(node, 1)) out[1] = BatchGroupedSumRows(Mul(g, xhat).Reshape({rows, d}), kBatchGroup).Reshape(w.shape());
  if (Wants(node, 2)) out[2] = BatchGroupedSumRows(g.Reshape({rows, d}), kBatchGroup).Reshape(node.inputs[2].shape());
  return out;
}

Grads BatchNormGrad(const Node& node, const Tensor& g_in) {
  const Tensor g = ContiguousData(g_in, "batch_norm");
  const Tensor& xhat = node.saved[0];
  const Tensor& rstd = node.saved[1];
  const bool training = node.ints[0] != 0;
  const int64_t n = xhat.size(0), c = xhat.size(1), p = xhat.numel() / (n * c == 0 ? 1 : n * c);
  const Tensor& w = node.inputs[1];
  Grads out(3);
  const bool want_dx = Wants(node, 0);
  // The activation applied after the normalisation (BatchNormActivation), as the kernel table numbers it.
  BatchNormActivation after;
  after.kind = ActivationKind(static_cast<int32_t>(node.ints[2]));
  after.lo = node.floats[0];
  after.hi = node.floats[1];
  const BatchNormGradSums sums = BatchNormGradSumsOf(g, xhat, w, n, c, p, want_dx, want_dx && training, Wants(node, 1),
                                                     Wants(node, 2), node.inputs[2], after, node.saved[2]);
  if (want_dx) {
    Tensor dx = Tensor::Empty(xhat.shape());
    const Tensor& dxhat = sums.dxhat;
    if (training) {
      const Tensor &s1 = sums.sum_dxhat, &s2 = sums.sum_dxhat_xhat;
      backend::ChannelNormCall call{};
      call.outer = static_cast<size_t>(n);
      call.channels = static_cast<size_t>(c);
      call.inner = static_cast<size_t>(p);
      call.x = dxhat.data_f32();
      call.xhat = xhat.data_f32();
      call.rstd = rstd.data_f32();
      call.sum_x = s1.data_f32();
      call.sum_x_xhat = s2.data_f32();
      call.count = static_cast<float>(node.ints[1]);
      call.out = dx.data_f32();
      Kernels().ChannelNormalizeBackward(&call);
    } else {
      const Tensor dxr = Mul(dxhat, rstd.Reshape({1, c, 1}));
      dx.CopyFrom(dxr.Reshape(xhat.shape()));
    }
    out[0] = dx;
  }
  if (Wants(node, 1)) out[1] = sums.sum_g_xhat;
  if (Wants(node, 2)) out[2] = sums.sum_g;
  return out;
}

Grads PoolGrad(const Node& node, const Tensor& g_in) {
  const Tensor g = ContiguousData(g_in, "pool");
  const Shape& in = node.inputs[0].shape();
  const int64_t planes = in[0] * in[1], h = in[2], w = in[3], ho = g.size(2), wo = g.size(3);
  const auto& v = node.ints;  // kernel_h, kernel_w, stride_h, stride_w, padding_h, padding_w
  if (node.kind == OpKind::kMaxPool2d) {  // the kernel writes every element of dx
    Tensor dx = Tensor::Empty(in);
    const Pool2dOptions o{v[0], v[1], v[2], v[3], v[4], v[5]};
    const backend::PoolCall call = MaxPoolCall(in, ho, wo, o);
    Kernels().MaxPoolBackward(&call, g.data_f32(), node.saved[0].data_i64(), dx.data_f32());
    return {dx};
  }
  // Average: v[6], v[7] the end padding, v[8] whether padded positions count in the divisor.
  Tensor dx = Tensor::Empty(in);
  const backend::PoolCall call{planes, h, w, ho, wo, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7],
                               static_cast<int32_t>(v[8])};
  Kernels().AvgPoolBackward(&call, g.data_f32(), dx.data_f32());
  return {dx};
}

Grads NllLossGrad(const Node& node, const Tensor& g) {
  const Tensor& log_probs = node.inputs[0];
  const int64_t n = log_probs.size(0), c = log_probs.size(1);
  const auto& v = node.ints;  // ignore_index, reduction, counted; saved: the targets
  const auto reduction = static_cast<Reduction>(v[1]);
  // Row i's gradient: -g[i] (none), -g (sum) or -(g / counted) (mean).
  const Tensor gc = ContiguousData(g, "nll_loss");
  const size_t step = reduction == Reduction::kNone ? 1 : 0;
  const float divisor = reduction == Reduction::kMean ? static_cast<float>(v[2]) : 1.0f;
  Tensor grad = Tensor::Zeros({n, c});
  Kernels().NllBackward(node.saved[0].data_i64(), static_cast<size_t>(n), static_cast<size_t>(c), v[0],
                        gc.data_f32(), step, divisor, grad.data_f32());
  return {grad};
}

}  // namespace

std::vector<Tensor> ApplyBackwardRule(const Node& node, const Tensor& g) {
  const std::vector<Tensor>& in = node.inputs;
  switch (node.kind) {
    case OpKind::kAdd:
      return {Wants(node, 0) ? SumToShape(g, in[0].shape()) : Tensor(),
              Wants(node, 1) ? SumToShape(g, in[1].shape()) : Tensor()};
    case OpKind::kSub:
      return {Wants(node, 0) ? SumToShape(g, in[0].shape()) : Tensor(),
              Wants(node, 1) ? Neg(SumToShape(g, in[1].shape())) : Tensor()};
    case OpKind::kMul:
      return {Wants(node, 0) ? SumToShape(Mul(g, in[1]), in[0].shape()) : Tensor(),
              Wants(node, 1) ? SumToShape(Mul(g, in[0]), in[1].shape()) : Tensor()};
    case OpKind::kDiv:  // d(a/b)/db = -(a/b)/b
      return {Wants(node, 0) ? SumToShape(Div(g, in[1]), in[0].shape()) : Tensor(),
              Wants(node, 1) ? SumToShape(Neg(Div(Mul(g, node.saved[0]), in[1])), in[1].shape()) : Tensor()};
    case OpKind::kNeg: return {Neg(g)};
    case OpKind::kAddScalar: return {g};
    case OpKind::kMulScalar: return {MulScalar(g, node.floats[0])};
    case OpKind::kPowScalar: {
      const int e = static_cast<int>(node.ints[0]);
      const Tensor power = e - 1 == 0 ? Tensor::Ones(in[0].shape()) : PowScalar(in[0], e - 1);
      return {Mul(g, MulScalar(power, static_cast<float>(e)))};
    }
    case OpKind::kRelu: return {Mul(g, Greater(in[0], Tensor::Scalar(0.0f)))};
    case OpKind::kGeluErf: return GeluErfGrad(in[0], g);
    case OpKind::kGeluTanh: return GeluTanhGrad(in[0], g);
    case OpKind::kTanh: return {Mul(g, OneMinus(Mul(node.saved[0], node.saved[0])))};
    case OpKind::kSigmoid: return {Mul(Mul(g, OneMinus(node.saved[0])), node.saved[0])};
    case OpKind::kSilu: return SiluGrad(in[0], node.saved[0], g);
    case OpKind::kExp: return {Mul(g, node.saved[0])};
    case OpKind::kLog: return {Div(g, in[0])};
    case OpKind::kSqrt: return {Div(g, MulScalar(node.saved[0], 2.0f))};
    case OpKind::kAbs: {  // sign(x): 1, -1, or 0 at +-0 and NaN
      const Tensor zero = Tensor::Scalar(0.0f);
      return {Mul(g, Sub(Greater(in[0], zero), Less(in[0], zero)))};
    }
    case OpKind::kErf:  // 2 / sqrt(pi) * exp(-x^2)
      return {Mul(g, MulScalar(MathOf(backend::MathFn::kExp, Neg(Mul(in[0], in[0]))), 1.12837916709551257f))};
    case OpKind::kRsqrt: {  // -y^3 / 2
      const Tensor& y = node.saved[0];
      return {Mul(g, MulScalar(Mul(Mul(y, y), y), -0.5f))};
    }
    // The trigonometric family: PyTorch's formulas (aten's derivatives.yaml).
    case OpKind::kSin: return {Mul(g, Cos(in[0]))};
    case OpKind::kCos: return {Neg(Mul(g, Sin(in[0])))};
    case OpKind::kTan: return {Mul(g, AddScalar(Mul(node.saved[0], node.saved[0]), 1.0f))};  // 1 + tan^2
    case OpKind::kAsin: return {Mul(g, Rsqrt(OneMinus(Mul(in[0], in[0]))))};
    case OpKind::kAcos: return {Neg(Mul(g, Rsqrt(OneMinus(Mul(in[0], in[0])))))};
    case OpKind::kAtan: return {Div(g, AddScalar(Mul(in[0], in[0]), 1.0f))};
    case OpKind::kSinh: return {Mul(g, Cosh(in[0]))};
    case OpKind::kCosh: return {Mul(g, Sinh(in[0]))};
    case OpKind::kAsinh: return {Mul(g, Rsqrt(AddScalar(Mul(in[0], in[0]), 1.0f)))};
    case OpKind::kAcosh: return {Mul(g, Rsqrt(AddScalar(Mul(in[0], in[0]), -1.0f)))};
    case OpKind::kAtanh: return {Div(g, OneMinus(Mul(in[0], in[0])))};
    // PyTorch's: the remainder's gradient is g for a and -g times the quotient rounded (toward zero
    // for fmod, down for remainder) for b; a rounding to a narrower type passes g through (a cast).
    case OpKind::kFmod:
    case OpKind::kRemainder: {
      Grads out(2);
      if (Wants(node, 0)) out[0] = SumToShape(g, in[0].shape());
      if (Wants(node, 1)) {
        const Tensor q = Div(in[0], in[1]);
        const Tensor rounded = node.kind == OpKind::kRemainder ? Floor(q) : Where(Less(q, Tensor::Scalar(0.0f)), Ceil(q), Floor(q));
        out[1] = SumToShape(Neg(Mul(g, rounded)), in[1].shape());
      }
      return out;
    }
    case OpKind::kRoundFloat16:
    case OpKind::kRoundBFloat16: return {g};
    case OpKind::kWhere: {
      const Tensor gc = ContiguousData(g, "where"), zeros = Tensor::Zeros(g.shape());
      const Tensor& cond = node.saved[0];
      const size_t n = static_cast<size_t>(g.numel());
      Grads out(2);
      if (Wants(node, 0)) {
        Tensor chosen = Tensor::Empty(g.shape());
        Kernels().Select(cond.data_f32(), gc.data_f32(), zeros.data_f32(), chosen.data_f32(), n);
        out[0] = SumToShape(chosen, in[0].shape());
      }
      if (Wants(node, 1)) {
        Tensor chosen = Tensor::Empty(g.shape());
        Kernels().Select(cond.data_f32(), zeros.data_f32(), gc.data_f32(), chosen.data_f32(), n);
        out[1] = SumToShape(chosen, in[1].shape());
      }
      return out;
    }
    case OpKind::kView: return {ContiguousData(g, "view").Reshape(node.shapes[0])};
    case OpKind::kPermute: {
      std::vector<int64_t> inverse(node.ints.size());
      for (size_t i = 0; i < node.ints.size(); ++i) inverse[node.ints[i]] = static_cast<int64_t>(i);
      return {g.Permute(inverse)};
    }
    case OpKind::kSlice: {
      Tensor z = Tensor::Zeros(in[0].shape());
      const int64_t d = node.ints[0], start = node.ints[1], step = node.ints[2];
      z.Slice(d, start, start + g.shape()[d] * step, step).CopyFrom(ContiguousData(g, "slice"));
      return {z};
    }
    case OpKind::kExpand: return {SumToShape(g, node.shapes[0])};
    case OpKind::kCopy: return {g};
    case OpKind::kConcat: {
      Grads out;
      int64_t at = 0;
      for (size_t i = 1; i < node.ints.size(); ++i) {
        out.push_back(g.Slice(node.ints[0], at, at + node.ints[i]).Contiguous());
        at += node.ints[i];
      }
      return out;
    }
    case OpKind::kSum:
    case OpKind::kMean: {
      const int64_t d = node.ints[0];
      Tensor expanded;
      if (d < 0) {
        expanded = Tensor::Full(in[0].shape(), g.item());
      } else {
        expanded = (node.ints[1] ? g : g.Unsqueeze(d)).Expand(in[0].shape()).Contiguous();
      }
      if (node.kind == OpKind::kSum) return {expanded};
      const float count = static_cast<float>(d < 0 ? in[0].numel() : in[0].shape()[d]);
      return {ScalarDiv(expanded, count)};
    }
    case OpKind::kMatmul: return MatmulGrad(node, g);
    case OpKind::kSoftmax: {
      const Tensor& y = node.saved[0];
      return {Mul(y, Sub(g, Sum(Mul(g, y), -1, true)))};
    }
    case OpKind::kLogSoftmax: {
      const Tensor& y = node.saved[0];
      return {Sub(g, Mul(MathOf(backend::MathFn::kExp, y), Sum(g, -1, true)))};
    }
    case OpKind::kConv2d: return Conv2dGrad(node, g);
    case OpKind::kConvTranspose2d: return ConvTranspose2dGrad(node, g);
    case OpKind::kClamp: {  // +0 where x < lo or x > hi: the two masked fills' gradient in one pass
      const Tensor x = ContiguousData(in[0], "clip"), gc = ContiguousData(g, "clip");
      Tensor out = Tensor::Empty(x.shape());
      Kernels().ClampBackward(x.data_f32(), node.floats[0], node.floats[1], gc.data_f32(), out.data_f32(),
                              static_cast<size_t>(x.numel()));
      return {out};
    }
    case OpKind::kHardtanh: {  // +0 where x <= lo or x >= hi: the two masked fills' gradient in one pass
      const Tensor x = ContiguousData(in[0], "hardtanh"), gc = ContiguousData(g, "hardtanh");
      Tensor out = Tensor::Empty(x.shape());
      Kernels().HardtanhBackward(x.data_f32(), node.floats[0], node.floats[1], gc.data_f32(), out.data_f32(),
                                 static_cast<size_t>(x.numel()));
      return {out};
    }
    case OpKind::kMaxPool2d:
    case OpKind::kAvgPool2d: return PoolGrad(node, g);
    case OpKind::kDropout: return {Mul(g, node.saved[0])};
    case OpKind::kLayerNorm: return LayerNormGrad(node, g);
    case OpKind::kBatchNorm: return BatchNormGrad(node, g);
    case OpKind::kEmbedding: {
      const Tensor& w = in[0];
      const int64_t dim = w.size(1);
      const Tensor gc = ContiguousData(g, "embedding");
      const Tensor& ids = node.saved[0];  // rows accumulate in index order
      // A data-parallel batch: the same additions, each table row's on the rank that owns it.
      if (node.ints.size() == 1 && node.ints[0] != 0) return {parallel::ScatterAddOverRanks(ids, gc, w.shape())};
      Tensor dw = Tensor::Zeros(w.shape());
      Kernels().ScatterAddRows(ids.data_i64(), static_cast<size_t>(ids.numel()), static_cast<size_t>(dim),
                               gc.data_f32(), dw.data_f32());
      return {dw};
    }
    case OpKind::kNllLoss: return NllLossGrad(node, g);
    case OpKind::kMaskedFill: {  // the saved mask is one period of the gradient's elements
      const Tensor& mask = node.saved[0];
      const Tensor zeros = Tensor::Zeros({mask.numel()});
      const Tensor gc = ContiguousData(g, "masked_fill");
      Tensor out = Tensor::Empty(in[0].shape());
      SelectRepeated(mask.data_f32(), zeros.data_f32(), gc.data_f32(), out.data_f32(), static_cast<size_t>(out.numel()),
                     static_cast<size_t>(mask.numel()));
      return {out};
    }
  }
  LOCKSTEP_ASSERT(false);
  return {};
}

}  // namespace lockstep
