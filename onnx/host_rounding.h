// Rounding to integers on the host without libm (the contract computes nothing through a platform's
// math library): exact for every double; at and above 2^52 in magnitude (already an integer),
// infinities and NaN are returned as they are.
#ifndef LOCKSTEP_ONNX_HOST_ROUNDING_H_
#define LOCKSTEP_ONNX_HOST_ROUNDING_H_

#include <stdint.h>

namespace lockstep {
namespace onnx {

inline double FloorOf(double x) {
  if (!(x > -4503599627370496.0 && x < 4503599627370496.0)) return x;  // |x| >= 2^52, inf, NaN
  const double t = static_cast<double>(static_cast<int64_t>(x));  // toward zero
  return t > x ? t - 1.0 : t;
}

inline double CeilOf(double x) { return -FloorOf(-x); }

// To nearest, ties to even (C's nearbyint in the default rounding mode).
inline double RoundHalfEvenOf(double x) {
  if (!(x > -4503599627370496.0 && x < 4503599627370496.0)) return x;
  const double t = FloorOf(x), r = x - t;
  if (r > 0.5) return t + 1.0;
  if (r < 0.5) return t;
  return static_cast<int64_t>(t) % 2 == 0 ? t : t + 1.0;
}

inline double AbsOf(double x) { return x < 0.0 ? -x : x; }

// An integral double as an index: clamped into +-2^62 (far outside any tensor), NaN to -2^62, so
// that values from data (coordinates) never overflow the conversion.
inline int64_t ClampedIndex(double x) {
  const double limit = 4611686018427387904.0;  // 2^62
  if (!(x > -limit)) return -static_cast<int64_t>(limit);
  if (x > limit) return static_cast<int64_t>(limit);
  return static_cast<int64_t>(x);
}

}  // namespace onnx
}  // namespace lockstep

#endif  // LOCKSTEP_ONNX_HOST_ROUNDING_H_
