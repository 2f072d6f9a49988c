// Per-target float32 first steps of the correctly rounded elementary functions (Ziv's strategy; see
// docs/numerics-math.md, "The float32 first step").
//
// A first step evaluates f(x) in float32 lanes as an unevaluated sum s + l of two floats (error-free
// transformations where the leading terms need them, plain float32 for the small ones) together
// with a bound B >= |f(x) - (s + l)| from the error analysis of this exact operation sequence
// (tools/gen-math-tables/gen_math_fast_tables.cc). If RN(s + (l - B)) and RN(s + (l + B)) are the
// same float, every real within B of s + l, f(x) included, rounds to it: that float is the correctly
// rounded result. Lanes where they differ, or whose input lies outside the step's domain, are
// reported undecided, and the driver (math.cc) gives them to the float64 evaluation (math-inl.h),
// which is what the functions computed before the first step existed. Both are correctly rounded,
// so the bits do not depend on which one answered, and the exhaustive proof (tools/prove-math)
// checks the combination on every float32 input.
//
// The operation sequence is the same on every target: table lookups return table entries exactly,
// whether by permutes (AVX-512) or by gathers, and every other operation is an IEEE basic operation
// or a bit operation. No FMA (contract rule 3).
#if defined(LOCKSTEP_SIMD_MATH_FAST_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_MATH_FAST_INL_H_
#undef LOCKSTEP_SIMD_MATH_FAST_INL_H_
#else
#define LOCKSTEP_SIMD_MATH_FAST_INL_H_
#endif

#include <stdint.h>

#include "hwy/highway.h"
#include "simd/contract-inl.h"
#include "simd/math_fast_tables.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {
namespace mathfast {
namespace hn = hwy::HWY_NAMESPACE;
namespace ft = ::lockstep::simd::math_fast_tables;

// ---- building blocks ----

// v with its significand cut to the top kBits bits (sign and exponent kept): v = hi + (v - hi)
// exactly, and hi times a float of at most 24 - kBits significant bits is exact.
template <int kBits, class DF, class V = hn::Vec<DF>>
HWY_INLINE V HighBits(DF df, V v) {
  const hn::RebindToUnsigned<DF> du;
  constexpr uint32_t kMask = ~((uint32_t{1} << (24 - kBits)) - 1u);
  return hn::BitCast(df, hn::And(hn::BitCast(du, v), hn::Set(du, kMask)));
}

// Fast2Sum (Dekker): a + b = s + e exactly when a = 0 or |a| >= |b|.
template <class V>
HWY_INLINE void FastTwoSum(V a, V b, V& s, V& e) {
  s = hn::Add(a, b);
  e = hn::Sub(b, hn::Sub(s, a));
}

// round(v) as a float and as an int32 (ties to even), for |v| < 2^22.
template <class DF, class V = hn::Vec<DF>, class VI = hn::Vec<hn::RebindToSigned<DF>>>
HWY_INLINE V RoundToInt(DF df, V v, VI& vi) {
  const hn::RebindToSigned<DF> di;
  const V shifter = hn::Set(df, 0x1.8p23f);
  const V t = hn::Add(v, shifter);
  vi = hn::Sub(hn::BitCast(di, t), hn::BitCast(di, shifter));
  return hn::Sub(t, shifter);
}

// table[idx] for a 64-entry table (64-byte aligned), idx in [0, 63].
template <class DF, class VI>
HWY_INLINE hn::Vec<DF> Lookup64(DF df, const float* HWY_RESTRICT table, VI idx) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if constexpr (hn::MaxLanes(DF()) == 16) {
    // Two two-register permutes (32 entries each) and a blend on bit 5: a few cycles, where a
    // 16-lane gather costs about twenty.
    const __m512i i = idx.raw;
    const __m512 lo = _mm512_permutex2var_ps(_mm512_load_ps(table), i, _mm512_load_ps(table + 16));
    const __m512 hi = _mm512_permutex2var_ps(_mm512_load_ps(table + 32), i, _mm512_load_ps(table + 48));
    const __mmask16 upper = _mm512_test_epi32_mask(i, _mm512_set1_epi32(32));
    return hn::Vec<DF>{_mm512_mask_blend_ps(upper, lo, hi)};
  }
#endif
  return hn::GatherIndex(df, table, idx);
}

