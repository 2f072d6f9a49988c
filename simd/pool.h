// Pooling kernels (docs/numerics.md, rule 4, "Pooling").
#ifndef LOCKSTEP_SIMD_POOL_H_
#define LOCKSTEP_SIMD_POOL_H_

#include <stddef.h>
#include <stdint.h>

namespace lockstep {
namespace simd {

class ThreadPool;

// Max pooling over 2x2 windows with stride 2 and no padding, `planes` planes of h x w into
// h_out x w_out (h_out <= h / 2, w_out <= w / 2): each output is the first maximum of its window
// in row-major order under the contract's order (NaN above everything, +0 above -0), stored
// canonical; argmax is its index in the plane.
void MaxPool2x2(const float* x, size_t planes, size_t h, size_t w, size_t h_out, size_t w_out, float* out,
                int64_t* argmax, ThreadPool* pool = nullptr);

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_POOL_H_
