// Per-target float64 building blocks of the elementary functions (math-inl.h): exp and log cores
// with exact argument reduction, piecewise polynomials, error-free transformations (no FMA:
// Veltkamp/Dekker products), and float64 -> float32 rounding that is identical on every target.
// Every operation is an IEEE basic operation, integer/bit operation or table lookup, in a fixed
// order, so every target computes the same float64 bits. Constants: math_tables.h (generated).
#if defined(LOCKSTEP_SIMD_MATH_CORE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_MATH_CORE_INL_H_
#undef LOCKSTEP_SIMD_MATH_CORE_INL_H_
#else
#define LOCKSTEP_SIMD_MATH_CORE_INL_H_
#endif

#include <stdint.h>

#include "hwy/highway.h"
#include "simd/contract-inl.h"
#include "simd/math_tables.h"

#if HWY_HAVE_FLOAT64  // (targets without float64 lanes use EMU128's build of math.cc)
HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {
namespace mathcore {
namespace hn = hwy::HWY_NAMESPACE;
namespace mt = ::lockstep::simd::math_tables;

constexpr double kShifter = 0x1.8p52;  // adding it rounds |v| < 2^51 to an integer
constexpr int64_t kShifterBits = 0x4338000000000000LL;

// round(v) as double and as int64 (ties to even), for |v| < 2^51.
template <class D, class V = hn::Vec<D>, class DI = hn::RebindToSigned<D>>
HWY_INLINE V RoundToInt(D d, V v, hn::Vec<DI>& vi) {
  const DI di;
  const V t = hn::Add(v, hn::Set(d, kShifter));
  vi = hn::Sub(hn::BitCast(di, t), hn::Set(di, kShifterBits));
  return hn::Sub(t, hn::Set(d, kShifter));
}

// int64 (|i| < 2^51) -> double, exactly.
template <class D, class VI>
HWY_INLINE hn::Vec<D> IntToDouble(D d, VI vi) {
  const hn::RebindToSigned<D> di;
  const hn::Vec<D> t = hn::BitCast(d, hn::Add(vi, hn::Set(di, kShifterBits)));
  return hn::Sub(t, hn::Set(d, kShifter));
}

// exp(z + zlo) = s_hi + (s_lo + s_hi * p), |zlo| <= 2^-40 |z|, z clamped to [-200, 200].
// k = round(64 z / ln2); r = ((z - k L1) + zlo) - k L2 where k L1 is exact (|k| < 2^15, L1 has 38
// bits) and z - k L1 is exact (Sterbenz); p = exp(r) - 1 (degree 6, |r| < 0.0055);
// s = 2^(k/64) as a double-double from the table, scaled by 2^floor(k/64). Relative error of the
// assembled exp about 2^-52.
template <class D, class V = hn::Vec<D>>
HWY_INLINE void ExpCore(D d, V z, V zlo, V& s_hi, V& s_lo, V& p) {
  const hn::RebindToSigned<D> di;
  z = hn::Min(hn::Max(z, hn::Set(d, -200.0)), hn::Set(d, 200.0));
  hn::Vec<decltype(di)> ki;
  const V kd = RoundToInt(d, hn::Mul(z, hn::Set(d, mt::kExpInvL)), ki);
  const V r = hn::Sub(hn::Add(hn::Sub(z, hn::Mul(kd, hn::Set(d, mt::kExpL1))), zlo),
                      hn::Mul(kd, hn::Set(d, mt::kExpL2)));
  V q = hn::Set(d, mt::kExpPoly[4]);
  q = hn::Add(hn::Mul(q, r), hn::Set(d, mt::kExpPoly[3]));
  q = hn::Add(hn::Mul(q, r), hn::Set(d, mt::kExpPoly[2]));
  q = hn::Add(hn::Mul(q, r), hn::Set(d, mt::kExpPoly[1]));
  q = hn::Add(hn::Mul(q, r), hn::Set(d, mt::kExpPoly[0]));
  p = hn::Add(r, hn::Mul(hn::Mul(r, r), q));
  const auto j = hn::And(ki, hn::Set(di, 63));
  const auto m = hn::ShiftRight<6>(ki);
  const V scale = hn::BitCast(d, hn::ShiftLeft<52>(hn::Add(m, hn::Set(di, 1023))));
  s_hi = hn::Mul(hn::GatherIndex(d, mt::kExpTHi, j), scale);
  s_lo = hn::Mul(hn::GatherIndex(d, mt::kExpTLo, j), scale);
}

// exp(z + zlo) as one double.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V Exp(D d, V z, V zlo) {
  V s_hi, s_lo, p;
  ExpCore(d, z, zlo, s_hi, s_lo, p);
  return hn::Add(s_hi, hn::Add(s_lo, hn::Mul(s_hi, p)));
}

// log(a) (+ b/a if kWithB, the first-order term of log(a + b) for |b| <= 2^-52 a), for positive
// normal finite a. a = 2^e m, m in [sqrt(1/2), sqrt 2), j from the top 8 bits of the offset
// mantissa; r = (m_hi c - 1) + m_lo c with m_hi = m with its low 21 bits cleared: m_hi c and
// m_hi c - 1 and m_lo c are exact (c has at most 21 bits), so r has one rounding (none for the
// 24-bit m of a float). log = (e ln2_hi + T_hi) + ((e ln2_lo + T_lo) + log1p(r)), T = -log c.
template <bool kWithB, class D, class V = hn::Vec<D>>
HWY_INLINE V LogCore(D d, V a, V b) {
  const hn::RebindToSigned<D> di;
  const auto bits = hn::BitCast(di, a);
  const auto tmp = hn::Sub(bits, hn::Set(di, static_cast<int64_t>(mt::kLogOffset)));
  const auto e = hn::ShiftRight<52>(tmp);
  const auto j = hn::And(hn::ShiftRight<44>(tmp), hn::Set(di, 255));
  const auto mbits = hn::Sub(bits, hn::ShiftLeft<52>(e));
  const V m = hn::BitCast(d, mbits);
  const V mhi = hn::BitCast(d, hn::And(mbits, hn::Set(di, ~int64_t{0x1FFFFF})));
  const V mlo = hn::Sub(m, mhi);
  const V c = hn::GatherIndex(d, mt::kLogC, j);
  const V r = hn::Add(hn::Sub(hn::Mul(mhi, c), hn::Set(d, 1.0)), hn::Mul(mlo, c));
  V q = hn::Set(d, mt::kLogPoly[5]);
  q = hn::Add(hn::Mul(q, r), hn::Set(d, mt::kLogPoly[4]));
  q = hn::Add(hn::Mul(q, r), hn::Set(d, mt::kLogPoly[3]));
  q = hn::Add(hn::Mul(q, r), hn::Set(d, mt::kLogPoly[2]));
  q = hn::Add(hn::Mul(q, r), hn::Set(d, mt::kLogPoly[1]));
  q = hn::Add(hn::Mul(q, r), hn::Set(d, mt::kLogPoly[0]));
  V p = hn::Add(r, hn::Mul(hn::Mul(r, r), q));
  if (kWithB) p = hn::Add(p, hn::Div(b, a));
  const V ed = IntToDouble(d, e);
  const V hi = hn::Add(hn::Mul(ed, hn::Set(d, mt::kLn2Hi)), hn::GatherIndex(d, mt::kLogTHi, j));
  const V lo = hn::Add(hn::Mul(ed, hn::Set(d, mt::kLn2Lo)), hn::GatherIndex(d, mt::kLogTLo, j));
  return hn::Add(hi, hn::Add(lo, p));
}

// Piecewise polynomial: piece i = round(x / step) (x >= 0, within the table), h = x - i*step
// (exact), value = sum_k coef[i*(deg+1) + k] h^k by Horner.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V PiecewisePoly(D d, V x, double inv_step, double step, const double* coef, int deg) {
  const hn::RebindToSigned<D> di;
  hn::Vec<decltype(di)> ki;
  const V kd = RoundToInt(d, hn::Mul(x, hn::Set(d, inv_step)), ki);
  const V h = hn::Sub(x, hn::Mul(kd, hn::Set(d, step)));
  hn::Vec<decltype(di)> base;
  RoundToInt(d, hn::Mul(kd, hn::Set(d, static_cast<double>(deg + 1))), base);
  V acc = hn::GatherIndex(d, coef, hn::Add(base, hn::Set(di, deg)));
  for (int k = deg - 1; k >= 0; --k) {
    acc = hn::Add(hn::Mul(acc, h), hn::GatherIndex(d, coef, hn::Add(base, hn::Set(di, k))));
  }
  return acc;
}

