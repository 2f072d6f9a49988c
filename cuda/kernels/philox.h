// Philox4x32-10 dropout masks (simd/philox.h): element i draws word first + i of the stream.
#ifndef LOCKSTEP_CUDA_KERNELS_PHILOX_H_
#define LOCKSTEP_CUDA_KERNELS_PHILOX_H_

#include "cuda/kernels/portable.h"

namespace lockstep {
namespace cuda {

// Word `index` of stream (seed, stream): counter (block lo, block hi, stream lo, stream hi),
// key (seed lo, seed hi), block = index / 4.
LS_HD uint32_t PhiloxWord(uint64_t seed, uint64_t stream, uint64_t index) {
  const uint64_t block = index / 4;
  uint32_t c0 = static_cast<uint32_t>(block), c1 = static_cast<uint32_t>(block >> 32);
  uint32_t c2 = static_cast<uint32_t>(stream), c3 = static_cast<uint32_t>(stream >> 32);
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const uint64_t p0 = uint64_t{0xD2511F53u} * c0, p1 = uint64_t{0xCD9E8D57u} * c2;
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    const uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
  }
  switch (index % 4) {
    case 0: return c0;
    case 1: return c1;
    case 2: return c2;
    default: return c3;
  }
}

// Keep when (word >> 8) >= threshold; threshold and scale come from the host (simd's
// DropoutThreshold and 1 / (1 - p) in float32).
struct DropoutBody {
  uint64_t seed, stream, first;
  uint32_t threshold;
  float scale;
  float* out;
  LS_HD void operator()(size_t i) const {
    out[i] = (PhiloxWord(seed, stream, first + i) >> 8) >= threshold ? scale : 0.0f;
  }
};

}  // namespace cuda
}  // namespace lockstep

#endif  // LOCKSTEP_CUDA_KERNELS_PHILOX_H_
