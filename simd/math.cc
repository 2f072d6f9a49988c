// Dispatch for the elementary functions (compiled once per Highway target by foreach_target.h,
// chosen once per call), the exception-table hooks for tools, and the scalar float64 helpers
// LogF64 / SinPiF64 / CosPiF64 (plain C++: basic operations only, no libm).
#include "simd/math.h"

// WebAssembly: Highway 1.0.3's WASM target has no float64 lanes, so this file alone is built for
// EMU128 (portable C++ lanes; the same operation sequence as every other target, whose bits the
// x86 tests prove identical), called by static dispatch. math-inl.h forwards to it there.
#if defined(__wasm__) || defined(__EMSCRIPTEN__)
#undef HWY_COMPILE_ONLY_STATIC
#undef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ONLY_EMU128 1
#define LOCKSTEP_MATH_STATIC_DISPATCH 1
#else
#define LOCKSTEP_MATH_STATIC_DISPATCH 0
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/math.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "simd/math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {

void MathTarget(MathFn fn, const float* in, float* out, size_t n) { ApplyMath(fn, in, out, n); }
void PowIntTarget(const float* in, int exponent, float* out, size_t n) {
  ApplyPowInt(in, exponent, out, n);
}
void PowHalfTarget(const float* in, float* out, size_t n) { ApplyPowHalf(in, out, n); }

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <string.h>

#include "simd/math_lookup.h"
#include "simd/math_tables.h"
#include "simd/thread_pool.h"

namespace lockstep {
namespace simd {

#if LOCKSTEP_MATH_STATIC_DISPATCH
void Math(MathFn fn, const float* in, float* out, size_t n) {
  HWY_STATIC_DISPATCH(MathTarget)(fn, in, out, n);
}
void PowInt(const float* in, int exponent, float* out, size_t n) {
  HWY_STATIC_DISPATCH(PowIntTarget)(in, exponent, out, n);
}
void PowHalf(const float* in, float* out, size_t n) {
  HWY_STATIC_DISPATCH(PowHalfTarget)(in, out, n);
}
#else
HWY_EXPORT(MathTarget);
HWY_EXPORT(PowIntTarget);
HWY_EXPORT(PowHalfTarget);

void Math(MathFn fn, const float* in, float* out, size_t n) {
  // Each result depends on its input alone (correct rounding), so large arrays are split across
  // the thread pool in chunks of whole vectors without changing a bit.
  constexpr size_t kChunk = size_t{1} << 14;
  if (n < 2 * kChunk) {
    HWY_DYNAMIC_DISPATCH(MathTarget)(fn, in, out, n);
    return;
  }
  const std::shared_ptr<ThreadPool> held = DefaultThreadPool();  // alive until the tasks are done
  ThreadPool& pool = *held;
  if (pool.num_threads() == 1) {
    HWY_DYNAMIC_DISPATCH(MathTarget)(fn, in, out, n);
    return;
  }
  pool.ParallelFor((n + kChunk - 1) / kChunk, [&](size_t chunk, size_t) {
    const size_t first = chunk * kChunk, count = n - first < kChunk ? n - first : kChunk;
    HWY_DYNAMIC_DISPATCH(MathTarget)(fn, in + first, out + first, count);
  });
}
void PowInt(const float* in, int exponent, float* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(PowIntTarget)(in, exponent, out, n);
}
void PowHalf(const float* in, float* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(PowHalfTarget)(in, out, n);
}
#endif

const char* MathFnName(MathFn fn) {
  static const char* const kNames[] = {"exp", "log", "tanh", "sigmoid", "erf",
                                       "gelu_erf", "gelu_tanh", "softplus", "rsqrt"};
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
