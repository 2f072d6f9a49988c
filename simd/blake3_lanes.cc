// BLAKE3's compression on one input per lane (simd/blake3_lanes.h). The state's sixteen words
// are sixteen vectors, lane l holding input l's; the message words are transposed into a buffer
// the same way, so every lane runs the scalar compression's operations on its own words.
#include "simd/blake3_lanes.h"

#include <string.h>

#include <algorithm>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/blake3_lanes.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace {

// The message word each of a round's eight G calls takes, round by round: the identity, then
// BLAKE3's permutation applied once more each round.
constexpr uint8_t kSchedule[7][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},  {2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8},
    {3, 4, 10, 12, 13, 2, 7, 14, 6, 5, 9, 0, 11, 15, 8, 1},  {10, 7, 12, 9, 14, 3, 13, 15, 4, 0, 11, 2, 5, 8, 1, 6},
    {12, 13, 9, 11, 15, 10, 14, 8, 7, 2, 5, 3, 0, 1, 6, 4},  {9, 14, 11, 5, 8, 12, 15, 1, 13, 3, 0, 10, 2, 6, 4, 7},
    {11, 15, 5, 0, 1, 9, 8, 6, 14, 10, 2, 12, 3, 4, 7, 13},
};

template <class V>
HWY_INLINE void G(V& a, V& b, V& c, V& d, V mx, V my) {
  a = hn::Add(hn::Add(a, b), mx);
  d = hn::RotateRight<16>(hn::Xor(d, a));
  c = hn::Add(c, d);
  b = hn::RotateRight<12>(hn::Xor(b, c));
  a = hn::Add(hn::Add(a, b), my);
  d = hn::RotateRight<8>(hn::Xor(d, a));
  c = hn::Add(c, d);
  b = hn::RotateRight<7>(hn::Xor(b, c));
}

// One block in every lane: cv[8 N] (word j of lane l at cv[j N + l]; any alignment) is replaced
// by the compression's chaining value, msg[16 N] (aligned) holds the block's words the same way.
// Named vectors, not arrays: SVE's vectors cannot be array elements. Out of line, one copy per
// target (the WebAssembly modules' size counts).
template <class D>
HWY_NOINLINE void Compress(D d, uint32_t* HWY_RESTRICT cv, const uint32_t* HWY_RESTRICT msg, hn::Vec<D> counter_lo,
                         hn::Vec<D> counter_hi, uint32_t block_len, uint32_t flags) {
  const size_t N = hn::Lanes(d);
  auto v0 = hn::LoadU(d, cv), v1 = hn::LoadU(d, cv + N), v2 = hn::LoadU(d, cv + 2 * N), v3 = hn::LoadU(d, cv + 3 * N);
  auto v4 = hn::LoadU(d, cv + 4 * N), v5 = hn::LoadU(d, cv + 5 * N), v6 = hn::LoadU(d, cv + 6 * N);
  auto v7 = hn::LoadU(d, cv + 7 * N);
  auto v8 = hn::Set(d, kBlake3Iv[0]), v9 = hn::Set(d, kBlake3Iv[1]), v10 = hn::Set(d, kBlake3Iv[2]),
       v11 = hn::Set(d, kBlake3Iv[3]);
  auto v12 = counter_lo, v13 = counter_hi, v14 = hn::Set(d, block_len), v15 = hn::Set(d, flags);
#if HWY_ARCH_X86
#pragma GCC unroll 7  // constant message offsets: about 8% faster on AVX-512
#endif
  for (int r = 0; r < 7; ++r) {
    const uint8_t* s = kSchedule[r];
    const auto m = [&](int k) { return hn::Load(d, msg + s[k] * N); };
    G(v0, v4, v8, v12, m(0), m(1));
    G(v1, v5, v9, v13, m(2), m(3));
    G(v2, v6, v10, v14, m(4), m(5));
    G(v3, v7, v11, v15, m(6), m(7));
    G(v0, v5, v10, v15, m(8), m(9));
    G(v1, v6, v11, v12, m(10), m(11));
    G(v2, v7, v8, v13, m(12), m(13));
    G(v3, v4, v9, v14, m(14), m(15));
  }
  hn::StoreU(hn::Xor(v0, v8), d, cv);
  hn::StoreU(hn::Xor(v1, v9), d, cv + N);
  hn::StoreU(hn::Xor(v2, v10), d, cv + 2 * N);
  hn::StoreU(hn::Xor(v3, v11), d, cv + 3 * N);
  hn::StoreU(hn::Xor(v4, v12), d, cv + 4 * N);
  hn::StoreU(hn::Xor(v5, v13), d, cv + 5 * N);
  hn::StoreU(hn::Xor(v6, v14), d, cv + 6 * N);
  hn::StoreU(hn::Xor(v7, v15), d, cv + 7 * N);
}