// table[idx] for a 32-entry table (64-byte aligned), idx in [0, 31]: one two-register permute on
// AVX-512.
template <class DF, class VI>
HWY_INLINE hn::Vec<DF> Lookup32(DF df, const float* HWY_RESTRICT table, VI idx) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if constexpr (hn::MaxLanes(DF()) == 16) {
    return hn::Vec<DF>{_mm512_permutex2var_ps(_mm512_load_ps(table), idx.raw, _mm512_load_ps(table + 16))};
  }
#endif
  return hn::GatherIndex(df, table, idx);
}

// table[idx] for a 128-entry table (64-byte aligned), idx in [0, 127].
template <class DF, class VI>
HWY_INLINE hn::Vec<DF> Lookup128(DF df, const float* HWY_RESTRICT table, VI idx) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if constexpr (hn::MaxLanes(DF()) == 16) {  // both halves by permutes (bits 0-5), a blend on bit 6
    const hn::RebindToSigned<DF> di;
    const auto upper = hn::RebindMask(df, hn::TestBit(hn::BitCast(di, idx), hn::Set(di, 64)));
    return hn::IfThenElse(upper, Lookup64(df, table + 64, idx), Lookup64(df, table, idx));
  }
#endif
  return hn::GatherIndex(df, table, idx);
}

// Ziv's test: s + l approximates y with |y - (s + l)| <= bound. Returns RN(s + (l - bound)) and
// sets `undecided` where RN(s + (l + bound)) differs from it. Rounding is monotonic, so where the
// two agree every real in [s + l - bound, s + l + bound] rounds to the same float. (bound carries
// the analysis's safety factor, so RN(l -+ bound) still reaches past l -+ |error|.)
template <class DF, class V = hn::Vec<DF>>
HWY_INLINE V Decide(DF df, V s, V l, V bound, hn::Mask<DF>& undecided) {
  const hn::RebindToUnsigned<DF> du;
  const V lo = hn::Add(s, hn::Sub(l, bound));
  const V hi = hn::Add(s, hn::Add(l, bound));
  undecided = hn::RebindMask(df, hn::Ne(hn::BitCast(du, lo), hn::BitCast(du, hi)));
  return lo;
}

template <class DF>
HWY_INLINE hn::Vec<DF> FloatFromBits(DF df, uint32_t bits) {
  const hn::RebindToUnsigned<DF> du;
  return hn::BitCast(df, hn::Set(du, bits));
}

// ---- the first steps: Eval(df, x, undecided) returns the result lanes; lanes marked undecided
// are computed again by the float64 evaluation. Lanes outside a step's domain are evaluated on a
// harmless stand-in value and then overwritten. ----

