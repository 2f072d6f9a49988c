// GEMM dispatch and the split of C into independent blocks, one task each.
#include "simd/gemm.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/gemm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "simd/gemm-inl.h"

#include <vector>

#include "simd/thread_pool.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {

// Loop order (Goto/BLIS): for each column block of kBlockCols and each K block of kBlockDepth in
// increasing k, B is packed once, then independent tasks (row blocks x column chunks) run the
// microkernel. Every tile sees the K blocks in increasing order, so the sums are K-sequential.
// A column block of B packed for a K block (384 x 512 floats, 768 KiB) and a row block's A
// (144 x 384) fit this core's 1 MiB L2 together, so B is read from L3 once per K block, not once
// per row block; 1024^3 went from 188-190 to 204-208 GFLOP/s (in-process A/B against 1024 x 256,
// each round better), 2048^3 +8%, the examples' shapes even.
constexpr size_t kBlockCols = 512;  // multiple of every target's tile width (2..128)
constexpr size_t kBlockDepth = 384;
constexpr size_t kMaxBlockRows = 144;  // multiple of kGemmRows and kTallRows
// A packed B block at least this large is packed by the pool (ViT-B/16's 197-row products left a
// thread waiting through a serial pack); a smaller one is not worth waking threads for (LeNet-5's
// 400 x 120).
constexpr size_t kParallelPackFloats = size_t{1} << 16;
// The batch-grouped product's panel budgets, in floats (measured at the GPT's weight gradients).
constexpr size_t kGroupedBFloats = 256 * 1024, kGroupedAFloats = 144 * 256;

// How a product is split into independent tasks: row blocks of C (whole register tiles, at most
// max_rows rows), and per column block, chunks of whole panels when there are fewer row blocks
// than tasks wanted. The tiles are dealt out evenly (blocks differ by one tile at most): a block
// of the remainder's size would leave one thread waiting for the other (100 rows as 30, 30, 30
// and 10 ran at 1.5x on 2 threads). Which task computes a tile never changes its sums.
struct TaskSplit {
  bool parallel;
  size_t want_tasks, row_blocks, tile_rows, base_tiles, extra_tiles;
  // column_panel: given (the panel width), rows that fit one block go whole to every task where B
  // has a panel for each task: the tasks are then column chunks (GemmTarget packs each chunk's
  // panels in its task).
  TaskSplit(const GemmArgs& g, ThreadPool* pool, size_t max_rows, size_t tile = kGemmRows, size_t column_panel = 0)
      : tile_rows(tile) {
    const size_t threads = pool == nullptr ? 1 : pool->num_threads();
    // Small products are not worth waking threads for; the result is the same either way.
    parallel = threads > 1 && g.m * g.n * g.k >= (size_t{1} << 18);
    want_tasks = parallel ? 4 * threads : 1;
    const size_t tiles = (g.m + tile_rows - 1) / tile_rows, max_tiles = max_rows / tile_rows;
    row_blocks = tiles < want_tasks ? tiles : want_tasks;
    if (column_panel != 0 && parallel && g.m <= max_rows && g.n >= want_tasks * column_panel) row_blocks = 1;
    if (row_blocks * max_tiles < tiles) row_blocks = (tiles + max_tiles - 1) / max_tiles;
    if (row_blocks == 0) row_blocks = 1;
    base_tiles = tiles / row_blocks;
    extra_tiles = tiles % row_blocks;  // the first blocks take one tile more
  }
  // Row block rb: its first row and its number of rows.
  void Rows(const GemmArgs& g, size_t rb, size_t* i0, size_t* rows) const {
    *i0 = (rb * base_tiles + (rb < extra_tiles ? rb : extra_tiles)) * tile_rows;
    const size_t want = (base_tiles + (rb < extra_tiles ? 1 : 0)) * tile_rows;
    *rows = g.m - *i0 < want ? g.m - *i0 : want;
  }
  // Column chunks of a block of `panels` panels: their count, and panels per chunk.
  void Columns(size_t panels, size_t* chunks, size_t* panels_per_chunk) const {
    size_t col_chunks = row_blocks >= want_tasks ? 1 : (want_tasks + row_blocks - 1) / row_blocks;
    if (col_chunks > panels) col_chunks = panels;
    *panels_per_chunk = (panels + col_chunks - 1) / col_chunks;
    *chunks = (panels + *panels_per_chunk - 1) / *panels_per_chunk;
  }
};

