// Per-target loop drivers shared by the elementwise families: whole vectors with unaligned
// loads, then the tail through a small stack buffer so no lane ever reads or writes past the end.
#if defined(LOCKSTEP_SIMD_LOOPS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_LOOPS_INL_H_
#undef LOCKSTEP_SIMD_LOOPS_INL_H_
#else
#define LOCKSTEP_SIMD_LOOPS_INL_H_
#endif

#include <stddef.h>
#include <string.h>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// out[i] = f(d, in[i]) for i < n.
template <class D, class Func>
HWY_INLINE void MapUnary(D d, const float* in, float* out, size_t n, const Func& f) {
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(f(d, hn::LoadU(d, in + i)), d, out + i);
  if (i == n) return;
  HWY_ALIGN float buf[hn::MaxLanes(D())] = {};
  memcpy(buf, in + i, (n - i) * sizeof(float));
  hn::Store(f(d, hn::Load(d, buf)), d, buf);
  memcpy(out + i, buf, (n - i) * sizeof(float));
}

// out[i] = f(d, a[i], b[i]) for i < n.
template <class D, class Func>
HWY_INLINE void MapBinary(D d, const float* a, const float* b, float* out, size_t n,
                          const Func& f) {
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    hn::StoreU(f(d, hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, out + i);
  }
  if (i == n) return;
  HWY_ALIGN float buf_a[hn::MaxLanes(D())] = {};
  HWY_ALIGN float buf_b[hn::MaxLanes(D())] = {};
  memcpy(buf_a, a + i, (n - i) * sizeof(float));
  memcpy(buf_b, b + i, (n - i) * sizeof(float));
  hn::Store(f(d, hn::Load(d, buf_a), hn::Load(d, buf_b)), d, buf_a);
  memcpy(out + i, buf_a, (n - i) * sizeof(float));
}

// out[i] = f(d, a[i], b[i], c[i]) for i < n.
template <class D, class Func>
HWY_INLINE void MapTernary(D d, const float* a, const float* b, const float* c, float* out,
                           size_t n, const Func& f) {
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    hn::StoreU(f(d, hn::LoadU(d, a + i), hn::LoadU(d, b + i), hn::LoadU(d, c + i)), d, out + i);
  }
  if (i == n) return;
  HWY_ALIGN float buf_a[hn::MaxLanes(D())] = {};
  HWY_ALIGN float buf_b[hn::MaxLanes(D())] = {};
  HWY_ALIGN float buf_c[hn::MaxLanes(D())] = {};
  memcpy(buf_a, a + i, (n - i) * sizeof(float));
  memcpy(buf_b, b + i, (n - i) * sizeof(float));
  memcpy(buf_c, c + i, (n - i) * sizeof(float));
  hn::Store(f(d, hn::Load(d, buf_a), hn::Load(d, buf_b), hn::Load(d, buf_c)), d, buf_a);
  memcpy(out + i, buf_a, (n - i) * sizeof(float));
}

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#endif  // toggle guard
