// Normalisations that ONNX defines as functions of other operators: MeanVarianceNormalization and
// LRN, with lockstep's ops in the order of ONNX's definitions (canonical means and sums).
#include <algorithm>
#include <utility>
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

// Det of [..., M, M]: Gaussian elimination with partial pivoting (the first largest magnitude in
// the column) in double on the host, each step one IEEE operation in a fixed order, the product of
// the pivots rounded once to float32. No gradient (refused when one is needed).
Kernel DetKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  return [](const Values& in, RunContext&) -> Values {
    const Tensor x = FloatInput(Input(in, 0, "Det"), "Det");
    LOCKSTEP_REQUIRE(x.dim() >= 2 && x.size(-1) == x.size(-2), "Det: expected [..., M, M], got " << ShapeString(x.shape()));
    RequireNoGrad({x}, "Det");
    const int64_t m = x.size(-1), count = m == 0 ? 0 : x.numel() / (m * m);
    const std::vector<float> v = x.Contiguous().ToVector();
    std::vector<float> out(static_cast<size_t>(count));
    std::vector<double> a(static_cast<size_t>(m * m));
    for (int64_t b = 0; b < count; ++b) {
      for (int64_t i = 0; i < m * m; ++i) a[i] = v[b * m * m + i];
      double det = 1.0;
      for (int64_t c = 0; c < m && det != 0.0; ++c) {
        int64_t pivot = c;
        for (int64_t r = c + 1; r < m; ++r) {
          if ((a[r * m + c] < 0 ? -a[r * m + c] : a[r * m + c]) > (a[pivot * m + c] < 0 ? -a[pivot * m + c] : a[pivot * m + c])) pivot = r;
        }
        if (a[pivot * m + c] == 0.0) {
          det = 0.0;
          break;
        }
        if (pivot != c) {
          for (int64_t j = 0; j < m; ++j) std::swap(a[c * m + j], a[pivot * m + j]);
          det = -det;
        }
        det *= a[c * m + c];
        for (int64_t r = c + 1; r < m; ++r) {
          const double f = a[r * m + c] / a[c * m + c];
          for (int64_t j = c; j < m; ++j) a[r * m + j] -= f * a[c * m + j];
        }
      }
      out[b] = static_cast<float>(det);
    }
    return {FloatValue(Tensor::FromVector(Shape(x.shape().begin(), x.shape().end() - 2), out))};
  };
}

}  // namespace

void AddNormalizeOps(std::vector<OpSpec>* t) {
  t->push_back(OpSpec{"Det", 11, DetKernel}.Scope("no gradient"));
  t->push_back(OpSpec{"MeanVarianceNormalization", 9, MeanVarianceNormalizationKernel}.Reads({"axes"}));
  t->push_back(OpSpec{"LRN", 1, LrnKernel}
                   .Reads({"alpha", "beta", "bias", "size"})
                   .Scope("beta 0.5, 0.75 and 1"));
}

}  // namespace onnx
}  // namespace lockstep
