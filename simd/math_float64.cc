// The float64 evaluation of the elementary functions (math-inl.h) as a function of its own:
// math.cc calls it for the lanes its float32 first step leaves undecided and for the functions
// without one; tests and tools call it to compare the two paths.
//
// WebAssembly: Highway 1.0.3's WASM target has no float64 lanes, so this file alone is built for
// EMU128 (portable lanes, the same operation sequence as every other target, whose bits the x86
// tests prove identical), called by static dispatch.
#include "simd/math.h"

#if defined(__wasm__) || defined(__EMSCRIPTEN__)
#undef HWY_COMPILE_ONLY_STATIC
#undef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ONLY_EMU128 1
#define LOCKSTEP_MATH_FLOAT64_STATIC_DISPATCH 1
#else
#define LOCKSTEP_MATH_FLOAT64_STATIC_DISPATCH 0
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/math_float64.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "simd/math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {

void MathFloat64Target(MathFn fn, const float* in, float* out, size_t n) {
  ApplyMathFloat64(fn, in, out, n);
}
void PowIntFloat64Target(const float* in, int exponent, float* out, size_t n) {
  ApplyPowIntFloat64(in, exponent, out, n);
}

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lockstep {
namespace simd {

#if LOCKSTEP_MATH_FLOAT64_STATIC_DISPATCH
void MathFloat64(MathFn fn, const float* in, float* out, size_t n) {
  HWY_STATIC_DISPATCH(MathFloat64Target)(fn, in, out, n);
}
void PowIntFloat64(const float* in, int exponent, float* out, size_t n) {
  HWY_STATIC_DISPATCH(PowIntFloat64Target)(in, exponent, out, n);
}
#else
HWY_EXPORT(MathFloat64Target);
HWY_EXPORT(PowIntFloat64Target);

void MathFloat64(MathFn fn, const float* in, float* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(MathFloat64Target)(fn, in, out, n);
}
void PowIntFloat64(const float* in, int exponent, float* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(PowIntFloat64Target)(in, exponent, out, n);
}
#endif

}  // namespace simd
}  // namespace lockstep
#endif  // HWY_ONCE
