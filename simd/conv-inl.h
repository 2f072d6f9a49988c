// Per-target register tiles of the direct convolution kernels (simd/conv.h). Multiply, then add,
// never fused; every accumulator walks its sum in the contract's order.
#if defined(LOCKSTEP_SIMD_CONV_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_CONV_INL_H_
#undef LOCKSTEP_SIMD_CONV_INL_H_
#else
#define LOCKSTEP_SIMD_CONV_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwy/highway.h"
#include "simd/contract-inl.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Vector registers the tiles may fill: 32 on AVX-512, NEON and SVE; 16 elsewhere (AVX2, SSE4,
// and WebAssembly, whose engines map SIMD128 onto 16 x86 registers).
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_ARCH_ARM_A64
constexpr size_t kConvRegisters = 32;
#else
constexpr size_t kConvRegisters = 16;
#endif

// Output tile: rows r < MR by vectors v < NV of positions. Accumulator (r, v) sums, for k < kc
// in increasing order, ap[k * MR + r] * base[off[k] + v * N + lane], starting from -0.0 (the
// exact identity: the first step yields the first product). Row r is stored at out + r * ldo.
// T > 0 (eight rows, on targets with 8-lane vectors of floats): the T positions after the
// vectors too, as vectors of the eight rows (lane r of tail t sums ap[k * 8 + r] *
// base[off[k] + NV * N + t] in the same order), stored at out + r * ldo + NV * N + t. A plane's
// last few positions cost a multiply and an add a step this way, not a vector of empty lanes.
// kPrefetch: every other step also prefetches a line of the next tile's weights, eight rows pf_ld
// floats apart from pf, by rows and then columns (the order PackRowTiles reads them), so that they
// stream in from memory while this tile sums instead of before the next one.
// accumulate: the sums go on from the values at out (an earlier call's, over the steps before kc's
// first) instead of -0.0, so a long sum can run in blocks of steps with the same bits.
template <size_t MR, size_t NV, size_t T = 0, bool kPrefetch = false, class D>
HWY_INLINE void OutputTile(D d, const float* HWY_RESTRICT ap, const float* base, const int64_t* off, size_t kc,
                           float* HWY_RESTRICT out, size_t ldo, bool accumulate = false,
                           const float* pf = nullptr, size_t pf_ld = 0) {
  static_assert(MR >= 1 && MR <= 8 && NV >= 1 && NV <= 4, "tile out of range");
  static_assert(T <= 4 && (T == 0 || MR == 8), "a tail is four positions of eight rows at most");
  using V = hn::Vec<D>;
  const size_t N = hn::Lanes(d);
  const V z = hn::Set(d, -0.0f);
  const hn::CappedTag<float, 8> d8;
  using V8 = hn::Vec<decltype(d8)>;
  V8 t0 = hn::Set(d8, -0.0f), t1 = t0, t2 = t0, t3 = t0;
#define LOCKSTEP_CONV_DECLARE(r) V c##r##0 = z, c##r##1 = z, c##r##2 = z, c##r##3 = z;
  LOCKSTEP_CONV_DECLARE(0) LOCKSTEP_CONV_DECLARE(1) LOCKSTEP_CONV_DECLARE(2) LOCKSTEP_CONV_DECLARE(3)
  LOCKSTEP_CONV_DECLARE(4) LOCKSTEP_CONV_DECLARE(5) LOCKSTEP_CONV_DECLARE(6) LOCKSTEP_CONV_DECLARE(7)
#undef LOCKSTEP_CONV_DECLARE
  if (accumulate) {
#define LOCKSTEP_CONV_RESUME(r)                                                   \
  if constexpr (MR > r) {                                                         \
    c##r##0 = hn::LoadU(d, out + r * ldo);                                        \
    if constexpr (NV > 1) c##r##1 = hn::LoadU(d, out + r * ldo + N);              \
    if constexpr (NV > 2) c##r##2 = hn::LoadU(d, out + r * ldo + 2 * N);          \
    if constexpr (NV > 3) c##r##3 = hn::LoadU(d, out + r * ldo + 3 * N);          \
  }
    LOCKSTEP_CONV_RESUME(0) LOCKSTEP_CONV_RESUME(1) LOCKSTEP_CONV_RESUME(2) LOCKSTEP_CONV_RESUME(3)
    LOCKSTEP_CONV_RESUME(4) LOCKSTEP_CONV_RESUME(5) LOCKSTEP_CONV_RESUME(6) LOCKSTEP_CONV_RESUME(7)
#undef LOCKSTEP_CONV_RESUME
    if constexpr (T > 0) {
      HWY_ALIGN float lanes[4 * 8];
      for (size_t t = 0; t < T; ++t) {
        for (size_t r = 0; r < 8; ++r) lanes[t * 8 + r] = out[r * ldo + NV * N + t];
      }
      t0 = hn::Load(d8, lanes);
      if constexpr (T > 1) t1 = hn::Load(d8, lanes + 8);
      if constexpr (T > 2) t2 = hn::Load(d8, lanes + 16);
      if constexpr (T > 3) t3 = hn::Load(d8, lanes + 24);
    }
  }
  // Two steps an iteration: half the loop's bookkeeping (56 x 56 and 14 x 14 layers +3-4% on
  // AVX-512, AVX2 the same).
#pragma GCC unroll 2
  for (size_t k = 0; k < kc; ++k) {
    const float* b = base + off[k];
    const V b0 = hn::LoadU(d, b);
    const V b1 = NV > 1 ? hn::LoadU(d, b + N) : b0;
    const V b2 = NV > 2 ? hn::LoadU(d, b + 2 * N) : b0;
    const V b3 = NV > 3 ? hn::LoadU(d, b + 3 * N) : b0;
#define LOCKSTEP_CONV_STEP(r)                                          \
  if constexpr (MR > r) {                                              \
    const V a = hn::Set(d, ap[r]);                                     \
    c##r##0 = hn::Add(c##r##0, hn::Mul(a, b0));                        \
    if constexpr (NV > 1) c##r##1 = hn::Add(c##r##1, hn::Mul(a, b1));  \
    if constexpr (NV > 2) c##r##2 = hn::Add(c##r##2, hn::Mul(a, b2));  \
    if constexpr (NV > 3) c##r##3 = hn::Add(c##r##3, hn::Mul(a, b3));  \
  }
    LOCKSTEP_CONV_STEP(0) LOCKSTEP_CONV_STEP(1) LOCKSTEP_CONV_STEP(2) LOCKSTEP_CONV_STEP(3)
    LOCKSTEP_CONV_STEP(4) LOCKSTEP_CONV_STEP(5) LOCKSTEP_CONV_STEP(6) LOCKSTEP_CONV_STEP(7)
#undef LOCKSTEP_CONV_STEP
    if constexpr (T > 0) {
      const V8 w8 = hn::LoadU(d8, ap);
      const float* tail = b + NV * N;
      t0 = hn::Add(t0, hn::Mul(w8, hn::Set(d8, tail[0])));
      if constexpr (T > 1) t1 = hn::Add(t1, hn::Mul(w8, hn::Set(d8, tail[1])));
      if constexpr (T > 2) t2 = hn::Add(t2, hn::Mul(w8, hn::Set(d8, tail[2])));
      if constexpr (T > 3) t3 = hn::Add(t3, hn::Mul(w8, hn::Set(d8, tail[3])));
    }
    if constexpr (kPrefetch) {
      if ((k & 1) == 0) __builtin_prefetch(pf + (k >> 1 & 7) * pf_ld + (k >> 4) * 16);
    }
    ap += MR;
  }
#define LOCKSTEP_CONV_PUT(r, v) hn::StoreU(c##r##v, d, out + r * ldo + v * N);
#define LOCKSTEP_CONV_ROW_OUT(r)                   \
  if constexpr (MR > r) {                          \
    LOCKSTEP_CONV_PUT(r, 0)                        \
    if constexpr (NV > 1) { LOCKSTEP_CONV_PUT(r, 1) } \
    if constexpr (NV > 2) { LOCKSTEP_CONV_PUT(r, 2) } \
    if constexpr (NV > 3) { LOCKSTEP_CONV_PUT(r, 3) } \
  }
  LOCKSTEP_CONV_ROW_OUT(0) LOCKSTEP_CONV_ROW_OUT(1) LOCKSTEP_CONV_ROW_OUT(2) LOCKSTEP_CONV_ROW_OUT(3)
  LOCKSTEP_CONV_ROW_OUT(4) LOCKSTEP_CONV_ROW_OUT(5) LOCKSTEP_CONV_ROW_OUT(6) LOCKSTEP_CONV_ROW_OUT(7)
#undef LOCKSTEP_CONV_ROW_OUT
#undef LOCKSTEP_CONV_PUT
  if constexpr (T > 0) {
    HWY_ALIGN float lanes[4 * 8];
    hn::Store(t0, d8, lanes);
    if constexpr (T > 1) hn::Store(t1, d8, lanes + 8);
    if constexpr (T > 2) hn::Store(t2, d8, lanes + 16);
    if constexpr (T > 3) hn::Store(t3, d8, lanes + 24);
    for (size_t t = 0; t < T; ++t) {
      for (size_t r = 0; r < 8; ++r) out[r * ldo + NV * N + t] = lanes[t * 8 + r];
    }
  }
}

