#include "core/parallel/batch_reduce.h"

#include <string.h>

#include <algorithm>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/ops_internal.h"
#include "core/parallel/pairwise_tree.h"

namespace lockstep {
namespace parallel {

namespace {

// On more than two ranks, a result whose copies to every other rank would exceed this many bytes is
// finished in slices (the bytes of a ring all-reduce, for one more exchange's latency); smaller
// ones go to every rank whole.
constexpr size_t kSliceBytes = 16 * 1024;

// Where the rows and groups of one reduction lie, the same on every rank.
struct Plan {
  int ranks = 1, me = 0;
  int64_t group_rows = 1, rows = 0, groups = 0;
  std::vector<int64_t> row_start;           // ranks + 1: rank j holds rows [row_start[j], row_start[j + 1])
  std::vector<int64_t> group_first, group_end;  // rank j computes groups [group_first[j], group_end[j])

  int64_t GroupEnd(int64_t g) const { return std::min(rows, (g + 1) * group_rows); }
  int64_t MyRows() const { return row_start[me + 1] - row_start[me]; }
};

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

Plan MakePlan(const ActiveBatch& batch, int64_t local_rows, int64_t group_rows) {
  Plan p;
  p.ranks = batch.dp->size();
  p.me = batch.dp->rank();
  p.group_rows = group_rows;
  const int64_t samples = batch.end() - batch.begin();
  LOCKSTEP_REQUIRE_STATE(local_rows % samples == 0,
                         "data-parallel: a batch reduction over " << local_rows << " rows does not run over this rank's "
                                                                  << samples << " samples of the batch (only reductions over "
                                                                  << "the batch dimension can be combined over ranks)");
  const int64_t per_sample = local_rows / samples;
  for (int j = 0; j <= p.ranks; ++j) p.row_start.push_back(batch.bounds[static_cast<size_t>(j)] * per_sample);
  p.rows = p.row_start.back();
  p.groups = CeilDiv(p.rows, group_rows);
  for (int j = 0; j < p.ranks; ++j) {
    // Rank j computes the groups whose first row it holds.
    p.group_first.push_back(CeilDiv(p.row_start[j], group_rows));
    p.group_end.push_back(CeilDiv(p.row_start[j + 1], group_rows));
  }
  return p;
}

bool AnySplitGroup(const Plan& p) {
  for (int j = 1; j < p.ranks; ++j) {
    if (p.row_start[j] % p.group_rows != 0) return true;
  }
  return false;
}

// Runs the tree's remaining additions over `inner` floats: slots [0, given) are the given nodes
// (node i at nodes + i * stride), the result goes to out.
void FinishTree(int64_t groups, const std::vector<GroupRange>& ranges, const float* nodes, size_t stride, int64_t inner,
                float* out) {
  int64_t root = 0;
  const std::vector<TreeStep> steps = CompletionSteps(groups, ranges, &root);
  const int64_t given = static_cast<int64_t>(ranges.size());
  Tensor scratch = Tensor::Empty({static_cast<int64_t>(steps.size()) * inner});
  auto slot = [&](int64_t s) -> float* {
    return s < given ? const_cast<float*>(nodes) + static_cast<size_t>(s) * stride : scratch.data_f32() + (s - given) * inner;
  };
  const Kernels kernels;
  for (const TreeStep& step : steps) {
    kernels.Binary(backend::BinaryOp::kAdd, slot(step.left), slot(step.right), slot(step.out), static_cast<size_t>(inner));
  }
  CopyFloats(slot(root), out, static_cast<size_t>(inner));
}

// A [rows, cols] copy from strides (row_stride, col_stride) into rows `ld` floats apart.
backend::StridedCopyCall MatrixCopy(const float* from, int64_t rows, int64_t cols, int64_t row_stride,
                                    int64_t col_stride, float* to, int64_t ld) {
  backend::StridedCopyCall call{};
  call.rank = 2;
  call.shape[0] = rows;
  call.shape[1] = cols;
  call.src_strides[0] = row_stride;
  call.src_strides[1] = col_stride;
  call.dst_strides[0] = ld;
  call.dst_strides[1] = 1;
  call.src = from;
  call.dst = to;
  return call;
}

}  // namespace

void ReduceOverRanks(const ActiveBatch& batch, const RowReduction& r, float* result) {
  DataParallel& dp = *batch.dp;
  const Plan p = MakePlan(batch, r.local_rows, r.group_rows);
  const int64_t out = r.out_floats;
  if (out == 0) return;
  if (p.rows == 0) {  // nothing to sum anywhere: the empty sum, as one process computes it
    r.reduce(0, 0, result);
    return;
  }
  const int me = p.me;
  const int64_t first_group = p.group_first[me], end_group = p.group_end[me];
  const int64_t my_groups = end_group - first_group;

  // 1. Split groups: the rows of a group that starts on an earlier rank go to that rank; the last
  // group this rank computes may need rows from later ranks.
  const int64_t prf = r.packed_row_floats;
  Tensor assembled;  // the last group's rows, packed, when they are not all here
  int64_t assembled_rows = 0, own_packed_rows = 0;
  if (AnySplitGroup(p)) {
    std::vector<size_t> send_bytes(static_cast<size_t>(p.ranks), 0), recv_bytes(static_cast<size_t>(p.ranks), 0);
    Tensor outgoing;
    if (p.row_start[me] % p.group_rows != 0) {
      const int64_t g = p.row_start[me] / p.group_rows;
      const int64_t count = std::min(p.GroupEnd(g), p.row_start[me + 1]) - p.row_start[me];
      int owner = me;
      while (p.row_start[owner] > g * p.group_rows) --owner;
      outgoing = Tensor::Empty({count * prf});
      r.pack(0, count, outgoing.data_f32());
      send_bytes[static_cast<size_t>(owner)] = static_cast<size_t>(count * prf) * sizeof(float);
    }
    if (my_groups > 0 && p.GroupEnd(end_group - 1) > p.row_start[me + 1]) {
      const int64_t g = end_group - 1, group_end = p.GroupEnd(g);
      own_packed_rows = p.row_start[me + 1] - g * p.group_rows;
      assembled_rows = group_end - g * p.group_rows;
      for (int j = me + 1; j < p.ranks && p.row_start[j] < group_end; ++j) {
        const int64_t count = std::min(group_end, p.row_start[j + 1]) - p.row_start[j];
        recv_bytes[static_cast<size_t>(j)] = static_cast<size_t>(count * prf) * sizeof(float);
      }
      assembled = Tensor::Empty({assembled_rows * prf});
      r.pack(g * p.group_rows - p.row_start[me], own_packed_rows, assembled.data_f32());
    }
    float* incoming = assembled.defined() ? assembled.data_f32() + own_packed_rows * prf : nullptr;
    dp.AllToAll(outgoing.defined() ? outgoing.data_f32() : nullptr, send_bytes, incoming, recv_bytes);
  }

  // 2. This rank's groups, then its whole subtrees.
  Tensor partials = Tensor::Empty({std::max<int64_t>(my_groups, 1) * out});
  float* part = partials.data_f32();
  for (int64_t g = first_group; g < end_group; ++g) {
    float* dst = part + (g - first_group) * out;
    const int64_t group_end = p.GroupEnd(g);
    if (group_end <= p.row_start[me + 1]) {
      r.reduce(g * p.group_rows - p.row_start[me], group_end - g * p.group_rows, dst);
    } else {
      r.reduce_packed(assembled.data_f32(), assembled_rows, dst);
    }
  }
  std::vector<GroupRange> all_nodes;
  std::vector<int64_t> node_count(static_cast<size_t>(p.ranks));
  for (int j = 0; j < p.ranks; ++j) {
    const std::vector<GroupRange> nodes = CoverNodes(p.groups, p.group_first[j], p.group_end[j]);
    node_count[static_cast<size_t>(j)] = static_cast<int64_t>(nodes.size());
    all_nodes.insert(all_nodes.end(), nodes.begin(), nodes.end());
  }
  const std::vector<GroupRange> mine = CoverNodes(p.groups, first_group, end_group);
  Tensor sums = Tensor::Empty({std::max<int64_t>(static_cast<int64_t>(mine.size()), 1) * out});
  for (size_t i = 0; i < mine.size(); ++i) {
    float* node = part + (mine[i].first - first_group) * out;
    CombinePairwise(node, mine[i].end - mine[i].first, out);
    CopyFloats(node, sums.data_f32() + static_cast<int64_t>(i) * out, static_cast<size_t>(out));
  }
  if (p.ranks == 1) {
    CopyFloats(sums.data_f32(), result, static_cast<size_t>(out));
    return;
  }

  // 3. Exchange the subtree sums and finish the tree.
  const int64_t total_nodes = static_cast<int64_t>(all_nodes.size());
  if (p.ranks <= 2 || static_cast<size_t>(out * (p.ranks - 1)) * sizeof(float) < kSliceBytes) {
    std::vector<size_t> bytes;
    for (const int64_t n : node_count) bytes.push_back(static_cast<size_t>(n * out) * sizeof(float));
    Tensor gathered = Tensor::Empty({total_nodes * out});
    dp.AllGather(sums.data_f32(), gathered.data_f32(), bytes);
    FinishTree(p.groups, all_nodes, gathered.data_f32(), static_cast<size_t>(out), out, result);
    return;
  }
  // Rank j finishes elements [slice[j], slice[j + 1]) of every node.
  std::vector<int64_t> slice;
  for (int j = 0; j <= p.ranks; ++j) slice.push_back(out * j / p.ranks);
  const int64_t my_slice = slice[me + 1] - slice[me];
  const int64_t my_nodes = static_cast<int64_t>(mine.size());
  Tensor send = Tensor::Empty({std::max<int64_t>(my_nodes * out, 1)});
  std::vector<size_t> send_bytes, recv_bytes;
  float* s = send.data_f32();
  for (int j = 0; j < p.ranks; ++j) {
    const int64_t width = slice[j + 1] - slice[j];
    for (int64_t i = 0; i < my_nodes; ++i) {
      CopyFloats(sums.data_f32() + i * out + slice[j], s, static_cast<size_t>(width));
      s += width;
    }
    send_bytes.push_back(static_cast<size_t>(my_nodes * width) * sizeof(float));
    recv_bytes.push_back(static_cast<size_t>(node_count[static_cast<size_t>(j)] * my_slice) * sizeof(float));
  }
  Tensor received = Tensor::Empty({std::max<int64_t>(total_nodes * my_slice, 1)});
  dp.AllToAll(send.data_f32(), send_bytes, received.data_f32(), recv_bytes);
  Tensor finished = Tensor::Empty({std::max<int64_t>(my_slice, 1)});
  FinishTree(p.groups, all_nodes, received.data_f32(), static_cast<size_t>(my_slice), my_slice, finished.data_f32());
  std::vector<size_t> slice_bytes;
  for (int j = 0; j < p.ranks; ++j) slice_bytes.push_back(static_cast<size_t>(slice[j + 1] - slice[j]) * sizeof(float));
  dp.AllGather(finished.data_f32(), result, slice_bytes);
}

void GemmOverRanks(const ActiveBatch& batch, const backend::GemmCall& args, int64_t k_per_group) {
  const size_t m = args.m, n = args.n;
  RowReduction r;
  r.local_rows = static_cast<int64_t>(args.k);
  r.group_rows = k_per_group;
  r.out_floats = static_cast<int64_t>(m * n);
  r.packed_row_floats = static_cast<int64_t>(m + n);
  const Kernels kernels;
  r.reduce = [&](int64_t first, int64_t count, float* out) {
    backend::GemmCall part = args;
    const size_t f = static_cast<size_t>(first);
    part.k = static_cast<size_t>(count);
    part.a = args.trans_a ? args.a + f * args.lda : args.a + f;
    part.b = args.trans_b ? args.b + f : args.b + f * args.ldb;
    part.c = out;
    part.ldc = n;
    kernels.Gemm(&part);
  };
  // A packed row k: column k of A (m floats), then row k of B (n floats).
  r.pack = [&](int64_t first, int64_t count, float* packed) {
    const int64_t lda = static_cast<int64_t>(args.lda), ldb = static_cast<int64_t>(args.ldb);
    const int64_t width = static_cast<int64_t>(m + n);
    const backend::StridedCopyCall a_columns = MatrixCopy(
        args.trans_a ? args.a + first * lda : args.a + first, count, static_cast<int64_t>(m),
        args.trans_a ? lda : 1, args.trans_a ? 1 : lda, packed, width);
    const backend::StridedCopyCall b_rows = MatrixCopy(
        args.trans_b ? args.b + first : args.b + first * ldb, count, static_cast<int64_t>(n),
        args.trans_b ? 1 : ldb, args.trans_b ? ldb : 1, packed + m, width);
    kernels.StridedCopy(&a_columns);
    kernels.StridedCopy(&b_rows);
  };
  r.reduce_packed = [&](const float* packed, int64_t count, float* out) {
    backend::GemmCall g;
    g.trans_a = true;
    g.m = m; g.n = n; g.k = static_cast<size_t>(count);
    g.a = packed; g.lda = m + n;
    g.b = packed + m; g.ldb = m + n;
    g.c = out; g.ldc = n;
    kernels.Gemm(&g);
  };
  Tensor result = Tensor::Empty({static_cast<int64_t>(m * n)});
  ReduceOverRanks(batch, r, result.data_f32());
  const backend::StridedCopyCall into_c = MatrixCopy(result.data_f32(), static_cast<int64_t>(m), static_cast<int64_t>(n),
                                                     static_cast<int64_t>(n), 1, args.c, static_cast<int64_t>(args.ldc));
  kernels.StridedCopy(&into_c);
}

Tensor SumRowsOverRanks(const ActiveBatch& batch, const Tensor& x2d, int64_t rows_per_group) {
  const int64_t inner = x2d.shape()[1];
  const float* x = x2d.data_f32();
  RowReduction r;
  r.local_rows = x2d.shape()[0];
  r.group_rows = rows_per_group;
  r.out_floats = inner;
  r.packed_row_floats = inner;
  const Kernels kernels;
  r.reduce = [&](int64_t first, int64_t count, float* out) {
    kernels.SumAxis(x + first * inner, 1, static_cast<size_t>(count), static_cast<size_t>(inner), out);
  };
  r.pack = [&](int64_t first, int64_t count, float* packed) {
    CopyFloats(x + first * inner, packed, static_cast<size_t>(count * inner));
  };
  r.reduce_packed = [&](const float* packed, int64_t count, float* out) {
    kernels.SumAxis(packed, 1, static_cast<size_t>(count), static_cast<size_t>(inner), out);
  };
  Tensor result = Tensor::Empty({inner});
  ReduceOverRanks(batch, r, result.data_f32());
  return result;
}

Tensor GatherRowsOverRanks(const ActiveBatch& batch, const Tensor& local) {
  const Plan p = MakePlan(batch, local.shape()[0], 1);
  const int64_t width = local.numel() / std::max<int64_t>(local.shape()[0], 1);
  const size_t element = DTypeSize(local.dtype());
  std::vector<size_t> bytes;
  for (int j = 0; j < p.ranks; ++j) {
    bytes.push_back(static_cast<size_t>((p.row_start[j + 1] - p.row_start[j]) * width) * element);
  }
  Tensor all = Tensor::Empty({p.rows, width}, local.dtype());
  const Tensor mine = local.Contiguous();
  auto raw = [](const Tensor& t) -> void* {
    return t.dtype() == DType::kFloat32 ? static_cast<void*>(t.data_f32())
           : t.dtype() == DType::kInt64 ? static_cast<void*>(t.data_i64())
                                        : static_cast<void*>(t.data_i32());
  };
  batch.dp->AllGather(raw(mine), raw(all), bytes);
  return all;
}

Tensor ScatterAddOverRanks(const Tensor& ids_in, const Tensor& rows_in, const Shape& table) {
  const ActiveBatch* batch = CurrentBatch();
  LOCKSTEP_REQUIRE_STATE(batch != nullptr,
                         "embedding: the backward pass of a data-parallel batch must run inside its BatchScope");
  DataParallel& dp = *batch->dp;
  const int ranks = dp.size(), me = dp.rank();
  const int64_t num = table[0], dim = table[1], n = ids_in.numel();
  const Tensor ids = ids_in.Contiguous(), rows = ContiguousData(rows_in, "embedding");
  std::vector<int64_t> first_row;  // rank j owns table rows [first_row[j], first_row[j + 1])
  for (int j = 0; j <= ranks; ++j) first_row.push_back(num * j / ranks);
  auto owner = [&](int64_t id) {
    int j = static_cast<int>(id * ranks / std::max<int64_t>(num, 1));
    while (first_row[j + 1] <= id) ++j;
    while (first_row[j] > id) --j;
    return j;
  };
  // How many rows this rank sends each rank, and receives from each.
  std::vector<int64_t> sending(static_cast<size_t>(ranks), 0), receiving(static_cast<size_t>(ranks), 0);
  const int64_t* id = ids.data_i64();  // host memory: data-parallel batches run on the CPU
  for (int64_t i = 0; i < n; ++i) ++sending[static_cast<size_t>(owner(id[i]))];
  const std::vector<size_t> one_count(static_cast<size_t>(ranks), sizeof(int64_t));
  dp.AllToAll(sending.data(), one_count, receiving.data(), one_count);
  // A row travels as its id (as a float32 pair) and its values; in batch order within each bucket.
  const int64_t stride = dim + 2;
  std::vector<int64_t> bucket_start(static_cast<size_t>(ranks) + 1, 0);
  for (int j = 0; j < ranks; ++j) bucket_start[j + 1] = bucket_start[j] + sending[static_cast<size_t>(j)];
  Tensor send = Tensor::Empty({std::max<int64_t>(n * stride, 1)});
  std::vector<int64_t> fill(bucket_start.begin(), bucket_start.end() - 1);
  for (int64_t i = 0; i < n; ++i) {
    float* slot = send.data_f32() + fill[static_cast<size_t>(owner(id[i]))]++ * stride;
    memcpy(slot, &id[i], sizeof(int64_t));
    // host memory: data-parallel batches run on the CPU (BatchScope)
    std::copy(rows.data_f32() + i * dim, rows.data_f32() + (i + 1) * dim, slot + 2);
  }
  std::vector<size_t> send_bytes, recv_bytes;
  int64_t incoming = 0;
  for (int j = 0; j < ranks; ++j) {
    send_bytes.push_back(static_cast<size_t>(sending[static_cast<size_t>(j)] * stride) * sizeof(float));
    recv_bytes.push_back(static_cast<size_t>(receiving[static_cast<size_t>(j)] * stride) * sizeof(float));
    incoming += receiving[static_cast<size_t>(j)];
  }
  Tensor received = Tensor::Empty({std::max<int64_t>(incoming * stride, 1)});
  dp.AllToAll(send.data_f32(), send_bytes, received.data_f32(), recv_bytes);
  // The owned slice: zeros, then the received rows in rank order (batch order), as one process.
  const int64_t owned = first_row[me + 1] - first_row[me];
  std::vector<int64_t> local_ids(static_cast<size_t>(incoming));
  Tensor values = Tensor::Empty({std::max<int64_t>(incoming * dim, 1)});
  for (int64_t i = 0; i < incoming; ++i) {
    // host memory: data-parallel batches run on the CPU (BatchScope)
    const float* slot = received.data_f32() + i * stride;
    memcpy(&local_ids[static_cast<size_t>(i)], slot, sizeof(int64_t));
    local_ids[static_cast<size_t>(i)] -= first_row[me];
    // host memory: data-parallel batches run on the CPU (BatchScope)
    std::copy(slot + 2, slot + 2 + dim, values.data_f32() + i * dim);
  }
  Tensor slice = Tensor::Zeros({std::max<int64_t>(owned * dim, 1)});
  const Tensor slice_ids = Tensor::FromInt64({incoming}, local_ids);
  Kernels().ScatterAddRows(slice_ids.data_i64(), static_cast<size_t>(incoming), static_cast<size_t>(dim),
                           values.data_f32(), slice.data_f32());
  Tensor out = Tensor::Empty(table);
  std::vector<size_t> slice_bytes;
  for (int j = 0; j < ranks; ++j) slice_bytes.push_back(static_cast<size_t>((first_row[j + 1] - first_row[j]) * dim) * sizeof(float));
  dp.AllGather(slice.data_f32(), out.data_f32(), slice_bytes);
  return out;
}

void RequireNotWholeBatchSum(const Tensor& a, const char* op) {
  const ActiveBatch* batch = CurrentBatch();
  if (batch == nullptr || a.dim() == 0 || a.size(0) != batch->end() - batch->begin() || !NeedsGrad({a})) return;
  LOCKSTEP_REQUIRE_STATE(false, op << ": a sum over a whole data-parallel batch " << ShapeString(a.shape())
                                   << " is not batch-grouped, so the ranks cannot reproduce it; reduce the batch with "
                                      "a loss (cross_entropy, nll_loss) or train in one process");
}

}  // namespace parallel
}  // namespace lockstep
