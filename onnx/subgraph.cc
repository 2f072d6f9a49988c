#include "onnx/subgraph.h"

#include <set>

#include "core/autograd.h"
#include "core/error.h"
#include "onnx/prepare.h"

namespace lockstep {
namespace onnx {

Subgraph::Subgraph(const GraphProto& graph, int64_t opset, const std::string& where) : where_(where) {
  LOCKSTEP_REQUIRE_KIND(ErrorKind::kUnavailable, graph.sparse_initializer_count == 0,
                        where << ": sparse initializers are not supported");
  std::set<std::string> defined;
  for (const TensorProto& t : graph.initializer) {
    constants_[t.name] = ValueFromTensorProto(t, where + ": initializer '" + t.name + "'");
    defined.insert(t.name);
  }
  for (const ValueInfoProto& v : graph.input) {
    inputs_.push_back(v.name);
    defined.insert(v.name);
  }
  for (const ValueInfoProto& v : graph.output) {
    outputs_.push_back(v.name);
    Elem elem = Elem::kFloat;
    ElemFromDataType(v.elem_type, &elem);
    output_elems_.push_back(elem);
  }
  for (const NodeProto& node : graph.node) {
    // ONNX keeps a graph's nodes in topological order: an input is defined above or comes from outside.
    std::vector<const Value*> constants;
    bool all_constant = node.op_type != "Dropout";
    const auto constant_of = [&](const std::string& name) -> const Value* {
      auto it = constants_.find(name);
      return it == constants_.end() ? nullptr : &it->second;
    };
    for (const std::string& name : node.input) {
      constants.push_back(constant_of(name));
      if (!name.empty() && constants.back() == nullptr) all_constant = false;
    }
    for (const std::string& name : node.implicit_input) all_constant = all_constant && constant_of(name) != nullptr;
    Step step;
    step.dropout = node.op_type == "Dropout";
    step.kernel = PrepareNode(node, opset, constants).kernel;
    step.inputs = node.input;
    step.inputs.insert(step.inputs.end(), node.implicit_input.begin(), node.implicit_input.end());
    step.outputs = node.output;
    step.where = where + ": " + NodeWhere(node, opset);
    for (const std::string& o : node.output) {
      LOCKSTEP_REQUIRE_FORMAT(o.empty() || defined.insert(o).second, step.where << " overwrites '" << o << "'");
    }
    if (all_constant) {  // computed once, now
      Values in;
      for (const std::string& name : step.inputs) in.push_back(name.empty() ? Value() : constants_.at(name));
      Values out;
      try {
        NoGradGuard no_grad;
        RunContext context;
        out = step.kernel(in, context);
      } catch (const Error& e) {
        throw Error(step.where + ": " + e.what(), e.kind());
      }
      for (size_t i = 0; i < step.outputs.size() && i < out.size(); ++i) {
        if (!step.outputs[i].empty()) constants_[step.outputs[i]] = out[i];
      }
      continue;
    }
    steps_.push_back(std::move(step));
  }
}

Elem Subgraph::OutputElem(size_t i) const { return output_elems_.at(i); }

Values Subgraph::Run(const Values& formal, const std::map<std::string, Value>& outer, RunContext& context) const {
  LOCKSTEP_REQUIRE(formal.size() == inputs_.size(),
                   where_ << ": the subgraph takes " << inputs_.size() << " inputs, got " << formal.size());
  std::map<std::string, Value> scope = outer;
  for (const auto& [name, value] : constants_) scope[name] = value;
  for (size_t i = 0; i < formal.size(); ++i) scope[inputs_[i]] = formal[i];
  Values in;
  for (const Step& step : steps_) {
    // The graph's own Dropout nodes draw from streams of their own; one in a subgraph has none, and
    // skipping it while training would silently change the model.
    LOCKSTEP_REQUIRE_KIND(ErrorKind::kUnavailable, !(step.dropout && context.training),
                          step.where << ": unsupported: Dropout inside a subgraph while the module trains");
    in.clear();
    for (const std::string& name : step.inputs) {
      if (name.empty()) {
        in.push_back(Value());
        continue;
      }
      auto it = scope.find(name);
      LOCKSTEP_REQUIRE_FORMAT(it != scope.end(), step.where << " reads '" << name << "', which nothing defines");
      in.push_back(it->second);
    }
    Values out;
    try {
      out = step.kernel(in, context);
    } catch (const Error& e) {
      throw Error(step.where + ": " + e.what(), e.kind());
    }
    for (size_t i = 0; i < step.outputs.size(); ++i) {
      if (step.outputs[i].empty()) continue;
      LOCKSTEP_REQUIRE(i < out.size(), step.where << ": output " << i << " is not produced");
      scope[step.outputs[i]] = std::move(out[i]);
    }
  }
  Values result;
  for (const std::string& name : outputs_) {
    auto it = scope.find(name);
    LOCKSTEP_REQUIRE_FORMAT(it != scope.end(), where_ << ": subgraph output '" << name << "' is never computed");
    result.push_back(it->second);
  }
  return result;
}

std::map<std::string, Value> OuterValues(const std::vector<std::string>& names, const Values& in) {
  std::map<std::string, Value> outer;
  const size_t first = in.size() - names.size();
  for (size_t i = 0; i < names.size(); ++i) outer[names[i]] = in[first + i];
  return outer;
}

}  // namespace onnx
}  // namespace lockstep
