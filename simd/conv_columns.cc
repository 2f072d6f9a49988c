// The weights times few transposed columns (simd/conv_columns.h): tiles of eight output channels
// over whole vectors of columns (simd/conv-inl.h's OutputTile), then the few columns past them as
// vectors of the tile's channels, each lane summing in the same order as the GEMM.
#include "simd/conv_columns.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/conv_columns.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "simd/contract-inl.h"
#include "simd/conv-inl.h"

#include <stdint.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "simd/scratch.h"
#include "simd/thread_pool.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {

namespace {

// Columns past the last whole vector that run as vectors of channels, summed in the tile's last
// step beside its vectors; more run as one vector of columns.
constexpr size_t kMaxTailColumns = 4;

// Floats of columns that a block of the sum's steps reads (256 KiB: a quarter of a second-level
// cache). A tile over all 4,608 steps of ResNet-18's 7 x 7 stage read 903 KB of columns, more than
// the cache holds beside the weights, so every tile fetched them from the third level again.
constexpr size_t kColumnBlock = size_t{1} << 16;

// Row r < rows of c (n floats each, ldc apart) canonical in place.
template <class D>
void CanonicalRows(D d, float* c, size_t rows, size_t n, size_t ldc) {
  const size_t N = hn::Lanes(d);
  for (size_t r = 0; r < rows; ++r) {
    float* row = c + r * ldc;
    size_t j = 0;
    for (; j + N <= n; j += N) hn::StoreU(Canonicalize(d, hn::LoadU(d, row + j)), d, row + j);
    for (; j < n; ++j) row[j] = row[j] != row[j] ? __builtin_nanf("") : row[j];
  }
}

}  // namespace