void GemmTarget(const GemmArgs& g, ThreadPool* pool) {
  const hn::ScalableTag<float> d;
  const size_t nr = 2 * hn::Lanes(d);
  const TaskSplit split(g, pool, kMaxBlockRows, kGemmRows, nr);
  const bool parallel = split.parallel;
  const size_t row_blocks = split.row_blocks;
  // One row block: each task owns a chunk of columns and packs its own panels of B. Packed by the
  // calling thread for all tasks, B's block held the others waiting: at the 64-200 rows of a
  // batch-1 transformer (generation, ViT) that serial pack took as long as the products. (A
  // packed panel is a copy: who packs it changes no bit.)
  const bool pack_in_tasks = parallel && row_blocks == 1;

  thread_local std::vector<float> packed_b;
  packed_b.resize(kBlockDepth * kBlockCols);
  for (size_t j0 = 0; j0 < g.n; j0 += kBlockCols) {
    const size_t cols = g.n - j0 < kBlockCols ? g.n - j0 : kBlockCols;
    const size_t panels = (cols + nr - 1) / nr;
    size_t col_chunks, panels_per_chunk;
    split.Columns(panels, &col_chunks, &panels_per_chunk);
    // A narrow column block (at most 256 columns) takes K blocks twice as deep in the same L2
    // budget: each K block after the first is another pass over C. 1024x128x512 runs in one block
    // (+2-5%), 100x120x400 too (+1-2%), 1024x256x1024 in two (+2-3%), at medians of alternating
    // runs. Deeper still (1024) lost 15% at 512x128x1024:TN, whose A is read in place.
    const size_t depth = cols <= kBlockCols / 2 ? 2 * kBlockDepth : kBlockDepth;
    for (size_t p0 = 0, kc = 0; p0 < g.k; p0 += kc) {
      kc = g.k - p0 < depth ? g.k - p0 : depth;
      // A short last block (under half a block) is evened out with the one before it: in a wide
      // column block K = 512 runs as 256 + 256, not 384 + 128, whose second pass over C did little
      // work (-3% when 1024x128x512 still ran in blocks of 384).
      const size_t rest = g.k - p0 - kc;
      if (rest != 0 && rest < depth / 2) kc = (kc + rest + 1) / 2;
      const bool b_in_place = BInPlace(g, kc);
      float* const shared_b = packed_b.data();
      if (!pack_in_tasks && parallel && kc * cols >= kParallelPackFloats) {
        // A large block shared by the row blocks: packed by the pool, a range of panels a task.
        const size_t pack_tasks = panels < split.want_tasks ? panels : split.want_tasks;
        const size_t per_task = (panels + pack_tasks - 1) / pack_tasks;
        pool->ParallelFor((panels + per_task - 1) / per_task, [&](size_t task, size_t /*worker*/) {
          const size_t c0 = task * per_task * nr, c1 = (task + 1) * per_task * nr < cols ? (task + 1) * per_task * nr : cols;
          PackB(g, p0, kc, j0 + c0, c1 - c0, nr, shared_b + c0 * kc, b_in_place);
        });
      } else if (!pack_in_tasks) {
        PackB(g, p0, kc, j0, cols, nr, shared_b, b_in_place);
      }
      auto run_task = [&](size_t task, size_t /*worker*/) {
        const size_t rb = task / col_chunks, cc = task % col_chunks;
        size_t i0, rows;
        split.Rows(g, rb, &i0, &rows);
        const size_t jr0 = cc * panels_per_chunk * nr;
        const size_t chunk_end = jr0 + panels_per_chunk * nr < cols ? jr0 + panels_per_chunk * nr : cols;
        if (pack_in_tasks) PackB(g, p0, kc, j0 + jr0, chunk_end - jr0, nr, shared_b + jr0 * kc, b_in_place);
        GemmRowBlock(d, g, i0, rows, j0, jr0, chunk_end - jr0, p0, kc, p0 != 0, shared_b);
      };
      const size_t tasks = row_blocks * col_chunks;
      if (!parallel) {
        for (size_t t = 0; t < tasks; ++t) run_task(t, 0);
      } else {
        pool->ParallelFor(tasks, run_task);
      }
    }
  }
}

