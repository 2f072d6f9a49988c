// The GEMM body (simd/gemm.h's definition): each call computes up to kGemmColumns adjacent outputs
// of one row, every output summing its K products in increasing k from -0.0 (so K == 0 gives +0
// and a -0 product stays -0), then storing the canonical NaN for any NaN.
#ifndef LOCKSTEP_CUDA_KERNELS_GEMM_H_
#define LOCKSTEP_CUDA_KERNELS_GEMM_H_

#include "core/backend/kernel_table.h"
#include "cuda/kernels/portable.h"

namespace lockstep {
namespace cuda {

constexpr size_t kGemmColumns = 4;

struct GemmBody {
  backend::GemmCall g;
  size_t column_groups;  // ceil(n / kGemmColumns)
  LS_HD void operator()(size_t t) const {
    const size_t i = t / column_groups, j0 = (t % column_groups) * kGemmColumns;
    const size_t count = g.n - j0 < kGemmColumns ? g.n - j0 : kGemmColumns;
    float acc[kGemmColumns];
    for (size_t c = 0; c < kGemmColumns; ++c) acc[c] = g.k == 0 ? 0.0f : -0.0f;
    for (size_t p = 0; p < g.k; ++p) {
      const float a = g.trans_a ? g.a[p * g.lda + i] : g.a[i * g.lda + p];
      for (size_t c = 0; c < count; ++c) {
        const size_t j = j0 + c;
        const float b = g.trans_b ? g.b[j * g.ldb + p] : g.b[p * g.ldb + j];
        const float product = a * b;
        acc[c] = acc[c] + product;
      }
    }
    for (size_t c = 0; c < count; ++c) g.c[i * g.ldc + j0 + c] = Canonical(acc[c]);
  }
};

}  // namespace cuda
}  // namespace lockstep

#endif  // LOCKSTEP_CUDA_KERNELS_GEMM_H_
