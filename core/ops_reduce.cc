// Reductions over all elements or one dimension, in the canonical order (simd/reduce.h), and the
// batch-grouped sums that gradients of broadcast operands use.
#include <algorithm>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/trace/trace.h"
#include "core/ops_internal.h"
#include "core/parallel/batch_reduce.h"

namespace lockstep {

namespace {

// [outer, len, inner] around dimension d of shape.
void SplitAround(const Shape& shape, int64_t d, int64_t* outer, int64_t* len, int64_t* inner) {
  *outer = 1;
  *inner = 1;
  for (int64_t i = 0; i < d; ++i) *outer *= shape[i];
  *len = shape[d];
  for (size_t i = static_cast<size_t>(d) + 1; i < shape.size(); ++i) *inner *= shape[i];
}

Shape ReducedShape(const Shape& shape, int64_t d, bool keepdim) {
  Shape out = shape;
  if (keepdim) {
    out[d] = 1;
  } else {
    out.erase(out.begin() + d);
  }
  return out;
}

using AxisKernel = void (Kernels::*)(const float*, size_t, size_t, size_t, float*) const;

Tensor ReduceDim(const Tensor& a, int64_t dim, bool keepdim, const char* name, AxisKernel kernel) {
  const Tensor x = ContiguousData(a, name);
  const int64_t d = NormalizeDim(dim, x.dim(), name);
  int64_t outer, len, inner;
  SplitAround(x.shape(), d, &outer, &len, &inner);
  Tensor out = Tensor::Empty(ReducedShape(x.shape(), d, keepdim));
  (Kernels().*kernel)(x.data_f32(), outer, len, inner, out.data_f32());
  return out;
}

}  // namespace

Tensor BatchGroupedSumRows(const Tensor& x2d, int64_t rows_per_group) {
  if (const parallel::ActiveBatch* batch = parallel::CurrentBatch()) {
    return parallel::SumRowsOverRanks(*batch, x2d, rows_per_group);  // the same groups and tree, over ranks
  }
  const int64_t rows = x2d.shape()[0], inner = x2d.shape()[1];
  const float* x = x2d.data_f32();
  Tensor out = Tensor::Empty({inner});
  const Kernels kernels;
  if (rows <= rows_per_group) {
    kernels.SumAxis(x, 1, rows, inner, out.data_f32());
    return out;
  }
  const int64_t groups = (rows + rows_per_group - 1) / rows_per_group;
  Tensor partials = Tensor::Empty({groups, inner});
  float* p = partials.data_f32();
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t first = g * rows_per_group;
    const int64_t count = rows - first < rows_per_group ? rows - first : rows_per_group;
    kernels.SumAxis(x + first * inner, 1, count, inner, p + g * inner);
  }
  CombinePairwise(p, groups, inner);
  CopyFloats(p, out.data_f32(), static_cast<size_t>(inner));
  return out;
}

namespace {

// ChannelSums of t's values, or (mean defined) of their squared deviations from mean[c], formed as
// each value is read.
Tensor ChannelSumsOf(const Tensor& t, const Tensor& mean, int64_t n, int64_t c, int64_t p) {
  if (parallel::CurrentBatch() != nullptr || n * p == 0) {
    const Tensor deviations = mean.defined() ? Sub(t.Reshape({n, c, p}), mean.Reshape({1, c, 1})) : Tensor();
    const Tensor values = mean.defined() ? Mul(deviations, deviations) : t;
    const Tensor rows = ContiguousData(values.Reshape({n, c, p}).Permute({0, 2, 1}), "backward").Reshape({n * p, c});
    return BatchGroupedSumRows(rows, kBatchGroup * p);
  }
  const Tensor by_sample = t.Reshape({n, c, p});
  const int64_t groups = (n + kBatchGroup - 1) / kBatchGroup;
  Tensor partials = Tensor::Empty({groups, c});
  const Kernels kernels;
  const Tensor values = ContiguousData(by_sample, "backward");
  const Tensor center = mean.defined() ? ContiguousData(mean, "batch_norm") : Tensor();
  for (int64_t grp = 0; grp < groups; ++grp) {
    const int64_t first = grp * kBatchGroup, samples = std::min(kBatchGroup, n - first);
    // Each channel's values in (sample, position) order, read in place.
    const float* x = values.data_f32() + first * c * p;
    float* out = partials.data_f32() + grp * c;
    if (center.defined()) {
      kernels.ChannelDeviationSquareSums(x, center.data_f32(), static_cast<size_t>(samples), static_cast<size_t>(c),
                                         static_cast<size_t>(p), out);
    } else {
      kernels.ChannelSums(x, static_cast<size_t>(samples), static_cast<size_t>(c), static_cast<size_t>(p), out);
    }
  }
  CombinePairwise(partials.data_f32(), groups, c);
  return groups == 1 ? partials.Reshape({c}) : partials.Slice(0, 0, 1).Reshape({c});
}

}  // namespace

