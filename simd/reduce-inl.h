// Per-target canonical reductions (order defined in reduce.h; reduce_reference.cc is the plain
// definition). The virtual lanes live in an aligned buffer of kReduceLanes floats, covered by as
// many hardware vectors as the target needs, so the order never depends on the vector width.
#if defined(LOCKSTEP_SIMD_REDUCE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_REDUCE_INL_H_
#undef LOCKSTEP_SIMD_REDUCE_INL_H_
#else
#define LOCKSTEP_SIMD_REDUCE_INL_H_
#endif

#include <string.h>

#include <limits>

#include <vector>

#include "hwy/highway.h"
#include "simd/contract-inl.h"
#include "simd/reduce.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// A block's sum in three steps: the kReduceLanes virtual lanes start at -0.0; element i of the
// block adds into lane i % kReduceLanes, in increasing i; the halving tree combines the lanes.
HWY_INLINE void StartLanes(float* lanes) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);  // a power of two <= kReduceLanes on every target
  for (size_t l = 0; l < kReduceLanes; l += N) hn::Store(hn::Set(d, -0.0f), d, lanes + l);
}

// Adds the rows of kReduceLanes elements of x (n rounded down to whole rows); returns the rows'
// element count.
HWY_INLINE size_t AddRows(float* lanes, const float* x, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + kReduceLanes <= n; i += kReduceLanes) {
    for (size_t l = 0; l < kReduceLanes; l += N) {
      hn::Store(hn::Add(hn::Load(d, lanes + l), hn::LoadU(d, x + i + l)), d, lanes + l);
    }
  }
  return i;
}

HWY_INLINE float FinishLanes(float* lanes) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  // Halving tree: lane l += lane l + width, vectorised while width >= N.
  size_t width = kReduceLanes / 2;
  for (; width >= N; width /= 2) {
    for (size_t l = 0; l < width; l += N) {
      hn::Store(hn::Add(hn::Load(d, lanes + l), hn::Load(d, lanes + l + width)), d, lanes + l);
    }
  }
  for (; width >= 1; width /= 2) {
    for (size_t l = 0; l < width; ++l) lanes[l] = lanes[l] + lanes[l + width];
  }
  return lanes[0];
}

// Canonical sum of one contiguous block (n <= kReduceBlock).
HWY_INLINE float SumBlockContiguous(const float* x, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  HWY_ALIGN float lanes[kReduceLanes];
  StartLanes(lanes);
  const size_t i = AddRows(lanes, x, n);
  if (i < n) {
    HWY_ALIGN float tail[kReduceLanes];
    for (float& t : tail) t = -0.0f;  // -0.0 leaves every lane unchanged
    memcpy(tail, x + i, (n - i) * sizeof(float));
    for (size_t l = 0; l < kReduceLanes; l += N) {
      hn::Store(hn::Add(hn::Load(d, lanes + l), hn::Load(d, tail + l)), d, lanes + l);
    }
  }
  return FinishLanes(lanes);
}

// Canonical sum of 1 <= n <= kReduceLanes elements: lane i holds x[i] alone (-0.0 + v is v, NaN
// and signed zeros included) and the lanes from n on hold -0.0, so the halving tree's additions
// of those lanes change nothing and are skipped. Rows this short (a squeeze-and-excitation
// block's pooled 2 x 2 to 8 x 8 planes, thousands a step) spent most of their time on the 64 lanes'
// start, tail copy and tree.
HWY_INLINE float SumShortContiguous(const float* x, size_t n) {
  float lanes[kReduceLanes];
  for (size_t i = 0; i < n; ++i) lanes[i] = x[i];
  size_t live = n;  // lanes [0, live) may differ from -0.0
  for (size_t width = kReduceLanes / 2; width >= 1; width /= 2) {
    for (size_t l = 0; l + width < live; ++l) lanes[l] = lanes[l] + lanes[l + width];
    if (live > width) live = width;
  }
  return lanes[0];
}

