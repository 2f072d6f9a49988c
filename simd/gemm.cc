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

// Block sizes: a packed A block (kBlockRows x kBlockDepth) stays in L2, a packed B panel
// (kBlockDepth x 2 vectors) in L1 while the microkernel walks down the rows.
constexpr size_t kBlockRows = 48;    // multiple of kGemmRows
constexpr size_t kBlockCols = 256;   // multiple of every target's tile width (2..128)
constexpr size_t kBlockDepth = 256;

void GemmTarget(const GemmArgs& g, ThreadPool* pool) {
  const hn::ScalableTag<float> d;
  const size_t row_blocks = (g.m + kBlockRows - 1) / kBlockRows;
  const size_t col_blocks = (g.n + kBlockCols - 1) / kBlockCols;
  auto run_block = [&](size_t task, size_t /*worker*/) {
    thread_local std::vector<float> packed_a, packed_b;
    packed_a.resize(kBlockRows * kBlockDepth);
    packed_b.resize(kBlockDepth * kBlockCols);
    const size_t i0 = (task / col_blocks) * kBlockRows;
    const size_t j0 = (task % col_blocks) * kBlockCols;
    const size_t rows = g.m - i0 < kBlockRows ? g.m - i0 : kBlockRows;
    const size_t cols = g.n - j0 < kBlockCols ? g.n - j0 : kBlockCols;
    GemmBlock(d, g, i0, rows, j0, cols, kBlockDepth, packed_a.data(), packed_b.data());
  };
  const size_t tasks = row_blocks * col_blocks;
  // Small products are not worth waking threads for; the result is the same either way.
  if (pool == nullptr || g.m * g.n * g.k < (size_t{1} << 15)) {
    for (size_t t = 0; t < tasks; ++t) run_block(t, 0);
  } else {
    pool->ParallelFor(tasks, run_block);
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
  HWY_DYNAMIC_DISPATCH(GemmTarget)(args, pool != nullptr ? pool : &DefaultThreadPool());
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