Tensor ChannelSums(const Tensor& t, int64_t n, int64_t c, int64_t p) { return ChannelSumsOf(t, Tensor(), n, c, p); }

Tensor ChannelDeviationSquareSums(const Tensor& t, const Tensor& mean, int64_t n, int64_t c, int64_t p) {
  return ChannelSumsOf(t, mean, n, c, p);
}

int32_t KernelActivation(BatchNormActivation::Kind kind) {
  switch (kind) {
    case BatchNormActivation::Kind::kRelu: return backend::kConvRelu;
    case BatchNormActivation::Kind::kClamp: return backend::kConvClamp;
    case BatchNormActivation::Kind::kSilu: return backend::kConvSilu;
    case BatchNormActivation::Kind::kHardtanh: return backend::kConvHardtanh;
    default: return backend::kConvNoActivation;
  }
}

BatchNormActivation::Kind ActivationKind(int32_t kernel_activation) {
  switch (kernel_activation) {
    case backend::kConvRelu: return BatchNormActivation::Kind::kRelu;
    case backend::kConvClamp: return BatchNormActivation::Kind::kClamp;
    case backend::kConvSilu: return BatchNormActivation::Kind::kSilu;
    case backend::kConvHardtanh: return BatchNormActivation::Kind::kHardtanh;
    default: return BatchNormActivation::Kind::kNone;
  }
}