HWY_INLINE float SumContiguous(const float* x, size_t n) {
  if (n == 0) return 0.0f;
  if (n < kReduceLanes) return SumShortContiguous(x, n);
  if (n <= kReduceBlock) return SumBlockContiguous(x, n);
  std::vector<float> blocks;
  for (size_t start = 0; start < n; start += kReduceBlock) {
    const size_t len = n - start < kReduceBlock ? n - start : kReduceBlock;
    blocks.push_back(SumBlockContiguous(x + start, len));
  }
  return CombineBlocksPairwise(blocks.data(), blocks.size());
}

// Canonical sums of N adjacent columns at once: x points at column j of row 0, rows are `stride`
// floats apart. lanes is scratch of kReduceLanes * N floats; writes N sums to out.
template <class D>
HWY_INLINE void SumBlockColumns(D d, const float* x, size_t rows, size_t stride, float* lanes,
                                float* out) {
  const size_t N = hn::Lanes(d);
  // Lanes from `used` on would hold -0.0 throughout, and -0.0 + v == v exactly (NaN and signed
  // zeros included): a lane's first element is stored rather than added to -0.0, and the tree
  // skips the additions of such lanes (short blocks, e.g. a batch group of 32 rows, had more
  // tree additions than data).
  const size_t used = rows < kReduceLanes ? rows : kReduceLanes;
  for (size_t i = 0; i < used; ++i) hn::Store(hn::LoadU(d, x + i * stride), d, lanes + i * N);
  for (size_t i = used; i < rows; ++i) {
    float* lane = lanes + (i % kReduceLanes) * N;
    hn::Store(hn::Add(hn::Load(d, lane), hn::LoadU(d, x + i * stride)), d, lane);
  }
  size_t live = used;  // lanes [0, live) may differ from -0.0
  for (size_t width = kReduceLanes / 2; width >= 1; width /= 2) {
    for (size_t l = 0; l + width < live; ++l) {
      float* lane = lanes + l * N;
      hn::Store(hn::Add(hn::Load(d, lane), hn::Load(d, lanes + (l + width) * N)), d, lane);
    }
    if (live > width) live = width;
  }
  hn::StoreU(hn::Load(d, lanes), d, out);
}

// a[k] = a[k] + b[k] for k < n (b's run starts past a's, or lies elsewhere).
HWY_INLINE void AddRun(float* a, const float* b, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  size_t k = 0;
  for (; k + N <= n; k += N) hn::StoreU(hn::Add(hn::LoadU(d, a + k), hn::LoadU(d, b + k)), d, a + k);
  for (; k < n; ++k) a[k] = a[k] + b[k];
}

// The halving tree over lanes [0, live) of `run` floats each at a (lane l is a[l * run, (l + 1) *
// run)): each step adds lanes [width, live) onto [0, live - width) as one contiguous run (live <=
// 2 * width, so the runs never overlap). Lane 0 ends as the sums, in SumBlockColumns' order; the
// tree's lanes at or past `live` are -0.0 (not stored), whose additions change nothing.
HWY_INLINE void HalveLaneRuns(float* a, size_t live, size_t run) {
  for (size_t width = kReduceLanes / 2; width >= 1; width /= 2) {
    if (live > width) {
      AddRun(a, a + width * run, (live - width) * run);
      live = width;
    }
  }
}

// The canonical sums of the columns of one block (rows <= kReduceBlock) of a [rows, inner] slice
// whose rows are contiguous, into out[0, inner). Column j's lane l is a[l * inner + j]: the rows
// past the 64th add into lane i % 64 a whole run of 64 rows at a time, and each step of the
// halving tree adds whole runs of lanes (HalveLaneRuns). Every column gets SumBlockColumns'
// additions in its order, with the vectors over (lane, column) pairs: a squeeze-and-excitation
// gate's gradient sums [H, W] planes over H with W = 2 to 8, which filled 2 to 8 of a vector's lanes.
HWY_INLINE void SumBlockRuns(const float* x, size_t rows, size_t inner, float* a, float* out) {
  const size_t used = rows < kReduceLanes ? rows : kReduceLanes;
  memcpy(a, x, used * inner * sizeof(float));
  for (size_t start = kReduceLanes; start < rows; start += kReduceLanes) {
    const size_t n = rows - start < kReduceLanes ? rows - start : kReduceLanes;
    AddRun(a, x + start * inner, n * inner);
  }
  HalveLaneRuns(a, used, inner);
  memcpy(out, a, inner * sizeof(float));
}

