// Dispatch for the elementary functions (compiled once per Highway target by foreach_target.h,
// chosen once per call), the exception-table hooks for tools, and the scalar float64 helpers
// LogF64 / SinPiF64 / CosPiF64 (plain C++: basic operations only, no libm).
//
// Functions with a float32 first step (math_fast-inl.h: exp, erf, gelu_erf, sigmoid) run it on every lane
// and send the few lanes it leaves undecided, gathered per block, to the float64 evaluation
// (MathFloat64, math_float64.cc); the others run the float64 evaluation directly.
#include "simd/math.h"

#include <string.h>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/math.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "simd/contract-inl.h"
#include "simd/loops-inl.h"
#include "simd/math_fast-inl.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {
namespace {
namespace hn = hwy::HWY_NAMESPACE;

// Elements per block: the lanes left undecided within a block are evaluated together in float64
// and written back before the next block starts (in place too: their inputs are kept aside).
constexpr size_t kMathBlock = 2048;

// Appends the undecided lanes of x (element index `first` for lane 0; lanes from `count` on are
// ignored) to the pending lists, by compressing stores: each list may be written up to a vector
// past its new end, hence the lists' slack.
template <class DF, class V = hn::Vec<DF>>
HWY_INLINE size_t CollectUndecided(DF df, V x, hn::Mask<DF> undecided, size_t first, size_t count,
                                   float* pending_x, uint32_t* pending_i, size_t np) {
  const hn::RebindToUnsigned<DF> du;
  const auto mask = hn::And(undecided, hn::FirstN(df, count));
  hn::CompressStore(hn::Iota(du, static_cast<uint32_t>(first)), hn::RebindMask(du, mask), du, pending_i + np);
  return np + hn::CompressStore(x, mask, df, pending_x + np);
}

template <class Fast>
HWY_INLINE void MapFirstStep(MathFn fn, const float* in, float* out, size_t n, const Fast& fast) {
  const hn::ScalableTag<float> df;
  const size_t N = hn::Lanes(df);
  constexpr size_t kSlack = HWY_MAX_BYTES / sizeof(float);  // CompressStore writes whole vectors
  HWY_ALIGN float pending_x[kMathBlock + kSlack], pending_y[kMathBlock];
  uint32_t pending_i[kMathBlock + kSlack];
  for (size_t start = 0; start < n; start += kMathBlock) {
    const size_t end = n - start < kMathBlock ? n : start + kMathBlock;
    size_t np = 0;
    size_t i = start;
    for (; i + 2 * N <= end; i += 2 * N) {
      const hn::Vec<decltype(df)> x0 = hn::LoadU(df, in + i), x1 = hn::LoadU(df, in + i + N);
      hn::Mask<decltype(df)> u0, u1;
      const auto y0 = fast.Eval(df, x0, u0);
      const auto y1 = fast.Eval(df, x1, u1);
      hn::StoreU(y0, df, out + i);
      hn::StoreU(y1, df, out + i + N);
      if (HWY_UNLIKELY(!hn::AllFalse(df, hn::Or(u0, u1)))) {
        np = CollectUndecided(df, x0, u0, i, N, pending_x, pending_i, np);
        np = CollectUndecided(df, x1, u1, i + N, N, pending_x, pending_i, np);
      }
    }
    for (; i + N <= end; i += N) {
      const hn::Vec<decltype(df)> x = hn::LoadU(df, in + i);
      hn::Mask<decltype(df)> undecided;
      hn::StoreU(fast.Eval(df, x, undecided), df, out + i);
      if (HWY_UNLIKELY(!hn::AllFalse(df, undecided))) {
        np = CollectUndecided(df, x, undecided, i, N, pending_x, pending_i, np);
      }
    }
    if (i < end) {  // the last partial vector, padded with zeros (decided by every first step)
      HWY_ALIGN float buf[HWY_MAX_BYTES / sizeof(float)] = {};
      const size_t count = end - i;
      memcpy(buf, in + i, count * sizeof(float));
      const hn::Vec<decltype(df)> x = hn::Load(df, buf);
      hn::Mask<decltype(df)> undecided;
      hn::Store(fast.Eval(df, x, undecided), df, buf);
      memcpy(out + i, buf, count * sizeof(float));
      if (!hn::AllFalse(df, undecided)) {
        np = CollectUndecided(df, x, undecided, i, count, pending_x, pending_i, np);
      }
    }
    if (np != 0) {
      MathFloat64(fn, pending_x, pending_y, np);
      for (size_t k = 0; k < np; ++k) out[pending_i[k]] = pending_y[k];
    }
  }
}

struct OneFn {  // pow(x, 0) = 1 for every x, NaN included
  template <class DF, class VF> HWY_INLINE VF operator()(DF df, VF) const { return hn::Set(df, 1.0f); }
};
struct CopyFn {
  template <class DF, class VF> HWY_INLINE VF operator()(DF df, VF v) const { return Canonicalize(df, v); }
};
struct SquareF32Fn {  // x*x in float32 is correctly rounded x^2
  template <class DF, class VF> HWY_INLINE VF operator()(DF df, VF v) const { return Canonicalize(df, hn::Mul(v, v)); }
};
struct RecipF32Fn {  // 1/x in float32 is correctly rounded x^-1
  template <class DF, class VF> HWY_INLINE VF operator()(DF df, VF v) const {
    return Canonicalize(df, hn::Div(hn::Set(df, 1.0f), v));
  }
};
struct PowHalfFn {  // IEEE sqrt, except pow(-0, .5) = +0 and pow(-inf, .5) = +inf
  template <class DF, class VF> HWY_INLINE VF operator()(DF df, VF v) const {
    const hn::RebindToUnsigned<DF> du;
    const VF inf = hn::BitCast(df, hn::Set(du, 0x7F800000u));
    VF r = hn::IfThenElse(hn::Eq(v, hn::Zero(df)), hn::Zero(df), hn::Sqrt(v));
    r = hn::IfThenElse(hn::Eq(v, hn::Neg(inf)), inf, r);
    return Canonicalize(df, r);
  }
};

}  // namespace

