// Inference's convolution block as one step: a Conv, then the BatchNormalization that alone reads
// its output and/or a Relu, a Clip with constant bounds or a SiLU (Sigmoid and Mul) that alone
// reads the one before, run by
// core's Conv2dNormActivation (the other nodes' steps applied as each output leaves the
// convolution's registers). The same bits as the nodes one after another, which is what runs
// where the block cannot be fused: while the module trains, for narrow float or float64 values,
// 3-D convolutions, and (inside Conv2dNormActivation) where a gradient is needed; there, the
// activation runs inside the BatchNormalization's passes (BatchNormActivationKernel).
#ifndef LOCKSTEP_ONNX_CONV_BLOCK_H_
#define LOCKSTEP_ONNX_CONV_BLOCK_H_

#include <stdint.h>

#include <vector>

#include "core/ops.h"
#include "onnx/op_registry.h"
#include "onnx/window.h"

namespace lockstep {
namespace onnx {

// ONNX's Conv of x [N, C, L] or [N, C, H, W] as lockstep's Conv2d (the input padded where the
// padding is asymmetric), with `after` fused into its output pass when given (ops_network.cc).
Tensor ConvPlanar(const Window& w, int64_t group, Tensor x, Tensor weight, const Tensor& bias,
                  const ConvNormActivation* after);

// A block's nodes in graph order and their prepared kernels; norm and activation may be absent
// (null), not both.
struct ConvBlockNodes {
  const NodeProto* conv = nullptr;
  const NodeProto* norm = nullptr;
  const NodeProto* activation = nullptr;
  int64_t opset = 0;
  Kernel conv_kernel, norm_kernel, activation_kernel;
  size_t activation_inputs = 0;  // the activation's inputs after its X (Clip's bounds)
};

// BatchNormalization's kernel (ops_network.cc), with `after` applied by core's BatchNorm as the
// output is stored (the bits of the Relu, Clip or SiLU after it, and of its gradient): what a block
// runs while the module trains, its convolution's output read by the normalisation alone.
Kernel BatchNormActivationKernel(const NodeView& node, const BatchNormActivation& after);

// Whether `node` can close a block: a Relu, or a Clip (opset 11 or later) whose bounds are absent
// or constants (`constants`: the node's inputs' values known at load). Sets the activation of *after.
bool BlockActivation(const NodeProto& node, int64_t opset, const std::vector<const Value*>& constants,
                     ConvNormActivation* after);

// Whether `node` is a BatchNormalization in its inference form (one output): what fuses.
bool BlockNormalization(const NodeProto& node);

// SiLU's two nodes as one activation kernel (input: v): core's Silu for a float32 tensor (the
// values of the two nodes, and the gradient of both in one pass: v is read by these two nodes
// alone, so the sum of its two gradients is the one Silu's rule forms); otherwise Sigmoid, then Mul
// with v first when `v_first`, as the graph has it.
Kernel SiluKernel(Kernel sigmoid, Kernel mul, bool v_first);

// The block's kernel. Its inputs: the Conv's three (an absent bias undefined), then the
// BatchNormalization's four after its X (when present), then the activation's after its X.
// `after` carries the activation read by BlockActivation.
Kernel ConvBlockKernel(const ConvBlockNodes& nodes, const ConvNormActivation& after);

}  // namespace onnx
}  // namespace lockstep

#endif  // LOCKSTEP_ONNX_CONV_BLOCK_H_
