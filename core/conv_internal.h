// Convolution geometry and the im2col / col2im data movement shared by Conv2d and its backward rule.
#ifndef LOCKSTEP_CORE_CONV_INTERNAL_H_
#define LOCKSTEP_CORE_CONV_INTERNAL_H_

#include <stdint.h>

#include "core/backend/kernel_table.h"
#include "core/ops.h"

namespace lockstep {

struct ConvGeometry {
  int64_t n, c_in, h, w, c_out, kh, kw, c_in_group, c_out_group, h_out, w_out, k, positions;
  Conv2dOptions o;
};

ConvGeometry MakeConvGeometry(const Shape& x, const Shape& w, const Conv2dOptions& o);
// The kernel-table view of a geometry for `samples` samples starting at one group's first input
// channel (x, dx), columns `ld` floats apart.
backend::ConvCall ConvCallOf(const ConvGeometry& g, int64_t samples, int64_t ld);
// The kernel-table view of the whole batch: `groups` consecutive groups from the pointers given
// (1: one group at a time, pointers offset per group).
backend::Conv2dCall Conv2dCallOf(const ConvGeometry& g, int64_t groups = 1);
// Conv2d's checks and forward pass with an epilogue (kernel_table.h, ConvEpilogue; its pointers
// on the current device), untraced; records the graph only for a zero epilogue.
Tensor Conv2dWith(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dOptions& o,
                  const backend::ConvEpilogue& epilogue);
// Copies [samples, channels, positions] between the GEMM's [channels, samples * positions] layout
// (width = samples * positions) and a tensor's [N, total_channels, positions] one (pointers at the
// first sample's first channel concerned); gemm_to_tensor says which way.
backend::StridedCopyCall GemmLayoutCopy(const float* from, float* to, int64_t samples, int64_t channels,
                                        int64_t positions, int64_t total_channels, bool gemm_to_tensor);

// The kernel-table view of a max pooling of input `in` [N, C, H, W] into [N, C, h_out, w_out].
backend::PoolCall MaxPoolCall(const Shape& in, int64_t h_out, int64_t w_out, const Pool2dOptions& o);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_CONV_INTERNAL_H_
