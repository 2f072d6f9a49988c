// Reduction kernel bodies (the semantics of simd/reduce.h). The canonical sum of a sequence: 64
// virtual lanes, each adding its elements in increasing index from -0.0, folded by a halving tree;
// sequences longer than 4096 are cut into blocks whose results combine by a pairwise tree over
// adjacent blocks. One call computes one block (stage 1) or combines one output's blocks (stage 2),
// so long reductions run in parallel without changing the order.
#ifndef LOCKSTEP_CUDA_KERNELS_REDUCE_H_
#define LOCKSTEP_CUDA_KERNELS_REDUCE_H_

#include "cuda/kernels/portable.h"

namespace lockstep {
namespace cuda {

constexpr size_t kReduceLanes = 64;
constexpr size_t kReduceBlock = 4096;

LS_HD size_t BlockCount(size_t len) { return (len + kReduceBlock - 1) / kReduceBlock; }

// Canonical sum of load(i) for i in [start, end), end - start <= kReduceBlock.
template <class Load>
LS_HD float BlockSum(const Load& load, size_t start, size_t end) {
  float lanes[kReduceLanes];
  for (size_t l = 0; l < kReduceLanes; ++l) lanes[l] = -0.0f;
  for (size_t i = start; i < end; ++i) {
    float& lane = lanes[(i - start) % kReduceLanes];
    lane = lane + load(i);
  }
  for (size_t width = kReduceLanes / 2; width >= 1; width /= 2) {
    for (size_t l = 0; l < width; ++l) lanes[l] = lanes[l] + lanes[l + width];
  }
  return lanes[0];
}

// Adjacent pairs, level by level; an odd last partial moves up unchanged. Overwrites partials.
LS_HD float CombinePairwise(float* partials, size_t count) {
  while (count > 1) {
    size_t next = 0;
    for (size_t i = 0; i + 1 < count; i += 2) partials[next++] = partials[i] + partials[i + 1];
    if (count % 2 == 1) partials[next++] = partials[count - 1];
    count = next;
  }
  return partials[0];
}

// The canonical sum of load(i), i < len, in one thread: its blocks in order, combined as they
// complete (a stack of complete subtrees, merged while the top two are the same size, then folded
// from the top), which is the pairwise tree over adjacent blocks.
template <class Load>
LS_HD float CanonicalSum(const Load& load, size_t len) {
  if (len == 0) return 0.0f;
  float sums[64];
  size_t sizes[64];
  size_t depth = 0;
  for (size_t start = 0; start < len; start += kReduceBlock) {
    const size_t end = start + kReduceBlock < len ? start + kReduceBlock : len;
    sums[depth] = BlockSum(load, start, end);
    sizes[depth++] = 1;
    while (depth >= 2 && sizes[depth - 1] == sizes[depth - 2]) {
      sums[depth - 2] = sums[depth - 2] + sums[depth - 1];
      sizes[depth - 2] *= 2;
      --depth;
    }
  }
  float total = sums[depth - 1];
  for (size_t d = depth - 1; d-- > 0;) total = sums[d] + total;
  return total;
}

// Element i of column (o, j) of an [outer, len, inner] array.
struct ColumnLoad {
  const float* column;
  size_t inner;
  LS_HD float operator()(size_t i) const { return column[i * inner]; }
};
// Canonical((x - mean)^2) with canonical intermediate, as simd's VarianceAxis stores deviations.
struct DeviationLoad {
  const float* column;
  size_t inner;
  float mean;
  LS_HD float operator()(size_t i) const {
    const float d = Canonical(column[i * inner] - mean);
    return Canonical(d * d);
  }
};

// Stage 1: partials[(o * inner + j) * blocks + b] = block b of column (o, j); with `means`,
// the deviations from means[o * inner + j] instead of the values.
struct BlockSumBody {
  const float* x;
  size_t len, inner, blocks;
  const float* means;  // null for a plain sum
  float* partials;
  LS_HD void operator()(size_t t) const {
    const size_t column_index = t / blocks, b = t % blocks;
    const size_t o = column_index / inner, j = column_index % inner;
    const float* column = x + o * len * inner + j;
    const size_t start = b * kReduceBlock;
    const size_t end = start + kReduceBlock < len ? start + kReduceBlock : len;
    partials[t] = means == nullptr
                      ? BlockSum(ColumnLoad{column, inner}, start, end)
                      : BlockSum(DeviationLoad{column, inner, means[column_index]}, start, end);
  }
};

// Stage 2: out[c] = (pairwise combination of column c's blocks, canonical) / divisor, where a
// divisor of 1 leaves the sum as it is and a zero divisor gives the canonical NaN (0 / 0).
struct CombineBody {
  float* partials;
  size_t blocks;
  float divisor;
  float* out;
  LS_HD void operator()(size_t c) const {
    float total = blocks == 0 ? 0.0f : Canonical(CombinePairwise(partials + c * blocks, blocks));
    if (divisor == 0.0f) total = 0.0f;
    out[c] = divisor == 1.0f ? total : Canonical(total / divisor);
  }
};

// Max or min by the contract over each column, from -inf / +inf.
struct ExtremeBody {
  const float* x;
  size_t len, inner;
  bool is_max;
  float* out;
  LS_HD void operator()(size_t c) const {
    const float* column = x + (c / inner) * len * inner + c % inner;
    float r = is_max ? -InfF() : InfF();
    for (size_t i = 0; i < len; ++i) {
      r = is_max ? MaxByContract(r, column[i * inner]) : MinByContract(r, column[i * inner]);
    }
    out[c] = r;
  }
};

// True when a comes after b in the contract's order (NaN above all, +0 above -0).
LS_HD bool GreaterByContract(float a, float b) {
  const bool a_nan = IsNaN(a), b_nan = IsNaN(b);
  if (a_nan || b_nan) return a_nan && !b_nan;
  if (a == b) {
    return a == 0.0f && (BitCast<uint32_t>(a) >> 31) == 0 && (BitCast<uint32_t>(b) >> 31) == 1;
  }
  return a > b;
}

struct ArgmaxBody {
  const float* x;
  size_t len, inner;
  int64_t* out;
  LS_HD void operator()(size_t c) const {
    const float* column = x + (c / inner) * len * inner + c % inner;
    size_t best = 0;
    for (size_t i = 1; i < len; ++i) {
      if (GreaterByContract(column[i * inner], column[best * inner])) best = i;
    }
    out[c] = static_cast<int64_t>(best);
  }
};

// Row-wise helpers for softmax (simd/softmax.cc composes the same steps): out[r, c] =
// Canonical(x[r, c] op per_row[r]).
struct RowSubBody {
  const float* x;
  const float* per_row;
  size_t cols;
  float* out;
  LS_HD void operator()(size_t i) const { out[i] = Canonical(x[i] - per_row[i / cols]); }
};
struct RowDivBody {
  const float* x;
  const float* per_row;
  size_t cols;
  float* out;
  LS_HD void operator()(size_t i) const { out[i] = Canonical(x[i] / per_row[i / cols]); }
};

}  // namespace cuda
}  // namespace lockstep

#endif  // LOCKSTEP_CUDA_KERNELS_REDUCE_H_
