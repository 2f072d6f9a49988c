// Per-target GEMM: packed panels and a register-tiled microkernel of kRows x (2 vectors), the
// K loop innermost and sequential, multiply then add (never fused).
#if defined(LOCKSTEP_SIMD_GEMM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_GEMM_INL_H_
#undef LOCKSTEP_SIMD_GEMM_INL_H_
#else
#define LOCKSTEP_SIMD_GEMM_INL_H_
#endif

#include <string.h>

#include "hwy/highway.h"
#include "simd/contract-inl.h"
#include "simd/gemm.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr size_t kGemmRows = 6;  // MR: rows of a register tile

// The batch-grouped kernels' fold of row r of a tile into the partial waiting at `left` (left
// operand first), in scope: d, N, nr, left and the row's sums c<r>0, c<r>1.
#define LOCKSTEP_GEMM_FOLD(r)                                          \
  c##r##0 = hn::Add(hn::LoadU(d, left + r * nr), c##r##0);             \
  c##r##1 = hn::Add(hn::LoadU(d, left + r * nr + N), c##r##1);

// Element (p, j) of op(B).
HWY_INLINE float ElementB(const GemmArgs& g, size_t p, size_t j) {
  return g.trans_b ? g.b[j * g.ldb + p] : g.b[p * g.ldb + j];
}

// A transposing copy into one panel of `width` lanes: out[p * width + j] = src[j * ld + p] for
// p < kc and j < valid (rows of the stored matrix, each read contiguously), zero for j >= valid.
// Four rows at a time, 4 x 4 blocks transposed in registers (exact: data moves only).
HWY_INLINE void PackTransposing(const float* src, size_t ld, size_t valid, size_t width, size_t kc,
                                float* HWY_RESTRICT out) {
  const hn::FixedTag<float, 4> d4;
  size_t jj = 0;
  for (; jj + 4 <= valid; jj += 4) {
    const float* HWY_RESTRICT s0 = src + jj * ld;
    const float* HWY_RESTRICT s1 = s0 + ld;
    const float* HWY_RESTRICT s2 = s1 + ld;
    const float* HWY_RESTRICT s3 = s2 + ld;
    float* HWY_RESTRICT dst = out + jj;
    size_t p = 0;
    for (; p + 4 <= kc; p += 4) {
      const auto v0 = hn::LoadU(d4, s0 + p), v1 = hn::LoadU(d4, s1 + p);
      const auto v2 = hn::LoadU(d4, s2 + p), v3 = hn::LoadU(d4, s3 + p);
      const auto t0 = hn::InterleaveLower(d4, v0, v2), t1 = hn::InterleaveLower(d4, v1, v3);
      const auto t2 = hn::InterleaveUpper(d4, v0, v2), t3 = hn::InterleaveUpper(d4, v1, v3);
      hn::StoreU(hn::InterleaveLower(d4, t0, t1), d4, dst + (p + 0) * width);
      hn::StoreU(hn::InterleaveUpper(d4, t0, t1), d4, dst + (p + 1) * width);
      hn::StoreU(hn::InterleaveLower(d4, t2, t3), d4, dst + (p + 2) * width);
      hn::StoreU(hn::InterleaveUpper(d4, t2, t3), d4, dst + (p + 3) * width);
    }
    for (; p < kc; ++p) {
      dst[p * width + 0] = s0[p];
      dst[p * width + 1] = s1[p];
      dst[p * width + 2] = s2[p];
      dst[p * width + 3] = s3[p];
    }
  }
  for (; jj < width; ++jj) {
    float* HWY_RESTRICT dst = out + jj;
    if (jj >= valid) {
      for (size_t p = 0; p < kc; ++p) dst[p * width] = 0.0f;
      continue;
    }
    const float* HWY_RESTRICT row = src + jj * ld;
    for (size_t p = 0; p < kc; ++p) dst[p * width] = row[p];
  }
}