// exp(x) = 2^m 2^(j/64) e^r, k = 64 m + j = round(64 x / ln2), r = x - k ln2/64 (exact reduction:
// t2 below is exact, r = t2 - k L3 kept as rh + rl). With T = THi + TLo (THi of 16 bits) and r8
// (rh cut to 8 bits), A = THi r8 is exact and
//   T e^r = THi + A + [THi (rh - r8) + THi (rl + P) + TLo (1 + rh + P)],  P = e^r - 1 - r,
// where the bracket is below 2^-13 and carries float32 roundings only (kExpBound). The test runs
// on the unscaled result in [1, 2.02); scaling by 2^m is exact for -86 <= x <= 88.5 (m >= -125,
// result normal). Outside: +inf from 89 (and for +inf), +0 up to -104 (and for -inf), NaN for NaN;
// the narrow bands between go to float64.
struct ExpFast {
  template <class DF, class V = hn::Vec<DF>>
  HWY_INLINE V Eval(DF df, V x, hn::Mask<DF>& undecided) const {
    const hn::RebindToSigned<DF> di;
    const auto in_domain = hn::And(hn::Ge(x, hn::Set(df, -86.0f)), hn::Le(x, hn::Set(df, 88.5f)));
    const V xs = hn::IfThenElseZero(in_domain, x);
    hn::Vec<decltype(di)> k;
    const V kf = RoundToInt(df, hn::Mul(xs, hn::Set(df, ft::kExpInvL)), k);
    const V t1 = hn::Sub(xs, hn::Mul(kf, hn::Set(df, ft::kExpL1)));
    const V t2 = hn::Sub(t1, hn::Mul(kf, hn::Set(df, ft::kExpL2)));
    V rh, rl;
    FastTwoSum(t2, hn::Neg(hn::Mul(kf, hn::Set(df, ft::kExpL3))), rh, rl);
    const V c = hn::Add(hn::Set(df, 0.5f),
                        hn::Mul(rh, hn::Add(hn::Set(df, ft::kExpC3), hn::Mul(rh, hn::Set(df, ft::kExpC4)))));
    const V p = hn::Mul(hn::Mul(rh, rh), c);
    const V r8 = HighBits<8>(df, rh);
    const auto j = hn::And(k, hn::Set(di, 63));
    const V thi = Lookup64(df, ft::kExpTHi, j);
    const V tlo = Lookup64(df, ft::kExpTLo, j);
    V s, e;
    FastTwoSum(thi, hn::Mul(thi, r8), s, e);
    const V sum = hn::Add(hn::Mul(thi, hn::Add(rl, p)), hn::Add(tlo, hn::Mul(tlo, hn::Add(rh, p))));
    const V l = hn::Add(e, hn::Add(hn::Mul(thi, hn::Sub(rh, r8)), sum));
    hn::Mask<DF> undecided_test;
    V r = Decide(df, s, l, hn::Set(df, ft::kExpBound), undecided_test);
    const auto m = hn::ShiftRight<6>(k);  // floor(k / 64)
    r = hn::Mul(r, hn::BitCast(df, hn::ShiftLeft<23>(hn::Add(m, hn::Set(di, 127)))));
    const auto nan = IsNaNMask(df, x);
    const auto big = hn::Ge(x, hn::Set(df, 89.0f));
    const auto tiny = hn::Le(x, hn::Set(df, -104.0f));
    const V special = hn::IfThenElse(nan, CanonicalNaN(df),
                                     hn::IfThenElseZero(big, FloatFromBits(df, 0x7F800000u)));
    const auto decided_outside = hn::Or(hn::Or(big, tiny), nan);
    undecided = hn::Or(hn::And(in_domain, undecided_test), hn::Not(hn::Or(in_domain, decided_outside)));
    return hn::IfThenElse(in_domain, r, special);
  }
};

// A piece's s + l (the tables of gen_math_fast_tables' FitPiece): f = P0 + P1 h + h^2 Q(h) around
// the piece's centre, rows P0Hi, P0Lo, P1Hi (12 bits), P1Lo, P2 .. P(kDegree) of `coef`, read by
// `lookup` at the piece's index. With hh = h cut to 12 bits, A = P1Hi hh is exact, and
//   s + e = P0Hi + A (Fast2Sum; P0Hi = 0 on an odd piece 0 makes it exact too),
//   l = e + ((P1Hi (h - hh) + P1Lo h) + P0Lo) + h^2 Q.
template <int kDegree, class DF, class Lookup, class V = hn::Vec<DF>>
HWY_INLINE void PieceSum(DF df, const Lookup& lookup, V h, V& s, V& l) {
  static_assert(kDegree >= 3, "Q has at least two coefficients");
  const V hh = HighBits<12>(df, h);
  V q = lookup(2 + kDegree);
  for (int k = kDegree - 1; k >= 2; --k) q = hn::Add(lookup(2 + k), hn::Mul(h, q));
  q = hn::Mul(hn::Mul(h, h), q);
  const V p0h = lookup(0), p1h = lookup(2);
  V e;
  FastTwoSum(p0h, hn::Mul(p1h, hh), s, e);
  const V a2 = hn::Add(hn::Mul(p1h, hn::Sub(h, hh)), hn::Mul(lookup(3), h));
  l = hn::Add(hn::Add(e, hn::Add(a2, lookup(1))), q);
}

