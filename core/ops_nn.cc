// Neural-network functions: softmax, dropout, normalisation, embedding and losses.
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/trace/trace.h"
#include "core/ops_internal.h"
#include "core/parallel/batch_reduce.h"

namespace lockstep {

namespace {

Tensor SoftmaxLast(const Tensor& a, bool log, const char* name) {
  const Tensor x = ContiguousData(a, name);
  LOCKSTEP_REQUIRE(x.dim() >= 1, name << ": expected a tensor of rank >= 1");
  const int64_t cols = x.size(-1), rows = cols == 0 ? 0 : x.numel() / cols;
  Tensor out = Tensor::Empty(x.shape());
  if (log) {
    Kernels().LogSoftmax(x.data_f32(), rows, cols, out.data_f32());
  } else {
    Kernels().Softmax(x.data_f32(), rows, cols, out.data_f32());
  }
  if (NeedsGrad({a})) RecordNode(out, log ? OpKind::kLogSoftmax : OpKind::kSoftmax, {a}).saved = {out.Detach()};
  return out;
}

// running = running * (1 - momentum) + batch * momentum, in place (each product and the sum one
// rounded operation).
void UpdateRunningStatistic(const Tensor& running, const Tensor& batch, float momentum, const char* name) {
  LOCKSTEP_REQUIRE(running.is_contiguous() && running.dtype() == DType::kFloat32 && running.device() == batch.device(),
                   "batch_norm: " << name << " must be a contiguous float32 tensor on " << batch.device().ToString());
  const size_t c = static_cast<size_t>(running.numel());
  const Kernels kernels;
  Tensor scaled = Tensor::Empty({running.numel()});
  kernels.BinaryScalarRight(backend::BinaryOp::kMul, running.data_f32(), 1.0f - momentum, running.data_f32(), c);
  kernels.BinaryScalarRight(backend::BinaryOp::kMul, batch.data_f32(), momentum, scaled.data_f32(), c);
  kernels.Binary(backend::BinaryOp::kAdd, running.data_f32(), scaled.data_f32(), running.data_f32(), c);
}

}  // namespace

Tensor Softmax(const Tensor& x, int64_t dim) {
  return trace::Op("softmax", [&]() -> Tensor {
    const int64_t d = NormalizeDim(dim, x.dim(), "softmax");
    if (d == x.dim() - 1) return SoftmaxLast(x, false, "softmax");
    return SoftmaxLast(x.Transpose(d, -1), false, "softmax").Transpose(d, -1);
  });
}

Tensor LogSoftmax(const Tensor& x, int64_t dim) {
  return trace::Op("log_softmax", [&]() -> Tensor {
    const int64_t d = NormalizeDim(dim, x.dim(), "log_softmax");
    if (d == x.dim() - 1) return SoftmaxLast(x, true, "log_softmax");
    return SoftmaxLast(x.Transpose(d, -1), true, "log_softmax").Transpose(d, -1);
  });
}

Tensor Dropout(const Tensor& a, float p, bool training, uint64_t seed, uint64_t stream,
               uint64_t offset) {
  return trace::Op("dropout", [&]() -> Tensor {
    LOCKSTEP_REQUIRE(p >= 0.0f && p <= 1.0f, "dropout: probability must be in [0, 1], got " << p);
    if (!training || p == 0.0f) return a;
    const Tensor x = ContiguousData(a, "dropout");
    const size_t n = static_cast<size_t>(x.numel());
    Tensor mask = Tensor::Empty(x.shape()), out = Tensor::Empty(x.shape());
    // In a data-parallel batch, offset is the whole batch's first word and this rank's rows draw
    // the words one process draws for them.
    uint64_t first = offset;
    if (parallel::CurrentBatch() != nullptr && x.dim() > 0) {
      const int64_t rows = x.size(0);
      first += static_cast<uint64_t>(parallel::FirstSample(rows, "dropout")) * (n / static_cast<size_t>(rows));
    }
    Kernels().DropoutMask(seed, stream, first, p, mask.data_f32(), n);
    Kernels().Binary(backend::BinaryOp::kMul, x.data_f32(), mask.data_f32(), out.data_f32(), n);
    if (NeedsGrad({a})) RecordNode(out, OpKind::kDropout, {a}).saved = {mask};
    return out;
  });
}

Tensor LayerNorm(const Tensor& a, int64_t normalized_dims, const Tensor& weight, const Tensor& bias,
                 float eps) {
  return trace::Op("layer_norm", [&]() -> Tensor {
    const Tensor x = ContiguousData(a, "layer_norm");
    LOCKSTEP_REQUIRE(normalized_dims >= 1 && normalized_dims <= x.dim(),
                     "layer_norm: cannot normalise " << normalized_dims << " trailing dimensions of "
                                                     << ShapeString(x.shape()));
    const Shape normalized(x.shape().end() - normalized_dims, x.shape().end());
    const int64_t d = NumElements(normalized), rows = d == 0 ? 0 : x.numel() / d;
    for (const Tensor* p : {&weight, &bias}) {
      LOCKSTEP_REQUIRE(!p->defined() || p->shape() == normalized,
                       "layer_norm: weight/bias shape " << ShapeString(p->shape()) << " differs from the normalised shape "
                                                        << ShapeString(normalized));
    }
    Tensor xhat = Tensor::Empty(x.shape()), rstd = Tensor::Empty({rows}), out = Tensor::Empty(x.shape());
    if (rows > 0) {
      // Per row: mean = sum / d; var = sum((x - mean)^2) / d; rstd = rsqrt(var + eps);
      // xhat = (x - mean) * rstd; y = xhat * weight + bias (simd/layer_norm.h: one pass per row).
      const Tensor w = weight.defined() ? ContiguousData(weight, "layer_norm") : Tensor();
      const Tensor b = bias.defined() ? ContiguousData(bias, "layer_norm") : Tensor();
      Kernels().LayerNormRows(x.data_f32(), w.defined() ? w.data_f32() : nullptr, b.defined() ? b.data_f32() : nullptr,
                              eps, static_cast<size_t>(rows), static_cast<size_t>(d), xhat.data_f32(),
                              rstd.data_f32(), out.data_f32());
    }
    if (NeedsGrad({a, weight, bias})) {
      Node& node = RecordNode(out, OpKind::kLayerNorm, {a, weight, bias});
      node.saved = {xhat, rstd};
    }
    return out;
  });
}

Tensor BatchNormRstd(const Tensor& var, float eps) {
  const size_t channels = static_cast<size_t>(var.numel());
  Tensor rstd = Tensor::Empty({var.numel()});
  const Kernels kernels;
  kernels.BinaryScalarRight(backend::BinaryOp::kAdd, var.data_f32(), eps, rstd.data_f32(), channels);
  kernels.Math(backend::MathFn::kRsqrt, rstd.data_f32(), rstd.data_f32(), channels);
  return rstd;
}

Tensor BatchNorm(const Tensor& a, const Tensor& running_mean, const Tensor& running_var,
                 const Tensor& weight, const Tensor& bias, bool training, float momentum, float eps,
                 const BatchNormActivation& after) {
  using Kind = BatchNormActivation::Kind;
  if (after.kind != Kind::kNone && parallel::CurrentBatch() != nullptr) {
    // Across ranks the gradient sums are the separate ops (BatchNormGradSumsOf): so are the two ops.
    const Tensor y = BatchNorm(a, running_mean, running_var, weight, bias, training, momentum, eps);
    switch (after.kind) {
      case Kind::kRelu: return Relu(y);
      case Kind::kSilu: return Silu(y);
      case Kind::kHardtanh: return Hardtanh(y, after.lo, after.hi);
      default: return Clamp(y, after.lo, after.hi);
    }
  }
  LOCKSTEP_REQUIRE(after.kind != Kind::kHardtanh || after.lo <= after.hi,
                   "hardtanh: min_val " << after.lo << " is above max_val " << after.hi);
  const char* const names[] = {"batch_norm", "batch_norm_relu", "batch_norm_clip", "batch_norm_silu",
                               "batch_norm_hardtanh"};
  const char* name = names[static_cast<int>(after.kind)];
  return trace::Op(name, [&]() -> Tensor {
    const Tensor x = ContiguousData(a, "batch_norm");
    LOCKSTEP_REQUIRE(x.dim() == 2 || x.dim() == 4,
                     "batch_norm: expected [N, C] or [N, C, H, W], got " << ShapeString(x.shape()));
    const int64_t n = x.size(0), c = x.size(1), hw = x.dim() == 4 ? x.size(2) * x.size(3) : 1;
    for (const Tensor* p : {&running_mean, &running_var, &weight, &bias}) {
      LOCKSTEP_REQUIRE(!p->defined() || p->shape() == Shape{c},
                       "batch_norm: parameter shape " << ShapeString(p->shape()) << " does not match " << c << " channels");
    }
    LOCKSTEP_REQUIRE(training || (running_mean.defined() && running_var.defined()),
                     "batch_norm: evaluation needs running statistics");
    // The statistics are over the whole batch (in a data-parallel batch, over every rank's rows:
    // the sums combine over ranks).
    const int64_t local_count = n * hw;
    const int64_t count = training ? parallel::GlobalSamples(n, "batch_norm") * hw : local_count;
    LOCKSTEP_REQUIRE(!training || count > 1, "batch_norm: training needs more than one value per channel, got "
                                                 << ShapeString(x.shape()));
    // xhat is kept for the gradient only: inference writes y alone (one stream of stores fewer).
    const bool keeps_graph = NeedsGrad({a, weight, bias});
    Tensor xhat = keeps_graph ? Tensor::Empty(x.shape()) : Tensor();
    Tensor rstd, out = Tensor::Empty(x.shape());
    const Kernels kernels;
    const size_t channels = static_cast<size_t>(c);
    Tensor mean, var;
    if (training) {
      // Each channel's values in (sample, position) order, batch-grouped (ChannelSums).
      const NoGradGuard statistics_only;
      mean = Tensor::Empty({c});
      kernels.BinaryScalarRight(backend::BinaryOp::kDiv, ChannelSums(x.Detach(), n, c, hw).data_f32(),
                                static_cast<float>(count), mean.data_f32(), channels);
      const Tensor sum_sq = ChannelDeviationSquareSums(x.Detach(), mean, n, c, hw);
      var = Tensor::Empty({c});
      kernels.BinaryScalarRight(backend::BinaryOp::kDiv, sum_sq.data_f32(), static_cast<float>(count), var.data_f32(),
                                channels);
      if (running_mean.defined()) {
        // running = (1 - momentum) * running + momentum * batch; the variance is unbiased.
        Tensor unbiased = Tensor::Empty({c});
        kernels.BinaryScalarRight(backend::BinaryOp::kDiv, sum_sq.data_f32(), static_cast<float>(count - 1),
                                  unbiased.data_f32(), channels);
        UpdateRunningStatistic(running_mean, mean, momentum, "running_mean");
        UpdateRunningStatistic(running_var, unbiased, momentum, "running_var");
      }
    } else {
      mean = ContiguousData(running_mean, "batch_norm");
      var = ContiguousData(running_var, "batch_norm");
    }
    rstd = BatchNormRstd(var, eps);
    const Tensor w = weight.defined() ? ContiguousData(weight, "batch_norm") : Tensor();
    const Tensor b = bias.defined() ? ContiguousData(bias, "batch_norm") : Tensor();
    backend::ChannelNormCall call{};
    call.outer = static_cast<size_t>(n);
    call.channels = channels;
    call.inner = static_cast<size_t>(hw);
    call.x = x.data_f32();
    call.mean = mean.data_f32();
    call.rstd = rstd.data_f32();
    call.weight = w.defined() ? w.data_f32() : nullptr;
    call.bias = b.defined() ? b.data_f32() : nullptr;
    call.xhat_out = keeps_graph ? xhat.data_f32() : nullptr;
    call.out = out.data_f32();
    call.activation = KernelActivation(after.kind);
    call.lo = after.lo;
    call.hi = after.hi;
    // SiLU's gradient reads its sigmoid, kept as the forward pass forms it.
    const Tensor sigmoid = keeps_graph && after.kind == Kind::kSilu ? Tensor::Empty(x.shape()) : Tensor();
    call.sigmoid_out = sigmoid.defined() ? sigmoid.data_f32() : nullptr;
    kernels.ChannelNormalize(&call);
    if (keeps_graph) {
      Node& node = RecordNode(out, OpKind::kBatchNorm, {a, weight, bias});
      node.saved = {xhat, rstd, sigmoid};
      node.ints = {training ? 1 : 0, count, call.activation};
      node.floats = {after.lo, after.hi};
    }
    return out;
  });
}

Tensor Embedding(const Tensor& indices, const Tensor& weight_in) {
  return trace::Op("embedding", [&]() -> Tensor {
    LOCKSTEP_REQUIRE(indices.dtype() == DType::kInt64 || indices.dtype() == DType::kInt32,
                     "embedding: indices must be int64 or int32, got " << DTypeName(indices.dtype()));
    const Tensor weight = ContiguousData(weight_in, "embedding");
    LOCKSTEP_REQUIRE(weight.dim() == 2, "embedding: weight must be [num, dim], got " << ShapeString(weight.shape()));
    const int64_t num = weight.size(0), dim = weight.size(1);
    const std::vector<int64_t> idx = indices.ToInt64Vector();
    Shape out_shape = indices.shape();
    out_shape.push_back(dim);
    Tensor out = Tensor::Empty(out_shape);
    for (size_t i = 0; i < idx.size(); ++i) {
      LOCKSTEP_REQUIRE(idx[i] >= 0 && idx[i] < num,
                       "embedding: index " << idx[i] << " at position " << i << " is out of range [0, " << num << ")");
    }
    // The checked indices, on the current device, for the gather (and the backward scatter).
    const Tensor ids = Tensor::FromInt64({static_cast<int64_t>(idx.size())}, idx);
    Kernels().GatherRows(weight.data_f32(), ids.data_i64(), idx.size(), static_cast<size_t>(dim), out.data_f32());
    if (NeedsGrad({weight_in})) {
      Node& node = RecordNode(out, OpKind::kEmbedding, {weight_in});
      node.saved = {ids};
      // Indices from a data-parallel batch: the backward gathers every rank's rows (in batch order).
      const parallel::ActiveBatch* batch = parallel::CurrentBatch();
      node.ints = {batch != nullptr && batch->IsInput(indices) ? 1 : 0};
    }
    return out;
  });
}

Tensor NllLoss(const Tensor& log_probs_in, const Tensor& target, Reduction reduction,
               int64_t ignore_index) {
  return trace::Op("nll_loss", [&]() -> Tensor {
    const Tensor log_probs = ContiguousData(log_probs_in, "nll_loss");
    LOCKSTEP_REQUIRE(log_probs.dim() == 2, "nll_loss: expected log-probabilities [N, C], got "
                                               << ShapeString(log_probs.shape()));
    const int64_t n = log_probs.size(0), c = log_probs.size(1);
    LOCKSTEP_REQUIRE(target.shape() == Shape{n} && target.dtype() != DType::kFloat32,
                     "nll_loss: expected integer targets of shape [" << n << "], got " << DTypeName(target.dtype())
                                                                    << " " << ShapeString(target.shape()));
    const std::vector<int64_t> t = target.ToInt64Vector();
    int64_t counted = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (t[i] == ignore_index) continue;
      LOCKSTEP_REQUIRE(t[i] >= 0 && t[i] < c, "nll_loss: target " << t[i] << " at position " << i
                                                                  << " is out of range [0, " << c << ")");
      ++counted;
    }
    // In a data-parallel batch the mean is over every rank's counted targets.
    if (reduction == Reduction::kMean) counted = parallel::SumOverBatch(counted);
    // The checked targets, on the current device, for the pick (and the backward scatter).
    const Tensor targets = Tensor::FromInt64({n}, t);
    Tensor losses = Tensor::Empty({n});
    Kernels().NllForward(log_probs.data_f32(), targets.data_i64(), static_cast<size_t>(n), static_cast<size_t>(c),
                         ignore_index, losses.data_f32());
    Tensor out;
    if (reduction == Reduction::kNone) {
      out = losses;
    } else {
      float total = BatchGroupedSumRows(losses.Reshape({n, 1}), kBatchGroup).item();
      if (reduction == Reduction::kMean) total = total / static_cast<float>(counted);
      out = Tensor::Scalar(total);
    }
    if (NeedsGrad({log_probs_in})) {
      Node& node = RecordNode(out, OpKind::kNllLoss, {log_probs_in});
      node.ints = {ignore_index, static_cast<int64_t>(reduction), counted};
      node.saved = {targets};
    }
    return out;
  });
}