// The widest output tile this target holds in registers, and its vectors for a given row count.
// Sixteen registers hold five rows of two vectors (10 sums, 2 input vectors, a broadcast and a
// product): with six rows the 16 live values left GCC one short, and it kept a sum on the stack,
// a load-add-store chain every step (ResNet-18 layers on AVX2: 22-25 -> 30-33 GMAC/s with five).
constexpr size_t kConvTileRows = kConvRegisters == 32 ? 8 : 5;
constexpr size_t ConvTileVectors(size_t rows) {
  return kConvRegisters == 32 ? (rows <= 6 ? 4 : 3) : 2;
}

// OutputTile with its rows chosen at run time (1 <= rows <= kConvTileRows), NV vectors (0: the
// most that many rows hold, ConvTileVectors(rows)).
template <size_t NV, class D>
HWY_INLINE void OutputTileOfRows(D d, size_t rows, const float* ap, const float* base, const int64_t* off,
                                 size_t kc, float* out, size_t ldo, bool accumulate = false) {
  switch (rows) {
#define LOCKSTEP_CONV_CASE(r) \
  case r:                     \
    return OutputTile<r, NV != 0 ? NV : ConvTileVectors(r)>(d, ap, base, off, kc, out, ldo, accumulate);
    LOCKSTEP_CONV_CASE(1) LOCKSTEP_CONV_CASE(2) LOCKSTEP_CONV_CASE(3) LOCKSTEP_CONV_CASE(4)
    LOCKSTEP_CONV_CASE(5) LOCKSTEP_CONV_CASE(6)
#undef LOCKSTEP_CONV_CASE
    default:
      if constexpr (kConvTileRows >= 8) {
        if (rows == 7) return OutputTile<7, NV != 0 ? NV : ConvTileVectors(7)>(d, ap, base, off, kc, out, ldo, accumulate);
        return OutputTile<8, NV != 0 ? NV : ConvTileVectors(8)>(d, ap, base, off, kc, out, ldo, accumulate);
      }
  }
}