BatchNormGradSums BatchNormGradSumsOf(const Tensor& g_in, const Tensor& xhat_in, const Tensor& weight, int64_t n,
                                      int64_t c, int64_t p, bool dxhat, bool dx_sums, bool g_xhat, bool g_sum,
                                      const Tensor& bias, const BatchNormActivation& after, const Tensor& sigmoid) {
  using Kind = BatchNormActivation::Kind;
  BatchNormGradSums r;
  Tensor g = ContiguousData(g_in, "batch_norm").Reshape({n, c, p});
  const Tensor xhat = ContiguousData(xhat_in, "batch_norm").Reshape({n, c, p});
  const Tensor w = weight.defined() ? ContiguousData(weight, "batch_norm").Detach() : Tensor();
  const Tensor b = bias.defined() && after.kind != Kind::kNone ? ContiguousData(bias, "batch_norm").Detach() : Tensor();
  if (parallel::CurrentBatch() != nullptr || n * p == 0) {  // the separate ops
    if (after.kind != Kind::kNone && n * p != 0) {
      // y again as the forward pass formed it, then Relu's or Clip's rule (BatchNorm runs the two
      // ops inside a data-parallel batch; this is a graph recorded outside one).
      const NoGradGuard values_only;
      Tensor y = Mul(xhat, w.defined() ? w.Reshape({1, c, 1}) : Tensor::Ones({1, c, 1}));
      y = Add(y, b.defined() ? b.Reshape({1, c, 1}) : Tensor::Zeros({1, c, 1}));
      if (after.kind == Kind::kRelu) {
        g = Mul(g, Greater(y, Tensor::Scalar(0.0f)));
      } else if (after.kind == Kind::kSilu) {
        Tensor silu = Tensor::Empty(g.shape());
        Kernels().SiluBackward(y.data_f32(), sigmoid.data_f32(), g.data_f32(), silu.data_f32(),
                               static_cast<size_t>(g.numel()));
        g = silu;
      } else {
        Tensor masked = Tensor::Empty(g.shape());
        const auto rule = after.kind == Kind::kHardtanh ? &Kernels::HardtanhBackward : &Kernels::ClampBackward;
        (Kernels().*rule)(y.data_f32(), after.lo, after.hi, g.data_f32(), masked.data_f32(),
                          static_cast<size_t>(g.numel()));
        g = masked;
      }
    }
    const Tensor dx = Mul(g, w.defined() ? w.Reshape({1, c, 1}) : Tensor::Ones({1, c, 1}));
    if (dxhat) r.dxhat = dx;
    if (dx_sums) {
      r.sum_dxhat = ChannelSums(dx, n, c, p);
      r.sum_dxhat_xhat = ChannelSums(Mul(dx, xhat), n, c, p);
    }
    if (g_xhat) r.sum_g_xhat = ChannelSums(Mul(g, xhat), n, c, p);
    if (g_sum) r.sum_g = ChannelSums(g, n, c, p);
    return r;
  }
  const int64_t groups = (n + kBatchGroup - 1) / kBatchGroup;
  auto partials = [&](bool wanted) { return wanted ? Tensor::Empty({groups, c}) : Tensor(); };
  if (dxhat) r.dxhat = Tensor::Empty({n, c, p});
  r.sum_dxhat = partials(dx_sums);
  r.sum_dxhat_xhat = partials(dx_sums);
  r.sum_g_xhat = partials(g_xhat);
  r.sum_g = partials(g_sum);
  const Kernels kernels;
  for (int64_t grp = 0; grp < groups; ++grp) {
    const int64_t first = grp * kBatchGroup, samples = std::min(kBatchGroup, n - first);
    auto row = [&](Tensor& t) { return t.defined() ? t.data_f32() + grp * c : nullptr; };
    backend::ChannelNormSumsCall call{};
    call.samples = static_cast<size_t>(samples);
    call.channels = static_cast<size_t>(c);
    call.positions = static_cast<size_t>(p);
    call.g = g.data_f32() + first * c * p;
    call.xhat = xhat.data_f32() + first * c * p;
    call.weight = w.defined() ? w.data_f32() : nullptr;
    call.bias = b.defined() ? b.data_f32() : nullptr;
    call.activation = KernelActivation(after.kind);
    call.lo = after.lo;
    call.hi = after.hi;
    call.sigmoid = sigmoid.defined() ? sigmoid.data_f32() + first * c * p : nullptr;
    call.dxhat_out = dxhat ? r.dxhat.data_f32() + first * c * p : nullptr;
    call.sum_dxhat = row(r.sum_dxhat);
    call.sum_dxhat_xhat = row(r.sum_dxhat_xhat);
    call.sum_g_xhat = row(r.sum_g_xhat);
    call.sum_g = row(r.sum_g);
    kernels.ChannelNormBackwardSums(&call);
  }
  for (Tensor* t : {&r.sum_dxhat, &r.sum_dxhat_xhat, &r.sum_g_xhat, &r.sum_g}) {
    if (!t->defined()) continue;
    CombinePairwise(t->data_f32(), groups, c);
    *t = groups == 1 ? t->Reshape({c}) : t->Slice(0, 0, 1).Reshape({c});
  }
  return r;
}

void CopyFloats(const float* from, float* to, size_t n) {
  if (n == 0 || from == to) return;
  backend::StridedCopyCall call{};
  call.rank = 1;
  call.shape[0] = static_cast<int64_t>(n);
  call.src_strides[0] = call.dst_strides[0] = 1;
  call.src = from;
  call.dst = to;
  Kernels().StridedCopy(&call);
}

void CombinePairwise(float* partials, int64_t count, int64_t inner) {
  // Adjacent pairs, level by level; an odd last one moves up (as the reductions' blocks, simd/reduce.h).
  while (count > 1) {
    int64_t next = 0;
    for (int64_t i = 0; i + 1 < count; i += 2, ++next) {
      Kernels().Binary(backend::BinaryOp::kAdd, partials + i * inner, partials + (i + 1) * inner,
                   partials + next * inner, static_cast<size_t>(inner));
    }
    if (count % 2 == 1) {
      CopyFloats(partials + (count - 1) * inner, partials + next * inner, static_cast<size_t>(inner));
      ++next;
    }
    count = next;
  }
}

Tensor SumToShape(const Tensor& grad_in, const Shape& shape) {
  if (grad_in.shape() == shape) return grad_in;
  NoGradGuard no_grad;
  Tensor grad = ContiguousData(grad_in, "sum_to_shape");
  const int64_t lead = grad.dim() - static_cast<int64_t>(shape.size());
  LOCKSTEP_ASSERT(lead >= 0);
  if (lead > 0) {
    Shape rest(grad.shape().begin() + lead, grad.shape().end());
    const int64_t rows = grad.numel() / (NumElements(rest) == 0 ? 1 : NumElements(rest));
    if (NumElements(rest) == 0) return Tensor::Zeros(shape);
    grad = BatchGroupedSumRows(grad.Reshape({rows, NumElements(rest)}), kBatchGroup).Reshape(rest);
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1 && grad.shape()[d] != 1) grad = Sum(grad, static_cast<int64_t>(d), true);
  }
  return grad.Reshape(shape);
}

