// Ops composed of other ops (core/ops.h): PyTorch's activations with bounds, the mean over several
// dimensions, adaptive average pooling, channel shuffle and stochastic depth. Each is a fixed
// sequence of ordinary ops, so it runs on every device through the kernel table, its gradient
// comes from their backward rules, and its bits are the same wherever those ops' bits are.
#include <algorithm>

#include "core/error.h"
#include "core/ops.h"
#include "core/shape.h"

namespace lockstep {

namespace {

Tensor Fill(const Tensor& x, const Tensor& mask, float value) { return MaskedFill(x, mask, value); }
Tensor S(float v) { return Tensor::Scalar(v); }

}  // namespace

Tensor Mean(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  const int64_t rank = a.dim();
  std::vector<int64_t> reduced;
  for (int64_t d : dims) reduced.push_back(NormalizeDim(d, rank, "mean"));
  if (dims.empty()) {
    for (int64_t d = 0; d < rank; ++d) reduced.push_back(d);
  }
  std::sort(reduced.begin(), reduced.end());
  LOCKSTEP_REQUIRE(std::adjacent_find(reduced.begin(), reduced.end()) == reduced.end(),
                   "mean: dimension repeated in the list of " << dims.size() << " dims");
  if (rank == 0) return Mean(a);
  if (reduced.size() == 1) return Mean(a, reduced[0], keepdim);
  Shape kept_shape, order, keepdim_shape;
  for (int64_t d = 0; d < rank; ++d) {
    const bool reduce = std::binary_search(reduced.begin(), reduced.end(), d);
    if (!reduce) {
      order.push_back(d);
      kept_shape.push_back(a.size(d));
    }
    keepdim_shape.push_back(reduce ? 1 : a.size(d));
  }
  // The reduced dimensions moved last (a view when they already are) and merged into one.
  Tensor x = a;
  if (reduced.front() != rank - static_cast<int64_t>(reduced.size()) || reduced.back() != rank - 1) {
    order.insert(order.end(), reduced.begin(), reduced.end());
    x = x.Permute(order);
  }
  Shape merged = kept_shape;
  merged.push_back(-1);
  Tensor out = Mean(x.Reshape(merged), -1, false);
  return keepdim ? out.Reshape(keepdim_shape) : out;
}

Tensor Hardsigmoid(const Tensor& x) {
  // The masks test x itself (as PyTorch's gradient does), not x + 3, which rounds to 6 just below 3.
  const Tensor t = Fill(Fill(AddScalar(x, 3.0f), LessEqual(x, S(-3.0f)), 0.0f), GreaterEqual(x, S(3.0f)), 6.0f);
  return Div(t, S(6.0f));
}

Tensor Hardswish(const Tensor& x) {
  // PyTorch's gradient: 0 below -3, x / 3 + 1/2 from -3 up to 3, 1 from 3 on. (At exactly 3 its
  // vectorised loop gives 1 and its scalar tail 1.5; the vectorised rule is the one large tensors
  // see, and the aten route's.)
  const Tensor t = Fill(Fill(AddScalar(x, 3.0f), Less(x, S(-3.0f)), 0.0f), GreaterEqual(x, S(3.0f)), 6.0f);
  return Div(Mul(x, t), S(6.0f));
}

Tensor AdaptiveAvgPool2d(const Tensor& x_in, int64_t out_h, int64_t out_w) {
  LOCKSTEP_REQUIRE(x_in.dim() == 3 || x_in.dim() == 4,
                   "adaptive_avg_pool2d: expected input [N, C, H, W] or [C, H, W], got " << ShapeString(x_in.shape()));
  const Tensor x = x_in.dim() == 3 ? x_in.Unsqueeze(0) : x_in;
  const int64_t h = x.size(2), w = x.size(3);
  LOCKSTEP_REQUIRE(out_h >= 1 && out_w >= 1 && h >= 1 && w >= 1,
                   "adaptive_avg_pool2d: output size must be >= 1 and the input not empty, got output "
                       << out_h << "x" << out_w << " for input " << ShapeString(x_in.shape()));
  Tensor out;
  if (out_h == 1 && out_w == 1) {
    out = Mean(x.Reshape({x.size(0), x.size(1), h * w}), -1, true).Unsqueeze(-1);
  } else if (h % out_h == 0 && w % out_w == 0) {
    const int64_t kh = h / out_h, kw = w / out_w;
    out = AvgPool2d(x, Pool2dOptions{kh, kw, kh, kw});
  } else {
    std::vector<Tensor> rows;
    for (int64_t i = 0; i < out_h; ++i) {
      const int64_t r0 = i * h / out_h, r1 = ((i + 1) * h + out_h - 1) / out_h;
      std::vector<Tensor> cells;
      for (int64_t j = 0; j < out_w; ++j) {
        const int64_t c0 = j * w / out_w, c1 = ((j + 1) * w + out_w - 1) / out_w;
        const Tensor window = x.Slice(2, r0, r1).Slice(3, c0, c1).Reshape({x.size(0), x.size(1), -1});
        cells.push_back(Mean(window, -1, true));
      }
      rows.push_back(Concat(cells, -1).Unsqueeze(-2));
    }
    out = Concat(rows, -2);
  }
  return x_in.dim() == 3 ? out.Squeeze(0) : out;
}

Tensor ChannelShuffle(const Tensor& x, int64_t groups) {
  LOCKSTEP_REQUIRE(x.dim() >= 3, "channel_shuffle: expected an input of rank >= 3 [N, C, ...], got "
                                     << ShapeString(x.shape()));
  const int64_t c = x.size(1);
  LOCKSTEP_REQUIRE(groups >= 1 && c % groups == 0,
                   "channel_shuffle: groups must be >= 1 and divide the " << c << " channels, got " << groups);
  Shape split = x.shape();
  split[1] = c / groups;
  split.insert(split.begin() + 1, groups);
  return x.Reshape(split).Transpose(1, 2).Reshape(x.shape());
}

Tensor StochasticDepth(const Tensor& x, float p, bool row_mode, bool training, uint64_t seed, uint64_t stream,
                       uint64_t offset) {
  LOCKSTEP_REQUIRE(p >= 0.0f && p <= 1.0f, "stochastic_depth: p must be in [0, 1], got " << p);
  LOCKSTEP_REQUIRE(x.dim() >= 1, "stochastic_depth: expected an input of rank >= 1, got " << ShapeString(x.shape()));
  if (!training || p == 0.0f) return x;
  Shape mask_shape(static_cast<size_t>(x.dim()), 1);
  Tensor mask;
  if (row_mode) {
    // Rank 1, so that a data-parallel share draws its rows' words (Dropout's rule).
    mask_shape[0] = x.size(0);
    mask = Dropout(Tensor::Ones({x.size(0)}), p, true, seed, stream, offset);
  } else {
    mask = Dropout(Tensor::Ones({}), p, true, seed, stream, offset);  // one word for every rank
  }
  return Mul(x, mask.Reshape(mask_shape));
}

}  // namespace lockstep