// Packs op(A)[i0 : i0+rows, p0 : p0+kc] of a transposed A (g.trans_a) as panels of kPanelRows
// rows: panel r holds, for each p, kPanelRows consecutive values (zero past the last row). Only the
// batch-grouped product packs A (its panels span the whole K); elsewhere A is read in place.
template <size_t kPanelRows = kGemmRows>
HWY_INLINE void PackA(const GemmArgs& g, size_t i0, size_t rows, size_t p0, size_t kc, float* out) {
  // Row p of the stored matrix holds step p of every panel: read it once, in order, and deal it
  // out to the panels (reading each panel down the rows would touch a new cache line per step).
  const size_t full = rows / kPanelRows, rest = rows % kPanelRows;
  for (size_t p = 0; p < kc; ++p) {
    const float* src = g.a + (p0 + p) * g.lda + i0;
    float* dst = out + p * kPanelRows;
    for (size_t r = 0; r < full; ++r, src += kPanelRows, dst += kc * kPanelRows) {
      memcpy(dst, src, kPanelRows * sizeof(float));
    }
    if (rest != 0) {
      for (size_t ii = 0; ii < kPanelRows; ++ii) dst[ii] = ii < rest ? src[ii] : 0.0f;
    }
  }
}

// Packs op(B)[p0 : p0+kc, j0 : j0+cols] as panels of nr columns: for each p, nr consecutive
// values (zero past the last column). A transposed B is a transposing copy: column j of op(B) is
// row j of the stored matrix (PackTransposing).
// edge_only: only a last, partial panel (the full ones are read in place, BInPlace).
HWY_INLINE void PackB(const GemmArgs& g, size_t p0, size_t kc, size_t j0, size_t cols, size_t nr,
                      float* out, bool edge_only = false) {
  for (size_t c = 0; c < cols; c += nr, out += kc * nr) {
    const size_t valid = cols - c < nr ? cols - c : nr;
    if (edge_only && valid == nr) continue;
    if (g.trans_b) {
      PackTransposing(g.b + (j0 + c) * g.ldb + p0, g.ldb, valid, nr, kc, out);
      continue;
    }
    float* dst = out;
    const float* src = g.b + p0 * g.ldb + j0 + c;
    if (valid == nr) {  // whole rows of two vectors (a libc call per row cost more than the copy)
      const hn::ScalableTag<float> d;
      const size_t N = hn::Lanes(d);
      for (size_t p = 0; p < kc; ++p, dst += nr, src += g.ldb) {
        hn::StoreU(hn::LoadU(d, src), d, dst);
        hn::StoreU(hn::LoadU(d, src + N), d, dst + N);
      }
      continue;
    }
    for (size_t p = 0; p < kc; ++p, dst += nr, src += g.ldb) {  // the valid columns, then zeros
      memcpy(dst, src, valid * sizeof(float));
      for (size_t jj = valid; jj < nr; ++jj) dst[jj] = 0.0f;
    }
  }
}