Tensor Sum(const Tensor& a) {
  return trace::Op("sum", [&]() -> Tensor {
    parallel::RequireNotWholeBatchSum(a, "sum");
    const Tensor x = ContiguousData(a, "sum");
    Tensor out = Tensor::Empty({});
    Kernels().SumAxis(x.data_f32(), 1, static_cast<size_t>(x.numel()), 1, out.data_f32());
    if (NeedsGrad({a})) RecordNode(out, OpKind::kSum, {a}).ints = {-1, 0};
    return out;
  });
}

Tensor Sum(const Tensor& a, int64_t dim, bool keepdim) {
  return trace::Op("sum", [&]() -> Tensor {
    Tensor out = ReduceDim(a, dim, keepdim, "sum", &Kernels::SumAxis);
    if (NeedsGrad({a})) RecordNode(out, OpKind::kSum, {a}).ints = {NormalizeDim(dim, a.dim(), "sum"), keepdim};
    return out;
  });
}

Tensor Mean(const Tensor& a) {
  return trace::Op("mean", [&]() -> Tensor {
    parallel::RequireNotWholeBatchSum(a, "mean");
    const Tensor x = ContiguousData(a, "mean");
    Tensor out = Tensor::Empty({});
    Kernels().MeanAxis(x.data_f32(), 1, static_cast<size_t>(x.numel()), 1, out.data_f32());
    if (NeedsGrad({a})) RecordNode(out, OpKind::kMean, {a}).ints = {-1, 0};
    return out;
  });
}

Tensor Mean(const Tensor& a, int64_t dim, bool keepdim) {
  return trace::Op("mean", [&]() -> Tensor {
    Tensor out = ReduceDim(a, dim, keepdim, "mean", &Kernels::MeanAxis);
    if (NeedsGrad({a})) RecordNode(out, OpKind::kMean, {a}).ints = {NormalizeDim(dim, a.dim(), "mean"), keepdim};
    return out;
  });
}

Tensor Variance(const Tensor& a, int64_t dim, int64_t correction, bool keepdim) {
  return trace::Op("var", [&]() -> Tensor {
    LOCKSTEP_REQUIRE(correction >= 0, "variance: correction must be >= 0, got " << correction);
    const Tensor x = ContiguousData(a, "variance");
    const int64_t d = NormalizeDim(dim, x.dim(), "variance");
    int64_t outer, len, inner;
    SplitAround(x.shape(), d, &outer, &len, &inner);
    Tensor out = Tensor::Empty(ReducedShape(x.shape(), d, keepdim));
    Kernels().VarianceAxis(x.data_f32(), outer, len, inner, static_cast<size_t>(correction), out.data_f32());
    return out;
  });
}

Tensor Max(const Tensor& a, int64_t dim, bool keepdim) {
  return trace::Op("max", [&]() -> Tensor {
    // PyTorch refuses too: an empty dimension has no maximum (-inf would be a silent invention).
    const int64_t d = NormalizeDim(dim, a.dim(), "max");
    LOCKSTEP_REQUIRE(a.size(d) > 0, "max: dimension " << d << " of " << ShapeString(a.shape()) << " is empty");
    return ReduceDim(a, dim, keepdim, "max", &Kernels::MaxAxis);
  });
}

Tensor Argmax(const Tensor& a, int64_t dim, bool keepdim) {
  return trace::Op("argmax", [&]() -> Tensor {
    const Tensor x = ContiguousData(a, "argmax");
    const int64_t d = NormalizeDim(dim, x.dim(), "argmax");
    int64_t outer, len, inner;
    SplitAround(x.shape(), d, &outer, &len, &inner);
    LOCKSTEP_REQUIRE(len > 0, "argmax: dimension " << d << " of " << ShapeString(x.shape()) << " is empty");
    Tensor out = Tensor::Empty(ReducedShape(x.shape(), d, keepdim), DType::kInt64);
    Kernels().ArgmaxAxis(x.data_f32(), outer, len, inner, out.data_i64());
    return out;
  });
}

}  // namespace lockstep
