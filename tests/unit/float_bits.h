// Bit-level helpers for tests that compare floats exactly.
#ifndef LOCKSTEP_TESTS_UNIT_FLOAT_BITS_H_
#define LOCKSTEP_TESTS_UNIT_FLOAT_BITS_H_

#include <stdint.h>
#include <string.h>

#include <vector>

namespace lockstep {
namespace testing {

inline uint32_t Bits(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return u;
}

inline float FromBits(uint32_t u) {
  float x;
  memcpy(&x, &u, 4);
  return x;
}

// Deterministic test values: a mix of ordinary numbers and every special class, about one value
// in special_every special (a third of those infinite or NaN: a sum of many of them is NaN).
inline std::vector<float> MixedValues(size_t n, uint32_t seed, uint32_t special_every = 7) {
  static const uint32_t kSpecials[] = {
      0x00000000u, 0x80000000u,  // +-0
      0x00000001u, 0x807FFFFFu,  // subnormals
      0x00800000u, 0x7F7FFFFFu,  // smallest normal, largest finite
      0x7F800000u, 0xFF800000u,  // +-inf
      0x7FC00000u, 0xFFC00001u,  // NaNs with other sign and payload
      0x3F800000u, 0xBF800000u,  // +-1
  };
  std::vector<float> out(n);
  uint32_t state = seed * 2654435761u + 12345u;
  for (size_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    if (state % special_every == 0) {
      out[i] = FromBits(kSpecials[(state >> 8) % (sizeof(kSpecials) / 4)]);
    } else {
      // |x| in about [2^-10, 2^10), either sign.
      const uint32_t exponent = 117 + ((state >> 4) % 20);
      out[i] = FromBits(((state >> 31) << 31) | (exponent << 23) | ((state * 2246822519u) >> 9));
    }
  }
  return out;
}

}  // namespace testing
}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_UNIT_FLOAT_BITS_H_
