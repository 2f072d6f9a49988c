// Per-thread scratch buffers of the kernels that need them (convolutions' padded copies, packed
// weights, partial sums).
#ifndef LOCKSTEP_SIMD_SCRATCH_H_
#define LOCKSTEP_SIMD_SCRATCH_H_

#include <stddef.h>
#include <stdint.h>

#include <vector>

namespace lockstep {
namespace simd {

// A scratch vector of at least n elements, kept between calls. It never shrinks: the layers of a
// model ask for different sizes in turn, and growing a vector back value-initialises (zero-fills)
// its new part, a serial pass over memory the caller overwrites anyway.
inline float* AtLeast(std::vector<float>* v, size_t n) {
  if (v->size() < n) v->resize(n);
  return v->data();
}

// The same, its start on a 64-byte boundary: a vector load from a buffer that std::vector aligns
// to 16 bytes straddles two cache lines three times in four on AVX-512.
inline float* AtLeastAligned(std::vector<float>* v, size_t n) {
  float* const base = AtLeast(v, n + 16);
  const size_t misalignment = reinterpret_cast<uintptr_t>(base) % 64;
  return misalignment == 0 ? base : base + (64 - misalignment) / sizeof(float);
}

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_SCRATCH_H_
