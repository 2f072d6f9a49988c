// Optimizer update kernels with a written operation order (each line is one rounded float32
// operation, in this order, for every element). Scalars computed once per step (learning rate,
// bias corrections) are passed in as float32.
#ifndef LOCKSTEP_SIMD_OPTIMIZER_H_
#define LOCKSTEP_SIMD_OPTIMIZER_H_

#include <stddef.h>

namespace lockstep {
namespace simd {

// SGD (PyTorch's):
//   g = grad + weight_decay * p                    (when weight_decay != 0)
//   buf = g (first step) | momentum * buf + (1 - dampening) * g   (when momentum != 0)
//   g = g + momentum * buf (nesterov) | buf
//   p = p - lr * g
void SgdUpdate(float* param, const float* grad, float* momentum_buffer, size_t n, float lr,
               float momentum, float dampening, float weight_decay, bool nesterov, bool first_step);

// Adam / AdamW (PyTorch 1.13's single-tensor form):
//   p = p * (1 - lr * weight_decay)                (AdamW, decoupled)
//   g = grad + weight_decay * p                    (Adam, when weight_decay != 0)
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g * g            ((1 - beta2) * g, then * g)
//   denom = sqrt(v) / sqrt_bias_correction2 + eps
//   p = p - step_size * (m / denom)                step_size = lr / bias_correction1
void AdamUpdate(float* param, const float* grad, float* exp_avg, float* exp_avg_sq, size_t n,
                float lr, float beta1, float beta2, float eps, float weight_decay, bool decoupled,
                float step_size, float sqrt_bias_correction2);

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_OPTIMIZER_H_
