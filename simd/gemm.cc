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
constexpr size_t kBlockCols = 1024;  // multiple of every target's tile width (2..128)
constexpr size_t kBlockDepth = 256;
constexpr size_t kMaxBlockRows = 144;  // multiple of kGemmRows; a packed A block stays in L2

void GemmTarget(const GemmArgs& g, ThreadPool* pool) {
  const hn::ScalableTag<float> d;
  const size_t nr = 2 * hn::Lanes(d);
  const size_t threads = pool == nullptr ? 1 : pool->num_threads();
  // Small products are not worth waking threads for; the result is the same either way.
  const bool parallel = threads > 1 && g.m * g.n * g.k >= (size_t{1} << 18);
  const size_t want_tasks = parallel ? 2 * threads : 1;
  size_t block_rows = (g.m + want_tasks - 1) / want_tasks;
  block_rows = (block_rows + kGemmRows - 1) / kGemmRows * kGemmRows;
  if (block_rows > kMaxBlockRows) block_rows = kMaxBlockRows;
  const size_t row_blocks = (g.m + block_rows - 1) / block_rows;

  thread_local std::vector<float> packed_b;
  packed_b.resize(kBlockDepth * kBlockCols);
  for (size_t j0 = 0; j0 < g.n; j0 += kBlockCols) {
    const size_t cols = g.n - j0 < kBlockCols ? g.n - j0 : kBlockCols;
    const size_t panels = (cols + nr - 1) / nr;
    // Split columns too when there are fewer row blocks than tasks wanted.
    size_t col_chunks = row_blocks >= want_tasks ? 1 : (want_tasks + row_blocks - 1) / row_blocks;
    if (col_chunks > panels) col_chunks = panels;
    const size_t panels_per_chunk = (panels + col_chunks - 1) / col_chunks;
    col_chunks = (panels + panels_per_chunk - 1) / panels_per_chunk;
    for (size_t p0 = 0; p0 < g.k; p0 += kBlockDepth) {
      const size_t kc = g.k - p0 < kBlockDepth ? g.k - p0 : kBlockDepth;
      PackB(g, p0, kc, j0, cols, nr, packed_b.data());
      const float* shared_b = packed_b.data();
      auto run_task = [&](size_t task, size_t /*worker*/) {
        thread_local std::vector<float> packed_a;
        packed_a.resize(kMaxBlockRows * kBlockDepth);
        const size_t rb = task / col_chunks, cc = task % col_chunks;
        const size_t i0 = rb * block_rows;
        const size_t rows = g.m - i0 < block_rows ? g.m - i0 : block_rows;
        const size_t jr0 = cc * panels_per_chunk * nr;
        const size_t chunk_end = jr0 + panels_per_chunk * nr < cols ? jr0 + panels_per_chunk * nr : cols;
        GemmRowBlock(d, g, i0, rows, j0, jr0, chunk_end - jr0, p0, kc, p0 != 0, shared_b, packed_a.data());
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

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lockstep {
namespace simd {

HWY_EXPORT(GemmTarget);

void Gemm(const GemmArgs& args, ThreadPool* pool) {
  if (args.m == 0 || args.n == 0) return;
  if (args.k == 0) {
    for (size_t i = 0; i < args.m; ++i) {
      for (size_t j = 0; j < args.n; ++j) args.c[i * args.ldc + j] = 0.0f;
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
      g.c[i * g.ldc + j] = acc != acc ? __builtin_nanf("") : acc;
    }
  }
}

}  // namespace simd
}  // namespace lockstep
#endif  // HWY_ONCE
