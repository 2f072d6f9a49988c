// Plain loops: each element is independent, so a compiler that vectorises them (without
// reassociating; -ffp-contract=off forbids fusing) computes the same bits.
#include "simd/optimizer.h"

#include "simd/thread_pool.h"

namespace lockstep {
namespace simd {

namespace {
inline float SqrtF32(float x) { return __builtin_sqrtf(x); }  // the IEEE instruction
inline float Canonical(float x) { return x != x ? __builtin_nanf("") : x; }

// Elements per task when a large parameter's update runs on the thread pool (each element is
// independent; a multiple of every vector length). An update is a dozen operations per element,
// so it pays from smaller arrays than an addition does.
constexpr size_t kUpdateChunk = size_t{1} << 13;
}  // namespace

void SgdUpdate(float* param, const float* grad, float* buf, size_t n, float lr, float momentum,
               float dampening, float weight_decay, bool nesterov, bool first_step) {
  const float keep = 1.0f - dampening;
  ForEachChunk(n, kUpdateChunk, [&](size_t first, size_t count) {
    for (size_t i = first; i < first + count; ++i) {
      float g = grad[i];
      if (weight_decay != 0.0f) {
        const float decay = weight_decay * param[i];
        g = g + decay;
      }
      if (momentum != 0.0f) {
        if (first_step) {
          buf[i] = Canonical(g);  // any NaN stored is the contract's (g may be a raw NaN payload)
        } else {
          const float old = momentum * buf[i];
          const float add = keep * g;
          buf[i] = Canonical(old + add);
        }
        if (nesterov) {
          const float look = momentum * buf[i];
          g = g + look;
        } else {
          g = buf[i];
        }
      }
      const float delta = lr * g;
      param[i] = Canonical(param[i] - delta);
    }
  });
}

void AdamUpdate(float* param, const float* grad, float* m, float* v, size_t n, float lr,
                float beta1, float beta2, float eps, float weight_decay, bool decoupled,
                float step_size, float sqrt_bias_correction2) {
  const float one_minus_beta1 = 1.0f - beta1, one_minus_beta2 = 1.0f - beta2;
  const float decay_factor = 1.0f - lr * weight_decay;
  ForEachChunk(n, kUpdateChunk, [&](size_t first, size_t count) {
    for (size_t i = first; i < first + count; ++i) {
      float p = param[i];
      float g = grad[i];
      if (weight_decay != 0.0f) {
        if (decoupled) {
          p = p * decay_factor;
        } else {
          const float decay = weight_decay * p;
          g = g + decay;
        }
      }
      const float m_keep = beta1 * m[i], m_add = one_minus_beta1 * g;
      m[i] = Canonical(m_keep + m_add);
      const float v_keep = beta2 * v[i], v_scaled = one_minus_beta2 * g, v_add = v_scaled * g;
      v[i] = Canonical(v_keep + v_add);
      const float root = SqrtF32(v[i]);
      const float scaled_root = root / sqrt_bias_correction2;
      const float denom = scaled_root + eps;
      const float ratio = m[i] / denom;
      const float delta = step_size * ratio;
      param[i] = Canonical(p - delta);
    }
  });
}

}  // namespace simd
}  // namespace lockstep
