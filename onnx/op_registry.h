// The operator table: one entry per supported ONNX operator. At load time an entry's Prepare
// reads and checks the node's attributes (and its inputs' values where they are constants) and
// returns the kernel that runs it; anything it cannot compute exactly is refused there, naming
// the node, never at run time. Kernels compute with lockstep's ops (core/ops.h), so autograd,
// tracing and devices work on imported graphs unchanged.
#ifndef LOCKSTEP_ONNX_OP_REGISTRY_H_
#define LOCKSTEP_ONNX_OP_REGISTRY_H_

#include <stdint.h>

#include <functional>
#include <string>
#include <vector>

#include "core/random.h"
#include "onnx/proto.h"
#include "onnx/value.h"

namespace lockstep {
namespace onnx {

// What a kernel may ask of the model it runs in.
struct RunContext {
  bool training = false;
  // Dropout's Philox stream for the node running now (nullptr outside training).
  Generator* dropout = nullptr;
};

using Values = std::vector<Value>;
// Inputs in node order (an omitted optional input is an undefined Value); returns the outputs
// in node order (it may return fewer: the rest are not produced).
using Kernel = std::function<Values(const Values& inputs, RunContext& context)>;

// A node at load time: attributes with checked types and defaults, and inputs' constant values.
class NodeView {
 public:
  // `attributes`: the ones its operator's table entry lists; reading another is a bug in the entry.
  NodeView(const NodeProto& proto, int64_t opset, std::vector<const Value*> constants,
           const std::vector<std::string>& attributes)
      : proto_(proto), opset_(opset), constants_(std::move(constants)), attributes_(attributes) {}

  const NodeProto& proto() const { return proto_; }
  int64_t opset() const { return opset_; }
  // "node 'conv1' (Conv, opset 13)"
  std::string Where() const;

  bool Has(const char* name) const { return Find(name) != nullptr; }
  int64_t Int(const char* name, int64_t fallback) const;
  float Float(const char* name, float fallback) const;
  std::string String(const char* name, const std::string& fallback) const;
  std::vector<int64_t> Ints(const char* name, const std::vector<int64_t>& fallback) const;
  std::vector<float> Floats(const char* name) const;
  const TensorProto* TensorAttr(const char* name) const;
  // A graph attribute (a subgraph: If's branches, Loop's body, ...), or nullptr when absent.
  const GraphProto* Graph(const char* name) const;

  size_t inputs() const { return proto_.input.size(); }
  size_t outputs() const { return proto_.output.size(); }
  // An input (or output) that is present: listed and not the empty name.
  bool HasInput(size_t i) const { return i < proto_.input.size() && !proto_.input[i].empty(); }
  bool HasOutput(size_t i) const { return i < proto_.output.size() && !proto_.output[i].empty(); }
  // The value of input i when it is known at load time (an initializer that is not a parameter,
  // a Constant, or a folded result), else nullptr.
  const Value* Constant(size_t i) const { return i < constants_.size() ? constants_[i] : nullptr; }
  // Integer values of a constant input; refuses (unsupported) when the input is computed at run time.
  std::vector<int64_t> ConstantInts(size_t i, const char* what) const;

  // Errors naming the node: the model is invalid (kFormat), or lockstep does not compute what it
  // asks (kUnavailable, "unsupported").
  void Require(bool condition, const std::string& message) const;
  [[noreturn]] void Unsupported(const std::string& message) const;
  void RequireInputs(size_t min, size_t max) const;

 private:
  const AttributeProto* Find(const char* name) const;
  const AttributeProto& Typed(const char* name, int32_t type) const;
  const NodeProto& proto_;
  int64_t opset_;
  std::vector<const Value*> constants_;
  const std::vector<std::string>& attributes_;
};

struct OpSpec {
  const char* name;
  int64_t since;  // the oldest opset whose semantics the entry implements
  std::function<Kernel(const NodeView&)> prepare;
  // Inputs that configure rather than carry data (shapes, axes, exponents, ratios): a float
  // initializer read there is a constant, not a trainable parameter.
  std::vector<int> config_inputs = {};
  // Inputs that are state, not parameters (BatchNormalization's running statistics): a float
  // initializer there becomes a buffer of the module.
  std::vector<int> state_inputs = {};
  // Whether an output's shape depends on the input values (Unique, NonZero, ...): then the load-time
  // run on zeros cannot check the declared output shapes.
  bool value_dependent_shapes = false;
  // Every attribute the entry reads (opsets' variants included): the documentation lists them, a
  // node that sets another is refused at load (lockstep would ignore it), and reading one that is
  // not listed is an internal error.
  std::vector<std::string> attributes = {};
  // What of the operator lockstep computes, where that is not all of it (for the documentation).
  std::string scope = {};
  // The family it belongs to (its ops_*.cc), set by the table.
  std::string family = {};

  OpSpec Reads(std::vector<std::string> names) const {
    OpSpec s = *this;
    s.attributes = std::move(names);
    return s;
  }
  OpSpec Scope(std::string text) const {
    OpSpec s = *this;
    s.scope = std::move(text);
    return s;
  }
};

// Every supported operator (the default "ai.onnx" domain), sorted by name.
const std::vector<OpSpec>& OperatorTable();
const OpSpec* FindOperator(const std::string& op_type);
// "Abs, Add, ...": for the error that refuses an operator.
std::string SupportedOperatorList();

// The families register themselves through these (ops_*.cc).
void AddElementwiseOps(std::vector<OpSpec>* table);
void AddPowerOps(std::vector<OpSpec>* table);
void AddEinsumOps(std::vector<OpSpec>* table);
void AddSequenceOps(std::vector<OpSpec>* table);
void AddControlOps(std::vector<OpSpec>* table);
void AddShapeOps(std::vector<OpSpec>* table);
void AddValueOps(std::vector<OpSpec>* table);
void AddNetworkOps(std::vector<OpSpec>* table);
void AddReduceOps(std::vector<OpSpec>* table);
void AddLossOps(std::vector<OpSpec>* table);
void AddIndexOps(std::vector<OpSpec>* table);
void AddSignalOps(std::vector<OpSpec>* table);
void AddQuantizeOps(std::vector<OpSpec>* table);
void AddRecurrentOps(std::vector<OpSpec>* table);
void AddResizeOps(std::vector<OpSpec>* table);
void AddDetectionOps(std::vector<OpSpec>* table);
void AddNormalizeOps(std::vector<OpSpec>* table);
void AddGridSampleOps(std::vector<OpSpec>* table);
void AddTextOps(std::vector<OpSpec>* table);

}  // namespace onnx
}  // namespace lockstep

#endif  // LOCKSTEP_ONNX_OP_REGISTRY_H_