// One register tile: c[6, 2N] (+)= a[6, kc] x bp[kc, 2N], where element (r, p) of the A tile is
// a_rows[r][p * a_step]: rows of a row-major A read in place (a_step 1), or six consecutive floats
// per step (kConsecutive: a_rows[r] = a_rows[0] + r), which is a transposed A read in place
// (a_step lda; packing it cost 10% of a 128x128x1024 product and 30% of attention's 64x32x64) or a
// packed panel of the batch-grouped product (a_step 6). A row-major A is never copied either: its
// transposing pack cost as much as the products at the examples' small shapes. `accumulate`
// continues the sums already in c (the previous K block), otherwise they start from -0.0, the
// exact identity, so the first step yields a0*b0 exactly.
//
// kGrouped (the batch-grouped product, simd/gemm.cc): the sums start from -0.0, and the tile is
// then folded into `pending` (one tile of kGemmRows x 2N per level, row stride 2N): for each level
// whose bit is set in `group`, the tile waiting there is added as the left operand; the result is
// stored, unrounded to canonical form, at the first level whose bit is clear.
//
// kMaskedEdge (targets whose masked loads and stores touch only the selected lanes, kMaskedEdges):
// an edge tile read and written in C itself, rows from valid_rows on and columns from valid_cols on
// left alone.
template <bool kGrouped, bool kConsecutive, bool kMaskedEdge = false, class D>
HWY_INLINE void MicroKernelImpl(D d, const float* const* a_rows, size_t a_step, const float* HWY_RESTRICT bp,
                                size_t b_step, size_t kc, float* HWY_RESTRICT c, size_t ldc, bool accumulate,
                                const float* HWY_RESTRICT bias, size_t group, float* HWY_RESTRICT pending,
                                size_t valid_rows = kGemmRows, size_t valid_cols = 0) {
  const size_t N = hn::Lanes(d);
  const auto m0 = hn::FirstN(d, valid_cols < N ? valid_cols : N);
  const auto m1 = hn::FirstN(d, valid_cols > N ? valid_cols - N : 0);
  // Consecutive rows: one pointer and constant offsets, not six pointers.
  const float* HWY_RESTRICT a0 = a_rows[0];
  const float* HWY_RESTRICT a1 = kConsecutive ? a0 + 1 : a_rows[1];
  const float* HWY_RESTRICT a2 = kConsecutive ? a0 + 2 : a_rows[2];
  const float* HWY_RESTRICT a3 = kConsecutive ? a0 + 3 : a_rows[3];
  const float* HWY_RESTRICT a4 = kConsecutive ? a0 + 4 : a_rows[4];
  const float* HWY_RESTRICT a5 = kConsecutive ? a0 + 5 : a_rows[5];
#define LOCKSTEP_GEMM_INIT(r)                                                              \
  auto c##r##0 = hn::Set(d, -0.0f), c##r##1 = hn::Set(d, -0.0f);                            \
  if (!kGrouped && accumulate && !kMaskedEdge) {                                            \
    c##r##0 = hn::LoadU(d, c + r * ldc);                                                    \
    c##r##1 = hn::LoadU(d, c + r * ldc + N);                                                \
  } else if (!kGrouped && accumulate && r < valid_rows) {                                   \
    c##r##0 = hn::MaskedLoad(m0, d, c + r * ldc);                                           \
    c##r##1 = hn::MaskedLoad(m1, d, c + r * ldc + N);                                       \
  }
  LOCKSTEP_GEMM_INIT(0) LOCKSTEP_GEMM_INIT(1) LOCKSTEP_GEMM_INIT(2)
  LOCKSTEP_GEMM_INIT(3) LOCKSTEP_GEMM_INIT(4) LOCKSTEP_GEMM_INIT(5)
#undef LOCKSTEP_GEMM_INIT
  for (size_t p = 0, q = 0; p < kc; ++p, q += a_step) {
    const auto b0 = hn::LoadU(d, bp);
    const auto b1 = hn::LoadU(d, bp + N);
#define LOCKSTEP_GEMM_STEP(r)                     \
  {                                               \
    const auto a = hn::Set(d, a##r[q]);           \
    c##r##0 = hn::Add(c##r##0, hn::Mul(a, b0));   \
    c##r##1 = hn::Add(c##r##1, hn::Mul(a, b1));   \
  }
    LOCKSTEP_GEMM_STEP(0) LOCKSTEP_GEMM_STEP(1) LOCKSTEP_GEMM_STEP(2)
    LOCKSTEP_GEMM_STEP(3) LOCKSTEP_GEMM_STEP(4) LOCKSTEP_GEMM_STEP(5)
#undef LOCKSTEP_GEMM_STEP
    bp += b_step;
  }
  if (kGrouped) {
    const size_t nr = 2 * N, tile = kGemmRows * nr;
    size_t level = 0;
    for (; (group >> level) & 1; ++level) {
      const float* HWY_RESTRICT left = pending + level * tile;
      LOCKSTEP_GEMM_FOLD(0) LOCKSTEP_GEMM_FOLD(1) LOCKSTEP_GEMM_FOLD(2)
      LOCKSTEP_GEMM_FOLD(3) LOCKSTEP_GEMM_FOLD(4) LOCKSTEP_GEMM_FOLD(5)
    }
    c = pending + level * tile;
    ldc = nr;
#define LOCKSTEP_GEMM_KEEP(r)                     \
  hn::StoreU(c##r##0, d, c + r * ldc);            \
  hn::StoreU(c##r##1, d, c + r * ldc + N);
    LOCKSTEP_GEMM_KEEP(0) LOCKSTEP_GEMM_KEEP(1) LOCKSTEP_GEMM_KEEP(2)
    LOCKSTEP_GEMM_KEEP(3) LOCKSTEP_GEMM_KEEP(4) LOCKSTEP_GEMM_KEEP(5)
#undef LOCKSTEP_GEMM_KEEP
    return;
  }
  if (bias != nullptr) {  // the last K block of a product with a bias: sum + bias[j]
    const auto bias0 = hn::LoadU(d, bias), bias1 = hn::LoadU(d, bias + N);
#define LOCKSTEP_GEMM_BIAS(r)              \
  c##r##0 = hn::Add(c##r##0, bias0);       \
  c##r##1 = hn::Add(c##r##1, bias1);
    LOCKSTEP_GEMM_BIAS(0) LOCKSTEP_GEMM_BIAS(1) LOCKSTEP_GEMM_BIAS(2)
    LOCKSTEP_GEMM_BIAS(3) LOCKSTEP_GEMM_BIAS(4) LOCKSTEP_GEMM_BIAS(5)
#undef LOCKSTEP_GEMM_BIAS
  }
  // NaN payloads differ between platforms; only the canonical NaN is ever stored.
#define LOCKSTEP_GEMM_STORE(r)                                        \
  if (!kMaskedEdge) {                                                 \
    hn::StoreU(Canonicalize(d, c##r##0), d, c + r * ldc);             \
    hn::StoreU(Canonicalize(d, c##r##1), d, c + r * ldc + N);         \
  } else if (r < valid_rows) {                                        \
    hn::BlendedStore(Canonicalize(d, c##r##0), m0, d, c + r * ldc);     \
    hn::BlendedStore(Canonicalize(d, c##r##1), m1, d, c + r * ldc + N); \
  }
  LOCKSTEP_GEMM_STORE(0) LOCKSTEP_GEMM_STORE(1) LOCKSTEP_GEMM_STORE(2)
  LOCKSTEP_GEMM_STORE(3) LOCKSTEP_GEMM_STORE(4) LOCKSTEP_GEMM_STORE(5)
#undef LOCKSTEP_GEMM_STORE
}

// Whether this target's masked loads and stores leave the other lanes' memory untouched (AVX-512:
// mask registers), so that an edge tile can work in C itself instead of a copy.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
constexpr bool kMaskedEdges = true;
#else
constexpr bool kMaskedEdges = false;
#endif

// An edge tile (valid_rows < 6 or valid_cols < 2N) in C itself; kMaskedEdges targets only.
template <class D>
HWY_INLINE void MicroKernelEdge(D d, const float* const* a_rows, size_t a_step, const float* HWY_RESTRICT bp,
                                size_t b_step, size_t kc, float* HWY_RESTRICT c, size_t ldc, bool accumulate,
                                const float* HWY_RESTRICT bias, size_t valid_rows, size_t valid_cols) {
  MicroKernelImpl<false, false, true>(d, a_rows, a_step, bp, b_step, kc, c, ldc, accumulate, bias, 0, nullptr,
                                      valid_rows, valid_cols);
}

template <class D>
HWY_INLINE void MicroKernel(D d, const float* const* a_rows, size_t a_step, bool consecutive,
                            const float* HWY_RESTRICT bp, size_t b_step, size_t kc, float* HWY_RESTRICT c, size_t ldc,
                            bool accumulate, const float* HWY_RESTRICT bias) {
  if (consecutive) {
    MicroKernelImpl<false, true>(d, a_rows, a_step, bp, b_step, kc, c, ldc, accumulate, bias, 0, nullptr);
  } else {
    MicroKernelImpl<false, false>(d, a_rows, a_step, bp, b_step, kc, c, ldc, accumulate, bias, 0, nullptr);
  }
}

template <class D>
HWY_INLINE void MicroKernelGrouped(D d, const float* const* a_rows, size_t a_step, bool consecutive,
                                   const float* HWY_RESTRICT bp, size_t kc, size_t group, float* HWY_RESTRICT pending) {
  if (consecutive) {
    MicroKernelImpl<true, true>(d, a_rows, a_step, bp, 2 * hn::Lanes(d), kc, nullptr, 0, false, nullptr, group, pending);
  } else {
    MicroKernelImpl<true, false>(d, a_rows, a_step, bp, 2 * hn::Lanes(d), kc, nullptr, 0, false, nullptr, group,
                                 pending);
  }
}

// The tall tile where the target has 32 vector registers (AVX-512): 12 rows x 2 vectors, 24 sums.
// Each B load serves twice the rows of the 6-row tile. Element (r, p) of the A tile is
// a[p * a_step + r]: a packed panel of 12 rows (a_step 12) or a transposed A read in place
// (a_step lda). The sums are those of MicroKernelImpl, in the same order.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
constexpr size_t kTallRows = 12;
#else
constexpr size_t kTallRows = 0;  // none: 24 sums would not fit in the registers
#endif

#define LOCKSTEP_GEMM_ROWS12(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11)
// kGrouped: MicroKernelImpl's fold into `pending` (tiles of 12 x 2N); otherwise a full tile of C,
// continued when `accumulate`, plus `bias` when not null.
template <bool kGrouped, class D>
HWY_INLINE void MicroKernelTallImpl(D d, const float* HWY_RESTRICT a, size_t a_step, const float* HWY_RESTRICT bp,
                                    size_t b_step, size_t kc, float* HWY_RESTRICT c, size_t ldc, bool accumulate,
                                    const float* HWY_RESTRICT bias, size_t group, float* HWY_RESTRICT pending) {
  const size_t N = hn::Lanes(d);
#define LOCKSTEP_GEMM_INIT(r)                                    \
  auto c##r##0 = hn::Set(d, -0.0f), c##r##1 = hn::Set(d, -0.0f);  \
  if (!kGrouped && accumulate) {                                  \
    c##r##0 = hn::LoadU(d, c + r * ldc);                          \
    c##r##1 = hn::LoadU(d, c + r * ldc + N);                      \
  }
  LOCKSTEP_GEMM_ROWS12(LOCKSTEP_GEMM_INIT)
#undef LOCKSTEP_GEMM_INIT
  for (size_t p = 0; p < kc; ++p, a += a_step, bp += b_step) {
    const auto b0 = hn::LoadU(d, bp);
    const auto b1 = hn::LoadU(d, bp + N);
#define LOCKSTEP_GEMM_STEP(r)                     \
  {                                               \
    const auto av = hn::Set(d, a[r]);             \
    c##r##0 = hn::Add(c##r##0, hn::Mul(av, b0));  \
    c##r##1 = hn::Add(c##r##1, hn::Mul(av, b1));  \
  }
    LOCKSTEP_GEMM_ROWS12(LOCKSTEP_GEMM_STEP)
#undef LOCKSTEP_GEMM_STEP
  }
  if (kGrouped) {
    const size_t nr = 2 * N, tile = 12 * nr;
    size_t level = 0;
    for (; (group >> level) & 1; ++level) {
      const float* HWY_RESTRICT left = pending + level * tile;
      LOCKSTEP_GEMM_ROWS12(LOCKSTEP_GEMM_FOLD)
    }
    float* HWY_RESTRICT keep = pending + level * tile;
#define LOCKSTEP_GEMM_KEEP(r)                     \
  hn::StoreU(c##r##0, d, keep + r * nr);          \
  hn::StoreU(c##r##1, d, keep + r * nr + N);
    LOCKSTEP_GEMM_ROWS12(LOCKSTEP_GEMM_KEEP)
#undef LOCKSTEP_GEMM_KEEP
    return;
  }
  if (bias != nullptr) {
    const auto bias0 = hn::LoadU(d, bias), bias1 = hn::LoadU(d, bias + N);
#define LOCKSTEP_GEMM_BIAS(r)              \
  c##r##0 = hn::Add(c##r##0, bias0);       \
  c##r##1 = hn::Add(c##r##1, bias1);
    LOCKSTEP_GEMM_ROWS12(LOCKSTEP_GEMM_BIAS)
#undef LOCKSTEP_GEMM_BIAS
  }
#define LOCKSTEP_GEMM_STORE(r)                                \
  hn::StoreU(Canonicalize(d, c##r##0), d, c + r * ldc);       \
  hn::StoreU(Canonicalize(d, c##r##1), d, c + r * ldc + N);
  LOCKSTEP_GEMM_ROWS12(LOCKSTEP_GEMM_STORE)
#undef LOCKSTEP_GEMM_STORE
}

template <class D>
HWY_INLINE void MicroKernelGroupedTall(D d, const float* HWY_RESTRICT a, const float* HWY_RESTRICT bp, size_t kc,
                                       size_t group, float* HWY_RESTRICT pending) {
  MicroKernelTallImpl<true>(d, a, 12, bp, 2 * hn::Lanes(d), kc, nullptr, 0, false, nullptr, group, pending);
}

template <class D>
HWY_INLINE void MicroKernelTall(D d, const float* HWY_RESTRICT a, size_t a_step, const float* HWY_RESTRICT bp,
                                size_t b_step, size_t kc, float* HWY_RESTRICT c, size_t ldc, bool accumulate,
                                const float* HWY_RESTRICT bias) {
  MicroKernelTallImpl<false>(d, a, a_step, bp, b_step, kc, c, ldc, accumulate, bias, 0, nullptr);
}
#undef LOCKSTEP_GEMM_ROWS12

// Where the register tile of op(A) rows i .. i+5 starts at step p0, row by row (MicroKernelImpl's
// a_rows). Rows past the edge (tile_rows < 6) repeat the last valid row: their sums are never
// stored, and nothing past the matrix is read.
HWY_INLINE void ARows(const GemmArgs& g, size_t i, size_t tile_rows, size_t p0, const float** a_rows) {
  for (size_t r = 0; r < kGemmRows; ++r) {
    const size_t row = i + (r < tile_rows ? r : tile_rows - 1);
    a_rows[r] = g.trans_a ? g.a + p0 * g.lda + row : g.a + row * g.lda + p0;
  }
}

// One K block of C[i0 : i0+rows, j0 : j0+cols] against an already packed B block (packed_b holds
// the columns of the current column block from column 0; jr0 is this task's first column in it).
// `accumulate` continues the sums of the previous K block stored in C.
// Whether the full panels of B's K block are read in place (rows ldb apart) instead of packed: a
// short block of a row-major B spanning few pages, used by few row tiles. Packing pays off when
// many tiles reuse a panel or K is long (measured on the examples' shapes), for the TLB, and for
// a transposed B.
HWY_INLINE bool BInPlace(const GemmArgs& g, size_t kc) {
  return !g.trans_b && g.m <= 128 && kc <= 128 && g.ldb * kc <= (size_t{1} << 16);
}

template <class D>
HWY_INLINE void GemmRowBlock(D d, const GemmArgs& g, size_t i0, size_t rows, size_t j0, size_t jr0,
                             size_t cols, size_t p0, size_t kc, bool accumulate,
                             const float* packed_b) {
  const size_t nr = 2 * hn::Lanes(d);
  HWY_ALIGN float edge[kGemmRows * 2 * hn::MaxLanes(D())];
  HWY_ALIGN float edge_bias[2 * hn::MaxLanes(D())];
  const size_t a_step = g.trans_a ? g.lda : 1;
  const bool add_bias = g.bias != nullptr && p0 + kc == g.k;  // after the last K block
  // Rows [0, tall) of a transposed A run in tall tiles where the column panels are full
  // (kTallRows targets), A read in place: twelve consecutive floats per step. A row-major A keeps
  // the 6-row tile: packing it for the tall one did not pay once B's blocks fit L2 (kBlockCols).
  size_t tall = 0;
  if constexpr (kTallRows != 0) {
    constexpr size_t kTile = kTallRows != 0 ? kTallRows : 1;  // (this branch is discarded when 0)
    if (g.trans_a) tall = rows / kTile * kTile;
  }
  for (size_t jr = jr0; jr < jr0 + cols; jr += nr) {
    const size_t tile_cols = jr0 + cols - jr < nr ? jr0 + cols - jr : nr;
    const float* bias = nullptr;
    if (add_bias && tile_cols == nr) bias = g.bias + j0 + jr;
    if (add_bias && tile_cols < nr) {  // a partial panel's bias, padded
      for (size_t q = 0; q < nr; ++q) edge_bias[q] = q < tile_cols ? g.bias[j0 + jr + q] : 0.0f;
      bias = edge_bias;
    }
    const bool in_place = tile_cols == nr && BInPlace(g, kc);
    const float* bp = in_place ? g.b + p0 * g.ldb + j0 + jr : packed_b + jr * kc;
    const size_t b_step = in_place ? g.ldb : nr;
    for (size_t ir = 0; ir < rows;) {
      float* c = g.c + (i0 + ir) * g.ldc + j0 + jr;
      if (ir < tall && tile_cols == nr) {
        // The next tall tile's C (or the first of the next panel) ahead of its loads: its rows are
        // ldc apart, pages apart in a large product, and came late from L3 (1024^3: +3%).
        if (ir + kTallRows < tall || jr + nr < jr0 + cols) {
          const float* next = ir + kTallRows < tall ? c + kTallRows * g.ldc : g.c + i0 * g.ldc + j0 + jr + nr;
          for (size_t r = 0; r < kTallRows; ++r) {
            __builtin_prefetch(next + r * g.ldc, 1);
            __builtin_prefetch(next + r * g.ldc + nr - 1, 1);
          }
        }
        MicroKernelTall(d, g.a + p0 * g.lda + i0 + ir, g.lda, bp, b_step, kc, c, g.ldc, accumulate, bias);
        ir += kTallRows;
        continue;
      }
      const size_t tile_rows = rows - ir < kGemmRows ? rows - ir : kGemmRows;
      const float* a_rows[kGemmRows];
      ARows(g, i0 + ir, tile_rows, p0, a_rows);
      const bool consecutive = g.trans_a && tile_rows == kGemmRows;
      ir += kGemmRows;
      if (tile_rows == kGemmRows && tile_cols == nr) {
        // The next tile's C ahead of its loads, as for the tall tile: rows ldc apart.
        if (accumulate && ir < rows) {
          const float* next = c + kGemmRows * g.ldc;
          for (size_t r = 0; r < kGemmRows; ++r) {
            __builtin_prefetch(next + r * g.ldc, 1);
            __builtin_prefetch(next + r * g.ldc + nr - 1, 1);
          }
        }
        MicroKernel(d, a_rows, a_step, consecutive, bp, b_step, kc, c, g.ldc, accumulate, bias);
        continue;
      }
      if (kMaskedEdges) {
        MicroKernelEdge(d, a_rows, a_step, bp, b_step, kc, c, g.ldc, accumulate, bias, tile_rows, tile_cols);
        continue;
      }
      // Edge tile: run the full tile on a copy, keep only the valid part. The copy needs C's sums
      // only when it continues them (a first K block starts from -0.0 and reads nothing).
      if (accumulate) {
        for (size_t r = 0; r < kGemmRows; ++r) {
          const size_t valid = r < tile_rows ? tile_cols : 0;
          if (valid != 0) memcpy(edge + r * nr, c + r * g.ldc, valid * sizeof(float));
          for (size_t q = valid; q < nr; ++q) edge[r * nr + q] = 0.0f;
        }
      }
      MicroKernel(d, a_rows, a_step, consecutive, bp, b_step, kc, edge, nr, accumulate, bias);
      for (size_t r = 0; r < tile_rows; ++r) memcpy(c + r * g.ldc, edge + r * nr, tile_cols * sizeof(float));
    }
  }
}

#undef LOCKSTEP_GEMM_FOLD

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#endif  // toggle guard
