// libFuzzer target for the ONNX reader: the protobuf wire decoder (models, and sequence and optional
// values), the graph's structural checks
// (names, order, cycles) and every tensor's size checks. Any input either decodes or throws
// lockstep::Error; a crash, a sanitizer report, another exception or a huge allocation is a
// finding. A graph that passes the checks must list each node exactly once in its order.
#include <stddef.h>
#include <stdint.h>

#include <vector>

#include "core/error.h"
#include "onnx/graph_check.h"
#include "onnx/proto.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lockstep::onnx;
  // The same bytes as a SequenceProto and an OptionalProto (the test data's other value files).
  try {
    for (const TensorProto& t : DecodeSequence(data, size, "sequence").tensors) CheckedElementCount(t, "sequence");
  } catch (const lockstep::Error&) {
  }
  try {
    DecodeOptional(data, size, "optional");
  } catch (const lockstep::Error&) {
  }
  ModelProto model;
  try {
    model = DecodeModel(data, size);
  } catch (const lockstep::Error&) {
    return 0;
  }
  try {
    const GraphPlan plan = CheckGraph(model);
    std::vector<int> seen(model.graph.node.size(), 0);
    for (size_t i : plan.order) {
      if (i >= seen.size() || seen[i]++) __builtin_trap();
    }
    if (plan.order.size() != model.graph.node.size()) __builtin_trap();
  } catch (const lockstep::Error&) {
  }
  for (const TensorProto& t : model.graph.initializer) {
    try {
      const int64_t count = CheckedElementCount(t, "initializer");
      if (count < 0) __builtin_trap();
    } catch (const lockstep::Error&) {
    }
  }
  for (const NodeProto& node : model.graph.node) {
    for (const AttributeProto& a : node.attribute) {
      for (const TensorProto& t : a.t) {
        try {
          CheckedElementCount(t, "attribute");
        } catch (const lockstep::Error&) {
        }
      }
    }
  }
  return 0;
}
