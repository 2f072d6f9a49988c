// LayerNorm over the rows of a [rows, d] array, forward and input gradient, each in one pass per
// row instead of a dozen passes over whole tensors. The same operations on the same values, so the
// same bits as these steps (every operation rounded to float32, every stored NaN canonical, sums
// in the canonical order of simd/reduce.h, rsqrt correctly rounded, simd/math.h):
//   forward, per row:  mean = sum(x) / d;  c = x - mean;  var = sum(c * c) / d;
//                      rstd = rsqrt(var + eps);  xhat = c * rstd;  out = xhat * w + b
//                      (w and b optional: out = xhat without them)
//   backward, per row: dxhat = g * w (g without w);  m1 = sum(dxhat) / d;
//                      m2 = sum(dxhat * xhat) / d;  dx = ((dxhat - m1) - xhat * m2) * rstd
// The device plugin (cuda/kernel_table_impl.h) runs exactly these steps one after another.
#ifndef LOCKSTEP_SIMD_LAYER_NORM_H_
#define LOCKSTEP_SIMD_LAYER_NORM_H_

#include <stddef.h>

namespace lockstep {
namespace simd {

// weight, bias: d floats each, or null. Writes xhat [rows, d], rstd [rows] and out [rows, d].
void LayerNormRows(const float* x, const float* weight, const float* bias, float eps, size_t rows, size_t d,
                   float* xhat, float* rstd, float* out);

// weight: d floats or null. Writes dx [rows, d] (dx may not alias the inputs).
void LayerNormRowsBackward(const float* g, const float* weight, const float* xhat, const float* rstd, size_t rows,
                           size_t d, float* dx);

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_LAYER_NORM_H_
