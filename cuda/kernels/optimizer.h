// Optimizer update bodies (simd/optimizer.h): each line one rounded float32 operation, in order.
#ifndef LOCKSTEP_CUDA_KERNELS_OPTIMIZER_H_
#define LOCKSTEP_CUDA_KERNELS_OPTIMIZER_H_

#include "core/backend/kernel_table.h"
#include "cuda/kernels/portable.h"

namespace lockstep {
namespace cuda {

struct AdamBody {
  backend::AdamCall a;
  float one_minus_beta1, one_minus_beta2, decay_factor;  // computed once on the host
  LS_HD void operator()(size_t i) const {
    float p = a.param[i];
    float g = a.grad[i];
    if (a.weight_decay != 0.0f) {
      if (a.decoupled) {
        p = p * decay_factor;
      } else {
        const float decay = a.weight_decay * p;
        g = g + decay;
      }
    }
    const float m_keep = a.beta1 * a.exp_avg[i], m_add = one_minus_beta1 * g;
    a.exp_avg[i] = Canonical(m_keep + m_add);
    const float v_keep = a.beta2 * a.exp_avg_sq[i], v_scaled = one_minus_beta2 * g;
    const float v_add = v_scaled * g;
    a.exp_avg_sq[i] = Canonical(v_keep + v_add);
    const float root = SqrtF(a.exp_avg_sq[i]);
    const float scaled_root = root / a.sqrt_bias_correction2;
    const float denom = scaled_root + a.eps;
    const float ratio = a.exp_avg[i] / denom;
    const float delta = a.step_size * ratio;
    a.param[i] = Canonical(p - delta);
  }
};

struct SgdBody {
  backend::SgdCall s;
  float keep;  // 1 - dampening, computed once on the host
  LS_HD void operator()(size_t i) const {
    float g = s.grad[i];
    if (s.weight_decay != 0.0f) {
      const float decay = s.weight_decay * s.param[i];
      g = g + decay;
    }
    if (s.momentum != 0.0f) {
      if (s.first_step) {
        s.momentum_buffer[i] = Canonical(g);
      } else {
        const float old = s.momentum * s.momentum_buffer[i];
        const float add = keep * g;
        s.momentum_buffer[i] = Canonical(old + add);
      }
      if (s.nesterov) {
        const float look = s.momentum * s.momentum_buffer[i];
        g = g + look;
      } else {
        g = s.momentum_buffer[i];
      }
    }
    const float delta = s.lr * g;
    s.param[i] = Canonical(s.param[i] - delta);
  }
};

}  // namespace cuda
}  // namespace lockstep

#endif  // LOCKSTEP_CUDA_KERNELS_OPTIMIZER_H_
