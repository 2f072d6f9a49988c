// Helpers shared by the op implementations and the backward rules (not part of the public API).
#ifndef LOCKSTEP_CORE_OPS_INTERNAL_H_
#define LOCKSTEP_CORE_OPS_INTERNAL_H_

#include <stdint.h>

#include "core/tensor.h"
#include "simd/gemm.h"

namespace lockstep {

// Sums the rows of a contiguous [rows, inner] tensor: groups of rows_per_group rows each in the
// canonical order, the group results combined by the pairwise tree -> [inner].
Tensor BatchGroupedSumRows(const Tensor& x2d, int64_t rows_per_group);
// Combines count partial rows of `inner` floats in place by the pairwise tree (result in row 0).
void CombinePairwise(float* partials, int64_t count, int64_t inner);
// A GEMM whose K dimension runs over batch samples: K is cut into groups of k_per_group, each
// group's product computed K-sequentially, and the group products combined by the pairwise tree.
void GemmBatchGrouped(const simd::GemmArgs& args, int64_t k_per_group);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_OPS_INTERNAL_H_
