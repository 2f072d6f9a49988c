// Convolution lowered to the GEMM (im2col): for layers whose output planes are small (ResNet's
// last stages: 4x4 and 2x2 at 64x64 inputs), where the direct kernels' vectors of output
// positions are mostly empty lanes. The batch's positions become the GEMM's rows, so the whole
// batch fills the register tiles. Every sum is the one simd/conv.h defines, in the same order:
//  - forward: C[(n, p), co] = sum over taps k of cols[(n, p), k] * W[co, k], plus the bias;
//  - input gradient: dcols[(n, p), k] = sum over co of dY^T[(n, p), co] * W[co, k], then col2im
//    adds each input element's entries in increasing tap order from +0;
//  - weight gradient: the batch-grouped dY cols, K = (sample, position) in increasing order.
// The GEMM's own contract (simd/gemm.h) gives these orders; only where the data lives changes.
#ifndef LOCKSTEP_SIMD_CONV_GEMM_H_
#define LOCKSTEP_SIMD_CONV_GEMM_H_

#include <stddef.h>

#include "simd/conv.h"

namespace lockstep {
namespace simd {

// Whether s goes through the GEMM: one group, output planes where most of the direct kernels'
// lanes would be empty, columns of a bounded size. Depends on the shape only, never on the target
// or the thread count (and either path gives the same bits).
bool ConvThroughGemm(const ConvShape& s);

// Which path ConvForward, ConvInputGrad and ConvWeightGrad take: by shape (the default), or one of
// them wherever it applies (the GEMM's: one group; kDirect also takes a depthwise layer's
// gradients group by group: simd/conv_depthwise.h), so that tests hold them to the same bits.
enum class ConvPath { kByShape, kDirect, kGemm };
void SetConvPath(ConvPath path);
ConvPath CurrentConvPath();

// Applies e (null: nothing) to one sample's output, channels [0, channels) of `positions` floats
// each, in place, canonical (simd/conv.cc, per target).
void ApplyConvEpilogue(const ConvEpilogue* e, size_t channels, size_t positions, float* y);

void ConvForwardGemm(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
                     ThreadPool* pool);
void ConvInputGradGemm(const ConvShape& s, const float* dy, const float* w, float* dx, ThreadPool* pool);
void ConvWeightGradGemm(const ConvShape& s, const float* dy, const float* x, size_t samples_per_group, float* dw,
                        ThreadPool* pool);

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_CONV_GEMM_H_
