// Rounding to integers on the host without libm (the contract computes nothing through a platform's
// math library): exact for every double below 2^52 in magnitude, which coordinates and sizes are.
#ifndef LOCKSTEP_ONNX_HOST_ROUNDING_H_
#define LOCKSTEP_ONNX_HOST_ROUNDING_H_

#include <stdint.h>

namespace lockstep {
namespace onnx {

inline double FloorOf(double x) {
  const double t = static_cast<double>(static_cast<int64_t>(x));  // toward zero
  return t > x ? t - 1.0 : t;
}

inline double CeilOf(double x) { return -FloorOf(-x); }

// To nearest, ties to even (C's nearbyint in the default rounding mode).
inline double RoundHalfEvenOf(double x) {
  const double t = FloorOf(x), r = x - t;
  if (r > 0.5) return t + 1.0;
  if (r < 0.5) return t;
  return static_cast<int64_t>(t) % 2 == 0 ? t : t + 1.0;
}

inline double AbsOf(double x) { return x < 0.0 ? -x : x; }

}  // namespace onnx
}  // namespace lockstep

#endif  // LOCKSTEP_ONNX_HOST_ROUNDING_H_