// erf(x) for 2^-100 <= |x| < 3.9375: piece i = round(16 |x|), h = |x| - i/16 (exact, |h| <= 1/32),
// erf|x| = E0 + E1 h + h^2 Q(h) with E0 = E0Hi + E0Lo, E1 = E1Hi (12 bits) + E1Lo. With hh = h cut
// to 12 bits, A = E1Hi hh is exact, and
//   s + e = E0Hi + A (Fast2Sum; E0Hi = 0 on piece 0 makes it exact too),
//   l = e + ((E1Hi (h - hh) + E1Lo h) + E0Lo) + h^2 Q,
// the bound being |s| times the piece's relative bound. Outside: +-1 from 3.9375 (erf rounds to 1
// there), +-0 for +-0, NaN for NaN; 0 < |x| < 2^-100 goes to float64.
struct ErfFast {
  template <class DF, class V = hn::Vec<DF>>
  HWY_INLINE V Eval(DF df, V x, hn::Mask<DF>& undecided) const {
    const hn::RebindToSigned<DF> di;
    const V ax = hn::Abs(x);
    const auto in_domain = hn::And(hn::Ge(ax, hn::Set(df, 0x1p-100f)), hn::Lt(ax, hn::Set(df, 3.9375f)));
    const V a = hn::IfThenElse(in_domain, ax, hn::Set(df, 1.0f));
    hn::Vec<decltype(di)> i;
    const V kf = RoundToInt(df, hn::Mul(a, hn::Set(df, 16.0f)), i);
    const V h = hn::Sub(a, hn::Mul(kf, hn::Set(df, 0.0625f)));
    const float(*coef)[ft::kErfPieces] = ft::kErfCoef;
    V s, l;
    PieceSum<6>(df, [&](int row) HWY_ATTR { return Lookup64(df, coef[row], i); }, h, s, l);
    hn::Mask<DF> undecided_test;
    const V bound = hn::Mul(s, Lookup64(df, coef[9], i));
    const V r = hn::CopySignToAbs(Decide(df, s, l, bound, undecided_test), x);
    const auto one = hn::Ge(ax, hn::Set(df, 3.9375f));
    const V special = hn::IfThenElse(IsNaNMask(df, x), CanonicalNaN(df),
                                     hn::IfThenElse(one, hn::CopySignToAbs(hn::Set(df, 1.0f), x), x));
    const auto zero_or_special = hn::Or(hn::Or(one, IsNaNMask(df, x)), hn::Eq(x, hn::Zero(df)));
    undecided = hn::Or(hn::And(in_domain, undecided_test), hn::Not(hn::Or(in_domain, zero_or_special)));
    return hn::IfThenElse(in_domain, r, special);
  }
};

// gelu(x) = x Phi(x) for -4.03125 <= x < 3.96875 (|x| >= 2^-60): Phi in 128 pieces i = round(16 x),
// h = x - i/16 (exact, |h| <= 1/32), Phi = P0 + P1 h + h^2 Q(h) evaluated as s + l like erf above
// (no cancellation for x < 0: Phi itself is tabulated, not 1 + erf). The product x (s + l) = S + L:
// x = xh + xl and s = sh + sl cut to 12 bits, so xh sh, xh sl, xl sh and xl sl are exact; S + E =
// xh sh + RN(xh sl + xl sh) (Fast2Sum) and L = E + (xl sl + x l). The bound is |S| times the
// piece's relative bound. Outside: x from 5.5 (x - x Phi(x) < ulp(x)/4 there, so the result is x;
// +inf included), +-0 for +-0, NaN for NaN; the rest (x < -4.03125, the band up to 5.5, tiny |x|)
// goes to float64.
struct GeluErfFast {
  template <class DF, class V = hn::Vec<DF>>
  HWY_INLINE V Eval(DF df, V x, hn::Mask<DF>& undecided) const {
    const hn::RebindToSigned<DF> di;
    const auto in_range = hn::And(hn::Ge(x, hn::Set(df, -4.03125f)), hn::Lt(x, hn::Set(df, 3.96875f)));
    const auto in_domain = hn::And(in_range, hn::Ge(hn::Abs(x), hn::Set(df, 0x1p-60f)));
    const V a = hn::IfThenElse(in_domain, x, hn::Set(df, 1.0f));
    hn::Vec<decltype(di)> i;
    const V kf = RoundToInt(df, hn::Mul(a, hn::Set(df, 16.0f)), i);
    const auto j = hn::Sub(i, hn::Set(di, ft::kGeluFirstPiece));
    const V h = hn::Sub(a, hn::Mul(kf, hn::Set(df, 0.0625f)));
    const float(*coef)[ft::kGeluPieces] = ft::kGeluCoef;
    V s, l;
    PieceSum<6>(df, [&](int row) HWY_ATTR { return Lookup128(df, coef[row], j); }, h, s, l);
    // x (s + l) = S + L.
    const V xh = HighBits<12>(df, a), xl = hn::Sub(a, xh);
    const V sh = HighBits<12>(df, s), sl = hn::Sub(s, sh);
    V big_s, big_e;
    FastTwoSum(hn::Mul(xh, sh), hn::Add(hn::Mul(xh, sl), hn::Mul(xl, sh)), big_s, big_e);
    const V big_l = hn::Add(big_e, hn::Add(hn::Mul(xl, sl), hn::Mul(a, l)));
    hn::Mask<DF> undecided_test;
    const V bound = hn::Mul(hn::Abs(big_s), Lookup128(df, coef[9], j));
    const V r = Decide(df, big_s, big_l, bound, undecided_test);
    const auto nan = IsNaNMask(df, x);
    const auto identity = hn::Or(hn::Ge(x, hn::Set(df, 5.5f)), hn::Eq(x, hn::Zero(df)));
    const V special = hn::IfThenElse(nan, CanonicalNaN(df), x);
    const auto decided_outside = hn::Or(identity, nan);
    undecided = hn::Or(hn::And(in_domain, undecided_test), hn::Not(hn::Or(in_domain, decided_outside)));
    return hn::IfThenElse(in_domain, r, special);
  }
};

