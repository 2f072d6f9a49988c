#include "core/autograd.h"

#include <atomic>
#include <map>
#include <set>

#include "core/error.h"
#include "core/ops.h"
#include "core/trace/trace.h"
#include "simd/fp_mode.h"

namespace lockstep {

namespace {

thread_local bool grad_enabled = true;
// One counter for the process: a graph may be built on several threads (a data loader's, a
// worker pool's) and joined on another, and backward keys its pending nodes by sequence, so two
// nodes must never share one. An input always exists before the op that uses it, so its number is
// smaller on any thread; a graph built on one thread is numbered in its creation order as before.
std::atomic<uint64_t> next_sequence{0};

// Whether nothing but the caller refers to g or its storage, and g is a contiguous tensor filling
// its storage: then it can become a leaf's gradient as it is.
bool Exclusive(const Tensor& g) {
  const TensorImpl& t = *g.impl();
  return g.impl().use_count() == 1 && t.storage.use_count() == 1 && t.offset == 0 && !t.grad_fn &&
         g.is_contiguous() && t.storage->bytes() == static_cast<size_t>(g.numel()) * DTypeSize(t.dtype);
}

// Adds g into the gradient slot (undefined slot: takes g). The accumulation order is the order
// of the backward traversal, which is fixed. The first gradient is copied only where sharing it
// could be seen: a leaf's gradient is handed to users and updated in place (ClipGradNorm), so it
// takes g itself only when nothing else refers to it; a pending gradient is only read by the
// backward rules, so it takes g as it is.
void Accumulate(std::shared_ptr<TensorImpl>& slot, const Tensor& g, bool leaf) {
  if (slot) {
    slot = Add(Tensor(slot), g).impl();
  } else if (!leaf || Exclusive(g)) {
    slot = g.impl();
  } else {
    // A strided gradient (a transposed weight's) is copied once: its contiguous copy is already
    // the leaf's own.
    const Tensor contiguous = g.Contiguous();
    slot = Exclusive(contiguous) ? contiguous.impl() : contiguous.Clone().impl();
  }
}

}  // namespace

bool GradEnabled() { return grad_enabled; }

NoGradGuard::NoGradGuard() : previous_(grad_enabled) { grad_enabled = false; }
NoGradGuard::~NoGradGuard() { grad_enabled = previous_; }

bool NeedsGrad(const std::vector<Tensor>& inputs) {
  if (!grad_enabled) return false;
  for (const Tensor& t : inputs) {
    if (t.defined() && t.requires_grad()) return true;
  }
  return false;
}

Node& RecordNode(Tensor& output, OpKind kind, std::vector<Tensor> inputs) {
  auto node = std::make_shared<Node>();
  node->kind = kind;
  node->sequence = next_sequence.fetch_add(1, std::memory_order_relaxed);
  node->inputs = std::move(inputs);
  node->module = trace::CurrentModuleIndex();
  output.impl()->grad_fn = node;
  output.impl()->requires_grad = true;
  return *node;
}

namespace {

// Throws when any node reachable from root was released by an earlier backward pass.
void RequireUnreleased(const std::shared_ptr<Node>& root) {
  std::set<const Node*> seen;
  std::vector<const Node*> stack{root.get()};
  while (!stack.empty()) {
    const Node* node = stack.back();
    stack.pop_back();
    if (!seen.insert(node).second) continue;
    LOCKSTEP_REQUIRE_STATE(!node->released,
                           "backward: trying to backward through the graph a second time (its saved results "
                           "were freed by the first backward, at op "
                               << OpKindName(node->kind)
                               << "); pass retain_graph = true (retainGraph in JavaScript) to the first backward to keep them");
    for (const Tensor& input : node->inputs) {
      if (input.defined() && input.grad_fn()) stack.push_back(input.grad_fn().get());
    }
  }
}

}  // namespace

void RunBackward(const Tensor& root, const Tensor& grad_output, bool retain_graph) {
  LOCKSTEP_REQUIRE(root.requires_grad(),
                   "backward: the tensor does not require grad (no input of its computation "
                   "called RequiresGrad(), or it was computed under NoGradGuard)");
  Tensor seed = grad_output;
  if (!seed.defined()) {
    LOCKSTEP_REQUIRE(root.numel() == 1, "backward: a gradient is needed for a tensor of shape "
                                            << ShapeString(root.shape())
                                            << " (only one-element tensors default to 1)");
    seed = Tensor::Ones(root.shape());
  }
  LOCKSTEP_REQUIRE(seed.shape() == root.shape(),
                   "backward: gradient shape " << ShapeString(seed.shape())
                                               << " does not match the tensor's shape "
                                               << ShapeString(root.shape()));
  NoGradGuard no_grad;
  const simd::ContractFloatingPointScope fp_mode;  // the backward rules' host loops too
  if (!root.grad_fn()) {  // a leaf
    Accumulate(root.impl()->grad, seed, true);
    return;
  }
  RequireUnreleased(root.grad_fn());
  const trace::BackwardScope tracing;
  // Pending gradients keyed by node; processed by decreasing sequence.
  std::map<uint64_t, std::pair<std::shared_ptr<Node>, std::shared_ptr<TensorImpl>>> pending;
  pending[root.grad_fn()->sequence] = {root.grad_fn(), seed.impl()};
  while (!pending.empty()) {
    auto last = std::prev(pending.end());
    std::shared_ptr<Node> node = last->second.first;
    const Tensor grad(last->second.second);
    pending.erase(last);
    const std::vector<Tensor> input_grads = ApplyBackwardRule(*node, grad);
    LOCKSTEP_ASSERT(input_grads.size() == node->inputs.size());
    if (trace::Active() && node->kind != OpKind::kView && node->kind != OpKind::kPermute &&
        node->kind != OpKind::kSlice) {  // views compute nothing: not recorded (nor by PyTorch's tracer)
      trace::RecordBackward(OpKindName(node->kind), node->module, input_grads);
    }
    if (!retain_graph) {
      node->released = true;
      node->saved.clear();
    }
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      const Tensor& input = node->inputs[i];
      if (!input.defined() || !input.requires_grad() || !input_grads[i].defined()) continue;
      LOCKSTEP_ASSERT(input_grads[i].shape() == input.shape());
      if (input.grad_fn()) {
        auto& slot = pending[input.grad_fn()->sequence];
        slot.first = input.grad_fn();
        Accumulate(slot.second, input_grads[i], false);
      } else {
        Accumulate(input.impl()->grad, input_grads[i], true);
      }
    }
  }
}

const char* OpKindName(OpKind kind) {
  static const char* const kNames[] = {
      "add", "sub", "mul", "div", "neg", "add_scalar", "mul_scalar", "pow_scalar",
      "relu", "gelu_erf", "gelu_tanh", "tanh", "sigmoid", "exp", "log", "sqrt",
      "view", "permute", "slice", "expand", "copy", "concat",
      "sum", "mean", "matmul",
      "softmax", "log_softmax", "conv2d", "max_pool2d", "avg_pool2d", "dropout", "layer_norm",
      "batch_norm", "embedding", "nll_loss", "masked_fill", "abs", "erf", "rsqrt", "where",
      "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
      "fmod", "remainder", "round_float16", "round_bfloat16", "conv_transpose2d",
      "clamp", "silu", "hardtanh"};
  return kNames[static_cast<int>(kind)];
}

}  // namespace lockstep
