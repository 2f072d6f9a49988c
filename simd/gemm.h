// Matrix product C = op(A) * op(B), float32, row-major (docs/numerics.md, rule 4):
// every output element sums its K products in increasing k, each product rounded and then added
// (c = a0*b0; c = c + a1*b1; ...). Packing, blocking and threading change where data lives and
// who computes a tile, never the order of arithmetic, so the bits are the same for every SIMD
// target and every thread count. K == 0 gives +0.
#ifndef LOCKSTEP_SIMD_GEMM_H_
#define LOCKSTEP_SIMD_GEMM_H_

#include <stddef.h>

namespace lockstep {
namespace simd {

class ThreadPool;

struct GemmArgs {
  bool trans_a = false;  // A is stored as [k, m] (lda >= m) instead of [m, k] (lda >= k)
  bool trans_b = false;  // B is stored as [n, k] (ldb >= k) instead of [k, n] (ldb >= n)
  size_t m = 0, n = 0, k = 0;
  const float* a = nullptr;
  size_t lda = 0;
  const float* b = nullptr;
  size_t ldb = 0;
  float* c = nullptr;  // [m, n], ldc >= n; must not overlap A or B
  size_t ldc = 0;
  // The operands of the next product of a batch (same shapes and strides), or null: Gemm issues
  // prefetches for them before it starts, so they arrive while this product runs (a batch of
  // attention's small products ran at half speed from cold operands). Results never depend on them.
  const float* next_a = nullptr;
  const float* next_b = nullptr;
  // [n] or null (Gemm only; GemmBatchGrouped takes none): each output becomes its sum plus bias[j], one more rounded addition,
  // exactly as adding the bias to the stored product (a Linear layer's), without that extra pass.
  const float* bias = nullptr;
};

// Runs on pool (the default pool when null).
void Gemm(const GemmArgs& args, ThreadPool* pool = nullptr);

// The definition, one output at a time: the reference the tests compare against.
void GemmReference(const GemmArgs& args);

// The batch-grouped product of weight gradients (docs/numerics.md, section 4): K split into groups of
// k_per_group (the last may be shorter); each group's products summed as by Gemm into a partial
// C, and the partials combined by adjacent pairs, level by level, an odd last one moving up
// unchanged. One pass: each register tile's partials are combined as they are made, in that tree,
// instead of being stored as groups full-size matrices and added after.
void GemmBatchGrouped(const GemmArgs& args, size_t k_per_group, ThreadPool* pool = nullptr);
// The definition: a Gemm per group, then the pairwise combination.
void GemmBatchGroupedReference(const GemmArgs& args, size_t k_per_group);

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_GEMM_H_
