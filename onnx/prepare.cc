#include "onnx/prepare.h"

#include <algorithm>
#include <sstream>

#include "core/error.h"
#include "onnx/float64.h"
#include "onnx/narrow_floats.h"
#include "onnx/sequences.h"

namespace lockstep {
namespace onnx {

namespace {

[[noreturn]] void Unsupported(const std::string& message) { throw Error(message, ErrorKind::kUnavailable); }

}  // namespace

std::string NodeWhere(const NodeProto& node, int64_t opset) {
  std::ostringstream where;
  where << "node '" << (node.name.empty() ? (node.output.empty() ? "?" : node.output[0]) : node.name) << "' ("
        << node.op_type << ", opset " << opset << ")";
  return where.str();
}

PreparedNode PrepareNode(const NodeProto& node, int64_t opset, const std::vector<const Value*>& constants) {
  const std::string where = NodeWhere(node, opset);
  if (!node.domain.empty() && node.domain != "ai.onnx") {
    Unsupported(where + ": unsupported: operators of domain '" + node.domain +
                "'; lockstep implements the default ONNX domain: " + SupportedOperatorList());
  }
  const OpSpec* spec = FindOperator(node.op_type);
  if (spec == nullptr) {
    Unsupported(where + ": unsupported operator " + node.op_type + "; lockstep implements: " + SupportedOperatorList());
  }
  if (opset < spec->since) {
    std::ostringstream s;
    s << where << ": unsupported: " << node.op_type << " before opset " << spec->since << " (this model imports opset "
      << opset << ")";
    Unsupported(s.str());
  }
  // An attribute the entry does not read would be ignored: refused instead.
  for (const AttributeProto& a : node.attribute) {
    if (std::find(spec->attributes.begin(), spec->attributes.end(), a.name) != spec->attributes.end()) continue;
    std::string read;
    for (const std::string& r : spec->attributes) read += (read.empty() ? "" : ", ") + r;
    Unsupported(where + ": unsupported: attribute '" + a.name + "', which lockstep does not read for " + node.op_type +
                " (it reads " + (read.empty() ? std::string("none") : read) + ")");
  }
  const NodeView view(node, opset, constants, spec->attributes);
  PreparedNode prepared;
  prepared.spec = spec;
  prepared.kernel = RefusingNonTensors(
      node.op_type, HandlingFloat64(node.op_type, ComputingNarrowFloatsInFloat32(node.op_type, spec->prepare(view))));
  return prepared;
}

}  // namespace onnx
}  // namespace lockstep