Tensor CrossEntropy(const Tensor& logits, const Tensor& target, Reduction reduction,
                    int64_t ignore_index, float label_smoothing) {
  return trace::Op("cross_entropy", [&]() -> Tensor {
    LOCKSTEP_REQUIRE(label_smoothing >= 0.0f && label_smoothing <= 1.0f,
                     "cross_entropy: label smoothing must be in [0, 1], got " << label_smoothing);
    const Tensor log_probs = LogSoftmax(logits, -1);
    if (label_smoothing == 0.0f) return NllLoss(log_probs, target, reduction, ignore_index);
    LOCKSTEP_REQUIRE_STATE(parallel::CurrentBatch() == nullptr,
                           "cross_entropy: label smoothing sums over the batch outside the batch groups, so a "
                           "data-parallel batch cannot reproduce it; train it in one process");
    // PyTorch's definition: (1 - e) * nll + e * (-sum_c log p_c / C), ignored rows excluded.
    const int64_t c = log_probs.size(-1);
    const Tensor nll = NllLoss(log_probs, target, Reduction::kNone, ignore_index);
    const std::vector<int64_t> t = target.ToInt64Vector();
    std::vector<float> keep(t.size());
    int64_t counted = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      keep[i] = t[i] == ignore_index ? 0.0f : 1.0f;
      counted += t[i] != ignore_index;
    }
    const Tensor keep_mask = Tensor::FromVector({static_cast<int64_t>(t.size())}, keep);
    const Tensor smooth = Mul(MulScalar(Sum(log_probs, -1), -1.0f / static_cast<float>(c)), keep_mask);
    const Tensor per_sample = Add(MulScalar(nll, 1.0f - label_smoothing), MulScalar(smooth, label_smoothing));
    if (reduction == Reduction::kNone) return per_sample;
    const Tensor total = Sum(per_sample);
    return reduction == Reduction::kSum ? total : MulScalar(total, 1.0f / static_cast<float>(counted));
  });
}

Tensor MseLoss(const Tensor& input, const Tensor& target, Reduction reduction) {
  return trace::Op("mse_loss", [&]() -> Tensor {
    LOCKSTEP_REQUIRE(input.shape() == target.shape(), "mse_loss: input " << ShapeString(input.shape())
                                                                         << " and target " << ShapeString(target.shape())
                                                                         << " differ in shape");
    const Tensor diff = Sub(input, target);
    const Tensor squared = Mul(diff, diff);
    if (reduction == Reduction::kNone) return squared;
    return reduction == Reduction::kSum ? Sum(squared) : Mean(squared);
  });
}

}  // namespace lockstep