// sigmoid(x) = 1 / (1 + e^-x) for |x| < kSigmoidReach (3.9375), from sigmoid(a), a = -|x|: 32
// pieces i = round(8 a), -31 <= i <= 0, h = a - i/8 (exact, |h| <= 1/16), s + l as for erf
// (PieceSum, degree 5), the bound B = |s| times the piece's relative bound. For x > 0,
// sigmoid(x) = 1 - sigmoid(a): T + E = 1 - s exactly (Fast2Sum, 1 >= s), L = RN(E - l), and the
// bound grows by |L| 2^-21 + 2^-100: L's rounding and Decide's of L -+ B each err by at most half an
// ulp of a value below |L| + B (l holds h^2 Q(h), so |L| reaches 2^-12.4, far above B), which the
// safety factor alone would have to absorb. Outside: NaN for NaN; the rest (both tails) goes to
// float64. (Tables over -4.0625 <= x < 3.9375 had 64 entries, two permutes and a blend a lookup.)
struct SigmoidFast {
  template <class DF, class V = hn::Vec<DF>>
  HWY_INLINE V Eval(DF df, V x, hn::Mask<DF>& undecided) const {
    const hn::RebindToSigned<DF> di;
    const auto in_domain = hn::Lt(hn::Abs(x), hn::Set(df, ft::kSigmoidReach));
    const V a = hn::IfThenElseZero(in_domain, hn::Neg(hn::Abs(x)));
    hn::Vec<decltype(di)> i;
    const V kf = RoundToInt(df, hn::Mul(a, hn::Set(df, ft::kSigmoidPerUnit)), i);
    const auto j = hn::Sub(i, hn::Set(di, ft::kSigmoidFirstPiece));
    const V h = hn::Sub(a, hn::Mul(kf, hn::Set(df, ft::kSigmoidWidth)));
    const float(*coef)[ft::kSigmoidPieces] = ft::kSigmoidCoef;
    V s, l;
    static_assert(ft::kSigmoidPieces == 32, "Lookup32 reads the tables");
    PieceSum<ft::kSigmoidDegree>(df, [&](int row) HWY_ATTR { return Lookup32(df, coef[row], j); }, h, s, l);
    const V bound = hn::Mul(s, Lookup32(df, coef[ft::kSigmoidRows - 1], j));
    V t, e;
    FastTwoSum(hn::Set(df, 1.0f), hn::Neg(s), t, e);
    const auto positive = hn::Gt(x, hn::Zero(df));
    const V top = hn::IfThenElse(positive, t, s);
    const V tail = hn::Sub(e, l);
    const V tail_rounding = hn::Add(hn::Mul(hn::Abs(tail), hn::Set(df, 0x1p-21f)), hn::Set(df, 0x1p-100f));
    const V low = hn::IfThenElse(positive, tail, l);
    const V b = hn::IfThenElse(positive, hn::Add(bound, tail_rounding), bound);
    hn::Mask<DF> undecided_test;
    const V r = Decide(df, top, low, b, undecided_test);
    const auto nan = IsNaNMask(df, x);
    undecided = hn::Or(hn::And(in_domain, undecided_test), hn::Not(hn::Or(in_domain, nan)));
    return hn::IfThenElse(in_domain, r, CanonicalNaN(df));
  }
};

}  // namespace mathfast
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#endif  // toggle guard