template <class D>
HWY_INLINE void OutputTileRows(D d, size_t rows, const float* ap, const float* base, const int64_t* off,
                               size_t kc, float* out, size_t ldo) {
  OutputTileOfRows<0>(d, rows, ap, base, off, kc, out, ldo);
}

// The forward pass's tiles all step by the widest tile's vectors (1 <= vectors <=
// ConvTileVectors(kConvTileRows)), and a plane's last step ends at the vector that holds its last
// position.
template <class D>
HWY_INLINE void OutputTileShape(D d, size_t rows, size_t vectors, const float* ap, const float* base,
                                const int64_t* off, size_t kc, float* out, size_t ldo, bool accumulate = false) {
  constexpr size_t kWidest = ConvTileVectors(kConvTileRows);
  if (vectors >= kWidest) return OutputTileOfRows<kWidest>(d, rows, ap, base, off, kc, out, ldo, accumulate);
  if constexpr (kWidest > 3) {
    if (vectors == 3) return OutputTileOfRows<3>(d, rows, ap, base, off, kc, out, ldo, accumulate);
  }
  if constexpr (kWidest > 2) {
    if (vectors == 2) return OutputTileOfRows<2>(d, rows, ap, base, off, kc, out, ldo, accumulate);
  }
  OutputTileOfRows<1>(d, rows, ap, base, off, kc, out, ldo, accumulate);
}

