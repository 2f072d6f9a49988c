// Dispatch for the reduction family, and the reductions built from the dispatched ones.
#include "simd/reduce.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/reduce.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "simd/reduce-inl.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {

void SumAxisTarget(const float* x, size_t outer, size_t len, size_t inner, float* out) {
  SumAxisImpl(x, outer, len, inner, out);
}
// ChannelSums where a channel's plane is whole rows of the virtual lanes (positions a multiple of
// kReduceLanes): every piece of a block (a sample's plane or part of one) starts at a multiple of
// kReduceLanes within the block, so each lane adds the same elements in the same order read in
// place, without the copy.
void ChannelSumsInPlace(const float* x, size_t samples, size_t channels, size_t positions, size_t first,
                        size_t count, float* out) {
  const size_t len = samples * positions;
  HWY_ALIGN float lanes[kReduceLanes];
  std::vector<float> partials;
  for (size_t c = first; c < first + count; ++c) {
    partials.clear();
    for (size_t start = 0; start < len; start += kReduceBlock) {
      const size_t end = len - start < kReduceBlock ? len : start + kReduceBlock;
      StartLanes(lanes);
      for (size_t e = start; e < end;) {
        const size_t sample = e / positions, position = e % positions;
        const size_t take = positions - position < end - e ? positions - position : end - e;
        AddRows(lanes, x + (sample * channels + c) * positions + position, take);
        e += take;
      }
      partials.push_back(FinishLanes(lanes));
    }
    out[c] = partials.size() == 1 ? partials[0] : CombineBlocksPairwise(partials.data(), partials.size());
  }
}

// Channels [first, first + count) of ChannelSums: each channel's values gathered a block at a time
// into a buffer that stays in the cache, each block reduced as SumAxis reduces it.
void ChannelSumsTarget(const float* x, size_t samples, size_t channels, size_t positions, size_t first,
                       size_t count, float* out) {
  const size_t len = samples * positions;
  if (len != 0 && positions % kReduceLanes == 0) return ChannelSumsInPlace(x, samples, channels, positions, first, count, out);
  HWY_ALIGN float block[kReduceBlock];
  std::vector<float> partials;
  for (size_t c = first; c < first + count; ++c) {
    if (len == 0) {
      out[c] = 0.0f;
      continue;
    }
    partials.clear();
    size_t sample = 0, position = 0;  // the next element
    for (size_t start = 0; start < len; start += kReduceBlock) {
      const size_t n = len - start < kReduceBlock ? len - start : kReduceBlock;
      for (size_t filled = 0; filled < n;) {
        const float* src = x + (sample * channels + c) * positions + position;
        const size_t take = positions - position < n - filled ? positions - position : n - filled;
        if (take >= 16) {
          memcpy(block + filled, src, take * sizeof(float));
        } else {
          for (size_t i = 0; i < take; ++i) block[filled + i] = src[i];
        }
        filled += take;
        position += take;
        if (position == positions) {
          position = 0;
          ++sample;
        }
      }
      partials.push_back(SumBlockContiguous(block, n));
    }
    out[c] = partials.size() == 1 ? partials[0] : CombineBlocksPairwise(partials.data(), partials.size());
  }
}
// ChannelNormBackwardSums where a plane is whole rows of the virtual lanes (as ChannelSumsInPlace):
// g and xhat read in place, each row's products added into four sets of lanes as they are formed,
// dxhat stored from the registers.
void ChannelNormBackwardSumsInPlace(const ChannelNormSums& a, size_t first, size_t count) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t len = a.samples * a.positions;
  HWY_ALIGN float lanes[4][kReduceLanes];
  std::vector<float> partials[4];
  float* const outs[4] = {a.sum_dxhat, a.sum_dxhat_xhat, a.sum_g_xhat, a.sum_g};
  for (size_t c = first; c < first + count; ++c) {
    for (std::vector<float>& p : partials) p.clear();
    const auto vs = hn::Set(d, a.weight != nullptr ? a.weight[c] : 1.0f);
    for (size_t start = 0; start < len; start += kReduceBlock) {
      const size_t end = len - start < kReduceBlock ? len : start + kReduceBlock;
      for (float* l : lanes) StartLanes(l);
      for (size_t e = start; e < end;) {
        const size_t sample = e / a.positions, position = e % a.positions;
        const size_t take = a.positions - position < end - e ? a.positions - position : end - e;
        const size_t at = (sample * a.channels + c) * a.positions + position;
        for (size_t i = 0; i < take; i += kReduceLanes) {
          for (size_t l = 0; l < kReduceLanes; l += N) {
            const auto g = hn::LoadU(d, a.g + at + i + l), x = hn::LoadU(d, a.xhat + at + i + l);
            const auto dx = Canonicalize(d, hn::Mul(g, vs));
            if (a.dxhat_out != nullptr) hn::StoreU(dx, d, a.dxhat_out + at + i + l);
            hn::Store(hn::Add(hn::Load(d, lanes[0] + l), dx), d, lanes[0] + l);
            hn::Store(hn::Add(hn::Load(d, lanes[1] + l), hn::Mul(dx, x)), d, lanes[1] + l);
            hn::Store(hn::Add(hn::Load(d, lanes[2] + l), hn::Mul(g, x)), d, lanes[2] + l);
            hn::Store(hn::Add(hn::Load(d, lanes[3] + l), g), d, lanes[3] + l);
          }
        }
        e += take;
      }
      for (int k = 0; k < 4; ++k) {
        if (outs[k] != nullptr) partials[k].push_back(FinishLanes(lanes[k]));
      }
    }
    for (int k = 0; k < 4; ++k) {
      if (outs[k] == nullptr) continue;
      std::vector<float>& p = partials[k];
      outs[k][c] = p.size() == 1 ? p[0] : CombineBlocksPairwise(p.data(), p.size());
    }
  }
}

