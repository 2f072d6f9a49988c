// The per-channel sums of batch normalisation (simd/reduce.h: ChannelSums,
// ChannelDeviationSquareSums, ChannelNormBackwardSums): each channel's values of [samples,
// channels, positions] in (sample, position) order, summed as SumAxis sums them, read in place
// where a plane is whole rows of the virtual lanes and gathered a block at a time otherwise.
#include "simd/reduce.h"

#include <string.h>

#include <algorithm>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/channel_sums.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "simd/elementwise-inl.h"
#include "simd/reduce-inl.h"
#include "simd/scratch.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {

namespace {

// A piece of one sample's plane into the block. Pieces of small planes (2 x 2 to 4 x 4, the late
// stages of mobile networks) are a few floats each, where a call to memcpy costs more than the copy.
HWY_INLINE void CopyPiece(const float* src, size_t n, float* dst) {
  if (n >= 64) {
    memcpy(dst, src, n * sizeof(float));
  } else {
    for (size_t i = 0; i < n; ++i) dst[i] = src[i];
  }
}

// (v - m) * (v - m), each operation rounded: the squares that BatchNorm's variance sums, as the
// broadcast subtraction and the square kernel form them.
template <class D, class V>
HWY_INLINE V DeviationSquare(D d, V v, float m) {
  const V deviation = hn::Sub(v, hn::Set(d, m));
  return hn::Mul(deviation, deviation);
}

// As AddRows (reduce-inl.h), adding the squared deviations of the elements from m.
HWY_INLINE void AddDeviationSquareRows(float* lanes, const float* x, size_t n, float m) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  for (size_t i = 0; i + kReduceLanes <= n; i += kReduceLanes) {
    for (size_t l = 0; l < kReduceLanes; l += N) {
      hn::Store(hn::Add(hn::Load(d, lanes + l), DeviationSquare(d, hn::LoadU(d, x + i + l), m)), d, lanes + l);
    }
  }
}

// A gathered block's values replaced by their squared deviations from m.
HWY_INLINE void DeviationSquares(float* block, size_t n, float m) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(DeviationSquare(d, hn::LoadU(d, block + i), m), d, block + i);
  for (; i < n; ++i) {
    const float deviation = block[i] - m;
    block[i] = deviation * deviation;
  }
}

// Planes of P positions with P dividing kReduceLanes (1 x 1 to 4 x 8: the late stages of mobile
// networks at small image sizes): element (n, p) of a channel's sequence falls in lane
// (n % G) * P + p of its block, G = kReduceLanes / P, and a block holds kReduceBlock / P whole
// samples (a multiple of G). So the lanes of `count` channels are kept as G rows of [count][P],
// and each sample's [count][P] values, contiguous, add into row n % G with whole vectors, where a
// per-channel gather copied a few floats a call.
bool SmallPlanes(size_t positions) { return positions != 0 && positions < kReduceLanes && kReduceLanes % positions == 0; }

// The halving tree of every channel's lanes over the G rows of one block, the block's sum appended
// to each channel's partials: while the tree's width is a multiple of P it adds whole rows (lane
// (g, p) += lane (g + width / P, p)), then each channel's first P lanes fold on their own. The same
// additions in the same order as FinishLanes on each channel's 64 lanes.
void FinishSmallPlaneBlock(float* rows, size_t positions, size_t count, std::vector<float>* partials) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t width = count * positions;
  for (size_t step = kReduceLanes / positions / 2; step >= 1; step /= 2) {
    for (size_t g = 0; g < step; ++g) {
      float* to = rows + g * width;
      const float* from = rows + (g + step) * width;
      size_t i = 0;
      for (; i + N <= width; i += N) hn::StoreU(hn::Add(hn::LoadU(d, to + i), hn::LoadU(d, from + i)), d, to + i);
      for (; i < width; ++i) to[i] = to[i] + from[i];
    }
  }
  for (size_t j = 0; j < count; ++j) {
    float* lanes = rows + j * positions;
    for (size_t step = positions / 2; step >= 1; step /= 2) {
      for (size_t l = 0; l < step; ++l) lanes[l] = lanes[l] + lanes[l + step];
    }
    partials[j].push_back(lanes[0]);
  }
}

float CombinedPartials(std::vector<float>& p) { return p.size() == 1 ? p[0] : CombineBlocksPairwise(p.data(), p.size()); }