// Eight rows (on targets with eight-row tiles): `vectors` whole vectors and `tail` positions after
// them (OutputTile's T; three vectors leave registers for one tail position only), prefetching the
// next tile's weights (pf) if kPrefetch.
template <bool kPrefetch, class D>
HWY_INLINE void EightRows(D d, size_t vectors, size_t tail, const float* ap, const float* base, const int64_t* off,
                          size_t kc, float* out, size_t ldo, bool accumulate, const float* pf, size_t pf_ld) {
  if constexpr (kConvTileRows == 8) {
#define LOCKSTEP_EIGHT_ROWS(nv, t) \
  return OutputTile<8, nv, t, kPrefetch>(d, ap, base, off, kc, out, ldo, accumulate, pf, pf_ld);
#define LOCKSTEP_TAIL_CASES(nv)                      \
  switch (tail) {                                    \
    case 0: LOCKSTEP_EIGHT_ROWS(nv, 0)               \
    case 1: LOCKSTEP_EIGHT_ROWS(nv, 1)               \
    case 2: LOCKSTEP_EIGHT_ROWS(nv, 2)               \
    case 3: LOCKSTEP_EIGHT_ROWS(nv, 3)               \
    default: LOCKSTEP_EIGHT_ROWS(nv, 4)              \
  }
    if (vectors >= 3) {
      if (tail == 0) LOCKSTEP_EIGHT_ROWS(3, 0)
      LOCKSTEP_EIGHT_ROWS(3, 1)
    }
    if (vectors == 2) LOCKSTEP_TAIL_CASES(2)
    LOCKSTEP_TAIL_CASES(1)
#undef LOCKSTEP_TAIL_CASES
#undef LOCKSTEP_EIGHT_ROWS
  }
}

// Whether this target sums a few positions past the last whole vector as vectors of eight rows
// (OutputTile's T): eight-row tiles and 8-lane vectors of floats.
HWY_INLINE bool HasChannelTails() {
  const hn::CappedTag<float, 8> d8;
  return kConvTileRows == 8 && hn::Lanes(d8) == 8;
}

// Weight-gradient tile: MR taps by one vector of output channels. For every output position
// (oy, ox) in increasing order, accumulator r adds x[oy * row_step + ox * col_step + off[r]]
// times the vector g[(oy * w_out + ox) * g_step]. Accumulators start from acc (continuing the
// group's sum) or from -0.0, and are stored back to acc (MR vectors, N floats apart). kLanes: x
// is channels-last and read as a vector at that offset, one channel a lane (depthwise layers,
// simd/conv_depthwise.h), instead of one value broadcast.
template <size_t MR, bool kLanes = false, class D>
HWY_INLINE void WeightGradTile(D d, const float* x, size_t row_step, size_t col_step, const int64_t* off,
                               const float* g, size_t g_step, size_t h_out, size_t w_out, bool first,
                               float* acc) {
  static_assert(MR >= 1 && MR <= 28, "tile out of range");
  using V = hn::Vec<D>;
  const size_t N = hn::Lanes(d);
#define LOCKSTEP_DW_ROWS(X)                                                                        \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16) X(17) \
  X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27)
#define LOCKSTEP_DW_DECLARE(r) V a##r = hn::Set(d, -0.0f);
  LOCKSTEP_DW_ROWS(LOCKSTEP_DW_DECLARE)