// The batch-grouped product in one pass. B is packed for all K of a column block (narrower
// blocks when K is long, so the panels stay within kGroupedBFloats), A for all K of a row
// block; each register tile runs its groups one after another into an L1 scratch tile and folds
// each into a stack of pending partials: after group g, the pending partial of every level whose
// bit is set in g is added to the new one, left operand first (a binary counter over the groups).
// At the end the pending partials are added from the lowest level up. That is the tree of
// adjacent pairs level by level with an odd last one moving up: a pair forms at the level where
// both of its halves are complete, and an odd partial waits until the final fold.
// kTileRows: 6 (MicroKernelGrouped, A packed or read in place) or kTallRows (a transposed A,
// packed in panels of that many rows).
template <size_t kTileRows>
void GemmBatchGroupedImpl(const GemmArgs& g, size_t k_per_group, ThreadPool* pool) {
  constexpr bool kTall = kTileRows != kGemmRows;
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t nr = 2 * N;
  const size_t tile = kTileRows * nr;
  const size_t groups = (g.k + k_per_group - 1) / k_per_group;
  size_t levels = 1;
  while ((size_t{1} << levels) < groups) ++levels;
  // Panels within the budgets: K x block_cols of B, block_rows x K of A.
  size_t block_cols = kGroupedBFloats / g.k / nr * nr;
  block_cols = block_cols < nr ? nr : block_cols > 1024 ? 1024 : block_cols;
  size_t max_rows = kGroupedAFloats / g.k / kTileRows * kTileRows;
  max_rows = max_rows < kTileRows ? kTileRows : max_rows > kMaxBlockRows ? kMaxBlockRows : max_rows;
  const TaskSplit split(g, pool, max_rows, kTileRows);
  const bool parallel = split.parallel;

  thread_local std::vector<float> packed_b;
  packed_b.resize(g.k * block_cols < nr ? nr : g.k * block_cols);
  for (size_t j0 = 0; j0 < g.n; j0 += block_cols) {
    const size_t cols = g.n - j0 < block_cols ? g.n - j0 : block_cols;
    const size_t panels = (cols + nr - 1) / nr;
    size_t col_chunks, panels_per_chunk;
    split.Columns(panels, &col_chunks, &panels_per_chunk);
    PackB(g, 0, g.k, j0, cols, nr, packed_b.data());
    const float* shared_b = packed_b.data();
    auto run_task = [&](size_t task, size_t /*worker*/) {
      thread_local std::vector<float> packed_a, scratch;
      packed_a.resize(max_rows * g.k);
      scratch.resize((levels + 2) * tile);
      float* partial = scratch.data();      // the group just computed
      float* pending = partial + tile;      // pending[level * tile]: one partial waiting per level
      const size_t rb = task / col_chunks, cc = task % col_chunks;
      size_t i0, rows;
      split.Rows(g, rb, &i0, &rows);
      const size_t jr0 = cc * panels_per_chunk * nr;
      const size_t chunk_end = jr0 + panels_per_chunk * nr < cols ? jr0 + panels_per_chunk * nr : cols;
      // A transposed A is packed here (read in place, each of its steps would be a new cache line
      // over the whole K, for every column panel).
      const bool packed = g.trans_a;
      if (packed) PackA<kTileRows>(g, i0, rows, 0, g.k, packed_a.data());
      const size_t a_step = packed ? kGemmRows : 1;
      for (size_t jr = jr0; jr < chunk_end; jr += nr) {
        const size_t tile_cols = chunk_end - jr < nr ? chunk_end - jr : nr;
        for (size_t ir = 0; ir < rows; ir += kTileRows) {
          const size_t tile_rows = rows - ir < kTileRows ? rows - ir : kTileRows;
          for (size_t group = 0; group < groups; ++group) {
            const size_t first = group * k_per_group;
            const size_t kc = g.k - first < k_per_group ? g.k - first : k_per_group;
            const float* b_group = shared_b + jr * g.k + first * nr;
            if constexpr (kTall) {
              MicroKernelGroupedTall(d, packed_a.data() + ir * g.k + first * kTileRows, b_group, kc, group, pending);
            } else {
              const float* group_rows[kGemmRows];
              if (packed) {  // a panel: zeros past the edge
                for (size_t r = 0; r < kGemmRows; ++r) group_rows[r] = packed_a.data() + ir * g.k + first * a_step + r;
              } else {
                ARows(g, i0 + ir, tile_rows, first, group_rows);
              }
              MicroKernelGrouped(d, group_rows, a_step, packed, b_group, kc, group, pending);
            }
          }
          // A partial waits at each level whose bit is set in the group count (a binary counter).
          // The final fold: from the lowest level up, each waiting partial the left operand.
          bool have = false;
          for (size_t level = 0; level <= levels; ++level) {
            if (!((groups >> level) & 1)) continue;
            const float* left = pending + level * tile;
            for (size_t q = 0; q < tile; q += N) {
              const auto l = hn::LoadU(d, left + q);
              hn::StoreU(have ? hn::Add(l, hn::LoadU(d, partial + q)) : l, d, partial + q);
            }
            have = true;
          }
          float* c = g.c + (i0 + ir) * g.ldc + j0 + jr;
          for (size_t r = 0; r < tile_rows; ++r) {
            float* row = partial + r * nr;
            float* to = tile_cols == nr ? c + r * g.ldc : row;  // a partial tile through a copy
            for (size_t q = 0; q < nr; q += N) hn::StoreU(Canonicalize(d, hn::LoadU(d, row + q)), d, to + q);
            if (tile_cols < nr) memcpy(c + r * g.ldc, row, tile_cols * sizeof(float));
          }
        }
      }
    };
    const size_t tasks = split.row_blocks * col_chunks;
    if (!parallel) {
      for (size_t t = 0; t < tasks; ++t) run_task(t, 0);
    } else {
      pool->ParallelFor(tasks, run_task);
    }
  }
}

