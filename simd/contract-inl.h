// Per-target helpers for the numerical contract's special-value rules (docs/numerics.md, rule 6):
// canonical NaN, and max/min defined by compare-and-select so every target agrees.
// Included from -inl.h files inside HWY_NAMESPACE; the guard toggles once per target.
#if defined(LOCKSTEP_SIMD_CONTRACT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_CONTRACT_INL_H_
#undef LOCKSTEP_SIMD_CONTRACT_INL_H_
#else
#define LOCKSTEP_SIMD_CONTRACT_INL_H_
#endif

#include <stdint.h>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The only NaN a lockstep tensor ever holds.
constexpr uint32_t kCanonicalNaNBits = 0x7FC00000u;

template <class D>
HWY_INLINE hn::Vec<D> CanonicalNaN(D d) {
  const hn::RebindToUnsigned<D> du;
  return hn::BitCast(d, hn::Set(du, kCanonicalNaNBits));
}

// Not Ne(v, v): Highway 1.0.3's Ne is an ordered compare on AVX2/AVX-512 (false for NaN) but an
// unordered one on SSE4, so it differs by target. Eq is ordered everywhere.
template <class D, class V>
HWY_INLINE hn::Mask<D> IsNaNMask(D /*d*/, V v) {
  return hn::Not(hn::Eq(v, v));
}

// Replaces every NaN lane (any payload, any sign) by 0x7FC00000. Keeps the lanes equal to
// themselves rather than replacing the others: the same lanes, without a mask negation on the
// dependency chain of every arithmetic step (AVX-512: a knot per step, where the steps stalled).
template <class D, class V>
HWY_INLINE V Canonicalize(D d, V v) {
  return hn::IfThenElse(hn::Eq(v, v), v, CanonicalNaN(d));
}
// The same for one float (a vector loop's tail).
HWY_INLINE float CanonicalScalar(float v) { return v != v ? __builtin_nanf("") : v; }

// max with NaN propagation and -0 < +0. Equal lanes are bitwise equal unless they are the two
// zeros; AND of the two then yields +0 (sign bits 0 & 1), the larger.
template <class D, class V>
HWY_INLINE V MaxByContract(D d, V a, V b) {
  const V larger = hn::IfThenElse(hn::Gt(b, a), b, a);
  const V when_equal = hn::And(a, b);
  const V r = hn::IfThenElse(hn::Eq(a, b), when_equal, larger);
  return hn::IfThenElse(hn::Or(IsNaNMask(d, a), IsNaNMask(d, b)), CanonicalNaN(d), r);
}

// min with NaN propagation and -0 < +0: OR of the two zeros yields -0, the smaller.
template <class D, class V>
HWY_INLINE V MinByContract(D d, V a, V b) {
  const V smaller = hn::IfThenElse(hn::Lt(b, a), b, a);
  const V when_equal = hn::Or(a, b);
  const V r = hn::IfThenElse(hn::Eq(a, b), when_equal, smaller);
  return hn::IfThenElse(hn::Or(IsNaNMask(d, a), IsNaNMask(d, b)), CanonicalNaN(d), r);
}

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#endif  // toggle guard
