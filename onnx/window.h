// The spatial window of ONNX's convolution and pooling nodes (kernel, strides, dilations, pads,
// auto_pad, ceil_mode), and the layer arithmetic that works on any number of spatial axes by
// strided slices: pooling (max or average) and 3-D convolution as a sum of 2-D ones.
#ifndef LOCKSTEP_ONNX_WINDOW_H_
#define LOCKSTEP_ONNX_WINDOW_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "core/tensor.h"
#include "onnx/op_registry.h"

namespace lockstep {
namespace onnx {

// Spatial geometry of a convolution or pooling node: kernel, strides, dilations and the padding
// on each side, resolved from pads or auto_pad for a given input.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begins then ends
  std::string auto_pad;
  bool ceil_mode = false;

  // Begin and end padding of spatial axis i for an input extent n.
  void Padding(size_t i, int64_t n, int64_t* begin, int64_t* end) const {
    const size_t k = kernel.size();
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t out = (n + strides[i] - 1) / strides[i];
      const int64_t span = (kernel[i] - 1) * dilations[i] + 1;
      int64_t total = (out - 1) * strides[i] + span - n;
      if (total < 0) total = 0;
      const int64_t small = total / 2;
      *begin = auto_pad == "SAME_UPPER" ? small : total - small;
      *end = total - *begin;
    } else if (auto_pad == "VALID") {
      *begin = *end = 0;
    } else {
      *begin = pads.empty() ? 0 : pads[i];
      *end = pads.empty() ? 0 : pads[i + k];
    }
    if (ceil_mode) {  // ONNX: out = ceil((n + pads - span) / stride) + 1: pad the end so floor gives it
      const int64_t span = (kernel[i] - 1) * dilations[i] + 1;
      const int64_t room = n + *begin + *end - span;
      if (room >= 0 && room % strides[i] != 0) *end += strides[i] - room % strides[i];
    }
  }
};

// The window a node's attributes give (spatial_hint: the number of spatial axes when
// kernel_shape is absent); refuses more than 3 spatial axes at load.
Window ReadWindow(const NodeView& node, size_t spatial_hint, bool pooling);

// Pads dimension d of x with `before` and `after` copies of value (data movement, differentiable).
Tensor PadWith(const Tensor& x, int64_t d, int64_t before, int64_t after, float value);

// A 1-D input [N, C, L] viewed as [N, C, 1, L] (and its window as 1 x k).
Tensor As2d(const Tensor& x);

[[noreturn]] void RunUnsupported(const std::string& message);

// Pooling over x [N, C, spatial...] by one strided slice per window offset (row-major offset order):
// the maximum (padding -inf; no gradient, like lockstep's other maxima of ONNX), or the average:
// the slices added in offset order, divided by the window's count (its input positions, or with
// count_include_pad also its padding, never ceil_mode's extension past the end).
Tensor PoolBySlices(const Tensor& x, const Window& w, bool max, bool count_include_pad);

// ONNX MaxPool's Indices output: for each window the flat index into x (row-major, or with
// column_major the last two spatial axes swapped, as storage_order 1) of its first maximum by the
// contract's order (NaN above every number, +0 above -0); padding never wins.
Value MaxPoolIndices(const Tensor& x, const Window& w, bool column_major);

// 3-D convolution of x [N, C, D, H, W] by weight [Co, C / groups, KD, KH, KW]: for each kernel
// depth kd the 2-D convolutions of the depth slices it meets (lockstep's Conv2d, batched over
// samples and output depths), added in increasing kd, then the bias.
Tensor Conv3dBySlices(const Tensor& x, const Tensor& weight, const Tensor& bias, const Window& w, int64_t groups);

}  // namespace onnx
}  // namespace lockstep

#endif  // LOCKSTEP_ONNX_WINDOW_H_
