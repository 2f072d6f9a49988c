// Softmax and log-softmax over the last axis of a [rows, cols] array, composed from the contract's
// kernels so each step has one defined result:
//   m = max(row)                      (contract max: NaN propagates)
//   s_i = x_i - m                     (float subtraction)
//   e_i = exp(s_i)                    (correctly rounded)
//   total = canonical sum of e        (docs/numerics.md, rule 3)
//   softmax_i = e_i / total           (one division)
//   log_softmax_i = s_i - log(total)  (correctly rounded log, one subtraction)
// A row of all -inf (or containing +inf or NaN) gives NaN, as in PyTorch.
#ifndef LOCKSTEP_SIMD_SOFTMAX_H_
#define LOCKSTEP_SIMD_SOFTMAX_H_

#include <stddef.h>

namespace lockstep {
namespace simd {

void Softmax(const float* x, size_t rows, size_t cols, float* out);
void LogSoftmax(const float* x, size_t rows, size_t cols, float* out);

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_SOFTMAX_H_