HWY_INLINE uint32_t LoadLittleEndian(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

// x86's vectors of 16 and 8 lanes transpose in registers (a little-endian target, so the words
// of a parent's children, native, are their little-endian bytes too).
#undef LOCKSTEP_BLAKE3_TRANSPOSE
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
#define LOCKSTEP_BLAKE3_TRANSPOSE 16
#elif HWY_TARGET == HWY_AVX2
#define LOCKSTEP_BLAKE3_TRANSPOSE 8
#else
#define LOCKSTEP_BLAKE3_TRANSPOSE 0
#endif

// msg[w N + l] = little-endian word w of the 64-byte block at rows[l] + offset, for N lanes.
// x86: the rows' blocks loaded whole and transposed in registers (unpacks of 32- and 64-bit
// lanes, then of 128-bit blocks); elsewhere one word at a time.
HWY_INLINE void TransposeBlocks(const uint8_t* const* rows, size_t offset, size_t N, uint32_t* msg) {
#if LOCKSTEP_BLAKE3_TRANSPOSE == 16
  (void)N;
  __m512i r[16], s[16];
  for (int l = 0; l < 16; ++l) r[l] = _mm512_loadu_si512(rows[l] + offset);
  // s[4j + 2c' + h]: for lanes 4j..4j+3, 128-bit block k holds word 4k + c of each, c = 2h + c'.
  for (int j = 0; j < 4; ++j) {
    const __m512i lo_a = _mm512_unpacklo_epi32(r[4 * j], r[4 * j + 1]);
    const __m512i hi_a = _mm512_unpackhi_epi32(r[4 * j], r[4 * j + 1]);
    const __m512i lo_b = _mm512_unpacklo_epi32(r[4 * j + 2], r[4 * j + 3]);
    const __m512i hi_b = _mm512_unpackhi_epi32(r[4 * j + 2], r[4 * j + 3]);
    s[4 * j + 0] = _mm512_unpacklo_epi64(lo_a, lo_b);  // c = 0
    s[4 * j + 1] = _mm512_unpackhi_epi64(lo_a, lo_b);  // c = 1
    s[4 * j + 2] = _mm512_unpacklo_epi64(hi_a, hi_b);  // c = 2
    s[4 * j + 3] = _mm512_unpackhi_epi64(hi_a, hi_b);  // c = 3
  }
  // Word 4k + c of lanes 0..15: block k of s[c], s[4 + c], s[8 + c], s[12 + c].
  for (int c = 0; c < 4; ++c) {
    const __m512i u0 = _mm512_shuffle_i32x4(s[c], s[4 + c], 0x44);       // blocks 0, 1 of each
    const __m512i u1 = _mm512_shuffle_i32x4(s[c], s[4 + c], 0xEE);       // blocks 2, 3
    const __m512i u2 = _mm512_shuffle_i32x4(s[8 + c], s[12 + c], 0x44);
    const __m512i u3 = _mm512_shuffle_i32x4(s[8 + c], s[12 + c], 0xEE);
    _mm512_storeu_si512(msg + (0 + c) * 16, _mm512_shuffle_i32x4(u0, u2, 0x88));
    _mm512_storeu_si512(msg + (4 + c) * 16, _mm512_shuffle_i32x4(u0, u2, 0xDD));
    _mm512_storeu_si512(msg + (8 + c) * 16, _mm512_shuffle_i32x4(u1, u3, 0x88));
    _mm512_storeu_si512(msg + (12 + c) * 16, _mm512_shuffle_i32x4(u1, u3, 0xDD));
  }
#elif LOCKSTEP_BLAKE3_TRANSPOSE == 8
  (void)N;
  for (int half = 0; half < 2; ++half) {  // words 8 half .. 8 half + 7
    __m256i r[8], s[8];
    for (int l = 0; l < 8; ++l) {
      r[l] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[l] + offset + 32 * half));
    }
    for (int j = 0; j < 2; ++j) {
      const __m256i lo_a = _mm256_unpacklo_epi32(r[4 * j], r[4 * j + 1]);
      const __m256i hi_a = _mm256_unpackhi_epi32(r[4 * j], r[4 * j + 1]);
      const __m256i lo_b = _mm256_unpacklo_epi32(r[4 * j + 2], r[4 * j + 3]);
      const __m256i hi_b = _mm256_unpackhi_epi32(r[4 * j + 2], r[4 * j + 3]);
      s[4 * j + 0] = _mm256_unpacklo_epi64(lo_a, lo_b);
      s[4 * j + 1] = _mm256_unpackhi_epi64(lo_a, lo_b);
      s[4 * j + 2] = _mm256_unpacklo_epi64(hi_a, hi_b);
      s[4 * j + 3] = _mm256_unpackhi_epi64(hi_a, hi_b);
    }
    for (int c = 0; c < 4; ++c) {  // word 4k + c: block k of s[c], s[4 + c]
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(msg + (8 * half + c) * 8),
                          _mm256_permute2x128_si256(s[c], s[4 + c], 0x20));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(msg + (8 * half + 4 + c) * 8),
                          _mm256_permute2x128_si256(s[c], s[4 + c], 0x31));
    }
  }