void MathTarget(MathFn fn, const float* in, float* out, size_t n) {
  switch (fn) {
    case MathFn::kExp: return MapFirstStep(fn, in, out, n, mathfast::ExpFast());
    case MathFn::kErf: return MapFirstStep(fn, in, out, n, mathfast::ErfFast());
    case MathFn::kGeluErf: return MapFirstStep(fn, in, out, n, mathfast::GeluErfFast());
    case MathFn::kSigmoid: return MapFirstStep(fn, in, out, n, mathfast::SigmoidFast());
    default: return MathFloat64(fn, in, out, n);
  }
}
void PowIntTarget(const float* in, int exponent, float* out, size_t n) {
  const hn::ScalableTag<float> df;
  switch (exponent) {
    case 0: return MapUnary(df, in, out, n, OneFn());
    case 1: return MapUnary(df, in, out, n, CopyFn());
    case 2: return MapUnary(df, in, out, n, SquareF32Fn());
    case -1: return MapUnary(df, in, out, n, RecipF32Fn());
    default: return PowIntFloat64(in, exponent, out, n);
  }
}
void PowHalfTarget(const float* in, float* out, size_t n) {
  const hn::ScalableTag<float> df;
  MapUnary(df, in, out, n, PowHalfFn());
}

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "simd/math_lookup.h"
#include "simd/math_tables.h"
#include "simd/thread_pool.h"