void GemmBatchGroupedTarget(const GemmArgs& g, size_t k_per_group, ThreadPool* pool) {
  if constexpr (kTallRows != 0) {
    if (g.trans_a) {
      GemmBatchGroupedImpl<kTallRows>(g, k_per_group, pool);
      return;
    }
  }
  GemmBatchGroupedImpl<kGemmRows>(g, k_per_group, pool);
}

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lockstep {
namespace simd {

HWY_EXPORT(GemmTarget);
HWY_EXPORT(GemmBatchGroupedTarget);

namespace {

// Prefetches every cache line of a rows x cols operand with leading dimension ld.
void PrefetchOperand(const float* x, size_t rows, size_t cols, size_t ld) {
  constexpr size_t kLineFloats = 16;
  if (cols == 0) return;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; c += kLineFloats) __builtin_prefetch(x + r * ld + c);
    __builtin_prefetch(x + r * ld + cols - 1);
  }
}

}  // namespace

void Gemm(const GemmArgs& args, ThreadPool* pool) {
  if (args.m == 0 || args.n == 0) return;
  if (args.next_a != nullptr) {
    PrefetchOperand(args.next_a, args.trans_a ? args.k : args.m, args.trans_a ? args.m : args.k, args.lda);
  }
  if (args.next_b != nullptr) {
    PrefetchOperand(args.next_b, args.trans_b ? args.n : args.k, args.trans_b ? args.k : args.n, args.ldb);
  }
  if (args.k == 0) {  // +0, plus the bias
    for (size_t i = 0; i < args.m; ++i) {
      for (size_t j = 0; j < args.n; ++j) {
        const float sum = args.bias != nullptr ? 0.0f + args.bias[j] : 0.0f;
        args.c[i * args.ldc + j] = sum != sum ? __builtin_nanf("") : sum;
      }
    }
    return;
  }
  if (pool != nullptr) {
    HWY_DYNAMIC_DISPATCH(GemmTarget)(args, pool);
    return;
  }
  const std::shared_ptr<ThreadPool> held = DefaultThreadPool();  // alive until the tasks are done
  HWY_DYNAMIC_DISPATCH(GemmTarget)(args, held.get());
}

