// The correctly rounded elementary functions (simd/math.h), one element per call: the same float64
// operation sequence as simd/math-inl.h and simd/math_core-inl.h, lane by lane, with the same
// generated constants (simd/math_tables.h) and exception tables (simd/math_exceptions.h), so every
// result is the proven correctly rounded float32. Tables are reached through MathTables, which
// holds host or device copies depending on the build.
#ifndef LOCKSTEP_CUDA_KERNELS_MATH_H_
#define LOCKSTEP_CUDA_KERNELS_MATH_H_

#include "core/backend/kernel_table.h"
#include "cuda/kernels/portable.h"
#include "simd/math_tables.h"

namespace lockstep {
namespace cuda {

namespace mt = ::lockstep::simd::math_tables;
using backend::MathFn;

// Exception tables in simd/math_exceptions.h's order: the MathFn, then pow_int_-4 .. 4.
constexpr int kPowTableFirst = backend::kMathFnCount;
constexpr int kExceptionTables = kPowTableFirst + 9;

struct MathTables {
  const double* exp_t_hi;
  const double* exp_t_lo;
  const double* exp_poly;
  const double* log_c;
  const double* log_t_hi;
  const double* log_t_lo;
  const double* log_poly;
  const double* erf_coef;
  const double* gauss_tail_coef;
  const double* trig_reduce;
  const double* sin_poly;
  const double* cos_poly;
  const double* atan_hi;
  const double* atan_lo;
  const double* atan_poly;
  const uint32_t* exception_pairs[kExceptionTables];  // (input bits, output bits), sorted
  size_t exception_counts[kExceptionTables];
};

namespace math_detail {

constexpr double kShifter = 0x1.8p52;
constexpr int64_t kShifterBits = 0x4338000000000000LL;
constexpr double kZivEps = 0x1p-44;

LS_HD double RoundToInt(double v, int64_t* vi) {
  const double t = v + kShifter;
  *vi = BitCast<int64_t>(t) - kShifterBits;
  return t - kShifter;
}
LS_HD double IntToDouble(int64_t i) { return BitCast<double>(i + kShifterBits) - kShifter; }
LS_HD double ZeroIfNaN(double x) { return IsNaN(x) ? 0.0 : x; }
LS_HD double AbsD(double x) { return BitCast<double>(BitCast<uint64_t>(x) & 0x7FFFFFFFFFFFFFFFull); }
LS_HD double MinD(double a, double b) { return b < a ? b : a; }
LS_HD double MaxD(double a, double b) { return b > a ? b : a; }

LS_HD void ExpCore(const MathTables& t, double z, double zlo, double* s_hi, double* s_lo, double* p) {
  z = MinD(MaxD(z, -200.0), 200.0);
  int64_t ki;
  const double kd = RoundToInt(z * mt::kExpInvL, &ki);
  const double r = ((z - kd * mt::kExpL1) + zlo) - kd * mt::kExpL2;
  double q = t.exp_poly[4];
  q = q * r + t.exp_poly[3];
  q = q * r + t.exp_poly[2];
  q = q * r + t.exp_poly[1];
  q = q * r + t.exp_poly[0];
  *p = r + (r * r) * q;
  const int64_t j = ki & 63;
  const int64_t m = ki >> 6;  // arithmetic shift
  const double scale = BitCast<double>(static_cast<uint64_t>(m + 1023) << 52);
  *s_hi = t.exp_t_hi[j] * scale;
  *s_lo = t.exp_t_lo[j] * scale;
}

LS_HD double Exp(const MathTables& t, double z, double zlo) {
  double s_hi, s_lo, p;
  ExpCore(t, z, zlo, &s_hi, &s_lo, &p);
  return s_hi + (s_lo + s_hi * p);
}

template <bool kWithB>
LS_HD double LogCore(const MathTables& t, double a, double b) {
  const int64_t bits = BitCast<int64_t>(a);
  const int64_t tmp = bits - static_cast<int64_t>(mt::kLogOffset);
  const int64_t e = tmp >> 52;
  const int64_t j = (tmp >> 44) & 255;
  const uint64_t mbits = static_cast<uint64_t>(bits) - (static_cast<uint64_t>(e) << 52);
  const double m = BitCast<double>(mbits);
  const double mhi = BitCast<double>(mbits & ~uint64_t{0x1FFFFF});
  const double mlo = m - mhi;
  const double c = t.log_c[j];
  const double r = (mhi * c - 1.0) + mlo * c;
  double q = t.log_poly[5];
  for (int k = 4; k >= 0; --k) q = q * r + t.log_poly[k];
  double p = r + (r * r) * q;
  if (kWithB) p = p + b / a;
  const double ed = IntToDouble(e);
  const double hi = ed * mt::kLn2Hi + t.log_t_hi[j];
  const double lo = ed * mt::kLn2Lo + t.log_t_lo[j];
  return hi + (lo + p);
}

LS_HD double PiecewisePoly(double x, double inv_step, double step, const double* coef, int deg) {
  int64_t ki;
  const double kd = RoundToInt(x * inv_step, &ki);
  const double h = x - kd * step;
  int64_t base;
  RoundToInt(kd * static_cast<double>(deg + 1), &base);
  double acc = coef[base + deg];
  for (int k = deg - 1; k >= 0; --k) acc = acc * h + coef[base + k];
  return acc;
}

LS_HD void Split(double a, double* hi, double* lo) {
  const double t = a * 134217729.0;  // 2^27 + 1
  *hi = t - (t - a);
  *lo = a - *hi;
}
LS_HD void TwoProd(double a, double b, double* p, double* e) {
  *p = a * b;
  double ah, al, bh, bl;
  Split(a, &ah, &al);
  Split(b, &bh, &bl);
  *e = (((ah * bh - *p) + ah * bl) + al * bh) + al * bl;
}
LS_HD void TwoSum(double a, double b, double* s, double* e) {
  *s = a + b;
  const double bb = *s - a;
  *e = (a - (*s - bb)) + (b - bb);
}

// hi + lo rounded to odd (see simd/math-inl.h, AddRoundToOdd).
LS_HD double AddRoundToOdd(double hi, double lo) {
  const double s = hi + lo;
  const double e = (hi - s) + lo;
  const int64_t sbits = BitCast<int64_t>(s);
  const bool even = (sbits & 1) == 0;
  const bool inexact = e != 0.0 && e == e;
  const int64_t step = ((BitCast<int64_t>(e) ^ sbits) >> 63) | 1;
  return BitCast<double>(static_cast<int64_t>(static_cast<uint64_t>(sbits) +
                                              static_cast<uint64_t>(even && inexact ? step : 0)));
}

LS_HD float NaNFix(float xf, float r) { return IsNaN(xf) || IsNaN(r) ? CanonicalNaN() : r; }

LS_HD double ExpValue(const MathTables& t, double x) { return Exp(t, ZeroIfNaN(x), 0.0); }

LS_HD double LogValue(const MathTables& t, double x) {
  const bool ok = x > 0.0 && x < 0x1p200;
  return LogCore<false>(t, ok ? x : 1.0, 0.0);
}
LS_HD float LogFix(float xf, float r) {
  if (xf == 0.0f) r = -InfF();
  if (xf < 0.0f) r = CanonicalNaN();
  if (xf == InfF()) r = xf;
  return IsNaN(xf) ? CanonicalNaN() : r;
}

LS_HD double TanhValue(const MathTables& t, double x) {
  const double a = MinD(AbsD(ZeroIfNaN(x)) * 2.0, 20.0);
  double s_hi, s_lo, p;
  ExpCore(t, a, 0.0, &s_hi, &s_lo, &p);
  const double em = (s_hi - 1.0) + (s_lo + s_hi * p);
  return em / (em + 2.0);
}

LS_HD double SigmoidValue(const MathTables& t, double x) {
  const double e = Exp(t, -ZeroIfNaN(x), 0.0);
  return 1.0 / (1.0 + e);
}

LS_HD double ErfValue(const MathTables& t, double x) {
  const double ax = MinD(AbsD(ZeroIfNaN(x)), 4.0);
  return PiecewisePoly(ax, 8.0, 0.125, t.erf_coef, mt::kErfDegree);
}

LS_HD double GeluErfValue(const MathTables& t, double x) {
  const double xs = ZeroIfNaN(x);
  const double a = MinD(AbsD(xs), 16.0);
  const double g = PiecewisePoly(a, 4.0, 0.25, t.gauss_tail_coef, mt::kGaussTailDegree);
  const double e = Exp(t, (a * a) * -0.5, 0.0);
  const double q = e * g;
  const double dphi = a < 0x1p-20 ? xs * mt::kInvSqrt2Pi : (xs < 0.0 ? q - 0.5 : 0.5 - q);
  const double near = AddRoundToOdd(xs * 0.5, xs * dphi);
  const double tail = MaxD(xs, -16.0) * q;
  return xs < -1.0 ? tail : near;
}

LS_HD double GeluTanhValue(const MathTables& t, double x) {
  const double xs = ZeroIfNaN(x);
  const double xc = MinD(MaxD(xs, -20.0), 20.0);
  const double x2 = xc * xc;
  double p, pe, s, se, zh, zl;
  TwoProd(mt::kGeluTanhDHi, x2, &p, &pe);
  pe = pe + mt::kGeluTanhDLo * x2;
  TwoSum(mt::kGeluTanhCHi, p, &s, &se);
  se = se + (pe + mt::kGeluTanhCLo);
  TwoProd(xc, s, &zh, &zl);
  zl = zl + xc * se;
  double s_hi, s_lo, ep;
  ExpCore(t, -zh, -zl, &s_hi, &s_lo, &ep);
  const double em = (s_hi - 1.0) + (s_lo + s_hi * ep);
  const double lo = -((xs * em) / (2.0 * (2.0 + em)));
  const double near = AddRoundToOdd(xs * 0.5, lo);
  const double tail = MaxD(xs, -20.0) / (2.0 + em);
  return xs < -1.0 ? tail : near;
}

LS_HD double SoftplusValue(const MathTables& t, double x) {
  const double xs = ZeroIfNaN(x);
  const double e = Exp(t, -AbsD(xs), 0.0);
  const double a = 1.0 + e;
  const double b = e - (a - 1.0);
  const double l = LogCore<true>(t, a, b);
  return xs > 0.0 ? xs + l : l;
}

LS_HD double PowIntValue(double x, int e) {
  unsigned k = e < 0 ? 0u - static_cast<unsigned>(e) : static_cast<unsigned>(e);
  double base = x, acc = 1.0;
  bool have = false;
  while (k != 0) {
    if (k & 1u) {
      acc = have ? acc * base : base;
      have = true;
    }
    k >>= 1;
    if (k != 0) base = base * base;
  }
  return e < 0 ? 1.0 / acc : acc;
}

// ---- sin, cos, tan, their inverses and the hyperbolic functions (simd/math_trig-inl.h) ----
LS_HD double ZeroIfNotFinite(double x) { return AbsD(x) < 0x1p200 ? x : 0.0; }

LS_HD double Log1p(const MathTables& t, double u) {
  double a, b;
  TwoSum(1.0, u, &a, &b);
  return LogCore<true>(t, a, b);
}

LS_HD double Expm1NonNeg(const MathTables& t, double x) {
  double s_hi, s_lo, p;
  ExpCore(t, x, 0.0, &s_hi, &s_lo, &p);
  return (s_hi - 1.0) + (s_lo + s_hi * p);
}

LS_HD double ReduceQuadrant(const MathTables& t, double a, int64_t* k) {
  const double ac = MinD(MaxD(a, 0.5), 0x1.fffffep127);
  const int64_t row = ((BitCast<int64_t>(ac) >> 52) - 1022) << 2;
  const double p0 = a * t.trig_reduce[row], p1 = a * t.trig_reduce[row + 1];
  const double p2 = a * t.trig_reduce[row + 2], p3 = a * t.trig_reduce[row + 3];
  int64_t k0, k1;
  const double f0 = p0 - RoundToInt(p0, &k0);
  double s, s_err;
  TwoSum(f0, p1, &s, &s_err);
  const double f_hi = s - RoundToInt(s, &k1);
  const double f_lo = (s_err + p2) + p3;
  const double theta = (f_hi + f_lo) * mt::kPio2;
  const bool small = a < 0.78539816339744828;
  *k = small ? 0 : k0 + k1;
  return small ? a : theta;
}

LS_HD void SinCosKernel(const MathTables& t, double x, double* s, double* c) {
  const double x2 = x * x;
  double ps = t.sin_poly[7];
  for (int i = 6; i >= 0; --i) ps = ps * x2 + t.sin_poly[i];
  *s = x + x * (x2 * ps);
  double pc = t.cos_poly[8];
  for (int i = 7; i >= 0; --i) pc = pc * x2 + t.cos_poly[i];
  *c = 1.0 + x2 * pc;
}

// kind 0: sin, 1: cos, 2: tan.
LS_HD double TrigValue(const MathTables& t, double x, int kind) {
  const double xs = ZeroIfNotFinite(x);
  int64_t k;
  const double theta = ReduceQuadrant(t, AbsD(xs), &k);
  double s, c;
  SinCosKernel(t, theta, &s, &c);
  if (kind == 1) {
    const double y = (k & 1) ? s : c;
    return ((k + 1) & 2) ? -y : y;
  }
  double y;
  if (kind == 0) {
    y = (k & 1) ? c : s;
    y = (k & 2) ? -y : y;
  } else {
    y = (k & 1) ? -(c / s) : s / c;
  }
  return xs < 0.0 ? -y : y;
}

LS_HD double AtanNonNeg(const MathTables& t, double z) {
  const bool big = z > 1.0;
  const double u = big ? 1.0 / z : z;
  int64_t j;
  const double c = RoundToInt(u * 64.0, &j) * 0.015625;
  const double v = (u - c) / (1.0 + u * c);
  const double v2 = v * v;
  double q = t.atan_poly[4];
  for (int i = 3; i >= 0; --i) q = q * v2 + t.atan_poly[i];
  const double p = v + v * (v2 * q);
  const double hi = t.atan_hi[j], lo = t.atan_lo[j];
  return big ? (mt::kPio2Hi - hi) + ((mt::kPio2Lo - lo) - p) : hi + (lo + p);
}

LS_HD double AsinValue(const MathTables& t, double x) {
  const double a = MinD(AbsD(ZeroIfNaN(x)), 1.0);
  return AtanNonNeg(t, a / SqrtD(1.0 - a * a));
}
LS_HD double AcosValue(const MathTables& t, double x) {
  const double a = MinD(MaxD(ZeroIfNaN(x), -1.0), 1.0);
  return AtanNonNeg(t, SqrtD((1.0 - a) / (1.0 + a))) * 2.0;
}
LS_HD double SinhValue(const MathTables& t, double x) {
  const double em = Expm1NonNeg(t, MinD(AbsD(ZeroIfNaN(x)), 100.0));
  return (em + em / (em + 1.0)) * 0.5;
}
LS_HD double CoshValue(const MathTables& t, double x) {
  const double e = Exp(t, MinD(AbsD(ZeroIfNaN(x)), 100.0), 0.0);
  return (e + 1.0 / e) * 0.5;
}
LS_HD double AsinhValue(const MathTables& t, double x) {
  const double a = MinD(AbsD(ZeroIfNaN(x)), 0x1.fffffep127);
  const double a2 = a * a;
  return Log1p(t, a + a2 / (1.0 + SqrtD(1.0 + a2)));
}
LS_HD double AcoshValue(const MathTables& t, double x) {
  const double a = MinD(MaxD(ZeroIfNaN(x), 1.0), 0x1.fffffep127) - 1.0;
  return Log1p(t, a + SqrtD(a * (a + 2.0)));
}
LS_HD double AtanhValue(const MathTables& t, double x) {
  const double ax = AbsD(ZeroIfNaN(x));
  const double a = ax < 1.0 ? ax : 0.0;
  return Log1p(t, (a + a) / (1.0 - a)) * 0.5;
}

LS_HD float OddFix(float xf, float r) { return NaNFix(xf, CopySign(r, xf)); }
LS_HD float AbsF(float x) { return BitCast<float>(BitCast<uint32_t>(x) & 0x7FFFFFFFu); }

// Binary search of a sorted (input, output) pair table.
LS_HD bool LookupException(const uint32_t* pairs, size_t count, uint32_t in, uint32_t* out) {
  size_t lo = 0, hi = count;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const uint32_t key = pairs[2 * mid];
    if (key == in) {
      *out = pairs[2 * mid + 1];
      return true;
    }
    if (key < in) lo = mid + 1; else hi = mid;
  }
  return false;
}

// Rounds y once to float32, patches specials with fixed, and settles the lanes that fail Ziv's
// rounding test from the exception table (as simd/math-inl.h's MathVector).
LS_HD float Finish(const MathTables& t, int table, float xf, double y, float fixed) {
  const uint32_t lo = BitCast<uint32_t>(static_cast<float>(y * (1.0 - kZivEps)));
  const uint32_t hi = BitCast<uint32_t>(static_cast<float>(y * (1.0 + kZivEps)));
  uint32_t listed;
  if (table >= 0 && lo != hi &&
      LookupException(t.exception_pairs[table], t.exception_counts[table], BitCast<uint32_t>(xf),
                      &listed)) {
    return BitCast<float>(listed);
  }
  return fixed;
}

}  // namespace math_detail

LS_HD float ApplyMath(const MathTables& t, MathFn fn, float xf) {
  using namespace math_detail;  // NOLINT
  const double x = static_cast<double>(xf);
  double y = 0.0;
  switch (fn) {
    case MathFn::kExp: y = ExpValue(t, x); break;
    case MathFn::kLog: y = LogValue(t, x); break;
    case MathFn::kTanh: y = TanhValue(t, x); break;
    case MathFn::kSigmoid: y = SigmoidValue(t, x); break;
    case MathFn::kErf: y = ErfValue(t, x); break;
    case MathFn::kGeluErf: y = GeluErfValue(t, x); break;
    case MathFn::kGeluTanh: y = GeluTanhValue(t, x); break;
    case MathFn::kSoftplus: y = SoftplusValue(t, x); break;
    case MathFn::kRsqrt: y = 1.0 / SqrtD(x); break;
    case MathFn::kSin: y = TrigValue(t, x, 0); break;
    case MathFn::kCos: y = TrigValue(t, x, 1); break;
    case MathFn::kTan: y = TrigValue(t, x, 2); break;
    case MathFn::kAsin: y = AsinValue(t, x); break;
    case MathFn::kAcos: y = AcosValue(t, x); break;
    case MathFn::kAtan: y = AtanNonNeg(t, AbsD(ZeroIfNaN(x))); break;
    case MathFn::kSinh: y = SinhValue(t, x); break;
    case MathFn::kCosh: y = CoshValue(t, x); break;
    case MathFn::kAsinh: y = AsinhValue(t, x); break;
    case MathFn::kAcosh: y = AcoshValue(t, x); break;
    case MathFn::kAtanh: y = AtanhValue(t, x); break;
  }
  const float r = static_cast<float>(y);
  float fixed;
  switch (fn) {
    case MathFn::kLog: fixed = LogFix(xf, r); break;
    case MathFn::kTanh:
    case MathFn::kErf: fixed = NaNFix(xf, CopySign(r, xf)); break;
    case MathFn::kGeluErf:
    case MathFn::kGeluTanh: fixed = NaNFix(xf, xf == 0.0f ? xf : r); break;
    case MathFn::kSin:
    case MathFn::kTan: fixed = AbsF(xf) < InfF() ? (xf == 0.0f ? xf : r) : CanonicalNaN(); break;
    case MathFn::kCos: fixed = AbsF(xf) < InfF() ? r : CanonicalNaN(); break;
    case MathFn::kAsin: fixed = OddFix(xf, AbsF(xf) > 1.0f ? CanonicalNaN() : r); break;
    case MathFn::kAcos: fixed = NaNFix(xf, AbsF(xf) > 1.0f ? CanonicalNaN() : r); break;
    case MathFn::kAtan:
    case MathFn::kSinh: fixed = OddFix(xf, r); break;
    case MathFn::kAsinh: fixed = OddFix(xf, AbsF(xf) == InfF() ? InfF() : r); break;
    case MathFn::kAcosh: fixed = NaNFix(xf, xf < 1.0f ? CanonicalNaN() : (xf == InfF() ? xf : r)); break;
    case MathFn::kAtanh:
      fixed = OddFix(xf, AbsF(xf) > 1.0f ? CanonicalNaN() : (AbsF(xf) == 1.0f ? InfF() : r));
      break;
    default: fixed = NaNFix(xf, r); break;
  }
  return Finish(t, static_cast<int>(fn), xf, y, fixed);
}

LS_HD float ApplyPowInt(const MathTables& t, int exponent, float xf) {
  using namespace math_detail;  // NOLINT
  switch (exponent) {
    case 0: return 1.0f;  // x^0 = 1 for every x, NaN included
    case 1: return Canonical(xf);
    case 2: return Canonical(xf * xf);
    case -1: return Canonical(1.0f / xf);
    default: break;
  }
  const double y = PowIntValue(static_cast<double>(xf), exponent);
  const int table = exponent >= -4 && exponent <= 4 ? kPowTableFirst + exponent + 4 : -1;
  return Finish(t, table, xf, y, NaNFix(xf, static_cast<float>(y)));
}

struct MathBody {
  MathTables tables;
  MathFn fn;
  const float* in;
  float* out;
  LS_HD void operator()(size_t i) const { out[i] = ApplyMath(tables, fn, in[i]); }
};

struct PowIntBody {
  MathTables tables;
  int exponent;
  const float* in;
  float* out;
  LS_HD void operator()(size_t i) const { out[i] = ApplyPowInt(tables, exponent, in[i]); }
};

}  // namespace cuda
}  // namespace lockstep

#endif  // LOCKSTEP_CUDA_KERNELS_MATH_H_