#else
  for (size_t l = 0; l < N; ++l) {
    for (size_t w = 0; w < 16; ++w) msg[w * N + l] = LoadLittleEndian(rows[l] + offset + 4 * w);
  }
#endif
}

// cv[8 N] = the initial value in every lane.
HWY_INLINE void StartLanes(size_t N, uint32_t* cv) {
  for (size_t j = 0; j < 8; ++j) std::fill(cv + j * N, cv + (j + 1) * N, kBlake3Iv[j]);
}

// out[8 l + j] = cv[j N + l] for the lanes in use.
HWY_INLINE void StoreLanes(const uint32_t* cv, size_t N, size_t used, uint32_t* out) {
  for (size_t l = 0; l < used; ++l) {
    for (size_t j = 0; j < 8; ++j) out[8 * l + j] = cv[j * N + l];
  }
}

// The lanes' chunk counters, first_counter + min(l, used - 1), as low and high words.
template <class D>
HWY_INLINE void Counters(D d, uint64_t first_counter, size_t used, hn::Vec<D>& counter_lo, hn::Vec<D>& counter_hi) {
  HWY_ALIGN uint32_t lo[hn::MaxLanes(d)], hi[hn::MaxLanes(d)];
  for (size_t l = 0; l < hn::Lanes(d); ++l) {
    const uint64_t counter = first_counter + std::min(l, used - 1);
    lo[l] = static_cast<uint32_t>(counter);
    hi[l] = static_cast<uint32_t>(counter >> 32);
  }
  counter_lo = hn::Load(d, lo);
  counter_hi = hn::Load(d, hi);
}

// Blocks [first_block, end_block) of `used` chunks (the other lanes repeat the last), in state.
template <class D>
HWY_INLINE void ChunkBlocks(D d, const uint8_t* chunks, size_t used, uint64_t first_counter, size_t first_block,
                            size_t end_block, uint32_t* state) {
  const size_t N = hn::Lanes(d);
  HWY_ALIGN uint32_t msg[16 * hn::MaxLanes(d)];
  const uint8_t* rows[hn::MaxLanes(d)];
  for (size_t l = 0; l < N; ++l) rows[l] = chunks + std::min(l, used - 1) * 1024;
  hn::Vec<D> counter_lo, counter_hi;
  Counters(d, first_counter, used, counter_lo, counter_hi);
  for (size_t b = first_block; b < end_block; ++b) {
    // A call that ends inside the chunks (a slice of a receipt's hashing, blake3.h) asks for the
    // next blocks now: the next slice, in the worker's next wait, finds them in cache (its
    // misses had made a slice 10% longer).
    if (b + 1 == end_block && b + 1 < 16) {
      for (size_t l = 0; l < N; ++l) __builtin_prefetch(rows[l] + (b + 1) * 64, 0, 3);
    }
    TransposeBlocks(rows, b * 64, N, msg);
    const uint32_t flags = (b == 0 ? kBlake3ChunkStart : 0u) | (b == 15 ? kBlake3ChunkEnd : 0u);
    Compress(d, state, msg, counter_lo, counter_hi, 64, flags);
  }
}

}  // namespace

