#include "simd/philox.h"

namespace lockstep {
namespace simd {

namespace {

constexpr uint32_t kMultiplier0 = 0xD2511F53u, kMultiplier1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;

inline void MulHiLo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  const uint64_t product = uint64_t{a} * b;
  *hi = static_cast<uint32_t>(product >> 32);
  *lo = static_cast<uint32_t>(product);
}

PhiloxCounter BlockAt(uint64_t seed, uint64_t stream, uint64_t block) {
  return Philox4x32_10({static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32),
                        static_cast<uint32_t>(stream), static_cast<uint32_t>(stream >> 32)},
                       {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
}

// Calls f(i, word) for the n words starting at word index `first`: whole runs of blocks are drawn
// by PhiloxBlocks into a buffer (a block per SIMD lane), the partial blocks at either end and runs
// that would wrap the block counter's low word one block at a time.
template <class Func>
void ForEachWord(uint64_t seed, uint64_t stream, uint64_t first, size_t n, const Func& f) {
  constexpr size_t kRunBlocks = 256;
  uint32_t words[4 * kRunBlocks];
  const size_t lanes = PhiloxBlockLanes();
  size_t i = 0;
  while (i < n) {
    const uint64_t index = first + i;
    const uint64_t block = index / 4;
    size_t run = (n - i) / 4;
    if (run > kRunBlocks) run = kRunBlocks;
    run -= run % lanes;
    const bool wraps = (block & 0xFFFFFFFFull) + run > 0x100000000ull;
    if (index % 4 == 0 && run != 0 && !wraps) {
      PhiloxBlocks(seed, stream, block, run, words);
      for (size_t w = 0; w < 4 * run; ++w, ++i) f(i, words[w]);
      continue;
    }
    const PhiloxCounter one = BlockAt(seed, stream, block);
    for (unsigned w = static_cast<unsigned>(index % 4); w < 4 && i < n; ++w, ++i) f(i, one[w]);
  }
}

}  // namespace

PhiloxCounter Philox4x32_10(PhiloxCounter ctr, PhiloxKey key) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += kWeyl0;
      key[1] += kWeyl1;
    }
    uint32_t hi0, lo0, hi1, lo1;
    MulHiLo(kMultiplier0, ctr[0], &hi0, &lo0);
    MulHiLo(kMultiplier1, ctr[2], &hi1, &lo1);
    ctr = {hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0};
  }
  return ctr;
}

void PhiloxUint32(uint64_t seed, uint64_t stream, uint64_t first, uint32_t* out, size_t n) {
  ForEachWord(seed, stream, first, n, [&](size_t i, uint32_t word) { out[i] = word; });
}

void PhiloxUniform(uint64_t seed, uint64_t stream, uint64_t first, float* out, size_t n) {
  constexpr float kTwoToMinus24 = 1.0f / 16777216.0f;
  ForEachWord(seed, stream, first, n, [&](size_t i, uint32_t word) {
    out[i] = static_cast<float>(word >> 8) * kTwoToMinus24;
  });
}

void PhiloxUniformRange(uint64_t seed, uint64_t stream, uint64_t first, float low, float high,
                        float* out, size_t n) {
  PhiloxUniform(seed, stream, first, out, n);
  const float width = high - low;
  for (size_t i = 0; i < n; ++i) {
    const float scaled = width * out[i];
    out[i] = low + scaled;
  }
}

uint32_t DropoutThreshold(float p) {
  // p * 2^24 is exact in float64; round half to even by adding and subtracting 2^52.
  const double scaled = static_cast<double>(p) * 16777216.0;
  const double rounded = (scaled + 4503599627370496.0) - 4503599627370496.0;
  return static_cast<uint32_t>(rounded);
}

void PhiloxDropoutMask(uint64_t seed, uint64_t stream, uint64_t first, float p, float* out,
                       size_t n) {
  const uint32_t threshold = DropoutThreshold(p);
  const float scale = p >= 1.0f ? 0.0f : 1.0f / (1.0f - p);
  constexpr size_t kChunk = 1024;
  uint32_t words[kChunk];
  for (size_t i = 0; i < n; i += kChunk) {
    const size_t m = n - i < kChunk ? n - i : kChunk;
    PhiloxUint32(seed, stream, first + i, words, m);
    DropoutFromWords(words, m, threshold, scale, out + i);
  }
}

}  // namespace simd
}  // namespace lockstep