namespace lockstep {
namespace simd {

HWY_EXPORT(MathTarget);
HWY_EXPORT(PowIntTarget);
HWY_EXPORT(PowHalfTarget);

void Math(MathFn fn, const float* in, float* out, size_t n) {
  // Each result depends on its input alone (correct rounding), so large arrays are split across
  // the thread pool in chunks of whole vectors without changing a bit.
  ForEachChunk(n, size_t{1} << 14, [&](size_t first, size_t count) {
    HWY_DYNAMIC_DISPATCH(MathTarget)(fn, in + first, out + first, count);
  });
}
void MathOnThisThread(MathFn fn, const float* in, float* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(MathTarget)(fn, in, out, n);
}
void PowInt(const float* in, int exponent, float* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(PowIntTarget)(in, exponent, out, n);
}
void PowHalf(const float* in, float* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(PowHalfTarget)(in, out, n);
}

const char* MathFnName(MathFn fn) {
  static const char* const kNames[] = {"exp",  "log",  "tanh", "sigmoid", "erf",   "gelu_erf", "gelu_tanh",
                                       "softplus", "rsqrt", "sin", "cos", "tan", "asin", "acos",
                                       "atan", "sinh", "cosh", "asinh", "acosh", "atanh"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == kMathFnCount, "a name for every MathFn");
  return kNames[static_cast<int>(fn)];
}

const uint32_t* MathExceptionTable(const char* name, size_t* count) {
  for (const math_exceptions::Table& t : math_exceptions::kTables) {
    if (strcmp(t.name, name) == 0) {
      *count = t.count;
      return t.pairs;
    }
  }
  *count = 0;
  return nullptr;
}

void SetMathExceptionsEnabled(bool enabled) {
  math_detail::ExceptionsEnabledFlag().store(enabled, std::memory_order_relaxed);
}

namespace {

namespace mt = math_tables;

uint64_t BitsOf(double x) {
  uint64_t u;
  memcpy(&u, &x, 8);
  return u;
}
double FromBits64(uint64_t u) {
  double x;
  memcpy(&x, &u, 8);
  return x;
}
const double kNaN64 = FromBits64(0x7FF8000000000000ull);
const double kInf64 = FromBits64(0x7FF0000000000000ull);

// sin(pi t), cos(pi t) for 0 <= t <= 1/4.
double SinPiKernel(double t) {
  const double t2 = t * t;
  double q = mt::kSinPiPoly[10];
  for (int k = 9; k >= 0; --k) q = q * t2 + mt::kSinPiPoly[k];
  return t * q;
}
double CosPiKernel(double t) {
  const double t2 = t * t;
  double q = mt::kCosPiPoly[9];
  for (int k = 8; k >= 0; --k) q = q * t2 + mt::kCosPiPoly[k];
  return 1.0 + t2 * q;
}

// |x| reduced modulo 2 into [0, 2), exactly (x finite, |x| < 2^52).
double ReduceMod2(double ax) {
  const int64_t q = static_cast<int64_t>(ax * 0.5);  // truncation
  return ax - 2.0 * static_cast<double>(q);
}

// sin(pi u) or cos(pi u) (want_cos) for u in [0, 2).
double SinCosPiReduced(double u, bool want_cos) {
  double sign = 1.0;
  if (u >= 1.0) {  // sin(pi(u+1)) = -sin(pi u), cos likewise
    u -= 1.0;
    sign = -1.0;
  }
  if (u > 0.5) {  // sin(pi(1-u)) = sin(pi u); cos(pi(1-u)) = -cos(pi u)
    u = 1.0 - u;
    if (want_cos) sign = -sign;
  }
  if (u > 0.25) {  // sin(pi u) = cos(pi (1/2 - u)) and vice versa
    const double v = 0.5 - u;
    return sign * (want_cos ? SinPiKernel(v) : CosPiKernel(v));
  }
  return sign * (want_cos ? CosPiKernel(u) : SinPiKernel(u));
}

}  // namespace

double LogF64(double x) {
  if (x != x) return kNaN64;
  if (x < 0) return kNaN64;
  if (x == 0) return -kInf64;
  if (x == kInf64) return kInf64;
  int64_t adjust = 0;
  if (x < 0x1p-1022) {  // subnormal: scale into the normal range, exactly
    x *= 0x1p54;
    adjust = -54;
  }
  const int64_t bits = static_cast<int64_t>(BitsOf(x));
  const int64_t tmp = bits - static_cast<int64_t>(mt::kLogOffset);
  const int64_t e = tmp >> 52;  // arithmetic shift (C++20 semantics; GCC/Clang in C++17 too)
  const int j = static_cast<int>((tmp >> 44) & 255);
  const uint64_t mbits = static_cast<uint64_t>(bits) - (static_cast<uint64_t>(e) << 52);
  const double m = FromBits64(mbits);
  const double mhi = FromBits64(mbits & ~uint64_t{0x1FFFFF});
  const double mlo = m - mhi;
  const double c = mt::kLogC[j];
  const double r = (mhi * c - 1.0) + mlo * c;
  double q = mt::kLogPoly[5];
  for (int k = 4; k >= 0; --k) q = q * r + mt::kLogPoly[k];
  const double p = r + (r * r) * q;
  const double ed = static_cast<double>(e + adjust);
  const double hi = ed * mt::kLn2Hi + mt::kLogTHi[j];
  const double lo = ed * mt::kLn2Lo + mt::kLogTLo[j];
  return hi + (lo + p);
}

double SinPiF64(double x) {
  if (!(x - x == 0)) return kNaN64;  // inf or NaN
  const double ax = x < 0 ? -x : x;
  const double sign = x < 0 ? -1.0 : 1.0;
  if (ax >= 0x1p52) return sign * 0.0;  // an integer
  return sign * SinCosPiReduced(ReduceMod2(ax), false);
}

double CosPiF64(double x) {
  if (!(x - x == 0)) return kNaN64;
  const double ax = x < 0 ? -x : x;
  if (ax >= 0x1p53) return 1.0;  // an even integer
  if (ax >= 0x1p52) {            // an integer
    return (static_cast<int64_t>(ax) & 1) ? -1.0 : 1.0;
  }
  return SinCosPiReduced(ReduceMod2(ax), true);
}

}  // namespace simd
}  // namespace lockstep
#endif  // HWY_ONCE
