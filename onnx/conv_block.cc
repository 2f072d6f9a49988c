// Inference's convolution block (onnx/conv_block.h).
#include "onnx/conv_block.h"

#include <string>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "onnx/op_helpers.h"

namespace lockstep {
namespace onnx {

namespace {

NodeView ViewOf(const NodeProto& node, int64_t opset) {
  const OpSpec* spec = FindOperator(node.op_type);
  LOCKSTEP_ASSERT(spec != nullptr);
  return NodeView(node, opset, {}, spec->attributes);
}

// Float32 tensors throughout: narrow floats are rounded between the nodes and float64 computed
// otherwise, so those run node by node.
bool AllFloat32(const Values& in) {
  for (const Value& v : in) {
    if (v.defined() && (!v.is_tensor() || v.elem != Elem::kFloat)) return false;
  }
  return true;
}

}  // namespace

bool BlockActivation(const NodeProto& node, int64_t opset, const std::vector<const Value*>& constants,
                     ConvNormActivation* after) {
  if (node.op_type == "Relu") {
    after->activation = ConvNormActivation::Activation::kRelu;
    return true;
  }
  if (node.op_type != "Clip") return false;
  const float inf = __builtin_inff();
  float bound[2] = {-inf, inf};
  if (opset < 11) {
    const NodeView view = ViewOf(node, opset);
    bound[0] = view.Float("min", -inf);
    bound[1] = view.Float("max", inf);
  } else {
    for (size_t i = 1; i < node.input.size() && i < 3; ++i) {
      if (node.input[i].empty()) continue;
      const Value* c = i < constants.size() ? constants[i] : nullptr;
      if (c == nullptr || !c->is_tensor() || c->elem != Elem::kFloat || c->tensor.numel() != 1) return false;
      bound[i - 1] = c->tensor.Reshape({}).item();
    }
  }
  after->activation = ConvNormActivation::Activation::kClamp;
  after->lo = bound[0];
  after->hi = bound[1];
  return true;
}

bool BlockNormalization(const NodeProto& node) {
  return node.op_type == "BatchNormalization" && node.input.size() == 5 && node.output.size() == 1;
}

Kernel SiluKernel(Kernel sigmoid, Kernel mul, bool v_first) {
  return [sigmoid, mul, v_first](const Values& in, RunContext& context) -> Values {
    const Value v = in.at(0);
    if (v.is_tensor() && v.elem == Elem::kFloat) return {FloatValue(Silu(v.tensor))};
    const Value s = sigmoid({v}, context).at(0);
    return mul(v_first ? Values{v, s} : Values{s, v}, context);
  };
}

Kernel ConvBlockKernel(const ConvBlockNodes& nodes, const ConvNormActivation& activation) {
  const NodeView conv = ViewOf(*nodes.conv, nodes.opset);
  const Window window = ReadWindow(conv, 0, false);
  const int64_t group = conv.Int("group", 1);
  ConvNormActivation after = activation;
  after.normalize = nodes.norm != nullptr;
  if (after.normalize) after.eps = ViewOf(*nodes.norm, nodes.opset).Float("epsilon", 1e-5f);
  const size_t norm_inputs = after.normalize ? 4 : 0;
  // The kernels, not the nodes: the model's proto is gone when this runs.
  const Kernel conv_kernel = nodes.conv_kernel;
  const Kernel norm_kernel = nodes.norm != nullptr ? nodes.norm_kernel : Kernel();
  const Kernel activation_kernel = nodes.activation != nullptr ? nodes.activation_kernel : Kernel();
  // Node by node, a Relu, Clip or SiLU after the normalisation runs inside its passes (float32
  // values).
  Kernel norm_activation_kernel;
  using Activation = ConvNormActivation::Activation;
  if (nodes.norm != nullptr && after.activation != Activation::kNone) {
    BatchNormActivation fused;
    fused.kind = after.activation == Activation::kRelu    ? BatchNormActivation::Kind::kRelu
                 : after.activation == Activation::kClamp ? BatchNormActivation::Kind::kClamp
                                                          : BatchNormActivation::Kind::kSilu;
    fused.lo = after.lo;
    fused.hi = after.hi;
    norm_activation_kernel = BatchNormActivationKernel(ViewOf(*nodes.norm, nodes.opset), fused);
  }
  const size_t inputs = 3 + norm_inputs + nodes.activation_inputs;
  return [conv_kernel, norm_kernel, activation_kernel, norm_activation_kernel, window, group, after, inputs](
             const Values& in, RunContext& context) -> Values {
    LOCKSTEP_ASSERT(in.size() == inputs);
    const Value& x = Input(in, 0, "Conv");
    const Value& weight = Input(in, 1, "Conv");
    const bool planar = x.is_tensor() && weight.is_tensor() && x.tensor.dim() == weight.tensor.dim() &&
                        (x.tensor.dim() == 3 || x.tensor.dim() == 4);
    if (!context.training && planar && AllFloat32(in)) {
      ConvNormActivation a = after;
      if (a.normalize) {
        a.weight = FloatInput(Input(in, 3, "BatchNormalization"), "BatchNormalization");
        a.bias = FloatInput(Input(in, 4, "BatchNormalization"), "BatchNormalization");
        a.running_mean = FloatInput(Input(in, 5, "BatchNormalization"), "BatchNormalization");
        a.running_var = FloatInput(Input(in, 6, "BatchNormalization"), "BatchNormalization");
      }
      const Tensor bias = in[2].defined() ? FloatInput(in[2], "Conv") : Tensor();
      return {FloatValue(ConvPlanar(window, group, x.tensor, weight.tensor, bias, &a))};
    }
    // Node by node, each kernel as it runs alone.
    Values y = conv_kernel(Values(in.begin(), in.begin() + 3), context);
    if (norm_activation_kernel && AllFloat32(in)) {
      Values norm_in{y.at(0)};
      norm_in.insert(norm_in.end(), in.begin() + 3, in.begin() + 7);
      return norm_activation_kernel(norm_in, context);
    }
    size_t next = 3;
    if (norm_kernel) {
      Values norm_in{y.at(0)};
      norm_in.insert(norm_in.end(), in.begin() + next, in.begin() + next + 4);
      next += 4;
      y = norm_kernel(norm_in, context);
    }
    if (activation_kernel) {
      Values activation_in{y.at(0)};
      activation_in.insert(activation_in.end(), in.begin() + next, in.end());
      y = activation_kernel(activation_in, context);
    }
    return y;
  };
}

}  // namespace onnx
}  // namespace lockstep
