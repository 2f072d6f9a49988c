// Reverse-mode automatic differentiation. Every differentiable op records a Node naming its kind,
// its inputs and what it saved; all backward rules live in one table (backward_rules.cc).
// Backward visits nodes in decreasing creation order (a node is always created after its inputs,
// so this is a topological order) and accumulates gradients in that fixed order, so the result
// never depends on anything but the program.
#ifndef LOCKSTEP_CORE_AUTOGRAD_H_
#define LOCKSTEP_CORE_AUTOGRAD_H_

#include <stdint.h>

#include <memory>
#include <vector>

#include "core/tensor.h"

namespace lockstep {

enum class OpKind {
  // elementwise
  kAdd, kSub, kMul, kDiv, kNeg, kAddScalar, kMulScalar, kPowScalar,
  kRelu, kGeluErf, kGeluTanh, kTanh, kSigmoid, kExp, kLog, kSqrt,
  // shape and copies
  kView, kPermute, kSlice, kExpand, kCopy, kConcat,
  // reductions
  kSum, kMean,
  // linear algebra
  kMatmul,
  // nn
  kSoftmax, kLogSoftmax, kConv2d, kMaxPool2d, kAvgPool2d, kDropout, kLayerNorm, kBatchNorm,
  kEmbedding, kNllLoss, kMaskedFill,
  // added later: appended, so the earlier values never change
  kAbs, kErf, kRsqrt, kWhere,
  kSin, kCos, kTan, kAsin, kAcos, kAtan, kSinh, kCosh, kAsinh, kAcosh, kAtanh,
  kFmod, kRemainder, kRoundFloat16, kRoundBFloat16, kConvTranspose2d, kClamp, kSilu, kHardtanh,
};
const char* OpKindName(OpKind kind);

struct Node {
  OpKind kind;
  uint64_t sequence;            // creation order
  std::vector<Tensor> inputs;   // the op's tensor inputs, in order (edges of the graph)
  std::vector<Tensor> saved;    // other tensors the rule needs (outputs, masks, statistics)
  std::vector<int64_t> ints;    // integer attributes (dims, strides, ...)
  std::vector<float> floats;    // float attributes (scalars, eps, ...)
  std::vector<Shape> shapes;    // shape attributes (input shapes, ...)
  // Set once a backward pass without retain_graph has gone through the node and freed `saved`;
  // a second pass through it is refused (as PyTorch does) instead of using freed results.
  bool released = false;
  int32_t module = -1;  // the module whose forward made the node, in an open trace (-1: none)
};

// Whether ops record history; off inside NoGradGuard and while running backward.
bool GradEnabled();

class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// True when any input requires grad and history is being recorded.
bool NeedsGrad(const std::vector<Tensor>& inputs);

// Attaches a new node of `kind` to `output` (which then requires grad); returns it so the caller
// can fill saved tensors and attributes.
Node& RecordNode(Tensor& output, OpKind kind, std::vector<Tensor> inputs);

// The rule table: gradients for each of node.inputs (undefined where an input needs none).
std::vector<Tensor> ApplyBackwardRule(const Node& node, const Tensor& grad_output);

// Runs backward from root; grad_output defaults to ones for a one-element root. Without
// retain_graph, the graph's saved results are freed on the way (PyTorch's default), and a second
// backward through any of its nodes throws (kind kState) before a single gradient changes.
void RunBackward(const Tensor& root, const Tensor& grad_output, bool retain_graph = false);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_AUTOGRAD_H_