void GemmReference(const GemmArgs& g) {
  for (size_t i = 0; i < g.m; ++i) {
    for (size_t j = 0; j < g.n; ++j) {
      float acc = g.k == 0 ? 0.0f : -0.0f;
      for (size_t p = 0; p < g.k; ++p) {
        const float a = g.trans_a ? g.a[p * g.lda + i] : g.a[i * g.lda + p];
        const float b = g.trans_b ? g.b[j * g.ldb + p] : g.b[p * g.ldb + j];
        const float product = a * b;
        acc = acc + product;
      }
      if (g.bias != nullptr) acc = acc + g.bias[j];
      g.c[i * g.ldc + j] = acc != acc ? __builtin_nanf("") : acc;
    }
  }
}

void GemmBatchGrouped(const GemmArgs& args, size_t k_per_group, ThreadPool* pool) {
  if (k_per_group == 0 || args.k <= k_per_group) {
    Gemm(args, pool);
    return;
  }
  if (args.m == 0 || args.n == 0) return;
  if (pool != nullptr) {
    HWY_DYNAMIC_DISPATCH(GemmBatchGroupedTarget)(args, k_per_group, pool);
    return;
  }
  const std::shared_ptr<ThreadPool> held = DefaultThreadPool();
  HWY_DYNAMIC_DISPATCH(GemmBatchGroupedTarget)(args, k_per_group, held.get());
}

void GemmBatchGroupedReference(const GemmArgs& args, size_t k_per_group) {
  if (k_per_group == 0 || args.k <= k_per_group) {
    GemmReference(args);
    return;
  }
  const size_t groups = (args.k + k_per_group - 1) / k_per_group, mn = args.m * args.n;
  std::vector<float> partials(groups * mn);
  for (size_t group = 0; group < groups; ++group) {
    GemmArgs part = args;
    const size_t first = group * k_per_group;
    part.k = args.k - first < k_per_group ? args.k - first : k_per_group;
    part.a = args.trans_a ? args.a + first * args.lda : args.a + first;
    part.b = args.trans_b ? args.b + first : args.b + first * args.ldb;
    part.c = partials.data() + group * mn;
    part.ldc = args.n;
    part.bias = nullptr;
    GemmReference(part);
  }
  // Adjacent pairs, level by level; an odd last one moves up.
  for (size_t count = groups; count > 1;) {
    size_t next = 0;
    for (size_t i = 0; i + 1 < count; i += 2, ++next) {
      for (size_t e = 0; e < mn; ++e) {
        const float sum = partials[i * mn + e] + partials[(i + 1) * mn + e];
        partials[next * mn + e] = sum != sum ? __builtin_nanf("") : sum;
      }
    }
    if (count % 2 == 1) {
      for (size_t e = 0; e < mn; ++e) partials[next * mn + e] = partials[(count - 1) * mn + e];
      ++next;
    }
    count = next;
  }
  for (size_t i = 0; i < args.m; ++i) {
    for (size_t j = 0; j < args.n; ++j) args.c[i * args.ldc + j] = partials[i * args.n + j];
  }
}

}  // namespace simd
}  // namespace lockstep
#endif  // HWY_ONCE
