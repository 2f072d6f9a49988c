// Batch-dimension reductions spread over the ranks of the active batch (data_parallel.h): each rank
// holds rows [row_begin, row_end) of the K rows being summed (samples times rows per sample), the
// rows are cut into the contract's groups, and the group results are combined by the pairwise tree
// over group index, exactly as one process would: the result is the single-process one, bit for
// bit, on every rank (docs/distributed.md).
//
//   1. A group whose rows lie on more than one rank (only when there are fewer groups than ranks)
//      is computed by the rank holding its first row: the others send it their rows.
//   2. Each rank sums its groups into the fewest whole subtrees of the tree (CoverNodes): a rank
//      holding groups 0-7 of 16 sends one sum, not eight.
//   3. The subtree sums are exchanged and the rest of the tree is added in its fixed order: by every
//      rank for small results; for large ones each rank finishes a slice of the elements and the
//      slices are gathered (the reduce-scatter and all-gather of a ring all-reduce, same bytes).
#ifndef LOCKSTEP_CORE_PARALLEL_BATCH_REDUCE_H_
#define LOCKSTEP_CORE_PARALLEL_BATCH_REDUCE_H_

#include <stdint.h>

#include <functional>

#include "core/parallel/data_parallel.h"
#include "core/tensor.h"
#include "core/backend/kernel_table.h"

namespace lockstep {
namespace parallel {

// One reduction over this rank's `local_rows` rows (its share of the batch times the rows each
// sample contributes) in groups of `group_rows` global rows; a partial result has `out_floats`
// floats; a row sent to another rank has `packed_row_floats` floats.
struct RowReduction {
  int64_t local_rows = 0, group_rows = 0, out_floats = 0, packed_row_floats = 0;
  // The partial of local rows [first, first + count) into out (device memory).
  std::function<void(int64_t first, int64_t count, float* out)> reduce;
  // Local rows [first, first + count) as packed rows, and the partial of packed rows (device memory).
  std::function<void(int64_t first, int64_t count, float* packed)> pack;
  std::function<void(const float* packed, int64_t count, float* out)> reduce_packed;
};

// The single-process result of r over the whole batch, on every rank, into result (out_floats floats).
void ReduceOverRanks(const ActiveBatch& batch, const RowReduction& r, float* result);

// GemmBatchGrouped (core/ops_internal.h) over the ranks: args.k is this rank's K rows.
void GemmOverRanks(const ActiveBatch& batch, const backend::GemmCall& args, int64_t k_per_group);
// BatchGroupedSumRows over the ranks: x2d [local rows, inner] -> [inner].
Tensor SumRowsOverRanks(const ActiveBatch& batch, const Tensor& x2d, int64_t rows_per_group);
// The rows of every rank, in batch order: local [local rows, width] -> [global rows, width] (any
// dtype), on every rank.
Tensor GatherRowsOverRanks(const ActiveBatch& batch, const Tensor& local);
// An embedding's gradient in the active batch: table [num, dim] = zeros, then row ids[i] += rows[i]
// for every row of every rank in batch order, as one process adds them (for each table row, its
// additions in batch order). Rank j owns table rows [num * j / R, num * (j + 1) / R): every rank
// sends each of its rows to the owner of its id, the owners add them, and the owned slices are
// gathered, so a rank sends about its own rows once, whatever the number of ranks. The result is
// on every rank; kState outside a BatchScope.
Tensor ScatterAddOverRanks(const Tensor& ids, const Tensor& rows, const Shape& table);
// Refuses (kState) a sum or mean over all of a tensor whose first dimension is this rank's share of
// the active batch while gradients are recorded: such a reduction is not batch-grouped, so no
// split of the batch can reproduce it (a loss with reduction "mean" over a batch is NllLoss's job).
void RequireNotWholeBatchSum(const Tensor& a, const char* op);

}  // namespace parallel
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_PARALLEL_BATCH_REDUCE_H_