// Veltkamp split: a = hi + lo, hi with 26 significant bits (|a| < 2^995).
template <class D, class V = hn::Vec<D>>
HWY_INLINE void Split(D d, V a, V& hi, V& lo) {
  const V t = hn::Mul(a, hn::Set(d, 134217729.0));  // 2^27 + 1
  hi = hn::Sub(t, hn::Sub(t, a));
  lo = hn::Sub(a, hi);
}

// Dekker's product without FMA: a * b = p + e exactly.
template <class D, class V = hn::Vec<D>>
HWY_INLINE void TwoProd(D d, V a, V b, V& p, V& e) {
  p = hn::Mul(a, b);
  V ah, al, bh, bl;
  Split(d, a, ah, al);
  Split(d, b, bh, bl);
  e = hn::Add(hn::Add(hn::Add(hn::Sub(hn::Mul(ah, bh), p), hn::Mul(ah, bl)), hn::Mul(al, bh)),
              hn::Mul(al, bl));
}

// Knuth's sum: a + b = s + e exactly.
template <class V>
HWY_INLINE void TwoSum(V a, V b, V& s, V& e) {
  s = hn::Add(a, b);
  const V bb = hn::Sub(s, a);
  e = hn::Add(hn::Sub(a, hn::Sub(s, bb)), hn::Sub(b, bb));
}

