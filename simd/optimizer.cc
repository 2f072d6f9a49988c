// The updates a vector of elements at a time, each step the one rounded operation optimizer.h
// lists (multiply, then add: never fused; sqrt and division are IEEE's, correctly rounded on every
// target), so the bits are those of the element-by-element definition. A tail shorter than a
// vector runs through the same code on copies padded to a vector.
#include "simd/optimizer.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/optimizer.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "simd/contract-inl.h"

#include <string.h>

#include "simd/thread_pool.h"

namespace lockstep {
namespace simd {
#ifndef LOCKSTEP_SIMD_OPTIMIZER_ARGS_
#define LOCKSTEP_SIMD_OPTIMIZER_ARGS_
struct SgdArgs {
  float lr, momentum, keep, weight_decay;  // keep = 1 - dampening
  bool nesterov, first_step;
};
struct AdamArgs {
  float beta1, beta2, one_minus_beta1, one_minus_beta2, eps, weight_decay, decay_factor, step_size,
      sqrt_bias_correction2;
  bool decoupled;
};
#endif
}  // namespace simd
}  // namespace lockstep

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace {

// One vector of elements at p, g, buf (any of them may be a padded copy).
template <class D>
HWY_INLINE void SgdVector(D d, const SgdArgs& a, float* param, const float* grad, float* buf) {
  const auto p = hn::LoadU(d, param);
  auto g = hn::LoadU(d, grad);
  if (a.weight_decay != 0.0f) g = hn::Add(g, hn::Mul(hn::Set(d, a.weight_decay), p));
  if (a.momentum != 0.0f) {
    const auto b = a.first_step ? Canonicalize(d, g)
                                : Canonicalize(d, hn::Add(hn::Mul(hn::Set(d, a.momentum), hn::LoadU(d, buf)),
                                                          hn::Mul(hn::Set(d, a.keep), g)));
    hn::StoreU(b, d, buf);
    g = a.nesterov ? hn::Add(g, hn::Mul(hn::Set(d, a.momentum), b)) : b;
  }
  hn::StoreU(Canonicalize(d, hn::Sub(p, hn::Mul(hn::Set(d, a.lr), g))), d, param);
}

template <class D>
HWY_INLINE void AdamVector(D d, const AdamArgs& a, float* param, const float* grad, float* m, float* v) {
  auto p = hn::LoadU(d, param);
  auto g = hn::LoadU(d, grad);
  if (a.weight_decay != 0.0f) {
    if (a.decoupled) {
      p = hn::Mul(p, hn::Set(d, a.decay_factor));
    } else {
      g = hn::Add(g, hn::Mul(hn::Set(d, a.weight_decay), p));
    }
  }
  const auto m_new = Canonicalize(
      d, hn::Add(hn::Mul(hn::Set(d, a.beta1), hn::LoadU(d, m)), hn::Mul(hn::Set(d, a.one_minus_beta1), g)));
  const auto v_new = Canonicalize(
      d, hn::Add(hn::Mul(hn::Set(d, a.beta2), hn::LoadU(d, v)), hn::Mul(hn::Mul(hn::Set(d, a.one_minus_beta2), g), g)));
  hn::StoreU(m_new, d, m);
  hn::StoreU(v_new, d, v);
  const auto denom = hn::Add(hn::Div(hn::Sqrt(v_new), hn::Set(d, a.sqrt_bias_correction2)), hn::Set(d, a.eps));
  const auto delta = hn::Mul(hn::Set(d, a.step_size), hn::Div(m_new, denom));
  hn::StoreU(Canonicalize(d, hn::Sub(p, delta)), d, param);
}

// f(d, offsets) over whole vectors, then the tail on copies of `arrays` arrays padded to a vector
// (the first kWritten of them copied back).
template <size_t kWritten, size_t kArrays, class F>
HWY_INLINE void ForVectors(float* const (&arrays)[kArrays], size_t n, const F& f) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    float* at[kArrays];
    for (size_t a = 0; a < kArrays; ++a) at[a] = arrays[a] + i;
    f(d, at);
  }
  if (i == n) return;
  HWY_ALIGN float tail[kArrays][hn::MaxLanes(d)] = {};
  float* at[kArrays];
  for (size_t a = 0; a < kArrays; ++a) {
    memcpy(tail[a], arrays[a] + i, (n - i) * sizeof(float));
    at[a] = tail[a];
  }
  f(d, at);
  for (size_t a = 0; a < kWritten; ++a) memcpy(arrays[a] + i, tail[a], (n - i) * sizeof(float));
}

}  // namespace

// The written arrays first; grad, only read, last. Without momentum there is no buffer.
void SgdUpdateTarget(const SgdArgs& a, float* param, const float* grad, float* buf, size_t n) {
  float* const g = const_cast<float*>(grad);
  if (a.momentum == 0.0f) {
    float* const arrays[2] = {param, g};
    return ForVectors<1>(arrays, n, [&](auto d, float* const* at) { SgdVector(d, a, at[0], at[1], nullptr); });
  }
  float* const arrays[3] = {param, buf, g};
  ForVectors<2>(arrays, n, [&](auto d, float* const* at) { SgdVector(d, a, at[0], at[2], at[1]); });
}

void AdamUpdateTarget(const AdamArgs& a, float* param, const float* grad, float* m, float* v, size_t n) {
  float* const arrays[4] = {param, m, v, const_cast<float*>(grad)};
  ForVectors<3>(arrays, n, [&](auto d, float* const* at) { AdamVector(d, a, at[0], at[3], at[1], at[2]); });
}

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lockstep {
namespace simd {

HWY_EXPORT(SgdUpdateTarget);
HWY_EXPORT(AdamUpdateTarget);

namespace {
// Elements per task when a large parameter's update runs on the thread pool (each element is
// independent; a multiple of every vector length). An update is a dozen operations per element,
// so it pays from smaller arrays than an addition does.
constexpr size_t kUpdateChunk = size_t{1} << 13;
}  // namespace

void SgdUpdate(float* param, const float* grad, float* buf, size_t n, float lr, float momentum, float dampening,
               float weight_decay, bool nesterov, bool first_step) {
  const SgdArgs a{lr, momentum, 1.0f - dampening, weight_decay, nesterov, first_step};
  ForEachChunk(n, kUpdateChunk, [&](size_t first, size_t count) {
    HWY_DYNAMIC_DISPATCH(SgdUpdateTarget)(a, param + first, grad + first, buf == nullptr ? nullptr : buf + first,
                                          count);
  });
}

void AdamUpdate(float* param, const float* grad, float* m, float* v, size_t n, float lr, float beta1, float beta2,
                float eps, float weight_decay, bool decoupled, float step_size, float sqrt_bias_correction2) {
  const AdamArgs a{beta1,  beta2,        1.0f - beta1, 1.0f - beta2,          eps,
                   weight_decay, 1.0f - lr * weight_decay, step_size, sqrt_bias_correction2, decoupled};
  ForEachChunk(n, kUpdateChunk, [&](size_t first, size_t count) {
    HWY_DYNAMIC_DISPATCH(AdamUpdateTarget)(a, param + first, grad + first, m + first, v + first, count);
  });
}

}  // namespace simd
}  // namespace lockstep
#endif  // HWY_ONCE
