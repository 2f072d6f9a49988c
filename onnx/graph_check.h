// Structural checks of a decoded model that need no tensors (so the fuzz target runs them too):
// an IR version and default-domain opset lockstep reads, unique names, every node input defined,
// no value produced twice, and an execution order (the file's, or a topological sort of it) with
// cycles refused.
#ifndef LOCKSTEP_ONNX_GRAPH_CHECK_H_
#define LOCKSTEP_ONNX_GRAPH_CHECK_H_

#include <stddef.h>
#include <stdint.h>

#include <vector>

#include "onnx/proto.h"

namespace lockstep {
namespace onnx {

// The opsets of the default domain the importer reads.
constexpr int64_t kMinOpset = 1;
constexpr int64_t kMaxOpset = 18;

struct GraphPlan {
  int64_t opset = 0;          // of the default domain
  std::vector<size_t> order;  // node indices in an order where inputs come first
};

// Throws lockstep::Error: kFormat for a malformed graph, kUnavailable for what lockstep does not
// read (an IR version before 3, an opset outside kMinOpset..kMaxOpset, model-local functions).
GraphPlan CheckGraph(const ModelProto& model);

}  // namespace onnx
}  // namespace lockstep

#endif  // LOCKSTEP_ONNX_GRAPH_CHECK_H_
