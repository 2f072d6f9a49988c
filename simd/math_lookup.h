// Scalar side of the elementary functions' exception mechanism (see docs/numerics-math.md): the
// generated tables of math_exceptions.h, how a kernel finds the one for its function, and the
// binary search done for the rare lanes whose fast float64 result fails the rounding test.
// Plain C++ (no Highway), included once per translation unit.
#ifndef LOCKSTEP_SIMD_MATH_LOOKUP_H_
#define LOCKSTEP_SIMD_MATH_LOOKUP_H_

#include <stddef.h>
#include <stdint.h>

#include <atomic>

#include "simd/math.h"
#include "simd/math_exceptions.h"

namespace lockstep {
namespace simd {
namespace math_detail {

using ExceptionTable = math_exceptions::Table;

// Table order (fixed by tools/prove-math): the MathFn in enum order, then pow_int_-4 .. 4.
constexpr int kPowTableFirst = kMathFnCount;
static_assert(sizeof(math_exceptions::kTables) / sizeof(math_exceptions::kTables[0]) == kMathFnCount + 9,
              "math_exceptions.h must list every MathFn and pow_int_-4..4");

inline std::atomic<bool>& ExceptionsEnabledFlag() {
  static std::atomic<bool> enabled{true};
  return enabled;
}

// nullptr when the tables are disabled (tools only) or the function has none.
inline const ExceptionTable* TableForFn(int fn_index) {
  if (!ExceptionsEnabledFlag().load(std::memory_order_relaxed)) return nullptr;
  return &math_exceptions::kTables[fn_index];
}
inline const ExceptionTable* TableForPowInt(int exponent) {
  if (exponent < -4 || exponent > 4) return nullptr;
  return TableForFn(kPowTableFirst + exponent + 4);
}

// Binary search of the sorted pairs; true and *out set when `in` is listed.
inline bool LookupException(const ExceptionTable* t, uint32_t in, uint32_t* out) {
  size_t lo = 0, hi = t->count;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const uint32_t key = t->pairs[2 * mid];
    if (key == in) {
      *out = t->pairs[2 * mid + 1];
      return true;
    }
    if (key < in) lo = mid + 1; else hi = mid;
  }
  return false;
}

}  // namespace math_detail
}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_MATH_LOOKUP_H_