// float64 -> float32, round to nearest even, with overflow to +-inf on every target (Highway's
// EMU128/SCALAR DemoteTo saturate to +-FLT_MAX instead). 0x1.ffffffp127 is the midpoint between
// FLT_MAX and 2^128; it and everything above round to infinity.
template <class D, class DF, class V = hn::Vec<D>>
HWY_INLINE hn::Vec<DF> DemoteSat(D d, DF df, V y) {
  const hn::RebindToUnsigned<DF> du;
  // The overflow mask crosses from float64 to float32 lanes as a demoted 1.0 / 0.0 (Highway 1.0.3's
  // RebindMask needs equal lane sizes).
  const auto big_d = hn::Ge(hn::Abs(y), hn::Set(d, 0x1.ffffffp127));
  const auto big = hn::Ne(hn::DemoteTo(df, hn::IfThenElseZero(big_d, hn::Set(d, 1.0))), hn::Zero(df));
  const hn::Vec<DF> r = hn::DemoteTo(df, y);
  const hn::Vec<DF> inf = hn::BitCast(df, hn::Set(du, 0x7F800000u));
  return hn::IfThenElse(big, hn::CopySignToAbs(inf, r), r);
}

// (IsNaNMask, not Ne(x, x): Highway's Ne is an ordered compare on AVX2/AVX-512, false for NaN.)
template <class D, class V = hn::Vec<D>>
HWY_INLINE V ZeroIfNaN(D d, V x) {
  return hn::IfThenZeroElse(IsNaNMask(d, x), x);
}
// The rounded result with every lane whose input is NaN (the evaluation saw 0 there) and every NaN
// result made 0x7FC00000.
template <class DF, class VF>
HWY_INLINE VF NaNFix(DF df, VF xf, VF r) {
  return hn::IfThenElse(hn::Or(IsNaNMask(df, xf), IsNaNMask(df, r)), CanonicalNaN(df), r);
}

template <class DF>
HWY_INLINE hn::Vec<DF> FInf(DF df) {
  const hn::RebindToUnsigned<DF> du;
  return hn::BitCast(df, hn::Set(du, 0x7F800000u));
}

}  // namespace mathcore
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();
#endif  // HWY_HAVE_FLOAT64

#endif  // toggle guard
