// TfIdfVectorizer over integer tokens: counts of the pool's n-grams (with skips) per row, exact on
// the host, then ONNX's TF, IDF or TFIDF weighting (one float32 product).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "onnx/op_helpers.h"
#include "onnx/op_registry.h"

namespace lockstep {
namespace onnx {

namespace {

Kernel TfIdfVectorizerKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  if (node.Has("pool_strings")) node.Unsupported("pool_strings: lockstep holds no strings");
  const std::string mode = node.String("mode", "");
  node.Require(mode == "TF" || mode == "IDF" || mode == "TFIDF", "mode must be TF, IDF or TFIDF, got '" + mode + "'");
  const int64_t min_n = node.Int("min_gram_length", 0), max_n = node.Int("max_gram_length", 0);
  const int64_t max_skip = node.Int("max_skip_count", 0);
  const std::vector<int64_t> counts = node.Ints("ngram_counts", {}), indexes = node.Ints("ngram_indexes", {});
  const std::vector<int64_t> pool = node.Ints("pool_int64s", {});
  const std::vector<float> weights = node.Has("weights") ? node.Floats("weights") : std::vector<float>();
  node.Require(min_n >= 1 && max_n >= min_n && max_skip >= 0 && static_cast<int64_t>(counts.size()) >= max_n,
               "min_gram_length, max_gram_length, max_skip_count or ngram_counts are inconsistent");
  // Each pool n-gram (a vector of n tokens) and its output index.
  std::map<std::vector<int64_t>, int64_t> grams;
  int64_t width = 0, at = 0, g = 0;
  for (size_t level = 0; level < counts.size(); ++level) {
    const int64_t n = static_cast<int64_t>(level) + 1;
    const int64_t end = level + 1 < counts.size() ? counts[level + 1] : static_cast<int64_t>(pool.size());
    node.Require(counts[level] == at && end >= at && (end - at) % n == 0, "ngram_counts do not split pool_int64s");
    for (; at < end; at += n, ++g) {
      node.Require(g < static_cast<int64_t>(indexes.size()), "fewer ngram_indexes than n-grams");
      grams[std::vector<int64_t>(pool.begin() + at, pool.begin() + at + n)] = indexes[g];
      width = std::max(width, indexes[g] + 1);
    }
  }
  node.Require(weights.empty() || weights.size() == indexes.size(), "weights must have one entry per n-gram");
  return [=](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "TfIdfVectorizer");
    LOCKSTEP_REQUIRE(x.is_int() && (x.shape().size() == 1 || x.shape().size() == 2),
                     "TfIdfVectorizer: expected integer tokens [C] or [N, C], got " << ElemName(x.elem) << " "
                                                                                      << ShapeString(x.shape()));
    const bool batched = x.shape().size() == 2;
    const int64_t rows = batched ? x.shape()[0] : 1, len = x.shape().back();
    const std::vector<int64_t> v = IntValues(x);
    std::vector<float> out(static_cast<size_t>(rows * width), 0.0f);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t* t = v.data() + r * len;
      for (int64_t n = min_n; n <= max_n; ++n) {
        for (int64_t skip = 0; skip <= (n == 1 ? 0 : max_skip); ++skip) {
          const int64_t stride = skip + 1;
          for (int64_t i = 0; i + (n - 1) * stride < len; ++i) {
            std::vector<int64_t> key(static_cast<size_t>(n));
            for (int64_t j = 0; j < n; ++j) key[j] = t[i + j * stride];
            auto found = grams.find(key);
            if (found != grams.end()) out[r * width + found->second] += 1.0f;
          }
        }
      }
    }
    // IDF: presence times the weight; TFIDF: the count times the weight (weights default to 1).
    std::vector<float> w(static_cast<size_t>(width), 1.0f);
    for (size_t k = 0; k < weights.size(); ++k) w[indexes[k]] = weights[k];
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t k = 0; k < width; ++k) {
        float& o = out[r * width + k];
        if (mode == "IDF") o = o > 0.0f ? w[k] : 0.0f;
        if (mode == "TFIDF") o = o * w[k];
      }
    }
    return {FloatValue(Tensor::FromVector(batched ? Shape{rows, width} : Shape{width}, out))};
  };
}

}  // namespace

void AddTextOps(std::vector<OpSpec>* t) {
  t->push_back(OpSpec{"TfIdfVectorizer", 9, TfIdfVectorizerKernel}
                   .Reads({"max_gram_length", "max_skip_count", "min_gram_length", "mode", "ngram_counts",
                           "ngram_indexes", "pool_int64s", "pool_strings", "weights"})
                   .Scope("integer tokens"));
}

}  // namespace onnx
}  // namespace lockstep
