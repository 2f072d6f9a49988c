// The training losses of ONNX: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss over
// [N, C, d1, ...] with optional class weights, ignore_index and the three reductions. The picked
// log-probabilities are gathered with lockstep's embedding op (the gradient adds back in index
// order); sums are canonical reductions; the mean divides by the sum of the picked weights, as
// ONNX defines it.
#include <string>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "onnx/op_helpers.h"
#include "onnx/op_registry.h"

namespace lockstep {
namespace onnx {

namespace {

struct LossOptions {
  std::string reduction;
  bool has_ignore = false;
  int64_t ignore_index = 0;
};

LossOptions ReadLossOptions(const NodeView& node) {
  LossOptions o;
  o.reduction = node.String("reduction", "mean");
  node.Require(o.reduction == "mean" || o.reduction == "sum" || o.reduction == "none",
               "reduction must be 'mean', 'sum' or 'none', got '" + o.reduction + "'");
  o.has_ignore = node.Has("ignore_index");
  o.ignore_index = node.Int("ignore_index", 0);
  return o;
}

// -log_probs[n, target, d...] * weight[target], reduced as asked. log_probs [N, C, d...].
Tensor Nll(const Tensor& log_probs, const Value& target, const Tensor& weight, const LossOptions& o, const char* name) {
  LOCKSTEP_REQUIRE(log_probs.dim() >= 2, name << ": expected input [N, C, ...], got " << ShapeString(log_probs.shape()));
  LOCKSTEP_REQUIRE(target.is_int(), name << ": the target must be integer class indices, got " << ElemName(target.elem));
  const int64_t n = log_probs.size(0), c = log_probs.size(1);
  Shape expected{n};
  expected.insert(expected.end(), log_probs.shape().begin() + 2, log_probs.shape().end());
  LOCKSTEP_REQUIRE(target.shape() == expected, name << ": target " << ShapeString(target.shape()) << " does not match input "
                                                    << ShapeString(log_probs.shape()) << " (expected "
                                                    << ShapeString(expected) << ")");
  LOCKSTEP_REQUIRE(!weight.defined() || weight.shape() == Shape{c},
                   name << ": weight must be [" << c << "], got " << ShapeString(weight.shape()));
  // [N, C, d...] -> [N, d..., C] -> [M, C]; element m picks column t[m].
  std::vector<int64_t> perm{0};
  for (int64_t d = 2; d < log_probs.dim(); ++d) perm.push_back(d);
  perm.push_back(1);
  const int64_t m = NumElements(expected);
  const Tensor rows = log_probs.Permute(perm).Reshape({m * c, 1});
  const std::vector<int64_t> t = IntValues(target);
  std::vector<int64_t> flat(static_cast<size_t>(m)), classes(static_cast<size_t>(m));
  std::vector<float> keep(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) {
    const bool ignored = o.has_ignore && t[i] == o.ignore_index;
    LOCKSTEP_REQUIRE(ignored || (t[i] >= 0 && t[i] < c),
                     name << ": target " << t[i] << " at position " << i << " is out of range [0, " << c << ")");
    classes[i] = ignored ? 0 : t[i];
    flat[i] = i * c + classes[i];
    keep[i] = ignored ? 0.0f : 1.0f;
  }
  const Tensor picked = Take(FloatValue(rows), 0, flat, {m}, name).tensor.Reshape({m});
  Tensor w = Tensor::FromVector({m}, keep);
  if (weight.defined()) {
    w = Mul(Take(FloatValue(weight.Reshape({c, 1})), 0, classes, {m}, name).tensor.Reshape({m}), w);
  }
  const Tensor loss = Neg(Mul(picked, w));
  if (o.reduction == "none") return loss.Reshape(expected);
  const Tensor total = Sum(loss);
  return o.reduction == "sum" ? total : Div(total, Sum(w));
}

Kernel NllKernel(const NodeView& node) {
  node.RequireInputs(2, 3);
  const LossOptions o = ReadLossOptions(node);
  return [o](const Values& in, RunContext&) -> Values {
    const char* name = "NegativeLogLikelihoodLoss";
    const Tensor weight = in.size() > 2 && in[2].defined() ? FloatInput(in[2], name) : Tensor();
    return {FloatValue(Nll(FloatInput(Input(in, 0, name), name), Input(in, 1, name), weight, o, name))};
  };
}

Kernel SoftmaxCrossEntropyKernel(const NodeView& node) {
  node.RequireInputs(2, 3);
  const LossOptions o = ReadLossOptions(node);
  const bool want_log_prob = node.HasOutput(1);
  return [o, want_log_prob](const Values& in, RunContext&) -> Values {
    const char* name = "SoftmaxCrossEntropyLoss";
    const Tensor scores = FloatInput(Input(in, 0, name), name);
    LOCKSTEP_REQUIRE(scores.dim() >= 2, name << ": expected scores [N, C, ...], got " << ShapeString(scores.shape()));
    const Tensor log_prob = LogSoftmax(scores, 1);
    const Tensor weight = in.size() > 2 && in[2].defined() ? FloatInput(in[2], name) : Tensor();
    Values out{FloatValue(Nll(log_prob, Input(in, 1, name), weight, o, name))};
    if (want_log_prob) out.push_back(FloatValue(log_prob));
    return out;
  };
}

}  // namespace

void AddLossOps(std::vector<OpSpec>* t) {
  t->push_back(OpSpec{"NegativeLogLikelihoodLoss", 12, NllKernel}
                   .Reads({"ignore_index", "reduction"})
                   .Scope("class weights, ignore_index; mean, sum, none"));
  t->push_back(OpSpec{"SoftmaxCrossEntropyLoss", 12, SoftmaxCrossEntropyKernel}
                   .Reads({"ignore_index", "reduction"})
                   .Scope("class weights, ignore_index; mean, sum, none"));
}

}  // namespace onnx
}  // namespace lockstep
