// A subgraph (If's branches, Loop's and Scan's bodies, SequenceMap's body), prepared at load like
// the top-level graph: every node through the operator table, nodes whose inputs are all known at
// load folded. It runs on a scope of names: its formal inputs, its own constants, and the values of
// the enclosing graphs it reads (the node's implicit inputs, NodeProto::implicit_input).
#ifndef LOCKSTEP_ONNX_SUBGRAPH_H_
#define LOCKSTEP_ONNX_SUBGRAPH_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "onnx/op_registry.h"
#include "onnx/proto.h"

namespace lockstep {
namespace onnx {

class Subgraph {
 public:
  // `where` names the node that owns it and the attribute ("node 'loop' (Loop, opset 13): body").
  Subgraph(const GraphProto& graph, int64_t opset, const std::string& where);

  size_t input_count() const { return inputs_.size(); }
  size_t output_count() const { return outputs_.size(); }
  // The element type an output declares (float where it declares none): for empty scan outputs.
  Elem OutputElem(size_t i) const;

  // Runs it: `formal` in its inputs' order; `outer` the enclosing values it reads, by name.
  Values Run(const Values& formal, const std::map<std::string, Value>& outer, RunContext& context) const;

 private:
  struct Step {
    bool dropout = false;  // a Dropout node: it has no Philox stream of its own here
    Kernel kernel;
    std::vector<std::string> inputs;  // explicit, then implicit
    std::vector<std::string> outputs;
    std::string where;
  };
  std::string where_;
  std::vector<std::string> inputs_, outputs_;
  std::vector<Elem> output_elems_;
  std::map<std::string, Value> constants_;
  std::vector<Step> steps_;
};

// The values of a node's implicit inputs (`names`, NodeProto::implicit_input) by name: they follow
// its explicit inputs in a kernel's `in`.
std::map<std::string, Value> OuterValues(const std::vector<std::string>& names, const Values& in);

}  // namespace onnx
}  // namespace lockstep

#endif  // LOCKSTEP_ONNX_SUBGRAPH_H_