#undef LOCKSTEP_DW_DECLARE
  if (!first) {
#define LOCKSTEP_DW_LOAD(r) \
  if constexpr (MR > r) a##r = hn::LoadU(d, acc + r * N);
    LOCKSTEP_DW_ROWS(LOCKSTEP_DW_LOAD)
#undef LOCKSTEP_DW_LOAD
  }
  for (size_t oy = 0; oy < h_out; ++oy) {
    const float* xr = x + oy * row_step;
    const float* gr = g + oy * w_out * g_step;
    for (size_t ox = 0; ox < w_out; ++ox) {
      const V gv = hn::LoadU(d, gr + ox * g_step);
      const float* xp = xr + ox * col_step;
#define LOCKSTEP_DW_STEP(r) \
  if constexpr (MR > r) a##r = hn::Add(a##r, hn::Mul(kLanes ? hn::LoadU(d, xp + off[r]) : hn::Set(d, xp[off[r]]), gv));
      LOCKSTEP_DW_ROWS(LOCKSTEP_DW_STEP)
#undef LOCKSTEP_DW_STEP
    }
  }
#define LOCKSTEP_DW_STORE(r) \
  if constexpr (MR > r) hn::StoreU(a##r, d, acc + r * N);
  LOCKSTEP_DW_ROWS(LOCKSTEP_DW_STORE)
#undef LOCKSTEP_DW_STORE
#undef LOCKSTEP_DW_ROWS
}

// The most taps one weight-gradient tile holds: its accumulators plus the gradient vector and a
// broadcast in registers.
constexpr size_t kWeightGradTileTaps = kConvRegisters == 32 ? 26 : 12;

template <bool kLanes = false, class D>
HWY_INLINE void WeightGradTileTaps(D d, size_t taps, const float* x, size_t row_step, size_t col_step,
                                   const int64_t* off, const float* g, size_t g_step, size_t h_out, size_t w_out,
                                   bool first, float* acc) {
  switch (taps) {
#define LOCKSTEP_DW_CASE(r) \
  case r:                   \
    return WeightGradTile<r, kLanes>(d, x, row_step, col_step, off, g, g_step, h_out, w_out, first, acc);
    LOCKSTEP_DW_CASE(1) LOCKSTEP_DW_CASE(2) LOCKSTEP_DW_CASE(3) LOCKSTEP_DW_CASE(4) LOCKSTEP_DW_CASE(5)
    LOCKSTEP_DW_CASE(6) LOCKSTEP_DW_CASE(7) LOCKSTEP_DW_CASE(8) LOCKSTEP_DW_CASE(9) LOCKSTEP_DW_CASE(10)
    LOCKSTEP_DW_CASE(11) LOCKSTEP_DW_CASE(12)
#undef LOCKSTEP_DW_CASE
    default:
      if constexpr (kWeightGradTileTaps > 12) {
        switch (taps) {
#define LOCKSTEP_DW_CASE(r) \
  case r:                   \
    return WeightGradTile<r, kLanes>(d, x, row_step, col_step, off, g, g_step, h_out, w_out, first, acc);
          LOCKSTEP_DW_CASE(13) LOCKSTEP_DW_CASE(14) LOCKSTEP_DW_CASE(15) LOCKSTEP_DW_CASE(16)
          LOCKSTEP_DW_CASE(17) LOCKSTEP_DW_CASE(18) LOCKSTEP_DW_CASE(19) LOCKSTEP_DW_CASE(20)
          LOCKSTEP_DW_CASE(21) LOCKSTEP_DW_CASE(22) LOCKSTEP_DW_CASE(23) LOCKSTEP_DW_CASE(24)
          LOCKSTEP_DW_CASE(25) LOCKSTEP_DW_CASE(26)
#undef LOCKSTEP_DW_CASE
          default: break;
        }
      }
  }
}

