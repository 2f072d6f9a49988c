// SiLU over a run of stored values, in place, on the calling thread: s = sigmoid(v), the
// contract's correctly rounded sigmoid (simd/math.h), then v = v * s rounded, canonical: the bits of
// core's Silu (Math's kSigmoid, then Binary's kMul). For the kernels that apply SiLU as their
// output leaves them: the convolution's epilogue and batch normalisation's forward pass.
#ifndef LOCKSTEP_SIMD_SILU_FORWARD_H_
#define LOCKSTEP_SIMD_SILU_FORWARD_H_

#include <stddef.h>

namespace lockstep {
namespace simd {

// sigmoid_out (null: not kept) receives s; it may not overlap v.
void SiluInPlace(float* v, float* sigmoid_out, size_t n);

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_SILU_FORWARD_H_
