#include "core/sha256.h"

#include <string.h>

#include <atomic>
#include <utility>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace lockstep {

namespace {

constexpr uint32_t kRoundConstants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

inline uint32_t RotateRight(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

// Set by tests to compare the portable path with the accelerated one.
std::atomic<bool> force_portable{false};

// The reference compressor: every platform (AArch64, s390x, WebAssembly, x86 without SHA-NI).
void CompressPortable(uint32_t state[8], const uint8_t* block, size_t count) {
  for (; count > 0; --count, block += 64) {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i) {
      w[i] = (uint32_t{block[4 * i]} << 24) | (uint32_t{block[4 * i + 1]} << 16) |
             (uint32_t{block[4 * i + 2]} << 8) | uint32_t{block[4 * i + 3]};
    }
    for (int i = 16; i < 64; ++i) {
      const uint32_t s0 = RotateRight(w[i - 15], 7) ^ RotateRight(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const uint32_t s1 = RotateRight(w[i - 2], 17) ^ RotateRight(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int i = 0; i < 64; ++i) {
      const uint32_t s1 = RotateRight(e, 6) ^ RotateRight(e, 11) ^ RotateRight(e, 25);
      const uint32_t choose = (e & f) ^ (~e & g);
      const uint32_t t1 = h + s1 + choose + kRoundConstants[i] + w[i];
      const uint32_t s0 = RotateRight(a, 2) ^ RotateRight(a, 13) ^ RotateRight(a, 22);
      const uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
      const uint32_t t2 = s0 + majority;
      h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    state[0] += a; state[1] += b; state[2] += c; state[3] += d;
    state[4] += e; state[5] += f; state[6] += g; state[7] += h;
  }
}

#if defined(__x86_64__)

#define LOCKSTEP_SHA_NI_TARGET __attribute__((target("sha,ssse3,sse4.1")))

// SHA-NI only touches XMM registers, whose state every x86-64 OS saves, so CPUID alone decides.
bool CpuHasShaNi() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  const bool ssse3 = (ecx >> 9) & 1, sse41 = (ecx >> 19) & 1;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  const bool sha = (ebx >> 29) & 1;
  return ssse3 && sse41 && sha;
}

// Rounds 4g..4g+3 (g = kGroup) and the message schedule, in four registers that rotate: cur holds
// W[4g..4g+3]; next holds group g+1's words, which sha256msg2 finishes (from g = 3 on); prev holds
// group g-1's, already used, which sha256msg1 turns into the start of group g+3's.
template <int kGroup>
LOCKSTEP_SHA_NI_TARGET __attribute__((always_inline)) inline void ShaNiQuadRound(
    __m128i& abef, __m128i& cdgh, const __m128i& cur, __m128i& next, __m128i& prev) {
  __m128i msg = _mm_add_epi32(
      cur, _mm_loadu_si128(reinterpret_cast<const __m128i*>(kRoundConstants + 4 * kGroup)));
  cdgh = _mm_sha256rnds2_epu32(cdgh, abef, msg);
  if (kGroup >= 3 && kGroup <= 14) {
    // W[t] for the next group needs W[t-7], which straddles cur and prev.
    next = _mm_add_epi32(next, _mm_alignr_epi8(cur, prev, 4));
    next = _mm_sha256msg2_epu32(next, cur);
  }
  // sha256rnds2 does two rounds with the low two words; move the high two down.
  msg = _mm_shuffle_epi32(msg, 0x0E);
  abef = _mm_sha256rnds2_epu32(abef, cdgh, msg);
  if (kGroup >= 1 && kGroup <= 12) prev = _mm_sha256msg1_epu32(prev, cur);
}

// One message's state and words between and within blocks, in registers.
struct ShaNiLane {
  __m128i abef, cdgh, abef_before, cdgh_before, m[4];
  const uint8_t* block;
};

LOCKSTEP_SHA_NI_TARGET __attribute__((always_inline)) inline void LoadState(ShaNiLane& l, const uint32_t state[8]) {
  // The instructions want the state as ABEF and CDGH (highest lane first); state[] is A..H.
  const __m128i* words_in = reinterpret_cast<const __m128i*>(state);
  const __m128i abcd = _mm_shuffle_epi32(_mm_loadu_si128(words_in), 0xB1);      // CDAB
  const __m128i efgh = _mm_shuffle_epi32(_mm_loadu_si128(words_in + 1), 0x1B);  // EFGH
  l.abef = _mm_alignr_epi8(abcd, efgh, 8);
  l.cdgh = _mm_blend_epi16(efgh, abcd, 0xF0);
}

LOCKSTEP_SHA_NI_TARGET __attribute__((always_inline)) inline void StoreState(const ShaNiLane& l, uint32_t state[8]) {
  // Back to A..H order.
  const __m128i feba = _mm_shuffle_epi32(l.abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(l.cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), _mm_alignr_epi8(dchg, feba, 8));
}

LOCKSTEP_SHA_NI_TARGET __attribute__((always_inline)) inline void StartBlock(ShaNiLane& l) {
  // Message words are big-endian.
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  const __m128i* words = reinterpret_cast<const __m128i*>(l.block);
  for (int i = 0; i < 4; ++i) l.m[i] = _mm_shuffle_epi8(_mm_loadu_si128(words + i), byte_swap);
  l.abef_before = l.abef;
  l.cdgh_before = l.cdgh;
}

LOCKSTEP_SHA_NI_TARGET __attribute__((always_inline)) inline void EndBlock(ShaNiLane& l) {
  l.abef = _mm_add_epi32(l.abef, l.abef_before);
  l.cdgh = _mm_add_epi32(l.cdgh, l.cdgh_before);
  l.block += 64;
}

// Group g of a block for every lane, lane after lane: the lanes' chains are independent, so the
// SHA unit works on one while the other waits for its last round's result.
template <int kGroup, class... Lanes>
LOCKSTEP_SHA_NI_TARGET __attribute__((always_inline)) inline void GroupOfLanes(Lanes&... lanes) {
  (ShaNiQuadRound<kGroup>(lanes.abef, lanes.cdgh, lanes.m[kGroup % 4], lanes.m[(kGroup + 1) % 4],
                          lanes.m[(kGroup + 3) % 4]),
   ...);
}

template <class... Lanes, int... kGroups>
LOCKSTEP_SHA_NI_TARGET __attribute__((always_inline)) inline void BlockOfLanes(std::integer_sequence<int, kGroups...>,
                                                                            Lanes&... lanes) {
  (StartBlock(lanes), ...);
  (GroupOfLanes<kGroups>(lanes...), ...);
  (EndBlock(lanes), ...);
}

LOCKSTEP_SHA_NI_TARGET void CompressShaNi(uint32_t state[8], const uint8_t* block, size_t count) {
  ShaNiLane a;
  LoadState(a, state);
  a.block = block;
  for (; count > 0; --count) BlockOfLanes(std::make_integer_sequence<int, 16>(), a);
  StoreState(a, state);
}

// Two messages at once, count blocks each (about twice one message's speed where the SHA
// instructions' latency exceeds their throughput: AMD Zen, recent Intel cores).
LOCKSTEP_SHA_NI_TARGET void CompressShaNiTwo(uint32_t state_a[8], const uint8_t* block_a, uint32_t state_b[8],
                                             const uint8_t* block_b, size_t count) {
  ShaNiLane a, b;
  LoadState(a, state_a);
  LoadState(b, state_b);
  a.block = block_a;
  b.block = block_b;
  for (; count > 0; --count) BlockOfLanes(std::make_integer_sequence<int, 16>(), a, b);
  StoreState(a, state_a);
  StoreState(b, state_b);
}

#undef LOCKSTEP_SHA_NI_TARGET

bool UseShaNi() {
  static const bool has_sha_ni = CpuHasShaNi();  // CPUID once per process.
  return has_sha_ni && !force_portable.load(std::memory_order_relaxed);
}

#endif  // defined(__x86_64__)

}  // namespace

Sha256::Sha256()
    : state_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
             0x5be0cd19} {}

void Sha256::Compress(const uint8_t* blocks, size_t count) {
#if defined(__x86_64__)
  if (UseShaNi()) {
    CompressShaNi(state_, blocks, count);
    return;
  }
#endif
  CompressPortable(state_, blocks, count);
}

void Sha256::UpdateTwo(Sha256& a, const void* data_a, size_t size_a, Sha256& b, const void* data_b, size_t size_b) {
  const uint8_t* bytes_a = static_cast<const uint8_t*>(data_a);
  const uint8_t* bytes_b = static_cast<const uint8_t*>(data_b);
#if defined(__x86_64__)
  // Each first completes its partial block alone; then the whole blocks both have go together.
  auto complete_block = [](Sha256& h, const uint8_t*& bytes, size_t& size) {
    if (h.buffered_ == 0) return;
    const size_t take = size < 64 - h.buffered_ ? size : 64 - h.buffered_;
    h.Update(bytes, take);
    bytes += take;
    size -= take;
  };
  complete_block(a, bytes_a, size_a);
  complete_block(b, bytes_b, size_b);
  const size_t common = (size_a < size_b ? size_a : size_b) / 64;
  if (UseShaNi() && a.buffered_ == 0 && b.buffered_ == 0 && common > 0) {
    CompressShaNiTwo(a.state_, bytes_a, b.state_, bytes_b, common);
    for (Sha256* h : {&a, &b}) h->total_bytes_ += 64 * common;
    bytes_a += 64 * common;
    bytes_b += 64 * common;
    size_a -= 64 * common;
    size_b -= 64 * common;
  }
#endif
  a.Update(bytes_a, size_a);
  b.Update(bytes_b, size_b);
}

void Sha256::Update(const void* data, size_t size) {
  if (size == 0) return;  // data may then be null, which memcpy does not allow.
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  total_bytes_ += size;
  if (buffered_ > 0) {
    const size_t take = size < 64 - buffered_ ? size : 64 - buffered_;
    memcpy(buffer_ + buffered_, bytes, take);
    buffered_ += take;
    bytes += take;
    size -= take;
    if (buffered_ < 64) return;
    Compress(buffer_, 1);
    buffered_ = 0;
  }
  // Whole blocks straight from the caller's memory: no copy, one call for all of them.
  const size_t whole_blocks = size / 64;
  if (whole_blocks > 0) {
    Compress(bytes, whole_blocks);
    bytes += 64 * whole_blocks;
    size -= 64 * whole_blocks;
  }
  memcpy(buffer_, bytes, size);
  buffered_ = size;
}

std::array<uint8_t, 32> Sha256::Digest() {
  const uint64_t bit_length = total_bytes_ * 8;
  const uint8_t one_bit = 0x80, zero = 0;
  Update(&one_bit, 1);
  while (buffered_ != 56) Update(&zero, 1);
  uint8_t length_bytes[8];
  for (int i = 0; i < 8; ++i) length_bytes[i] = static_cast<uint8_t>(bit_length >> (56 - 8 * i));
  Update(length_bytes, 8);
  std::array<uint8_t, 32> out;
  for (int i = 0; i < 32; ++i) out[i] = static_cast<uint8_t>(state_[i / 4] >> (24 - 8 * (i % 4)));  // big-endian words
  return out;
}

std::string Sha256::HexDigest() {
  const std::array<uint8_t, 32> digest = Digest();
  return HexOf(digest.data(), digest.size());
}

std::string HexOf(const uint8_t* bytes, size_t size) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * size);
  for (size_t i = 0; i < size; ++i) {
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 15];
  }
  return out;
}

std::string Sha256Hex(const void* data, size_t size) {
  Sha256 hasher;
  hasher.Update(data, size);
  return hasher.HexDigest();
}

void Sha256ForcePortableForTesting(bool force) {
  force_portable.store(force, std::memory_order_relaxed);
}

}  // namespace lockstep