// dst[j * dst_stride + i] = src[i * src_stride + j] for i, j < 4: two interleaves and a half
// concatenation a row, on 4-lane vectors (every target has them).
HWY_INLINE void Transpose4x4(const float* src, size_t src_stride, float* dst, size_t dst_stride) {
  const hn::CappedTag<float, 4> d4;
  if constexpr (hn::MaxLanes(d4) < 4) {  // HWY_SCALAR's one-lane vectors
    for (size_t i = 0; i < 4; ++i) {
      for (size_t j = 0; j < 4; ++j) dst[j * dst_stride + i] = src[i * src_stride + j];
    }
    return;
  }
  const auto r0 = hn::LoadU(d4, src), r1 = hn::LoadU(d4, src + src_stride);
  const auto r2 = hn::LoadU(d4, src + 2 * src_stride), r3 = hn::LoadU(d4, src + 3 * src_stride);
  const auto t0 = hn::InterleaveLower(d4, r0, r1), t1 = hn::InterleaveLower(d4, r2, r3);  // j = 0, 1
  const auto t2 = hn::InterleaveUpper(d4, r0, r1), t3 = hn::InterleaveUpper(d4, r2, r3);  // j = 2, 3
  hn::StoreU(hn::ConcatLowerLower(d4, t1, t0), d4, dst);
  hn::StoreU(hn::ConcatUpperUpper(d4, t1, t0), d4, dst + dst_stride);
  hn::StoreU(hn::ConcatLowerLower(d4, t3, t2), d4, dst + 2 * dst_stride);
  hn::StoreU(hn::ConcatUpperUpper(d4, t3, t2), d4, dst + 3 * dst_stride);
}

// The same for an 8 x 8 block, on targets with 8-lane vectors of floats (AVX2, AVX-512, SVE from
// 256 bits): interleaves of floats, then of pairs, then the halves (40 instructions for 64
// floats, where four 4 x 4 blocks take 64). Returns false, moving nothing, elsewhere.
HWY_INLINE bool Transpose8x8(const float* src, size_t src_stride, float* dst, size_t dst_stride) {
  const hn::CappedTag<float, 8> d8;
  if constexpr (hn::MaxLanes(d8) < 8) {
    return false;
  } else {
    if (hn::Lanes(d8) != 8) return false;
    const hn::Repartition<uint64_t, decltype(d8)> d64;
    // Named vectors, not arrays: SVE's sizeless vectors cannot be array elements.
    const auto r0 = hn::LoadU(d8, src), r1 = hn::LoadU(d8, src + src_stride);
    const auto r2 = hn::LoadU(d8, src + 2 * src_stride), r3 = hn::LoadU(d8, src + 3 * src_stride);
    const auto r4 = hn::LoadU(d8, src + 4 * src_stride), r5 = hn::LoadU(d8, src + 5 * src_stride);
    const auto r6 = hn::LoadU(d8, src + 6 * src_stride), r7 = hn::LoadU(d8, src + 7 * src_stride);
    // Rows 2p and 2p + 1 interleaved: columns 0, 1 | 4, 5 (lower) and 2, 3 | 6, 7 (upper).
    const auto t0 = hn::BitCast(d64, hn::InterleaveLower(d8, r0, r1));
    const auto t1 = hn::BitCast(d64, hn::InterleaveUpper(d8, r0, r1));
    const auto t2 = hn::BitCast(d64, hn::InterleaveLower(d8, r2, r3));
    const auto t3 = hn::BitCast(d64, hn::InterleaveUpper(d8, r2, r3));
    const auto t4 = hn::BitCast(d64, hn::InterleaveLower(d8, r4, r5));
    const auto t5 = hn::BitCast(d64, hn::InterleaveUpper(d8, r4, r5));
    const auto t6 = hn::BitCast(d64, hn::InterleaveLower(d8, r6, r7));
    const auto t7 = hn::BitCast(d64, hn::InterleaveUpper(d8, r6, r7));
    // Pairs interleaved: column c of rows 0-3 (uc) and 4-7 (vc), column c + 4 in the upper half.
    const auto u0 = hn::BitCast(d8, hn::InterleaveLower(d64, t0, t2));
    const auto u1 = hn::BitCast(d8, hn::InterleaveUpper(d64, t0, t2));
    const auto u2 = hn::BitCast(d8, hn::InterleaveLower(d64, t1, t3));
    const auto u3 = hn::BitCast(d8, hn::InterleaveUpper(d64, t1, t3));
    const auto v0 = hn::BitCast(d8, hn::InterleaveLower(d64, t4, t6));
    const auto v1 = hn::BitCast(d8, hn::InterleaveUpper(d64, t4, t6));
    const auto v2 = hn::BitCast(d8, hn::InterleaveLower(d64, t5, t7));
    const auto v3 = hn::BitCast(d8, hn::InterleaveUpper(d64, t5, t7));
    hn::StoreU(hn::ConcatLowerLower(d8, v0, u0), d8, dst);
    hn::StoreU(hn::ConcatLowerLower(d8, v1, u1), d8, dst + dst_stride);
    hn::StoreU(hn::ConcatLowerLower(d8, v2, u2), d8, dst + 2 * dst_stride);
    hn::StoreU(hn::ConcatLowerLower(d8, v3, u3), d8, dst + 3 * dst_stride);
    hn::StoreU(hn::ConcatUpperUpper(d8, v0, u0), d8, dst + 4 * dst_stride);
    hn::StoreU(hn::ConcatUpperUpper(d8, v1, u1), d8, dst + 5 * dst_stride);
    hn::StoreU(hn::ConcatUpperUpper(d8, v2, u2), d8, dst + 6 * dst_stride);
    hn::StoreU(hn::ConcatUpperUpper(d8, v3, u3), d8, dst + 7 * dst_stride);
    return true;
  }
}