void NarrowColumnsProductTarget(const float* w, size_t c_out, size_t k, const float* cols, size_t n, float* c,
                                size_t ldc, ThreadPool* pool, bool* done) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  *done = HasChannelTails();
  if (!*done) return;
  const size_t whole = n / N, rest = n % N, step = ConvTileVectors(kConvTileRows);
  std::vector<int64_t> off(k), rest_off;
  for (size_t p = 0; p < k; ++p) off[p] = static_cast<int64_t>(p * n);
  // Columns past the whole vectors that a tile runs as one vector of columns (a partial tile, no
  // whole vector to join, or more than kMaxTailColumns of them): copied into rows of N, zeros
  // past the last, so the vector reads stay inside.
  std::vector<float> rest_cols;
  const size_t tiles = (c_out + kConvTileRows - 1) / kConvTileRows;
  const bool partial_tile = c_out % kConvTileRows != 0;
  if (rest != 0 && (rest > kMaxTailColumns || partial_tile || whole == 0)) {
    rest_cols.assign(k * N, 0.0f);
    rest_off.resize(k);
    for (size_t p = 0; p < k; ++p) {
      for (size_t t = 0; t < rest; ++t) rest_cols[p * N + t] = cols[p * n + whole * N + t];
      rest_off[p] = static_cast<int64_t>(p * N);
    }
  }
  const size_t threads = pool == nullptr ? 1 : pool->num_threads();
  const size_t blocks = std::min(tiles, threads > 1 ? 4 * threads : 1);
  const size_t tiles_per_block = (tiles + blocks - 1) / blocks;
  // Blocks of steps (the sum's terms) whose columns fit kColumnBlock: every tile of the task sums
  // one block before the next, so the block's columns are read from the second-level cache.
  const size_t kb = std::min(k, std::max<size_t>(kColumnBlock / n, 1));
  ForEachItem(pool, (tiles + tiles_per_block - 1) / tiles_per_block, c_out * k * n, [&](size_t block) {
    thread_local std::vector<float> packed, edge;
    const size_t t_begin = block * tiles_per_block, t_end = std::min(tiles, (block + 1) * tiles_per_block);
    float* const edges = rest != 0 ? AtLeast(&edge, (t_end - t_begin) * kConvTileRows * N) : nullptr;
    // Whether a tile of mr rows sums its last columns as vectors of channels.
    const auto channel_tail = [&](size_t mr) { return rest != 0 && mr == 8 && rest <= kMaxTailColumns && whole != 0; };
    for (size_t c0 = 0; c0 < k; c0 += kb) {
      const size_t kc = std::min(kb, k - c0);
      const bool resume = c0 != 0;  // the sums go on from the last block's
      for (size_t t = t_begin; t < t_end; ++t) {
        // One tile's weights for the block packed just before its sums (they stay in the
        // second-level cache).
        const size_t r0 = t * kConvTileRows, mr = std::min(kConvTileRows, c_out - r0);
        float* const out = c + r0 * ldc;
        const bool tail_as_channels = channel_tail(mr);
        float* const ap = AtLeast(&packed, mr * kc);
        PackRowTiles(w + r0 * k + c0, mr, kc, ap, k);
        const float* const block_cols = cols + c0 * n;
        // Steps of three vectors; the tail columns join the last step, which has two vectors or
        // fewer when there are more than one of them (three and one, then two with the tail).
        for (size_t v0 = 0; v0 < whole;) {
          const size_t left = whole - v0;
          const size_t nv = left > step ? step : (tail_as_channels && left == 3 && rest > 1) ? 1 : left;
          const size_t tail = tail_as_channels && nv == left ? rest : 0;
          if (mr == 8) {
            // The first step prefetches the next tile's weights (after a block's last tile, the
            // next block's first; after the last, its own again).
            const float* next = w + r0 * k + c0;
            if (v0 == 0 && t + 1 < t_end) next = w + (r0 + 8) * k + c0;
            else if (v0 == 0 && c0 + kc < k) next = w + t_begin * kConvTileRows * k + c0 + kc;
            EightRows<true>(d, nv, tail, ap, block_cols + v0 * N, off.data(), kc, out + v0 * N, ldc, resume, next, k);
          } else {
            OutputTileShape(d, mr, nv, ap, block_cols + v0 * N, off.data(), kc, out + v0 * N, ldc, resume);
          }
          v0 += nv;
        }
        if (rest != 0 && !tail_as_channels) {
          OutputTileShape(d, mr, 1, ap, rest_cols.data() + c0 * N, rest_off.data(), kc,
                          edges + (t - t_begin) * kConvTileRows * N, N, resume);
        }
      }
    }
    for (size_t t = t_begin; t < t_end; ++t) {
      const size_t r0 = t * kConvTileRows, mr = std::min(kConvTileRows, c_out - r0);
      float* const out = c + r0 * ldc;
      if (rest != 0 && !channel_tail(mr)) {
        const float* e = edges + (t - t_begin) * kConvTileRows * N;
        for (size_t r = 0; r < mr; ++r) std::copy(e + r * N, e + r * N + rest, out + r * ldc + whole * N);
      }
      CanonicalRows(d, out, mr, n, ldc);
    }
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lockstep {
namespace simd {

HWY_EXPORT(NarrowColumnsProductTarget);

bool NarrowColumnsProduct(const float* w, size_t c_out, size_t k, const float* cols, size_t n, float* c, size_t ldc,
                          ThreadPool* pool) {
  bool done = false;
  if (k == 0) return false;  // the GEMM's +0
  if (c_out == 0 || n == 0) return true;
  if (pool != nullptr) {
    HWY_DYNAMIC_DISPATCH(NarrowColumnsProductTarget)(w, c_out, k, cols, n, c, ldc, pool, &done);
    return done;
  }
  const std::shared_ptr<ThreadPool> held = DefaultThreadPool();
  HWY_DYNAMIC_DISPATCH(NarrowColumnsProductTarget)(w, c_out, k, cols, n, c, ldc, held.get(), &done);
  return done;
}

}  // namespace simd
}  // namespace lockstep
#endif  // HWY_ONCE
