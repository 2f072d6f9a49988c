// Philox4x32-10 (Salmon et al., SC'11), counter-based and integer-only, so every machine draws the
// same numbers (docs/numerics.md, rule 7). A draw is a pure function of (seed, stream, index):
// it never depends on the thread count or on which element was drawn first.
//   key     = (seed low 32 bits, seed high 32 bits)
//   counter = (block low, block high, stream low, stream high), block = index / 4
//   word    = output word index % 4 of that block
#ifndef LOCKSTEP_SIMD_PHILOX_H_
#define LOCKSTEP_SIMD_PHILOX_H_

#include <stddef.h>
#include <stdint.h>

#include <array>

namespace lockstep {
namespace simd {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

// The raw block function.
PhiloxCounter Philox4x32_10(PhiloxCounter counter, PhiloxKey key);

// out[i] = word (first + i) of the stream.
void PhiloxUint32(uint64_t seed, uint64_t stream, uint64_t first, uint32_t* out, size_t n);

// Uniform in [0, 1): (u >> 8) * 2^-24, exact in float32.
void PhiloxUniform(uint64_t seed, uint64_t stream, uint64_t first, float* out, size_t n);

// Uniform in [low, high): low + (high - low) * u, one multiply then one add, in float32.
void PhiloxUniformRange(uint64_t seed, uint64_t stream, uint64_t first, float low, float high,
                        float* out, size_t n);

// Normal(mean, std): Box-Muller in float64 on word pairs (2j, 2j+1) of the stream, element
// first + i taking the cosine (even index) or sine (odd index) branch of its pair:
//   u1 = (w_even + 0.5) * 2^-32, u2 = w_odd * 2^-32, r = sqrt(-2 log u1),
//   z = r * cospi(2 u2) or r * sinpi(2 u2), rounded once to float32; then mean + std * z in
//   float32 (multiply, then add).
void PhiloxNormal(uint64_t seed, uint64_t stream, uint64_t first, float mean, float std,
                  float* out, size_t n);

// Dropout mask: keep element i when (u >> 8) >= round(p * 2^24); out[i] = scale when kept, else
// 0, with scale = 1 / (1 - p) computed once in float32 (0 when p == 1).
void PhiloxDropoutMask(uint64_t seed, uint64_t stream, uint64_t first, float p, float* out,
                       size_t n);

// The keep threshold of PhiloxDropoutMask: round(p * 2^24) for p in [0, 1].
uint32_t DropoutThreshold(float p);

// Words 4 first_block .. 4 (first_block + blocks) - 1 of a stream, one block per SIMD lane
// (philox_blocks.cc): the words of Philox4x32_10, for the functions above. blocks must be a
// multiple of PhiloxBlockLanes(), and the block counter's low word must not wrap inside a call.
void PhiloxBlocks(uint64_t seed, uint64_t stream, uint64_t first_block, size_t blocks, uint32_t* out);
size_t PhiloxBlockLanes();
// out[i] = scale where (words[i] >> 8) >= threshold, else +0 (PhiloxDropoutMask's last step).
void DropoutFromWords(const uint32_t* words, size_t n, uint32_t threshold, float scale, float* out);

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_PHILOX_H_