// Columns this narrow (lanes of 64 rows: 16 KB) are summed by SumBlockRuns.
constexpr size_t kRunColumns = 64;

// out[j] for j in [0, inner): canonical sum over len rows of a [len, inner] slice. The columns
// past the last whole vector are copied into rows of N floats and summed by the same vector code
// (each lane in the order of CanonicalSumReference) rather than one by one with a stride. Columns
// of at most kRunColumns go to SumBlockRuns instead.
HWY_INLINE void SumColumns(const float* x, size_t len, size_t inner, float* out) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  if (len == 0) {
    for (size_t j = 0; j < inner; ++j) out[j] = 0.0f;
    return;
  }
  const size_t num_blocks = (len + kReduceBlock - 1) / kReduceBlock;
  if (inner <= kRunColumns) {
    thread_local std::vector<float> lane_runs, run_sums, run_column;
    if (lane_runs.size() < kReduceLanes * inner) lane_runs.resize(kReduceLanes * inner);
    if (num_blocks == 1) return SumBlockRuns(x, len, inner, lane_runs.data(), out);
    if (run_sums.size() < num_blocks * inner) run_sums.resize(num_blocks * inner);
    if (run_column.size() < num_blocks) run_column.resize(num_blocks);
    for (size_t b = 0; b < num_blocks; ++b) {
      const size_t start = b * kReduceBlock;
      const size_t rows = len - start < kReduceBlock ? len - start : kReduceBlock;
      SumBlockRuns(x + start * inner, rows, inner, lane_runs.data(), &run_sums[b * inner]);
    }
    for (size_t j = 0; j < inner; ++j) {
      for (size_t b = 0; b < num_blocks; ++b) run_column[b] = run_sums[b * inner + j];
      out[j] = CombineBlocksPairwise(run_column.data(), num_blocks);
    }
    return;
  }
  HWY_ALIGN float aligned_lanes[kReduceLanes * hn::MaxLanes(hn::ScalableTag<float>())];
  thread_local std::vector<float> block_sums, column, tail_rows;
  if (block_sums.size() < num_blocks * N) block_sums.resize(num_blocks * N);
  if (column.size() < num_blocks) column.resize(num_blocks);
  // Columns [j, j + width) of the rows at x (stride apart) summed into out + j.
  const auto sum_columns = [&](const float* rows_at, size_t stride, size_t j, size_t width) {
    for (size_t b = 0; b < num_blocks; ++b) {
      const size_t start = b * kReduceBlock;
      const size_t rows = len - start < kReduceBlock ? len - start : kReduceBlock;
      SumBlockColumns(d, rows_at + start * stride, rows, stride, aligned_lanes, &block_sums[b * N]);
    }
    if (num_blocks == 1) {
      memcpy(out + j, block_sums.data(), width * sizeof(float));
      return;
    }
    for (size_t c = 0; c < width; ++c) {
      for (size_t b = 0; b < num_blocks; ++b) column[b] = block_sums[b * N + c];
      out[j + c] = CombineBlocksPairwise(column.data(), num_blocks);
    }
  };
  size_t j = 0;
  for (; j + N <= inner; j += N) sum_columns(x + j, inner, j, N);
  if (j < inner) {
    const size_t width = inner - j;
    if (tail_rows.size() < len * N) tail_rows.resize(len * N);
    for (size_t r = 0; r < len; ++r) {
      memcpy(&tail_rows[r * N], x + r * inner + j, width * sizeof(float));
      for (size_t c = width; c < N; ++c) tail_rows[r * N + c] = 0.0f;  // lanes whose sums are dropped
    }
    sum_columns(tail_rows.data(), N, j, width);
  }
}

// Slices this short (at most 64 rows, so one lane a row, of at most 8 columns) are summed many
// at a time by SumShortSlices, in pieces of up to 32 KB.
constexpr size_t kShortSliceColumns = 8;
constexpr size_t kShortSlicesFloats = 8192;

