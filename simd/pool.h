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
// canonical; argmax is its index in the plane (argmax null: the outputs alone, as in inference).
void MaxPool2x2(const float* x, size_t planes, size_t h, size_t w, size_t h_out, size_t w_out, float* out,
                int64_t* argmax, ThreadPool* pool = nullptr);

// Max pooling over kh x kw windows with any stride and padding (padding_h, padding_w before the
// first row and column; a window may also run past the input's end, as with ceil_mode): each
// output is the first maximum, in row-major order, of the window's taps inside the input, under
// the same order as MaxPool2x2, stored canonical; argmax is its index in the plane (or null). Strides 1 and
// 2 are vectorised over output columns where whole windows lie inside the input; the rest runs
// the same scan one output at a time. Every window must hold at least one input element.
struct MaxPoolShape {
  size_t planes = 0, h = 0, w = 0, h_out = 0, w_out = 0;
  size_t kh = 0, kw = 0, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
};
void MaxPool(const MaxPoolShape& s, const float* x, float* out, int64_t* argmax, ThreadPool* pool = nullptr);

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_POOL_H_
