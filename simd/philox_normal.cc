// Normal draws by Box-Muller in float64 (see philox.h for the exact formula).
#include "simd/math.h"
#include "simd/philox.h"

namespace lockstep {
namespace simd {

namespace {
// The IEEE square root (one correctly rounded instruction on every target), not a libm call.
inline double SqrtF64(double x) { return __builtin_sqrt(x); }
}  // namespace

void PhiloxNormal(uint64_t seed, uint64_t stream, uint64_t first, float mean, float std,
                  float* out, size_t n) {
  constexpr double kTwoToMinus32 = 1.0 / 4294967296.0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t index = first + i;
    const uint64_t pair = index / 2;
    uint32_t words[2];
    PhiloxUint32(seed, stream, 2 * pair, words, 2);
    const double u1 = (static_cast<double>(words[0]) + 0.5) * kTwoToMinus32;
    const double u2 = static_cast<double>(words[1]) * kTwoToMinus32;
    const double minus_two_log = -2.0 * LogF64(u1);
    const double radius = SqrtF64(minus_two_log);
    const double angle = 2.0 * u2;
    const double z = radius * (index % 2 == 0 ? CosPiF64(angle) : SinPiF64(angle));
    const float scaled = std * static_cast<float>(z);
    out[i] = mean + scaled;
  }
}

}  // namespace simd
}  // namespace lockstep
