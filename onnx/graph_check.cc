#include "onnx/graph_check.h"

#include <map>
#include <set>
#include <string>

#include "core/error.h"

namespace lockstep {
namespace onnx {

namespace {

[[noreturn]] void Unsupported(const std::string& message) { throw Error(message, ErrorKind::kUnavailable); }

std::string NodeName(const NodeProto& node, size_t index) {
  return "node " + std::to_string(index) + " ('" + node.name + "', " + node.op_type + ")";
}

}  // namespace

GraphPlan CheckGraph(const ModelProto& model) {
  LOCKSTEP_REQUIRE_FORMAT(model.has_graph, "onnx: the file holds no graph (is it an ONNX model?)");
  if (model.ir_version < 3) {
    Unsupported("onnx: IR version " + std::to_string(model.ir_version) + "; lockstep reads IR version 3 and later");
  }
  GraphPlan plan;
  bool found = false;
  for (const OperatorSetId& id : model.opset_import) {
    if (id.domain.empty() || id.domain == "ai.onnx") {
      LOCKSTEP_REQUIRE_FORMAT(!found, "onnx: the default domain is imported twice");
      plan.opset = id.version;
      found = true;
    }
  }
  if (!found) {
    std::string domains;
    for (const OperatorSetId& id : model.opset_import) domains += (domains.empty() ? "'" : ", '") + id.domain + "'";
    Unsupported("onnx: the model imports no opset of the default domain, only " +
                (domains.empty() ? std::string("nothing") : domains) + "; lockstep implements the default domain");
  }
  if (plan.opset < kMinOpset || plan.opset > kMaxOpset) {
    Unsupported("onnx: opset " + std::to_string(plan.opset) + "; lockstep reads opsets " + std::to_string(kMinOpset) +
                " to " + std::to_string(kMaxOpset));
  }
  const GraphProto& g = model.graph;
  // Names defined before any node runs: initializers and graph inputs.
  std::set<std::string> defined;
  for (const TensorProto& t : g.initializer) {
    LOCKSTEP_REQUIRE_FORMAT(!t.name.empty(), "onnx: an initializer has no name");
    LOCKSTEP_REQUIRE_FORMAT(defined.insert(t.name).second, "onnx: two initializers are named '" << t.name << "'");
  }
  std::set<std::string> inputs;
  for (const ValueInfoProto& v : g.input) {
    LOCKSTEP_REQUIRE_FORMAT(!v.name.empty(), "onnx: a graph input has no name");
    LOCKSTEP_REQUIRE_FORMAT(inputs.insert(v.name).second, "onnx: two graph inputs are named '" << v.name << "'");
    defined.insert(v.name);
  }
  // Each value is produced once (single assignment).
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < g.node.size(); ++i) {
    for (const std::string& out : g.node[i].output) {
      if (out.empty()) continue;
      LOCKSTEP_REQUIRE_FORMAT(!defined.count(out), "onnx: " << NodeName(g.node[i], i) << " overwrites '" << out
                                                            << "', an input or initializer");
      LOCKSTEP_REQUIRE_FORMAT(producer.emplace(out, i).second,
                              "onnx: '" << out << "' is produced by " << NodeName(g.node[producer[out]], producer[out])
                                        << " and again by " << NodeName(g.node[i], i));
    }
  }
  // A node reads its inputs and, through its subgraphs, its implicit inputs.
  const auto reads = [&](size_t i) {
    std::vector<std::string> names = g.node[i].input;
    names.insert(names.end(), g.node[i].implicit_input.begin(), g.node[i].implicit_input.end());
    return names;
  };
  for (size_t i = 0; i < g.node.size(); ++i) {
    for (const std::string& in : reads(i)) {
      LOCKSTEP_REQUIRE_FORMAT(in.empty() || defined.count(in) || producer.count(in),
                              "onnx: " << NodeName(g.node[i], i) << " reads '" << in
                                       << "', which no input, initializer or node defines");
    }
  }
  for (const ValueInfoProto& v : g.output) {
    LOCKSTEP_REQUIRE_FORMAT(defined.count(v.name) || producer.count(v.name),
                            "onnx: graph output '" << v.name << "' is never computed");
  }
  // Kahn's algorithm, always taking the earliest ready node: the file's order when it is already
  // topological (as ONNX requires), and a cycle leaves nodes that never become ready.
  std::vector<size_t> waiting(g.node.size(), 0);
  std::map<std::string, std::vector<size_t>> readers;
  for (size_t i = 0; i < g.node.size(); ++i) {
    std::set<std::string> seen;
    for (const std::string& in : reads(i)) {
      if (in.empty() || defined.count(in) || !seen.insert(in).second) continue;
      ++waiting[i];
      readers[in].push_back(i);
    }
  }
  std::set<size_t> ready;
  for (size_t i = 0; i < g.node.size(); ++i) {
    if (waiting[i] == 0) ready.insert(i);
  }
  while (!ready.empty()) {
    const size_t i = *ready.begin();
    ready.erase(ready.begin());
    plan.order.push_back(i);
    for (const std::string& out : g.node[i].output) {
      auto it = readers.find(out);
      if (out.empty() || it == readers.end()) continue;
      for (size_t r : it->second) {
        if (--waiting[r] == 0) ready.insert(r);
      }
    }
  }
  if (plan.order.size() != g.node.size()) {
    for (size_t i = 0; i < g.node.size(); ++i) {
      LOCKSTEP_REQUIRE_FORMAT(waiting[i] == 0, "onnx: the graph has a cycle through " << NodeName(g.node[i], i));
    }
  }
  return plan;
}

}  // namespace onnx
}  // namespace lockstep