size_t Blake3GroupLanesTarget() { return hn::Lanes(hn::ScalableTag<uint32_t>()); }

void Blake3ChunkGroupTarget(const uint8_t* chunks, size_t count, uint64_t first_counter,
                            size_t first_block, size_t blocks, uint32_t* state, uint32_t* cvs) {
  const hn::ScalableTag<uint32_t> d;
  const size_t N = hn::Lanes(d);
  if (first_block == 0) StartLanes(N, state);
  ChunkBlocks(d, chunks, count, first_counter, first_block, first_block + blocks, state);
  if (first_block + blocks == 16) StoreLanes(state, N, count, cvs);
}

void Blake3ChunksTarget(const uint8_t* chunks, size_t count, uint64_t first_counter,
                        uint32_t* cvs) {
  const hn::ScalableTag<uint32_t> d;
  const size_t N = hn::Lanes(d);
  HWY_ALIGN uint32_t state[8 * hn::MaxLanes(d)];
  for (size_t first = 0; first < count; first += N) {
    const size_t used = std::min(N, count - first);
    StartLanes(N, state);
    ChunkBlocks(d, chunks + first * 1024, used, first_counter + first, 0, 16, state);
    StoreLanes(state, N, used, cvs + 8 * first);
  }
}

void Blake3ParentsTarget(const uint32_t* children, size_t count, uint32_t* out) {
  const hn::ScalableTag<uint32_t> d;
  const size_t N = hn::Lanes(d);
  HWY_ALIGN uint32_t cv[8 * hn::MaxLanes(d)];
  HWY_ALIGN uint32_t msg[16 * hn::MaxLanes(d)];
  const auto zero = hn::Zero(d);
  for (size_t first = 0; first < count; first += N) {
    const size_t used = std::min(N, count - first);
#if LOCKSTEP_BLAKE3_TRANSPOSE
    const uint8_t* rows[hn::MaxLanes(d)];
    for (size_t l = 0; l < N; ++l) {
      rows[l] = reinterpret_cast<const uint8_t*>(children + 16 * (first + std::min(l, used - 1)));
    }
    TransposeBlocks(rows, 0, N, msg);
#else
    for (size_t l = 0; l < N; ++l) {  // the words as they are, whatever the byte order
      const uint32_t* block = children + 16 * (first + std::min(l, used - 1));
      for (size_t w = 0; w < 16; ++w) msg[w * N + l] = block[w];
    }
#endif
    StartLanes(N, cv);
    Compress(d, cv, msg, zero, zero, 64, kBlake3Parent);
    StoreLanes(cv, N, used, out + 8 * first);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lockstep {
namespace simd {

HWY_EXPORT(Blake3ChunksTarget);
HWY_EXPORT(Blake3GroupLanesTarget);
HWY_EXPORT(Blake3ChunkGroupTarget);
HWY_EXPORT(Blake3ParentsTarget);

void Blake3Chunks(const uint8_t* chunks, size_t count, uint64_t first_counter, uint32_t* cvs) {
  HWY_DYNAMIC_DISPATCH(Blake3ChunksTarget)(chunks, count, first_counter, cvs);
}

size_t Blake3GroupLanes() { return HWY_DYNAMIC_DISPATCH(Blake3GroupLanesTarget)(); }

void Blake3ChunkGroup(const uint8_t* chunks, size_t count, uint64_t first_counter,
                      size_t first_block, size_t blocks, uint32_t* state, uint32_t* cvs) {
  HWY_DYNAMIC_DISPATCH(Blake3ChunkGroupTarget)(chunks, count, first_counter, first_block, blocks, state, cvs);
}

void Blake3Parents(const uint32_t* children, size_t count, uint32_t* out) {
  HWY_DYNAMIC_DISPATCH(Blake3ParentsTarget)(children, count, out);
}

}  // namespace simd
}  // namespace lockstep
#endif  // HWY_ONCE
