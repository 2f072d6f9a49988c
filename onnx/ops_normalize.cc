// Normalisations that ONNX defines as functions of other operators: MeanVarianceNormalization and
// LRN, with lockstep's ops in the order of ONNX's definitions (canonical means and sums).
#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "onnx/op_helpers.h"
#include "onnx/op_registry.h"

namespace lockstep {
namespace onnx {

namespace {

// (X - mean(X)) / sqrt(mean(X^2) - mean(X)^2 + 1e-9) over `axes`, as ONNX's function body.
Kernel MeanVarianceNormalizationKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  const std::vector<int64_t> axes_attr = node.Ints("axes", {0, 2, 3});
  const std::string where = node.Where();
  return [axes_attr, where](const Values& in, RunContext&) -> Values {
    const Tensor x = FloatInput(Input(in, 0, "MeanVarianceNormalization"), "MeanVarianceNormalization");
    std::vector<int64_t> axes;
    for (int64_t a : axes_attr) axes.push_back(Axis(a, x.dim(), where));
    const Tensor mean = Mean(x, axes, true);
    const Tensor variance = Sub(Mean(Mul(x, x), axes, true), Mul(mean, mean));
    return {FloatValue(Div(Sub(x, mean), Sqrt(AddScalar(variance, 1e-9f))))};
  };
}

// LRN: x / (bias + alpha / size * sum of squares over the size channels around c)^beta, the sum
// in channel order; beta 0.5 (a square root), 0.75 (sqrt(t) * sqrt(sqrt(t))) or 1.
Kernel LrnKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  const int64_t size = node.Int("size", 0);
  node.Require(size >= 1, "size is required and must be >= 1");
  const float alpha = node.Float("alpha", 1e-4f), beta = node.Float("beta", 0.75f), bias = node.Float("bias", 1.0f);
  if (beta != 0.5f && beta != 0.75f && beta != 1.0f) {
    node.Unsupported("beta " + std::to_string(beta) + "; lockstep computes LRN for beta 0.5, 0.75 and 1");
  }
  return [size, alpha, beta, bias](const Values& in, RunContext&) -> Values {
    const Tensor x = FloatInput(Input(in, 0, "LRN"), "LRN");
    LOCKSTEP_REQUIRE(x.dim() >= 3, "LRN: expected [N, C, ...], got " << ShapeString(x.shape()));
    const int64_t channels = x.size(1), before = (size - 1) / 2, after = size - 1 - before;
    const Tensor squares = Mul(x, x);
    std::vector<Tensor> sums;
    for (int64_t c = 0; c < channels; ++c) {
      Tensor s;
      for (int64_t j = std::max<int64_t>(0, c - before); j <= std::min(channels - 1, c + after); ++j) {
        const Tensor term = squares.Slice(1, j, j + 1);
        s = s.defined() ? Add(s, term) : term;
      }
      sums.push_back(s);
    }
    const Tensor t = AddScalar(MulScalar(Concat(sums, 1), alpha / static_cast<float>(size)), bias);
    const Tensor root = Sqrt(t);
    const Tensor denom = beta == 1.0f ? t : beta == 0.5f ? root : Mul(root, Sqrt(root));
    return {FloatValue(Div(x, denom))};
  };
}

}  // namespace

void AddNormalizeOps(std::vector<OpSpec>* t) {
  t->push_back({"MeanVarianceNormalization", 9, MeanVarianceNormalizationKernel});
  t->push_back({"LRN", 1, LrnKernel});
}

}  // namespace onnx
}  // namespace lockstep