// Channels [first, first + count) of ChannelNormBackwardSums: a block at a time, g and xhat
// gathered, the products formed, each of the four values summed as SumBlockContiguous sums a block.
void ChannelNormBackwardSumsTarget(const ChannelNormSums& a, size_t first, size_t count) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t len = a.samples * a.positions;
  if (len != 0 && a.positions % kReduceLanes == 0) return ChannelNormBackwardSumsInPlace(a, first, count);
  // The block's values: g, xhat, dxhat, dxhat * xhat, g * xhat (on the heap: 80 KB would not fit
  // every thread's stack, WebAssembly's workers among them).
  thread_local std::vector<float> buffer;
  if (buffer.size() < 5 * kReduceBlock) buffer.resize(5 * kReduceBlock);
  float* const gb = buffer.data();
  float* const xb = gb + kReduceBlock;
  float* const db = xb + kReduceBlock;
  float* const p1 = db + kReduceBlock;
  float* const p2 = p1 + kReduceBlock;
  std::vector<float> partials[4];
  float* const outs[4] = {a.sum_dxhat, a.sum_dxhat_xhat, a.sum_g_xhat, a.sum_g};
  const float* const blocks[4] = {db, p1, p2, gb};
  for (size_t c = first; c < first + count; ++c) {
    for (std::vector<float>& p : partials) p.clear();
    const float scale = a.weight != nullptr ? a.weight[c] : 1.0f;
    size_t sample = 0, position = 0;  // the block's first element
    for (size_t start = 0; start < len; start += kReduceBlock) {
      const size_t n = len - start < kReduceBlock ? len - start : kReduceBlock;
      // Gather: each piece a run of one sample's plane.
      for (size_t filled = 0, s = sample, p = position; filled < n;) {
        const size_t at = (s * a.channels + c) * a.positions + p;
        const size_t take = a.positions - p < n - filled ? a.positions - p : n - filled;
        memcpy(gb + filled, a.g + at, take * sizeof(float));
        memcpy(xb + filled, a.xhat + at, take * sizeof(float));
        filled += take;
        p += take;
        if (p == a.positions) {
          p = 0;
          ++s;
        }
      }
      // The products, rounded once each; g * 1 is g (the null weight's product, canonical).
      const auto vs = hn::Set(d, scale);
      size_t i = 0;
      for (; i + N <= n; i += N) {
        const auto g = hn::LoadU(d, gb + i), x = hn::LoadU(d, xb + i);
        const auto dx = Canonicalize(d, hn::Mul(g, vs));
        hn::StoreU(dx, d, db + i);
        hn::StoreU(hn::Mul(dx, x), d, p1 + i);
        hn::StoreU(hn::Mul(g, x), d, p2 + i);
      }
      for (; i < n; ++i) {
        db[i] = CanonicalScalar(gb[i] * scale);
        p1[i] = db[i] * xb[i];
        p2[i] = gb[i] * xb[i];
      }
      for (int k = 0; k < 4; ++k) {
        if (outs[k] != nullptr) partials[k].push_back(SumBlockContiguous(blocks[k], n));
      }
      // dxhat back to its places, the same pieces.
      for (size_t filled = 0; filled < n;) {
        const size_t at = (sample * a.channels + c) * a.positions + position;
        const size_t take = a.positions - position < n - filled ? a.positions - position : n - filled;
        if (a.dxhat_out != nullptr) memcpy(a.dxhat_out + at, db + filled, take * sizeof(float));
        filled += take;
        position += take;
        if (position == a.positions) {
          position = 0;
          ++sample;
        }
      }
    }
    for (int k = 0; k < 4; ++k) {
      if (outs[k] == nullptr) continue;
      std::vector<float>& p = partials[k];
      outs[k][c] = p.empty() ? 0.0f : p.size() == 1 ? p[0] : CombineBlocksPairwise(p.data(), p.size());
    }
  }
}
void MaxAxisTarget(const float* x, size_t outer, size_t len, size_t inner, float* out) {
  ExtremeAxisImpl<true>(x, outer, len, inner, out);
}
void MinAxisTarget(const float* x, size_t outer, size_t len, size_t inner, float* out) {
  ExtremeAxisImpl<false>(x, outer, len, inner, out);
}

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <string.h>

