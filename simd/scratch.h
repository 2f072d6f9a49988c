// Per-thread scratch buffers of the kernels that need them (convolutions' padded copies, packed
// weights, partial sums, per-element parameter tables).
#ifndef LOCKSTEP_SIMD_SCRATCH_H_
#define LOCKSTEP_SIMD_SCRATCH_H_

#include <stddef.h>

#include <algorithm>
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

// values[j] (`otherwise` throughout where values is null) repeated `times` times for j < count, in
// order, into table: per-element parameters for kernels that run several channels' planes as one
// array (batch normalisation on small planes).
inline const float* RepeatEach(const float* values, float otherwise, size_t count, size_t times,
                               std::vector<float>* table) {
  table->resize(count * times);
  for (size_t j = 0; j < count; ++j) {
    std::fill(table->begin() + j * times, table->begin() + (j + 1) * times, values != nullptr ? values[j] : otherwise);
  }
  return table->data();
}

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_SCRATCH_H_
