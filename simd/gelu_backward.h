// The gradient of GELU (erf form) in two passes over chunks that stay in L1 (around the erf and exp
// calls), instead of eleven passes over whole tensors: the same operations on the same values, so
// the same bits as
//   cdf = (erf(x * 0.70710678f) + 1) * 0.5;  pdf = exp((x * x) * -0.5f) * 0.39894228f;
//   out = g * (cdf + x * pdf)
// with every operation rounded to float32 and erf and exp correctly rounded (simd/math.h).
#ifndef LOCKSTEP_SIMD_GELU_BACKWARD_H_
#define LOCKSTEP_SIMD_GELU_BACKWARD_H_

#include <stddef.h>

namespace lockstep {
namespace simd {

// The constants of the definition above (float32).
constexpr float kGeluInvSqrt2 = 0.70710678118654752f;
constexpr float kGeluInvSqrt2Pi = 0.39894228040143268f;

// out may alias x or g exactly.
void GeluErfBackward(const float* x, const float* g, float* out, size_t n);

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_GELU_BACKWARD_H_