#include <vector>

#include "simd/elementwise.h"
#include "simd/thread_pool.h"

namespace lockstep {
namespace simd {

HWY_EXPORT(SumAxisTarget);
HWY_EXPORT(ChannelSumsTarget);
HWY_EXPORT(ChannelNormBackwardSumsTarget);
HWY_EXPORT(MaxAxisTarget);
HWY_EXPORT(MinAxisTarget);

float Sum(const float* x, size_t n) {
  float out;
  SumAxis(x, 1, n, 1, &out);
  return out;
}

void SumAxis(const float* x, size_t outer, size_t len, size_t inner, float* out) {
  // Each outer slice is its own sums, so groups of slices run on the thread pool.
  const size_t slice = len * inner;
  ForEachItemChunk(outer, slice, [&](size_t first, size_t count) {
    HWY_DYNAMIC_DISPATCH(SumAxisTarget)(x + first * slice, count, len, inner, out + first * inner);
  });
  Unary(UnaryOp::kCanonicalize, out, out, outer * inner);  // NaN payloads differ by platform
}

void ChannelSums(const float* x, size_t samples, size_t channels, size_t positions, float* out) {
  ForEachItemChunk(channels, samples * positions, [&](size_t first, size_t count) {
    HWY_DYNAMIC_DISPATCH(ChannelSumsTarget)(x, samples, channels, positions, first, count, out);
  });
  Unary(UnaryOp::kCanonicalize, out, out, channels);  // NaN payloads differ by platform
}

void ChannelNormBackwardSums(const ChannelNormSums& a) {
  ForEachItemChunk(a.channels, 3 * a.samples * a.positions, [&](size_t first, size_t count) {
    HWY_DYNAMIC_DISPATCH(ChannelNormBackwardSumsTarget)(a, first, count);
  });
  for (float* out : {a.sum_dxhat, a.sum_dxhat_xhat, a.sum_g_xhat, a.sum_g}) {
    if (out != nullptr) Unary(UnaryOp::kCanonicalize, out, out, a.channels);  // NaN payloads differ by platform
  }
}

void MeanAxis(const float* x, size_t outer, size_t len, size_t inner, float* out) {
  SumAxis(x, outer, len, inner, out);
  BinaryScalarRight(BinaryOp::kDiv, out, static_cast<float>(len), out, outer * inner);
}

void VarianceAxis(const float* x, size_t outer, size_t len, size_t inner, size_t correction,
                  float* out) {
  std::vector<float> mean(inner), deviations(len * inner);
  for (size_t o = 0; o < outer; ++o) {
    const float* slice = x + o * len * inner;
    MeanAxis(slice, 1, len, inner, mean.data());
    for (size_t i = 0; i < len; ++i) {
      float* row = deviations.data() + i * inner;
      Binary(BinaryOp::kSub, slice + i * inner, mean.data(), row, inner);
      Unary(UnaryOp::kSquare, row, row, inner);
    }
    SumAxis(deviations.data(), 1, len, inner, out + o * inner);
  }
  // len - correction <= 0: a zero divisor, +inf (or the canonical NaN for 0 / 0), as PyTorch gives.
  const float divisor = len > correction ? static_cast<float>(len - correction) : 0.0f;
  if (divisor == 0.0f) {
    for (size_t k = 0; k < outer * inner; ++k) out[k] = 0.0f;
  }
  BinaryScalarRight(BinaryOp::kDiv, out, divisor, out, outer * inner);
}

void MaxAxis(const float* x, size_t outer, size_t len, size_t inner, float* out) {
  HWY_DYNAMIC_DISPATCH(MaxAxisTarget)(x, outer, len, inner, out);
}

void MinAxis(const float* x, size_t outer, size_t len, size_t inner, float* out) {
  HWY_DYNAMIC_DISPATCH(MinAxisTarget)(x, outer, len, inner, out);
}

namespace {

// True when a comes after b in the contract's order (NaN above all, +0 above -0).
bool GreaterByContract(float a, float b) {
  const bool a_nan = a != a, b_nan = b != b;
  if (a_nan || b_nan) return a_nan && !b_nan;
  if (a == b) {
    uint32_t a_bits, b_bits;
    memcpy(&a_bits, &a, 4);
    memcpy(&b_bits, &b, 4);
    return a == 0.0f && (a_bits >> 31) == 0 && (b_bits >> 31) == 1;
  }
  return a > b;
}

}  // namespace

void ArgmaxAxis(const float* x, size_t outer, size_t len, size_t inner, int64_t* out) {
  for (size_t o = 0; o < outer; ++o) {
    for (size_t j = 0; j < inner; ++j) {
      const float* column = x + o * len * inner + j;
      size_t best = 0;
      for (size_t i = 1; i < len; ++i) {
        if (GreaterByContract(column[i * inner], column[best * inner])) best = i;
      }
      out[o * inner + j] = static_cast<int64_t>(best);
    }
  }
}

}  // namespace simd
}  // namespace lockstep
#endif  // HWY_ONCE