// The canonical sums of `outer` [len, inner] slices with 1 <= len <= 64: lane i of every column is
// row i alone, so the halving tree is the whole sum. A piece of k slices is copied as rows of
// [k][inner] (row i of every slice together), and each step of the tree adds one contiguous run
// over all of them (HalveLaneRuns): each column gets
// SumShortContiguous' and SumBlockColumns' additions in their order. A squeeze-and-excitation gate's
// gradient sums 36,864 planes of 2 x 2 (over H, then over W) in EfficientNet-B0's last stage at
// batch 32: summed a plane at a time, the calls cost more than the additions.
HWY_INLINE void SumShortSlices(const float* x, size_t outer, size_t len, size_t inner, float* out) {
  const size_t per_slice = len * inner;
  const size_t piece = kShortSlicesFloats / per_slice > 1 ? kShortSlicesFloats / per_slice : 1;
  thread_local std::vector<float> rows;
  if (rows.size() < piece * per_slice) rows.resize(piece * per_slice);
  float* const a = rows.data();
  for (size_t first = 0; first < outer; first += piece) {
    const size_t k = outer - first < piece ? outer - first : piece, run = k * inner;
    const float* slices = x + first * per_slice;
    for (size_t o = 0; o < k; ++o) {
      for (size_t i = 0; i < len; ++i) {
        for (size_t j = 0; j < inner; ++j) a[i * run + o * inner + j] = slices[o * per_slice + i * inner + j];
      }
    }
    HalveLaneRuns(a, len, run);
    memcpy(out + first * inner, a, run * sizeof(float));
  }
}

HWY_INLINE void SumAxisImpl(const float* x, size_t outer, size_t len, size_t inner, float* out) {
  if (outer > 1 && len >= 1 && len <= kReduceLanes && inner <= kShortSliceColumns) {
    return SumShortSlices(x, outer, len, inner, out);
  }
  for (size_t o = 0; o < outer; ++o) {
    if (inner == 1) {
      out[o] = SumContiguous(x + o * len, len);
    } else {
      SumColumns(x + o * len * inner, len, inner, out + o * inner);
    }
  }
}

// Max or min (by the contract) over columns of a [len, inner] slice, or over a contiguous row.
template <bool kMax>
HWY_INLINE void ExtremeSlice(const float* x, size_t len, size_t inner, float* out) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const float identity = kMax ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  auto pick = [](auto dd, auto a, auto b) HWY_ATTR {
    return kMax ? MaxByContract(dd, a, b) : MinByContract(dd, a, b);
  };
  if (inner == 1) {
    auto acc = hn::Set(d, identity);
    size_t i = 0;
    for (; i + N <= len; i += N) acc = pick(d, acc, hn::LoadU(d, x + i));
    HWY_ALIGN float buf[hn::MaxLanes(hn::ScalableTag<float>())];
    hn::Store(acc, d, buf);
    float r = identity;
    const hn::CappedTag<float, 1> d1;
    for (size_t l = 0; l < N; ++l) r = hn::GetLane(pick(d1, hn::Set(d1, r), hn::Set(d1, buf[l])));
    for (; i < len; ++i) r = hn::GetLane(pick(d1, hn::Set(d1, r), hn::Set(d1, x[i])));
    out[0] = r;
    return;
  }
  size_t j = 0;
  for (; j + N <= inner; j += N) {
    auto acc = hn::Set(d, identity);
    for (size_t i = 0; i < len; ++i) acc = pick(d, acc, hn::LoadU(d, x + i * inner + j));
    hn::StoreU(acc, d, out + j);
  }
  const hn::CappedTag<float, 1> d1;
  for (; j < inner; ++j) {
    auto acc = hn::Set(d1, identity);
    for (size_t i = 0; i < len; ++i) acc = pick(d1, acc, hn::Set(d1, x[i * inner + j]));
    out[j] = hn::GetLane(acc);
  }
}

template <bool kMax>
HWY_INLINE void ExtremeAxisImpl(const float* x, size_t outer, size_t len, size_t inner,
                                float* out) {
  for (size_t o = 0; o < outer; ++o) ExtremeSlice<kMax>(x + o * len * inner, len, inner, out + o * inner);
}

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#endif  // toggle guard
