#include "core/trace/bits_hash.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/io/byte_order.h"

namespace lockstep {
namespace trace {
namespace {

uint64_t Fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

// A little-endian 64-bit word (a plain load on little-endian hosts, so the loop still vectorises).
inline uint64_t LittleEndianWord(const uint8_t* p) {
  if (kHostIsLittleEndian) {
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
  }
  return LoadLittleEndian64(p);
}

}  // namespace

// x86-64: also compiled for AVX2 and AVX-512 machines (64-bit multiplies vectorise with AVX-512);
// integer arithmetic, so every version gives the same hash.
#if defined(__x86_64__) && defined(__linux__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
HashSums BitsHashTerms(const void* data, size_t bytes, uint64_t first_word) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  const size_t full = bytes / 8;
  uint64_t s0 = 0, s1 = 0;
  // (i + 1) * P as running sums: one multiply per word and lane instead of two.
  uint64_t step0 = (first_word + 1) * kHashP0, step1 = (first_word + 1) * kHashP1;
  // Full words without a branch in the loop (it vectorises where 64-bit multiplies do), then the
  // zero-padded last word.
  for (size_t i = 0; i < full; ++i) {
    const uint64_t w = LittleEndianWord(p + 8 * i);
    const uint64_t x0 = (w + step0) * kHashQ0;
    const uint64_t x1 = (w + step1) * kHashQ1;
    step0 += kHashP0;
    step1 += kHashP1;
    s0 += x0 ^ (x0 >> 31);
    s1 += x1 ^ (x1 >> 31);
  }
  if (bytes % 8 != 0) {
    uint8_t last[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    memcpy(last, p + 8 * full, bytes - 8 * full);
    const uint64_t w = LittleEndianWord(last);
    const uint64_t x0 = (w + step0) * kHashQ0;
    const uint64_t x1 = (w + step1) * kHashQ1;
    s0 += x0 ^ (x0 >> 31);
    s1 += x1 ^ (x1 >> 31);
  }
  return HashSums{s0, s1};
}

std::string FinishBitsHash(const HashSums& sums, size_t total_bytes) {
  const uint64_t h0 = Fmix64(sums.s0 ^ (static_cast<uint64_t>(total_bytes) * kHashP0));
  const uint64_t h1 = Fmix64(sums.s1 ^ (static_cast<uint64_t>(total_bytes) * kHashP1));
  char text[33];
  snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(h0),
           static_cast<unsigned long long>(h1));
  return text;
}

std::string BitsHash(const void* data, size_t bytes) { return FinishBitsHash(BitsHashTerms(data, bytes, 0), bytes); }

}  // namespace trace
}  // namespace lockstep
