// Per-thread scratch buffers of the kernels that need them (convolutions' padded copies, packed
// weights, partial sums).
#ifndef LOCKSTEP_SIMD_SCRATCH_H_
#define LOCKSTEP_SIMD_SCRATCH_H_

#include <stddef.h>

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

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_SCRATCH_H_
