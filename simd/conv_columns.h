// A layer's weights times its transposed columns where the columns are few: a batch of one's late
// stages (ResNet's 7x7 planes, 49 columns against 512 channels). simd::Gemm vectorises over the
// columns, so 49 of them fill four vectors of 16 lanes (a quarter empty); here the columns past the
// last whole vector, when they are few, run as vectors of eight output channels instead.
#ifndef LOCKSTEP_SIMD_CONV_COLUMNS_H_
#define LOCKSTEP_SIMD_CONV_COLUMNS_H_

#include <stddef.h>

namespace lockstep {
namespace simd {

class ThreadPool;

// c[co * ldc + j] = sum over p < k, in increasing p, of w[co * k + p] * cols[p * n + j] (each
// product rounded, then added; the first product is the sum's start), stored canonical: Gemm's
// bits with the weights as A. For co < c_out, j < n, ldc >= n. Returns false, computing nothing,
// on targets without eight-channel tiles (the caller runs the GEMM).
bool NarrowColumnsProduct(const float* w, size_t c_out, size_t k, const float* cols, size_t n, float* c, size_t ldc,
                          ThreadPool* pool);

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_CONV_COLUMNS_H_