// ChannelSums (center non-null: of the squared deviations) over small planes.
void ChannelSumsSmallPlanes(const float* x, const float* center, size_t samples, size_t channels, size_t positions,
                            size_t first, size_t count, float* out) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t groups = kReduceLanes / positions, width = count * positions, per_block = kReduceBlock / positions;
  thread_local std::vector<float> rows_buffer, centers_buffer;
  thread_local std::vector<std::vector<float>> partials;
  float* const rows = AtLeast(&rows_buffer, groups * width);
  const float* centers = center != nullptr ? RepeatEach(center + first, 0.0f, count, positions, &centers_buffer) : nullptr;
  partials.resize(count);
  for (std::vector<float>& p : partials) p.clear();
  for (size_t start = 0; start < samples; start += per_block) {
    const size_t end = samples - start < per_block ? samples : start + per_block;
    std::fill(rows, rows + groups * width, -0.0f);
    for (size_t n = start; n < end; ++n) {
      const float* src = x + (n * channels + first) * positions;
      float* row = rows + (n % groups) * width;
      size_t i = 0;
      if (centers != nullptr) {
        for (; i + N <= width; i += N) {
          const auto deviation = hn::Sub(hn::LoadU(d, src + i), hn::LoadU(d, centers + i));
          hn::StoreU(hn::Add(hn::LoadU(d, row + i), hn::Mul(deviation, deviation)), d, row + i);
        }
        for (; i < width; ++i) {
          const float deviation = src[i] - centers[i];
          row[i] = row[i] + deviation * deviation;
        }
      } else {
        for (; i + N <= width; i += N) hn::StoreU(hn::Add(hn::LoadU(d, row + i), hn::LoadU(d, src + i)), d, row + i);
        for (; i < width; ++i) row[i] = row[i] + src[i];
      }
    }
    FinishSmallPlaneBlock(rows, positions, count, partials.data());
  }
  for (size_t j = 0; j < count; ++j) out[first + j] = CombinedPartials(partials[j]);
}

}  // namespace

// ChannelSums where a channel's plane is whole rows of the virtual lanes (positions a multiple of
// kReduceLanes): every piece of a block (a sample's plane or part of one) starts at a multiple of
// kReduceLanes within the block, so each lane adds the same elements in the same order read in
// place, without the copy.
void ChannelSumsInPlace(const float* x, const float* center, size_t samples, size_t channels, size_t positions,
                        size_t first, size_t count, float* out) {
  const size_t len = samples * positions;
  HWY_ALIGN float lanes[kReduceLanes];
  std::vector<float> partials;
  for (size_t c = first; c < first + count; ++c) {
    partials.clear();
    const float m = center != nullptr ? center[c] : 0.0f;
    for (size_t start = 0; start < len; start += kReduceBlock) {
      const size_t end = len - start < kReduceBlock ? len : start + kReduceBlock;
      StartLanes(lanes);
      for (size_t e = start; e < end;) {
        const size_t sample = e / positions, position = e % positions;
        const size_t take = positions - position < end - e ? positions - position : end - e;
        const float* at = x + (sample * channels + c) * positions + position;
        if (center != nullptr) {
          AddDeviationSquareRows(lanes, at, take, m);
        } else {
          AddRows(lanes, at, take);
        }
        e += take;
      }
      partials.push_back(FinishLanes(lanes));
    }
    out[c] = partials.size() == 1 ? partials[0] : CombineBlocksPairwise(partials.data(), partials.size());
  }
}