// Weights [rows, K] packed per tile of kConvTileRows rows: tile t holds [K][rows_t]. An eight-row
// tile moves in 8 x 8 blocks where the target has them, others four rows at a time in 4 x 4 blocks,
// transposed in registers (a layer's weights are packed each call: one by one, 512 x 4,608 took a
// third as long as the sums at batch 1; 8 x 8 blocks made ResNet-18's 7 x 7 layer 2% faster than
// 4 x 4 ones).
// Rows are ldw floats apart (a block of a wider matrix's columns; ldw = k: the whole rows).
inline void PackRowTiles(const float* w, size_t rows, size_t k, float* packed, size_t ldw) {
  for (size_t r0 = 0; r0 < rows; r0 += kConvTileRows) {
    const size_t mr = rows - r0 < kConvTileRows ? rows - r0 : kConvTileRows;
    size_t kk = 0;
    if (mr == 8) {
      while (kk + 8 <= k && Transpose8x8(w + r0 * ldw + kk, ldw, packed + kk * 8, 8)) kk += 8;
    }
    for (; kk + 4 <= k; kk += 4) {
      size_t h = 0;
      for (; h + 4 <= mr; h += 4) Transpose4x4(w + (r0 + h) * ldw + kk, ldw, packed + kk * mr + h, mr);
      for (; h < mr; ++h) {
        for (size_t j = 0; j < 4; ++j) packed[(kk + j) * mr + h] = w[(r0 + h) * ldw + kk + j];
      }
    }
    for (; kk < k; ++kk) {
      for (size_t r = 0; r < mr; ++r) packed[kk * mr + r] = w[(r0 + r) * ldw + kk];
    }
    packed += mr * k;
  }
}

inline void PackRowTiles(const float* w, size_t rows, size_t k, float* packed) { PackRowTiles(w, rows, k, packed, k); }

// The weight gradients' last step: `count` adjacent blocks of `block` partial sums (one a group of
// samples) combined by the pairwise tree, level by level (an odd last one moves up), into the
// first block.
inline void CombineGroupPartials(float* partials, size_t count, size_t block) {
  while (count > 1) {
    size_t next = 0;
    for (size_t i = 0; i + 1 < count; i += 2, ++next) {
      const float* a = partials + i * block;
      const float* b = partials + (i + 1) * block;
      float* o = partials + next * block;
      for (size_t e = 0; e < block; ++e) o[e] = a[e] + b[e];
    }
    if (count % 2 == 1) {
      memmove(partials + next * block, partials + (count - 1) * block, block * sizeof(float));
      ++next;
    }
    count = next;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#endif  // toggle guard
