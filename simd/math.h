// The project's own elementary functions (numerical contract, rule 5). Every float32 function here
// is CORRECTLY ROUNDED (round to nearest, ties to even, of the exact real result) for all 2^32
// inputs, proven exhaustively by tools/prove-math (results in docs/numerics-math.md), so its bits
// do not depend on the SIMD target, the platform or the implementation.
//
// Special values follow IEEE 754 / C99 Annex F: every NaN written is 0x7FC00000; subnormal inputs
// and outputs are honoured (never flushed); overflow gives +-inf and underflow +-0 or a subnormal,
// as correct rounding dictates. Particular cases: log(+-0) = -inf, log(x < 0) = NaN,
// log(+inf) = +inf; rsqrt(+0) = +inf, rsqrt(-0) = -inf, rsqrt(x < 0) = NaN, rsqrt(+inf) = +0;
// tanh, erf: odd, +-1 at +-inf; sigmoid(-inf) = +0, sigmoid(+inf) = 1; softplus(-inf) = +0;
// gelu_*(-inf) = -0 (the limit), gelu_*(+inf) = +inf, gelu_*(-0) = -0; sin, cos, tan of +-inf = NaN;
// asin, acos of |x| > 1 = NaN; acosh(x < 1) = NaN; atanh(+-1) = +-inf, atanh(|x| > 1) = NaN;
// sin, tan, asin, atan, sinh, asinh, atanh keep the sign of a zero.
//
// Plain declarations; the per-target code is in math_fast-inl.h (float32 first steps) and
// math-inl.h (float64 evaluation), dispatch in math.cc and math_float64.cc.
#ifndef LOCKSTEP_SIMD_MATH_H_
#define LOCKSTEP_SIMD_MATH_H_

#include <stddef.h>
#include <stdint.h>

namespace lockstep {
namespace simd {

enum class MathFn {
  kExp,       // e^x
  kLog,       // natural logarithm
  kTanh,      // hyperbolic tangent
  kSigmoid,   // 1 / (1 + e^-x)
  kErf,       // error function
  kGeluErf,   // x/2 (1 + erf(x / sqrt 2))
  kGeluTanh,  // x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), exact real constants
  kSoftplus,  // log(1 + e^x)
  kRsqrt,     // 1 / sqrt(x)
  kSin,       // sine (radians)
  kCos,       // cosine
  kTan,       // tangent
  kAsin,      // inverse sine, in [-pi/2, pi/2]
  kAcos,      // inverse cosine, in [0, pi]
  kAtan,      // inverse tangent, in [-pi/2, pi/2]
  kSinh,      // hyperbolic sine
  kCosh,      // hyperbolic cosine
  kAsinh,     // inverse hyperbolic sine
  kAcosh,     // inverse hyperbolic cosine
  kAtanh,     // inverse hyperbolic tangent
};
constexpr int kMathFnCount = 20;

// out[i] = fn(in[i]), correctly rounded. out may alias in.
void Math(MathFn fn, const float* in, float* out, size_t n);
// The same on the calling thread alone (no pool): for kernels that call it from their own tasks.
void MathOnThisThread(MathFn fn, const float* in, float* out, size_t n);
// out[i] = in[i]^exponent with IEEE pow semantics for the specials (x^0 = 1 for every x, NaN
// included; pow(+-0, negative odd) = +-inf, ...). Proven correctly rounded for
// kPowIntProvenMin <= exponent <= kPowIntProvenMax; other exponents are computed by a fixed
// square-and-multiply sequence in float64 (deterministic everywhere, relative error before the final
// rounding about 2^-53 times |exponent|, not proven correctly rounded).
constexpr int kPowIntProvenMin = -4;
constexpr int kPowIntProvenMax = 4;
void PowInt(const float* in, int exponent, float* out, size_t n);
// out[i] = pow(in[i], 0.5): the IEEE square root except pow(-0, 0.5) = +0 and pow(-inf, 0.5) = +inf.
void PowHalf(const float* in, float* out, size_t n);

// "exp", "log", "tanh", "sigmoid", "erf", "gelu_erf", "gelu_tanh", "softplus", "rsqrt", "sin", "cos",
// "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh".
const char* MathFnName(MathFn fn);

// Scalar float64 helpers for Box-Muller normals (contract rule 7): deterministic (a fixed sequence
// of IEEE basic operations, no libm), accurate to a few ulp, NOT correctly rounded.
double LogF64(double x);     // natural log; log(+-0) = -inf, log(x < 0) = NaN
double SinPiF64(double x);   // sin(pi x); meant for x in [0, 2], accepts any finite x
double CosPiF64(double x);   // cos(pi x); likewise

// The float64 evaluation alone, on every lane (exception tables included): what Math and PowInt
// (exponents other than 0, 1, 2, -1) compute for the lanes their float32 first step leaves
// undecided and for the functions without one. Both give the correctly rounded result, so the
// bits are the same; tests and tools compare the two.
void MathFloat64(MathFn fn, const float* in, float* out, size_t n);
void PowIntFloat64(const float* in, int exponent, float* out, size_t n);

// ---- For tools/prove-math and tests only ----
// The exception table compiled in for a function: pairs (input bits, correctly rounded output
// bits), sorted by input, consulted only for lanes whose fast float64 result fails the rounding
// test. Names: MathFnName(fn), or "pow_int_<e>" for PowInt (e.g. "pow_int_-2"). *count = number of
// pairs; returns nullptr (and 0) for an unknown name.
const uint32_t* MathExceptionTable(const char* name, size_t* count);
// Disables (false) or re-enables the exception tables process-wide, so that the proof tool can
// see the fast path alone when it regenerates them. Never call this in a program that trains.
void SetMathExceptionsEnabled(bool enabled);

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_MATH_H_