// Channels [first, first + count) of ChannelSums: each channel's values gathered a block at a time
// into a buffer that stays in the cache, each block reduced as SumAxis reduces it.
void ChannelSumsTarget(const float* x, const float* center, size_t samples, size_t channels, size_t positions,
                       size_t first, size_t count, float* out) {
  const size_t len = samples * positions;
  if (len != 0 && positions % kReduceLanes == 0) {
    return ChannelSumsInPlace(x, center, samples, channels, positions, first, count, out);
  }
  if (len != 0 && SmallPlanes(positions)) {
    return ChannelSumsSmallPlanes(x, center, samples, channels, positions, first, count, out);
  }
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
        CopyPiece(src, take, block + filled);
        filled += take;
        position += take;
        if (position == positions) {
          position = 0;
          ++sample;
        }
      }
      if (center != nullptr) DeviationSquares(block, n, center[c]);
      partials.push_back(SumBlockContiguous(block, n));
    }
    out[c] = partials.size() == 1 ? partials[0] : CombineBlocksPairwise(partials.data(), partials.size());
  }
}
// g as the gradient of the forward pass's activation at y = xhat * w + b, formed as the forward
// pass formed y (ChannelNormSums): the rules of the ops' own backward kernels (Relu's g * (y > 0),
// clamp_backward's, hardtanh_backward's, silu_backward's with s the forward pass's sigmoid).
template <class D, class V>
HWY_INLINE V ActivationGradient(D d, const NormActivation& a, V g, V xhat, V w, V b, V s) {
  if (a.kind == NormActivation::kNone) return g;
  const V y = hn::Add(hn::Mul(xhat, w), b);
  switch (a.kind) {
    case NormActivation::kRelu: return MulFn()(d, g, GtFn()(d, y, hn::Zero(d)));
    case NormActivation::kClamp: return ClampBackwardFn{a.lo, a.hi}(d, y, g);
    case NormActivation::kHardtanh: return HardtanhBackwardFn{a.lo, a.hi}(d, y, g);
    default: return SiluGradientFn()(d, y, s, g);
  }
}
HWY_INLINE float ActivationGradientScalar(const NormActivation& a, float g, float xhat, float w, float b, float s) {
  if (a.kind == NormActivation::kNone) return g;
  const float y = xhat * w + b;
  switch (a.kind) {
    case NormActivation::kRelu: return CanonicalScalar(g * (y > 0.0f ? 1.0f : 0.0f));
    case NormActivation::kClamp: return y < a.lo || y > a.hi ? 0.0f : CanonicalScalar(g);
    case NormActivation::kHardtanh: return y <= a.lo || y >= a.hi ? 0.0f : CanonicalScalar(g);
    default: return SiluGradientScalar(y, s, g);
  }
}
// The sigmoid vector the activation's gradient reads (a zero one where it reads none).
template <class D>
HWY_INLINE hn::Vec<D> SigmoidAt(D d, const NormActivation& a, const float* sigmoid, size_t at) {
  return a.kind == NormActivation::kSilu ? hn::LoadU(d, sigmoid + at) : hn::Zero(d);
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
    const auto vb = hn::Set(d, a.bias != nullptr ? a.bias[c] : 0.0f);
    for (size_t start = 0; start < len; start += kReduceBlock) {
      const size_t end = len - start < kReduceBlock ? len : start + kReduceBlock;
      for (float* l : lanes) StartLanes(l);
      for (size_t e = start; e < end;) {
        const size_t sample = e / a.positions, position = e % a.positions;
        const size_t take = a.positions - position < end - e ? a.positions - position : end - e;
        const size_t at = (sample * a.channels + c) * a.positions + position;
        for (size_t i = 0; i < take; i += kReduceLanes) {
          for (size_t l = 0; l < kReduceLanes; l += N) {
            const auto x = hn::LoadU(d, a.xhat + at + i + l);
            const auto g = ActivationGradient(d, a.activation, hn::LoadU(d, a.g + at + i + l), x, vs, vb,
                                              SigmoidAt(d, a.activation, a.sigmoid, at + i + l));
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

// ChannelNormBackwardSums over small planes (ChannelSumsSmallPlanes): four sets of G rows, dxhat
// stored as it is formed.
void ChannelNormBackwardSumsSmallPlanes(const ChannelNormSums& a, size_t first, size_t count) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t positions = a.positions;
  const size_t groups = kReduceLanes / positions, width = count * positions, per_block = kReduceBlock / positions;
  thread_local std::vector<float> rows_buffer, weights_buffer, biases_buffer;
  thread_local std::vector<std::vector<float>> partials[4];
  float* const rows = AtLeast(&rows_buffer, 4 * groups * width);
  const float* weights = RepeatEach(a.weight != nullptr ? a.weight + first : nullptr, 1.0f, count, positions, &weights_buffer);
  const bool activated = a.activation.kind != NormActivation::kNone;
  const float* biases =
      activated ? RepeatEach(a.bias != nullptr ? a.bias + first : nullptr, 0.0f, count, positions, &biases_buffer) : nullptr;
  float* const outs[4] = {a.sum_dxhat, a.sum_dxhat_xhat, a.sum_g_xhat, a.sum_g};
  for (std::vector<std::vector<float>>& k : partials) {
    k.resize(count);
    for (std::vector<float>& p : k) p.clear();
  }
  const size_t set = groups * width;  // floats of one set of rows
  for (size_t start = 0; start < a.samples; start += per_block) {
    const size_t end = a.samples - start < per_block ? a.samples : start + per_block;
    std::fill(rows, rows + 4 * set, -0.0f);
    for (size_t n = start; n < end; ++n) {
      const size_t at = (n * a.channels + first) * positions;
      const float* g = a.g + at;
      const float* xhat = a.xhat + at;
      const float* sigmoid = a.sigmoid != nullptr ? a.sigmoid + at : nullptr;
      float* dxhat = a.dxhat_out != nullptr ? a.dxhat_out + at : nullptr;
      float* r0 = rows + (n % groups) * width;
      float *r1 = r0 + set, *r2 = r1 + set, *r3 = r2 + set;
      size_t i = 0;
      for (; i + N <= width; i += N) {
        const auto vx = hn::LoadU(d, xhat + i), vw = hn::LoadU(d, weights + i);
        const auto vg = activated ? ActivationGradient(d, a.activation, hn::LoadU(d, g + i), vx, vw, hn::LoadU(d, biases + i),
                                                       SigmoidAt(d, a.activation, sigmoid, i))
                                  : hn::LoadU(d, g + i);
        const auto dx = Canonicalize(d, hn::Mul(vg, vw));
        if (dxhat != nullptr) hn::StoreU(dx, d, dxhat + i);
        hn::StoreU(hn::Add(hn::LoadU(d, r0 + i), dx), d, r0 + i);
        hn::StoreU(hn::Add(hn::LoadU(d, r1 + i), hn::Mul(dx, vx)), d, r1 + i);
        hn::StoreU(hn::Add(hn::LoadU(d, r2 + i), hn::Mul(vg, vx)), d, r2 + i);
        hn::StoreU(hn::Add(hn::LoadU(d, r3 + i), vg), d, r3 + i);
      }
      for (; i < width; ++i) {
        const float gi = activated ? ActivationGradientScalar(a.activation, g[i], xhat[i], weights[i], biases[i],
                                                              sigmoid != nullptr ? sigmoid[i] : 0.0f)
                                   : g[i];
        const float dx = CanonicalScalar(gi * weights[i]);
        if (dxhat != nullptr) dxhat[i] = dx;
        r0[i] = r0[i] + dx;
        r1[i] = r1[i] + dx * xhat[i];
        r2[i] = r2[i] + gi * xhat[i];
        r3[i] = r3[i] + gi;
      }
    }
    for (int k = 0; k < 4; ++k) {
      if (outs[k] != nullptr) FinishSmallPlaneBlock(rows + k * set, positions, count, partials[k].data());
    }
  }
  for (int k = 0; k < 4; ++k) {
    if (outs[k] == nullptr) continue;
    for (size_t j = 0; j < count; ++j) outs[k][first + j] = CombinedPartials(partials[k][j]);
  }
}

// Channels [first, first + count) of ChannelNormBackwardSums: a block at a time, g and xhat
// gathered, the products formed, each of the four values summed as SumBlockContiguous sums a block.
void ChannelNormBackwardSumsTarget(const ChannelNormSums& a, size_t first, size_t count) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t len = a.samples * a.positions;
  if (len != 0 && a.positions % kReduceLanes == 0) return ChannelNormBackwardSumsInPlace(a, first, count);
  if (len != 0 && SmallPlanes(a.positions)) return ChannelNormBackwardSumsSmallPlanes(a, first, count);
  // The block's values: g, xhat, dxhat, dxhat * xhat, g * xhat, and SiLU's sigmoid (on the heap:
  // 96 KB would not fit every thread's stack, WebAssembly's workers among them).
  thread_local std::vector<float> buffer;
  if (buffer.size() < 6 * kReduceBlock) buffer.resize(6 * kReduceBlock);
  float* const gb = buffer.data();
  float* const xb = gb + kReduceBlock;
  float* const db = xb + kReduceBlock;
  float* const p1 = db + kReduceBlock;
  float* const p2 = p1 + kReduceBlock;
  float* const sb = p2 + kReduceBlock;
  const bool silu = a.activation.kind == NormActivation::kSilu;
  std::vector<float> partials[4];
  float* const outs[4] = {a.sum_dxhat, a.sum_dxhat_xhat, a.sum_g_xhat, a.sum_g};
  const float* const blocks[4] = {db, p1, p2, gb};
  for (size_t c = first; c < first + count; ++c) {
    for (std::vector<float>& p : partials) p.clear();
    const float scale = a.weight != nullptr ? a.weight[c] : 1.0f;
    const float shift = a.bias != nullptr ? a.bias[c] : 0.0f;
    size_t sample = 0, position = 0;  // the block's first element
    for (size_t start = 0; start < len; start += kReduceBlock) {
      const size_t n = len - start < kReduceBlock ? len - start : kReduceBlock;
      // Gather: each piece a run of one sample's plane.
      for (size_t filled = 0, s = sample, p = position; filled < n;) {
        const size_t at = (s * a.channels + c) * a.positions + p;
        const size_t take = a.positions - p < n - filled ? a.positions - p : n - filled;
        CopyPiece(a.g + at, take, gb + filled);
        CopyPiece(a.xhat + at, take, xb + filled);
        if (silu) CopyPiece(a.sigmoid + at, take, sb + filled);
        filled += take;
        p += take;
        if (p == a.positions) {
          p = 0;
          ++s;
        }
      }
      // The products, rounded once each; g * 1 is g (the null weight's product, canonical). The
      // activation's gradient replaces g in the block, which sum_g sums.
      const auto vs = hn::Set(d, scale), vb = hn::Set(d, shift);
      const bool activated = a.activation.kind != NormActivation::kNone;
      size_t i = 0;
      for (; i + N <= n; i += N) {
        const auto x = hn::LoadU(d, xb + i);
        auto g = hn::LoadU(d, gb + i);
        if (activated) {
          g = ActivationGradient(d, a.activation, g, x, vs, vb, SigmoidAt(d, a.activation, sb, i));
          hn::StoreU(g, d, gb + i);
        }
        const auto dx = Canonicalize(d, hn::Mul(g, vs));
        hn::StoreU(dx, d, db + i);
        hn::StoreU(hn::Mul(dx, x), d, p1 + i);
        hn::StoreU(hn::Mul(g, x), d, p2 + i);
      }
      for (; i < n; ++i) {
        if (activated) gb[i] = ActivationGradientScalar(a.activation, gb[i], xb[i], scale, shift, silu ? sb[i] : 0.0f);
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
        if (a.dxhat_out != nullptr) CopyPiece(db + filled, take, a.dxhat_out + at);
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
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "simd/elementwise.h"
#include "simd/thread_pool.h"

namespace lockstep {
namespace simd {

HWY_EXPORT(ChannelSumsTarget);
HWY_EXPORT(ChannelNormBackwardSumsTarget);

namespace {

void ChannelSumsOf(const float* x, const float* center, size_t samples, size_t channels, size_t positions, float* out) {
  ForEachItemChunk(channels, samples * positions, [&](size_t first, size_t count) {
    HWY_DYNAMIC_DISPATCH(ChannelSumsTarget)(x, center, samples, channels, positions, first, count, out);
  });
  Unary(UnaryOp::kCanonicalize, out, out, channels);  // NaN payloads differ by platform
}

}  // namespace

void ChannelSums(const float* x, size_t samples, size_t channels, size_t positions, float* out) {
  ChannelSumsOf(x, nullptr, samples, channels, positions, out);
}

void ChannelDeviationSquareSums(const float* x, const float* mean, size_t samples, size_t channels, size_t positions,
                                float* out) {
  ChannelSumsOf(x, mean, samples, channels, positions, out);
}

void ChannelNormBackwardSums(const ChannelNormSums& a) {
  ForEachItemChunk(a.channels, 3 * a.samples * a.positions, [&](size_t first, size_t count) {
    HWY_DYNAMIC_DISPATCH(ChannelNormBackwardSumsTarget)(a, first, count);
  });
  for (float* out : {a.sum_dxhat, a.sum_dxhat_xhat, a.sum_g_xhat, a.sum_g}) {
    if (out != nullptr) Unary(UnaryOp::kCanonicalize, out, out, a.channels);  // NaN payloads differ by platform
  }
}

}  // namespace simd
}  // namespace lockstep
#endif  // HWY_ONCE
