// Philox4x32-10 on many consecutive blocks at once: one block per lane, so a vector of N lanes
// draws 4N words per pass. The 32 x 32 -> 64-bit products are exact on every target (MulHiLo), so
// the words are those of the scalar Philox4x32_10 on every target and byte order.
#include "simd/philox.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/philox_blocks.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace {

// hi:lo = a * b for a constant b. Little-endian: two 32 x 32 -> 64-bit multiplies (even lanes,
// then odd lanes shifted down), their halves put back in place by lane blends, about half the
// operations of the portable form below. Both are exact, so the words never depend on which ran.
template <class D, class V = hn::Vec<D>>
HWY_INLINE void MulHiLo(D d, V a, uint32_t b, V& hi, V& lo) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if constexpr (hn::MaxLanes(D()) >= 2) {
    const hn::Repartition<uint64_t, D> d64;
    const V vb = hn::Set(d, b);
    const auto even = hn::MulEven(a, vb);                                                 // lanes 0, 2, ...
    const auto odd = hn::MulEven(hn::BitCast(d, hn::ShiftRight<32>(hn::BitCast(d64, a))), vb);  // lanes 1, 3, ...
    lo = hn::OddEven(hn::BitCast(d, hn::ShiftLeft<32>(odd)), hn::BitCast(d, even));
    hi = hn::OddEven(hn::BitCast(d, odd), hn::BitCast(d, hn::ShiftRight<32>(even)));
    return;
  }
#endif
  // Portable: four exact 16 x 16-bit products from the 16-bit halves of a and b.
  const V mask = hn::Set(d, 0xFFFFu);
  const V a_lo = hn::And(a, mask), a_hi = hn::ShiftRight<16>(a);
  const V b_lo = hn::Set(d, b & 0xFFFFu), b_hi = hn::Set(d, b >> 16);
  const V p0 = hn::Mul(a_lo, b_lo), p1 = hn::Mul(a_lo, b_hi), p2 = hn::Mul(a_hi, b_lo), p3 = hn::Mul(a_hi, b_hi);
  const V mid = hn::Add(hn::Add(hn::ShiftRight<16>(p0), hn::And(p1, mask)), hn::And(p2, mask));  // < 3 * 2^16
  hi = hn::Add(hn::Add(p3, hn::ShiftRight<16>(p1)), hn::Add(hn::ShiftRight<16>(p2), hn::ShiftRight<16>(mid)));
  lo = hn::Or(hn::ShiftLeft<16>(mid), hn::And(p0, mask));
}
}  // namespace

// Words 4 first_block .. 4 (first_block + blocks) - 1 of the stream; blocks a multiple of the lane
// count, first_block + blocks < 2^32 (the block counter's low word does not wrap inside a call).
void PhiloxBlocksTarget(uint32_t key0, uint32_t key1, uint32_t block_high, uint32_t stream_lo,
                        uint32_t stream_hi, uint32_t first_block, size_t blocks, uint32_t* out) {
  const hn::ScalableTag<uint32_t> d;
  const size_t N = hn::Lanes(d);
  for (size_t b = 0; b < blocks; b += N) {
    hn::Vec<decltype(d)> c0 = hn::Add(hn::Iota(d, 0), hn::Set(d, static_cast<uint32_t>(first_block + b)));
    hn::Vec<decltype(d)> c1 = hn::Set(d, block_high), c2 = hn::Set(d, stream_lo), c3 = hn::Set(d, stream_hi);
    uint32_t k0 = key0, k1 = key1;
    for (int round = 0; round < 10; ++round) {
      if (round > 0) {
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
      }
      hn::Vec<decltype(d)> hi0, lo0, hi1, lo1;
      MulHiLo(d, c0, 0xD2511F53u, hi0, lo0);
      MulHiLo(d, c2, 0xCD9E8D57u, hi1, lo1);
      const auto n0 = hn::Xor(hn::Xor(hi1, c1), hn::Set(d, k0));
      const auto n2 = hn::Xor(hn::Xor(hi0, c3), hn::Set(d, k1));
      c0 = n0;
      c1 = lo1;
      c2 = n2;
      c3 = lo0;
    }
    hn::StoreInterleaved4(c0, c1, c2, c3, d, out + 4 * b);
  }
}

// out[i] = scale where (words[i] >> 8) >= threshold, else +0.
void DropoutFromWordsTarget(const uint32_t* words, size_t n, uint32_t threshold, float scale, float* out) {
  const hn::ScalableTag<uint32_t> du;
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(du)> di;
  const size_t N = hn::Lanes(du);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    // Both sides are below 2^25, so the signed comparison is the unsigned one.
    const auto u = hn::BitCast(di, hn::ShiftRight<8>(hn::LoadU(du, words + i)));
    const auto keep = hn::Not(hn::Lt(u, hn::Set(di, static_cast<int32_t>(threshold))));
    hn::StoreU(hn::IfThenElseZero(hn::RebindMask(df, keep), hn::Set(df, scale)), df, out + i);
  }
  for (; i < n; ++i) out[i] = (words[i] >> 8) >= threshold ? scale : 0.0f;
}

size_t PhiloxLanesTarget() { return hn::Lanes(hn::ScalableTag<uint32_t>()); }

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lockstep {
namespace simd {

HWY_EXPORT(PhiloxBlocksTarget);
HWY_EXPORT(PhiloxLanesTarget);
HWY_EXPORT(DropoutFromWordsTarget);

void DropoutFromWords(const uint32_t* words, size_t n, uint32_t threshold, float scale, float* out) {
  HWY_DYNAMIC_DISPATCH(DropoutFromWordsTarget)(words, n, threshold, scale, out);
}

size_t PhiloxBlockLanes() { return HWY_DYNAMIC_DISPATCH(PhiloxLanesTarget)(); }

void PhiloxBlocks(uint64_t seed, uint64_t stream, uint64_t first_block, size_t blocks, uint32_t* out) {
  HWY_DYNAMIC_DISPATCH(PhiloxBlocksTarget)(static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                                           static_cast<uint32_t>(first_block >> 32), static_cast<uint32_t>(stream),
                                           static_cast<uint32_t>(stream >> 32), static_cast<uint32_t>(first_block),
                                           blocks, out);
}

}  // namespace simd
}  // namespace lockstep
#endif  // HWY_ONCE
