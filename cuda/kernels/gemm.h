// The GEMM body (simd/gemm.h's definition): each call computes one tile of outputs, every output
// summing its K products in increasing k from -0.0 (so K == 0 gives +0 and a -0 product stays -0),
// then storing the canonical NaN for any NaN.
#ifndef LOCKSTEP_CUDA_KERNELS_GEMM_H_
#define LOCKSTEP_CUDA_KERNELS_GEMM_H_

#include "core/backend/kernel_table.h"
#include "cuda/kernels/portable.h"

namespace lockstep {
namespace cuda {

// Each call computes a tile of up to kGemmRows x kGemmColumns outputs: every A element loaded is
// used kGemmColumns times and every B element kGemmRows times, in registers.
constexpr size_t kGemmRows = 4, kGemmColumns = 4;

struct GemmBody {
  backend::GemmCall g;
  size_t column_groups;  // ceil(n / kGemmColumns); tiles run along rows of column groups
  LS_HD void operator()(size_t t) const {
    const size_t i0 = (t / column_groups) * kGemmRows, j0 = (t % column_groups) * kGemmColumns;
    const size_t rows = g.m - i0 < kGemmRows ? g.m - i0 : kGemmRows;
    const size_t cols = g.n - j0 < kGemmColumns ? g.n - j0 : kGemmColumns;
    float acc[kGemmRows][kGemmColumns];
    for (size_t r = 0; r < kGemmRows; ++r) {
      for (size_t c = 0; c < kGemmColumns; ++c) acc[r][c] = g.k == 0 ? 0.0f : -0.0f;
    }
    for (size_t p = 0; p < g.k; ++p) {
      float a[kGemmRows], b[kGemmColumns];
      for (size_t r = 0; r < rows; ++r) {
        const size_t i = i0 + r;
        a[r] = g.trans_a ? g.a[p * g.lda + i] : g.a[i * g.lda + p];
      }
      for (size_t c = 0; c < cols; ++c) {
        const size_t j = j0 + c;
        b[c] = g.trans_b ? g.b[j * g.ldb + p] : g.b[p * g.ldb + j];
      }
      for (size_t r = 0; r < rows; ++r) {
        for (size_t c = 0; c < cols; ++c) {
          const float product = a[r] * b[c];
          acc[r][c] = acc[r][c] + product;
        }
      }
    }
    for (size_t r = 0; r < rows; ++r) {
      for (size_t c = 0; c < cols; ++c) {
        const float sum = g.bias != nullptr ? acc[r][c] + g.bias[j0 + c] : acc[r][c];
        g.c[(i0 + r) * g.ldc + j0 + c] = Canonical(sum);
      }
    }
  }
};

// The batch-grouped product's data movement: a partial moving up a level, and the combined
// result into C's rows.
struct CopyBody {
  const float* from;
  float* to;
  LS_HD void operator()(size_t i) const { to[i] = from[i]; }
};
struct RowCopyBody {
  const float* from;  // [m, n], contiguous
  size_t n;
  float* c;
  size_t ldc;
  LS_HD void operator()(size_t i) const { c[(i / n) * ldc + i % n] = from[i]; }
};

}  // namespace cuda
}  // namespace lockstep

#endif  // LOCKSTEP_CUDA_KERNELS_GEMM_H_
