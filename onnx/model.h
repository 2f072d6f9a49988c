// An ONNX graph imported as a lockstep module. Initializers that carry data become parameters
// under their ONNX names (so a model exported from PyTorch keeps its state_dict names), running
// statistics become buffers, and Forward runs the nodes in order with lockstep's ops: autograd,
// checkpoints (core/checkpoint.h), hashing, devices and traces work on it as on any module.
//
//   auto model = onnx::LoadOnnxFile("lenet.onnx");
//   Tensor logits = (*model)(images);                 // one-input graphs
//   std::vector<onnx::Value> out = model->Run({...});  // any graph
#ifndef LOCKSTEP_ONNX_MODEL_H_
#define LOCKSTEP_ONNX_MODEL_H_

#include <stddef.h>
#include <stdint.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/nn/layers.h"
#include "core/nn/module.h"
#include "onnx/op_registry.h"
#include "onnx/value.h"

namespace lockstep {
namespace onnx {

struct LoadOptions {
  // Seeds the Philox streams of the graph's Dropout nodes (used only while the module trains).
  uint64_t seed = 0;
  // When every input's shape is fixed, run the graph once on zeros at load, so that shape
  // contradictions are reported then, naming the node, rather than at the first call.
  bool validate = true;
};

// A graph input or output as the file declares it.
struct IoInfo {
  std::string name;
  TypeKind kind = TypeKind::kTensor;  // a tensor, a sequence of tensors, or an optional of either
  Elem elem = Elem::kFloat;           // of the tensors
  bool has_shape = false;
  std::vector<int64_t> dims;             // -1 where the dimension is named (symbolic)
  std::vector<std::string> dim_params;   // the names
};

// "float" for a float tensor; "sequence of float", "optional float", "optional sequence of float".
std::string TypeName(const IoInfo& info);

class OnnxModel : public nn::Module {
 public:
  // Runs the graph: one value per input (in inputs() order), one per output (outputs() order).
  // Inputs are checked against the declared element types, ranks and fixed dimensions.
  std::vector<Value> Run(const std::vector<Value>& inputs);
  // A caller's tensor for input i, as a value of its declared element type (ValueForDeclared).
  Value InputValue(size_t i, const Tensor& t) const;
  // One-input graphs: the first output. int64/int32 tensors feed integer inputs (token ids).
  Tensor Forward(const Tensor& x) override;
  std::string Name() const override { return "OnnxModel"; }

  const std::vector<IoInfo>& inputs() const { return inputs_; }
  const std::vector<IoInfo>& outputs() const { return outputs_; }
  int64_t opset() const { return opset_; }
  const std::string& producer() const { return producer_; }
  // How many nodes of each operator the graph has, and how many were folded at load.
  const std::map<std::string, int64_t>& op_counts() const { return op_counts_; }
  int64_t folded_nodes() const { return folded_; }
  // How many Conv -> BatchNormalization -> Relu/Clip runs became one step (onnx/conv_block.h).
  int64_t fused_blocks() const { return fused_blocks_; }

 private:
  friend class GraphBuilder;
  friend std::shared_ptr<OnnxModel> LoadOnnx(const uint8_t* data, size_t size, const LoadOptions& options);
  struct Step {
    Kernel kernel;
    std::vector<int> inputs;   // slots; -1 for an omitted optional input
    std::vector<int> outputs;  // slots; -1 for an omitted output
    std::vector<int> release;  // slots whose last use this step is
    std::shared_ptr<nn::Dropout> dropout;
    std::string where;
  };
  std::vector<Value> Execute(const std::vector<Value>& inputs, bool check_declared);

  std::vector<IoInfo> inputs_, outputs_;
  std::vector<int> input_slots_, output_slots_;
  std::vector<std::pair<int, Value>> fixed_;  // constants, parameters and buffers by slot
  std::vector<Step> steps_;
  std::vector<std::pair<int, IoInfo>> declared_;  // value_info shapes checked by the load-time run
  size_t slot_count_ = 0;
  int64_t opset_ = 0;
  std::string producer_;
  std::map<std::string, int64_t> op_counts_;
  int64_t folded_ = 0;
  int64_t fused_blocks_ = 0;
  bool input_configures_ = false;  // a graph input is read as a shape, axes or another setting
  bool value_dependent_shapes_ = false;  // an operator's output shape depends on values
};

// Loads a model from the bytes of an .onnx file (or from a file). Everything is checked here:
// a malformed file is an Error of kind kFormat naming the field; an operator, attribute or type
// lockstep does not compute exactly is kind kUnavailable, naming the node, its operator and
// opset, and listing what is supported.
std::shared_ptr<OnnxModel> LoadOnnx(const uint8_t* data, size_t size, const LoadOptions& options = {});
std::shared_ptr<OnnxModel> LoadOnnxFile(const std::string& path, const LoadOptions& options = {});

// The largest .onnx file read: 2 GiB (protobuf's own limit), or what a 32-bit address space holds.
constexpr size_t kMaxOnnxBytes = size_t{1} << 31;

}  // namespace onnx
}  // namespace lockstep

#endif  // LOCKSTEP_ONNX_MODEL_H_
