// The gradient of SiLU, y = x * sigmoid(x), in one pass over x, s = sigmoid(x) and g instead of
// seven passes over whole tensors: the same operations on the same values, so the same bits as the
// gradients of Mul(x, s) and Sigmoid(x) and their sum,
//   out = g * s + ((g * x) * (-s + 1)) * s
// with every operation rounded to float32 (core/backward_rules.cc: the rules of kMul, kSigmoid
// and the accumulation of the two gradients of x).
#ifndef LOCKSTEP_SIMD_SILU_BACKWARD_H_
#define LOCKSTEP_SIMD_SILU_BACKWARD_H_

#include <stddef.h>

namespace lockstep {
namespace simd {

// out may alias x, s or g exactly.
void SiluBackward(const float* x, const float* s, const float* g, float* out, size_t n);

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_SILU_BACKWARD_H_
