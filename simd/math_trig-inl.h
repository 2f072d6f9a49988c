// Per-target float64 evaluation of the trigonometric and hyperbolic functions and their inverses
// (sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh), in the form math-inl.h's
// driver runs: Value(d, x) is the float64 approximation (relative error below 2^-50, see
// docs/numerics-math.md), Fix(df, xf, r) patches the special lanes of the rounded result. Every
// table index is computed from sanitised lanes, so no input makes a gather leave its table.
#if defined(LOCKSTEP_SIMD_MATH_TRIG_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_MATH_TRIG_INL_H_
#undef LOCKSTEP_SIMD_MATH_TRIG_INL_H_
#else
#define LOCKSTEP_SIMD_MATH_TRIG_INL_H_
#endif

#include "hwy/highway.h"
#include "simd/math_core-inl.h"
#include "simd/math_tables.h"

#if HWY_HAVE_FLOAT64
HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {
namespace mathfn {
namespace hn = hwy::HWY_NAMESPACE;
namespace mt = ::lockstep::simd::math_tables;
using namespace ::lockstep::simd::HWY_NAMESPACE::mathcore;  // NOLINT

// x where it is finite, else 0 (the evaluation never sees NaN or infinity; Fix answers those lanes).
template <class D, class V>
HWY_INLINE V ZeroIfNotFinite(D d, V x) {
  return hn::IfThenElseZero(hn::Lt(hn::Abs(x), hn::Set(d, 0x1p200)), x);  // (x is a promoted float)
}

// log1p(u), u >= 0 finite: a + b = 1 + u exactly (Knuth), log(a) + b/a by the log core (a >= 1).
template <class D, class V>
HWY_INLINE V Log1p(D d, V u) {
  V a, b;
  TwoSum(hn::Set(d, 1.0), u, a, b);
  return LogCore<true>(d, a, b);
}

// expm1(t), 0 <= t <= 200: (s_hi - 1) + (s_lo + s_hi p) from the exp core; s_hi - 1 is exact
// (s_hi >= 1), so the result keeps full relative accuracy down to the smallest subnormal.
template <class D, class V>
HWY_INLINE V Expm1NonNeg(D d, V t) {
  V s_hi, s_lo, p;
  ExpCore(d, t, hn::Zero(d), s_hi, s_lo, p);
  return hn::Add(hn::Sub(s_hi, hn::Set(d, 1.0)), hn::Add(s_lo, hn::Mul(s_hi, p)));
}

// ---- Quadrant reduction: a = k pi/2 + theta, |theta| <= pi/4 (1 + 2^-20) ----
// For a >= pi/4 with exponent E: 2a/pi mod 4 = sum_i a C_i, the four 28-bit chunks C_i of 2/pi that
// matter at this exponent (math_tables.h), each product exact (24 + 28 bits). k0 = round(p0) and
// f0 = p0 - k0 are exact; f0 + p1 is kept as a double-double (Knuth) and rounded to the nearest
// integer once more (s - r1 is exact: |s| < 1); p2 and p3 join the low part. The fraction f has an
// absolute error below 2^-80 while |f| >= 2^-29.86 for every float (the least, at x = 0x1.f37c8ap+95,
// found by running this reduction on every float from pi/4 up), so theta = f pi/2 is accurate to
// 2^-50 there and about 2^-52 elsewhere. Below pi/4: k = 0, theta = a exactly.
template <class D, class V = hn::Vec<D>, class DI = hn::RebindToSigned<D>>
HWY_INLINE V ReduceQuadrant(D d, V a, hn::Vec<DI>& k) {
  const DI di;
  // The table row 4(E + 1), E from a clamped to [1/2, FLT_MAX] (the row of a lane below pi/4 is unused).
  const V ac = hn::Min(hn::Max(a, hn::Set(d, 0.5)), hn::Set(d, 0x1.fffffep127));
  const auto row = hn::ShiftLeft<2>(hn::Sub(hn::ShiftRight<52>(hn::BitCast(di, ac)), hn::Set(di, 1022)));
  const V p0 = hn::Mul(a, hn::GatherIndex(d, mt::kTrigReduce, row));
  const V p1 = hn::Mul(a, hn::GatherIndex(d, mt::kTrigReduce, hn::Add(row, hn::Set(di, 1))));
  const V p2 = hn::Mul(a, hn::GatherIndex(d, mt::kTrigReduce, hn::Add(row, hn::Set(di, 2))));
  const V p3 = hn::Mul(a, hn::GatherIndex(d, mt::kTrigReduce, hn::Add(row, hn::Set(di, 3))));
  hn::Vec<DI> k0, k1;
  const V f0 = hn::Sub(p0, RoundToInt(d, p0, k0));
  V s, s_err;
  TwoSum(f0, p1, s, s_err);
  const V f_hi = hn::Sub(s, RoundToInt(d, s, k1));
  const V f_lo = hn::Add(hn::Add(s_err, p2), p3);
  const V theta = hn::Mul(hn::Add(f_hi, f_lo), hn::Set(d, mt::kPio2));
  const auto small = hn::Lt(a, hn::Set(d, 0.78539816339744828));  // RN(pi/4) is below pi/4
  k = hn::IfThenZeroElse(hn::RebindMask(di, small), hn::Add(k0, k1));
  return hn::IfThenElse(small, a, theta);
}

// sin t and cos t, |t| <= pi/4 (1 + 2^-20): Taylor polynomials (math_tables.h); sin keeps t exact
// as its leading term.
template <class D, class V>
HWY_INLINE void SinCosKernel(D d, V t, V& s, V& c) {
  const V t2 = hn::Mul(t, t);
  V ps = hn::Set(d, mt::kSinPoly[7]);
  for (int i = 6; i >= 0; --i) ps = hn::Add(hn::Mul(ps, t2), hn::Set(d, mt::kSinPoly[i]));
  s = hn::Add(t, hn::Mul(t, hn::Mul(t2, ps)));
  V pc = hn::Set(d, mt::kCosPoly[8]);
  for (int i = 7; i >= 0; --i) pc = hn::Add(hn::Mul(pc, t2), hn::Set(d, mt::kCosPoly[i]));
  c = hn::Add(hn::Set(d, 1.0), hn::Mul(t2, pc));
}

// sin and cos of the reduced |x| (x finite) and the quadrant k.
template <class D, class V, class VI>
HWY_INLINE void SinCosOfAbs(D d, V x, VI& k, V& s, V& c) {
  SinCosKernel(d, ReduceQuadrant(d, hn::Abs(x), k), s, c);
}

template <class D, class VI>
HWY_INLINE hn::Mask<D> BitSet(D d, VI k, int64_t bit) {
  const hn::RebindToSigned<D> di;
  return hn::RebindMask(d, hn::Ne(hn::And(k, hn::Set(di, bit)), hn::Zero(di)));
}

template <class D, class V>
HWY_INLINE V NegateIf(hn::Mask<D> m, V v) {
  return hn::IfThenElse(m, hn::Neg(v), v);
}

// sin x = sign(x) sin|x|; sin(k pi/2 + t) = sin t, cos t, -sin t, -cos t for k mod 4 = 0..3.
struct SinF {
  template <class D, class V> HWY_INLINE V Value(D d, V x) const {
    const V xs = ZeroIfNotFinite(d, x);
    hn::Vec<hn::RebindToSigned<D>> k;
    V s, c;
    SinCosOfAbs(d, xs, k, s, c);
    const V y = NegateIf<D>(BitSet(d, k, 2), hn::IfThenElse(BitSet(d, k, 1), c, s));
    return NegateIf<D>(hn::Lt(xs, hn::Zero(d)), y);
  }
  template <class DF, class VF> HWY_INLINE VF Fix(DF df, VF xf, VF r) const {
    r = hn::IfThenElse(hn::Eq(xf, hn::Zero(df)), xf, r);
    return hn::IfThenElse(hn::Lt(hn::Abs(xf), FInf(df)), r, CanonicalNaN(df));
  }
};

// cos(k pi/2 + t) = cos t, -sin t, -cos t, sin t.
struct CosF {
  template <class D, class V> HWY_INLINE V Value(D d, V x) const {
    const hn::RebindToSigned<D> di;
    hn::Vec<decltype(di)> k;
    V s, c;
    SinCosOfAbs(d, ZeroIfNotFinite(d, x), k, s, c);
    return NegateIf<D>(BitSet(d, hn::Add(k, hn::Set(di, 1)), 2), hn::IfThenElse(BitSet(d, k, 1), s, c));
  }
  template <class DF, class VF> HWY_INLINE VF Fix(DF df, VF xf, VF r) const {
    return hn::IfThenElse(hn::Lt(hn::Abs(xf), FInf(df)), r, CanonicalNaN(df));
  }
};

// tan(k pi/2 + t) = sin t / cos t for even k, -cos t / sin t for odd k (t != 0 there).
struct TanF {
  template <class D, class V> HWY_INLINE V Value(D d, V x) const {
    const V xs = ZeroIfNotFinite(d, x);
    hn::Vec<hn::RebindToSigned<D>> k;
    V s, c;
    SinCosOfAbs(d, xs, k, s, c);
    const V y = hn::IfThenElse(BitSet(d, k, 1), hn::Neg(hn::Div(c, s)), hn::Div(s, c));
    return NegateIf<D>(hn::Lt(xs, hn::Zero(d)), y);
  }
  template <class DF, class VF> HWY_INLINE VF Fix(DF df, VF xf, VF r) const {
    return SinF().Fix(df, xf, r);
  }
};

// atan z for z >= 0 (+inf included, never NaN). z > 1 goes through u = 1/z and pi/2 - atan u.
// u in [0, 1]: j = round(64 u), c = j/64, v = (u - c) / (1 + u c) (u - c exact by Sterbenz, |v| <
// 2^-7), atan u = atan(c) + atan(v) with atan(c) a double-double from the table.
template <class D, class V>
HWY_INLINE V AtanNonNeg(D d, V z) {
  const hn::RebindToSigned<D> di;
  const auto big = hn::Gt(z, hn::Set(d, 1.0));
  const V u = hn::IfThenElse(big, hn::Div(hn::Set(d, 1.0), z), z);
  hn::Vec<decltype(di)> j;
  const V c = hn::Mul(RoundToInt(d, hn::Mul(u, hn::Set(d, 64.0)), j), hn::Set(d, 0.015625));
  const V v = hn::Div(hn::Sub(u, c), hn::Add(hn::Set(d, 1.0), hn::Mul(u, c)));
  const V v2 = hn::Mul(v, v);
  V q = hn::Set(d, mt::kAtanPoly[4]);
  for (int i = 3; i >= 0; --i) q = hn::Add(hn::Mul(q, v2), hn::Set(d, mt::kAtanPoly[i]));
  const V p = hn::Add(v, hn::Mul(v, hn::Mul(v2, q)));
  const V hi = hn::GatherIndex(d, mt::kAtanHi, j), lo = hn::GatherIndex(d, mt::kAtanLo, j);
  const V near = hn::Add(hi, hn::Add(lo, p));
  const V far = hn::Add(hn::Sub(hn::Set(d, mt::kPio2Hi), hi), hn::Sub(hn::Sub(hn::Set(d, mt::kPio2Lo), lo), p));
  return hn::IfThenElse(big, far, near);
}

// Odd functions: the evaluation runs on |x| and the sign is copied back (a zero keeps its sign).
template <class DF, class VF>
HWY_INLINE VF OddFix(DF df, VF xf, VF r) {
  return NaNFix(df, xf, hn::CopySignToAbs(r, xf));
}

struct AtanF {
  template <class D, class V> HWY_INLINE V Value(D d, V x) const {
    return AtanNonNeg(d, hn::Abs(ZeroIfNaN(d, x)));
  }
  template <class DF, class VF> HWY_INLINE VF Fix(DF df, VF xf, VF r) const { return OddFix(df, xf, r); }
};

// asin|x| = atan(|x| / sqrt(1 - x^2)): x^2 exact, 1 - x^2 exact for x^2 >= 1/2 (Sterbenz).
struct AsinF {
  template <class D, class V> HWY_INLINE V Value(D d, V x) const {
    const V t = hn::Min(hn::Abs(ZeroIfNaN(d, x)), hn::Set(d, 1.0));
    return AtanNonNeg(d, hn::Div(t, hn::Sqrt(hn::Sub(hn::Set(d, 1.0), hn::Mul(t, t)))));
  }
  template <class DF, class VF> HWY_INLINE VF Fix(DF df, VF xf, VF r) const {
    r = hn::IfThenElse(hn::Gt(hn::Abs(xf), hn::Set(df, 1.0f)), CanonicalNaN(df), r);
    return OddFix(df, xf, r);
  }
};

// acos x = 2 atan(sqrt((1 - x) / (1 + x))): no cancellation near either end (x = -1 gives 2 atan(inf)).
struct AcosF {
  template <class D, class V> HWY_INLINE V Value(D d, V x) const {
    const V one = hn::Set(d, 1.0);
    const V t = hn::Min(hn::Max(ZeroIfNaN(d, x), hn::Neg(one)), one);
    const V z = hn::Sqrt(hn::Div(hn::Sub(one, t), hn::Add(one, t)));
    return hn::Mul(AtanNonNeg(d, z), hn::Set(d, 2.0));
  }
  template <class DF, class VF> HWY_INLINE VF Fix(DF df, VF xf, VF r) const {
    return NaNFix(df, xf, hn::IfThenElse(hn::Gt(hn::Abs(xf), hn::Set(df, 1.0f)), CanonicalNaN(df), r));
  }
};

// sinh|x| = (em + em / (em + 1)) / 2, em = expm1(|x|): both terms positive, no cancellation;
// |x| clamped to 100 (sinh overflows float32 beyond 89.42). The sign of x is copied in float64,
// before the rounding (which is symmetric): Clang 14's AVX-512 code gave +0 for an overflowing
// result when the sign was copied onto DemoteSat's infinity afterwards (OddFix), e.g. sinh(90).
struct SinhF {
  template <class D, class V> HWY_INLINE V Value(D d, V x) const {
    const V em = Expm1NonNeg(d, hn::Min(hn::Abs(ZeroIfNaN(d, x)), hn::Set(d, 100.0)));
    return hn::CopySign(hn::Mul(hn::Add(em, hn::Div(em, hn::Add(em, hn::Set(d, 1.0)))), hn::Set(d, 0.5)), x);
  }
  template <class DF, class VF> HWY_INLINE VF Fix(DF df, VF xf, VF r) const { return NaNFix(df, xf, r); }
};

// cosh x = (e + 1/e) / 2, e = exp(min(|x|, 100)).
struct CoshF {
  template <class D, class V> HWY_INLINE V Value(D d, V x) const {
    const V e = Exp(d, hn::Min(hn::Abs(ZeroIfNaN(d, x)), hn::Set(d, 100.0)), hn::Zero(d));
    return hn::Mul(hn::Add(e, hn::Div(hn::Set(d, 1.0), e)), hn::Set(d, 0.5));
  }
  template <class DF, class VF> HWY_INLINE VF Fix(DF df, VF xf, VF r) const { return NaNFix(df, xf, r); }
};

// asinh|x| = log1p(t + t^2 / (1 + sqrt(1 + t^2))), t = |x| (t^2 exact; positive terms only).
struct AsinhF {
  template <class D, class V> HWY_INLINE V Value(D d, V x) const {
    const V one = hn::Set(d, 1.0);
    const V t = hn::Min(hn::Abs(ZeroIfNaN(d, x)), hn::Set(d, 0x1.fffffep127));
    const V t2 = hn::Mul(t, t);
    return Log1p(d, hn::Add(t, hn::Div(t2, hn::Add(one, hn::Sqrt(hn::Add(one, t2))))));
  }
  template <class DF, class VF> HWY_INLINE VF Fix(DF df, VF xf, VF r) const {
    return OddFix(df, xf, hn::IfThenElse(hn::Eq(hn::Abs(xf), FInf(df)), FInf(df), r));
  }
};

// acosh x = log1p(t + sqrt(t (t + 2))), t = x - 1 (exact up to 2^24): full accuracy near 1.
struct AcoshF {
  template <class D, class V> HWY_INLINE V Value(D d, V x) const {
    const V one = hn::Set(d, 1.0);
    const V t = hn::Sub(hn::Min(hn::Max(ZeroIfNaN(d, x), one), hn::Set(d, 0x1.fffffep127)), one);
    return Log1p(d, hn::Add(t, hn::Sqrt(hn::Mul(t, hn::Add(t, hn::Set(d, 2.0))))));
  }
  template <class DF, class VF> HWY_INLINE VF Fix(DF df, VF xf, VF r) const {
    r = hn::IfThenElse(hn::Eq(xf, FInf(df)), xf, r);
    return NaNFix(df, xf, hn::IfThenElse(hn::Lt(xf, hn::Set(df, 1.0f)), CanonicalNaN(df), r));
  }
};

// atanh|x| = log1p(2t / (1 - t)) / 2, t = |x| < 1.
struct AtanhF {
  template <class D, class V> HWY_INLINE V Value(D d, V x) const {
    const V a = hn::Abs(ZeroIfNaN(d, x));
    const V t = hn::IfThenElseZero(hn::Lt(a, hn::Set(d, 1.0)), a);
    return hn::Mul(Log1p(d, hn::Div(hn::Add(t, t), hn::Sub(hn::Set(d, 1.0), t))), hn::Set(d, 0.5));
  }
  template <class DF, class VF> HWY_INLINE VF Fix(DF df, VF xf, VF r) const {
    const VF a = hn::Abs(xf);
    r = hn::IfThenElse(hn::Eq(a, hn::Set(df, 1.0f)), FInf(df), r);
    r = hn::IfThenElse(hn::Gt(a, hn::Set(df, 1.0f)), CanonicalNaN(df), r);
    return OddFix(df, xf, r);
  }
};

}  // namespace mathfn
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();
#endif  // HWY_HAVE_FLOAT64

#endif  // toggle guard
