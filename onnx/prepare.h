// Preparing one node: its operator's table entry (default domain, a supported opset), its
// attributes against the entry's list, the entry's Prepare with the inputs' constant values, and the
// element-type rules around the kernel. Shared by the top-level graph (load.cc) and subgraphs.
#ifndef LOCKSTEP_ONNX_PREPARE_H_
#define LOCKSTEP_ONNX_PREPARE_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "onnx/op_registry.h"

namespace lockstep {
namespace onnx {

// "node 'conv1' (Conv, opset 13)"
std::string NodeWhere(const NodeProto& node, int64_t opset);

struct PreparedNode {
  const OpSpec* spec = nullptr;
  Kernel kernel;
};

// Throws kUnavailable (naming the node) for what lockstep does not compute. `constants`: the
// explicit inputs' values where known at load, else nullptr.
PreparedNode PrepareNode(const NodeProto& node, int64_t opset, const std::vector<const Value*>& constants);

}  // namespace onnx
}  // namespace lockstep

#endif  // LOCKSTEP_ONNX_PREPARE_H_
