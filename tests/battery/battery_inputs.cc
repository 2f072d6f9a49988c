#include "tests/battery/battery_inputs.h"

#include <string.h>

#include "simd/philox.h"

namespace lockstep {
namespace battery {

namespace {

constexpr uint64_t kBatterySeed = 20261130;

float FromBits(uint32_t u) {
  float x;
  memcpy(&x, &u, 4);
  return x;
}

}  // namespace

std::vector<float> MixedInputs(size_t n, uint64_t stream) {
  static const uint32_t kSpecials[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u,
                                       0x007FFFFFu, 0x00400000u, 0x00800000u, 0x80800000u,
                                       0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F800000u, 0xFF800000u,
                                       0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFFFFFFFu,
                                       0x3F800000u, 0xBF800000u, 0x3F000000u, 0x4B000001u};
  std::vector<uint32_t> words(2 * n);
  simd::PhiloxUint32(kBatterySeed, stream, 0, words.data(), words.size());
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t kind = words[2 * i] % 16, w = words[2 * i + 1];
    if (kind < 2) {
      out[i] = FromBits(kSpecials[w % (sizeof(kSpecials) / 4)]);
    } else if (kind < 4) {
      out[i] = FromBits(w);  // any bit pattern at all
    } else {
      // |x| in [2^-20, 2^20), random sign and mantissa.
      const uint32_t exponent = 107 + (w >> 24) % 40;
      out[i] = FromBits((w & 0x80000000u) | (exponent << 23) | (w & 0x7FFFFFu));
    }
  }
  return out;
}

std::vector<float> ModerateInputs(size_t n, uint64_t stream) {
  std::vector<uint32_t> words(n);
  simd::PhiloxUint32(kBatterySeed, stream, 0, words.data(), n);
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t w = words[i];
    const uint32_t exponent = 119 + (w >> 24) % 16;
    out[i] = FromBits((w & 0x80000000u) | (exponent << 23) | (w & 0x7FFFFFu));
  }
  return out;
}

const std::vector<size_t>& BatteryLengths() {
  static const std::vector<size_t> lengths = [] {
    std::vector<size_t> v;
    for (size_t n = 0; n <= 3 * 64; ++n) v.push_back(n);
    for (size_t n : {255, 256, 257, 1000, 4095, 4096, 4097, 8193, 12345}) v.push_back(n);
    return v;
  }();
  return lengths;
}

}  // namespace battery
}  // namespace lockstep
