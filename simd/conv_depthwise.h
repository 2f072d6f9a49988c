// Depthwise convolutions (every group one input and one output channel: MobileNet's and
// EfficientNet's 3x3 and 5x5 layers), every group in one call with the channels as a vector's
// lanes. Called one group at a time, a depthwise layer's weight gradient filled one lane of a
// vector (its one output channel) and each call was too small to split over threads; the forward
// pass vectorised over a plane's positions, which a 7x7 or 14x14 plane's rows leave mostly empty,
// and its epilogue ran scalar on rows narrower than a vector. Here the samples and positions are
// copied channels-last ([position][channel]), so one vector holds a channel-wide slice, and the
// work splits over channel vectors and rows.
//
// Every sum is the one simd/conv.h defines for a group, in the same order, so the bits equal those
// of the group-by-group kernels:
//  - weight gradient: dw[g, tap] sums x * dy over (sample, output row, output column) in
//    increasing order within groups of samples_per_group samples from -0.0, the group sums
//    combined by the pairwise tree over adjacent groups;
//  - input gradient: each input element of channel g starts at +0 and adds w[g, tap] * dy at the
//    output position each tap (increasing (kernel row, kernel column)) reaches, skipping taps that
//    reach none (the columns' -0.0 + w * dy is w * dy).
//  - forward: each output sums its taps in increasing (kernel row, kernel column) order from -0.0,
//    padding read as +0.0 (its products computed too), then adds the bias; then s.epilogue.
// Canonical NaN on store.
#ifndef LOCKSTEP_SIMD_CONV_DEPTHWISE_H_
#define LOCKSTEP_SIMD_CONV_DEPTHWISE_H_

#include <stddef.h>

#include "simd/conv.h"

namespace lockstep {
namespace simd {

// Whether s takes these kernels: several groups, each of one input and one output channel (and
// the path chosen by shape: simd/conv_gemm.h SetConvPath).
bool ConvDepthwise(const ConvShape& s);
// Whether s's forward pass takes DepthwiseForward: a depthwise layer on a plane small enough that
// the channels-last copies pay.
bool ConvDepthwiseForward(const ConvShape& s);

// s.groups groups; x, y, dy and dx by s's sample strides, group g's plane at g h w (input) and
// g h_out w_out (output); w and dw [groups, kh kw], bias [groups] or null.
void DepthwiseForward(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
                      ThreadPool* pool);
void DepthwiseWeightGrad(const ConvShape& s, const float* dy, const float* x, size_t samples_per_group, float* dw,
                         ThreadPool* pool);
void DepthwiseInputGrad(const ConvShape& s, const float* dy, const float* w, float* dx, ThreadPool* pool);

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_CONV_DEPTHWISE_H_
