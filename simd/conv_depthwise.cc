// Depthwise convolutions with the channels as lanes (simd/conv_depthwise.h): channels-last copies;
// the forward pass summing each output's taps over a vector of channels, then the epilogue; the
// weight gradient's register tiles of simd/conv-inl.h reading a vector of channels per tap, and
// the input gradient summing each element's taps over a vector of channels.
#include "simd/conv_depthwise.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/conv_depthwise.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "simd/conv-inl.h"
#include "simd/conv_epilogue-inl.h"

#include <string.h>

#include <algorithm>
#include <vector>

#include "simd/conv_gemm.h"
#include "simd/scratch.h"
#include "simd/thread_pool.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {

namespace {

constexpr size_t kTransposeBlock = 16;

// dst[i * dst_stride + j] = src[j * src_stride + i] for i < rows, j < cols (a block of at most
// kTransposeBlock x kTransposeBlock, so that its reads and writes stay in the cache).
// Eight columns at a time in 8 x 8 blocks where the target has 8-lane vectors (the transposes of
// EfficientNet-B0's depthwise layers took 9% of its training step in 4 x 4 blocks).
void TransposeBlock(const float* src, size_t src_stride, size_t rows, size_t cols, float* dst, size_t dst_stride) {
  size_t j = 0;
  for (; j + 8 <= cols && rows >= 8; j += 8) {
    size_t i = 0;
    for (; i + 8 <= rows; i += 8) {
      if (!Transpose8x8(src + j * src_stride + i, src_stride, dst + i * dst_stride + j, dst_stride)) break;
    }
    if (i == 0) break;  // no 8-lane vectors: the loops below do it all
    for (; i + 4 <= rows; i += 4) {
      for (size_t jj = j; jj < j + 8; jj += 4) {
        Transpose4x4(src + jj * src_stride + i, src_stride, dst + i * dst_stride + jj, dst_stride);
      }
    }
    for (; i < rows; ++i) {
      for (size_t jj = j; jj < j + 8; ++jj) dst[i * dst_stride + jj] = src[jj * src_stride + i];
    }
  }
  for (; j + 4 <= cols; j += 4) {
    size_t i = 0;
    for (; i + 4 <= rows; i += 4) Transpose4x4(src + j * src_stride + i, src_stride, dst + i * dst_stride + j, dst_stride);
    for (; i < rows; ++i) {
      for (size_t jj = j; jj < j + 4; ++jj) dst[i * dst_stride + jj] = src[jj * src_stride + i];
    }
  }
  for (; j < cols; ++j) {
    for (size_t i = 0; i < rows; ++i) dst[i * dst_stride + j] = src[j * src_stride + i];
  }
}

// dst[((y + top) * row + x + left) * cp + c] = src[c * channel_stride + y * w + x] for c < channels:
// one sample's planes channels-last in a frame of `row` columns (the padding and the lanes past
// `channels` are left as they are).
void ToChannelsLast(const float* src, size_t channels, size_t channel_stride, size_t h, size_t w, size_t top,
                    size_t left, size_t row, size_t cp, float* dst) {
  for (size_t y = 0; y < h; ++y) {
    for (size_t x0 = 0; x0 < w; x0 += kTransposeBlock) {
      for (size_t c0 = 0; c0 < channels; c0 += kTransposeBlock) {
        TransposeBlock(src + c0 * channel_stride + y * w + x0, channel_stride, std::min(kTransposeBlock, w - x0),
                       std::min(kTransposeBlock, channels - c0), dst + ((y + top) * row + x0 + left) * cp + c0, cp);
      }
    }
  }
}

// The inverse for one sample's h * w positions: dst[c * channel_stride + p] = src[p * cp + c].
void FromChannelsLast(const float* src, size_t positions, size_t cp, size_t channels, size_t channel_stride,
                      float* dst) {
  for (size_t p0 = 0; p0 < positions; p0 += kTransposeBlock) {
    for (size_t c0 = 0; c0 < channels; c0 += kTransposeBlock) {
      TransposeBlock(src + p0 * cp + c0, cp, std::min(kTransposeBlock, channels - c0),
                     std::min(kTransposeBlock, positions - p0), dst + c0 * channel_stride + p0, channel_stride);
    }
  }
}

// Zeroes what ToChannelsLast leaves as it is in a frame of `rows` x `row` positions: the padding
// rows and columns, and every lane past `channels` when the chunk has such lanes.
void ZeroFrameBorder(size_t rows, size_t row, size_t top, size_t left, size_t h, size_t w, size_t channels,
                     size_t cp, float* frame) {
  if (channels != cp) {
    std::fill(frame, frame + rows * row * cp, 0.0f);
    return;
  }
  std::fill(frame, frame + top * row * cp, 0.0f);
  std::fill(frame + (top + h) * row * cp, frame + rows * row * cp, 0.0f);
  for (size_t y = top; y < top + h; ++y) {
    std::fill(frame + y * row * cp, frame + (y * row + left) * cp, 0.0f);
    std::fill(frame + (y * row + left + w) * cp, frame + (y + 1) * row * cp, 0.0f);
  }
}

// kP output positions of one channel vector, the taps of position p starting at at[p]: each
// output's taps in increasing (kernel row, kernel column) order from -0.0, every tap read from
// the zero-padded frame (padding's products included, as the columns have them), then the bias;
// canonical into out + p * out_step. The weights are [tap][lane].
template <size_t kP, class D>
HWY_INLINE void DepthwiseOutputs(D d, const float* const* at, const int64_t* off, const float* wt, size_t k,
                                 const float* bias, float* out, size_t out_step) {
  using V = hn::Vec<D>;
  const size_t lanes = hn::Lanes(d);
  V acc[kP];
  for (size_t p = 0; p < kP; ++p) acc[p] = hn::Set(d, -0.0f);
  for (size_t t = 0; t < k; ++t) {
    const V wv = hn::LoadU(d, wt + t * lanes);
    const int64_t o = off[t];
    for (size_t p = 0; p < kP; ++p) acc[p] = hn::Add(acc[p], hn::Mul(hn::LoadU(d, at[p] + o), wv));
  }
  for (size_t p = 0; p < kP; ++p) {
    V v = acc[p];
    if (bias != nullptr) v = hn::Add(v, hn::LoadU(d, bias));
    hn::StoreU(Canonicalize(d, v), d, out + p * out_step);
  }
}

// One output position of one channel vector: DepthwiseOutputs' sum without arrays of vectors
// (SVE's cannot be array elements).
template <class D>
HWY_INLINE void DepthwiseOne(D d, const float* at, const int64_t* off, const float* wt, size_t k, const float* bias,
                             float* out) {
  const size_t lanes = hn::Lanes(d);
  auto acc = hn::Set(d, -0.0f);
  for (size_t t = 0; t < k; ++t) acc = hn::Add(acc, hn::Mul(hn::LoadU(d, at + off[t]), hn::LoadU(d, wt + t * lanes)));
  if (bias != nullptr) acc = hn::Add(acc, hn::LoadU(d, bias));
  hn::StoreU(Canonicalize(d, acc), d, out);
}

// Outputs [first, first + kP) of a plane (flat positions; position p's taps start at frame +
// start[p]): any stride and dilation.
template <size_t kP, class D>
HWY_INLINE void DepthwiseBlock(D d, size_t first, const float* frame, const int64_t* start, const int64_t* off,
                               const float* wt, size_t k, const float* bias, float* out, size_t cw) {
  const float* at[kP];
  for (size_t p = 0; p < kP; ++p) at[p] = frame + start[first + p];
  DepthwiseOutputs<kP>(d, at, off, wt, k, bias, out + first * cw, cw);
}

// kP neighbours in an output row at column stride kS, a kernel kW wide (column dilation 1): the
// sums of DepthwiseOutputs, each input vector of a kernel row loaded once for every output and
// tap that reads it (a tap's own loads made the loop load-bound). `in`: the first output's first
// tap; kernel rows row_step floats apart; weights [tap][lanes].
template <size_t kP, size_t kS, size_t kW, class D>
HWY_INLINE void DepthwiseRowOutputs(D d, const float* in, size_t row_step, size_t kh, size_t cw, const float* wt,
                                    const float* bias, float* out, size_t out_step) {
  using V = hn::Vec<D>;
  const size_t lanes = hn::Lanes(d);
  constexpr size_t kInputs = (kP - 1) * kS + kW;
  V acc[kP];
  for (size_t p = 0; p < kP; ++p) acc[p] = hn::Set(d, -0.0f);
  for (size_t i = 0; i < kh; ++i) {
    const float* r = in + i * row_step;
    V xs[kInputs];
    for (size_t q = 0; q < kInputs; ++q) xs[q] = hn::LoadU(d, r + q * cw);
    for (size_t j = 0; j < kW; ++j) {
      const V wv = hn::LoadU(d, wt + (i * kW + j) * lanes);
      for (size_t p = 0; p < kP; ++p) acc[p] = hn::Add(acc[p], hn::Mul(xs[p * kS + j], wv));
    }
  }
  for (size_t p = 0; p < kP; ++p) {
    V v = acc[p];
    if (bias != nullptr) v = hn::Add(v, hn::LoadU(d, bias));
    hn::StoreU(Canonicalize(d, v), d, out + p * out_step);
  }
}

// One channel vector's plane, row by row, kP outputs at a time (the last block of a row ending at
// its last output, computing again, with the same bits, what the block before it wrote).
template <size_t kP, size_t kS, size_t kW, class D>
HWY_INLINE void DepthwiseRowBlocks(D d, const ConvShape& s, const float* frame, size_t row, size_t cw, const float* wt,
                                   const float* bias, float* out) {
  for (size_t oy = 0; oy < s.h_out; ++oy) {
    const float* in = frame + oy * s.stride_h * row * cw;
    float* o = out + oy * s.w_out * cw;
    for (size_t ox = 0; ox < s.w_out; ox += kP) {
      const size_t at = kP == 1 ? ox : std::min(ox, s.w_out - kP);
      DepthwiseRowOutputs<kP, kS, kW>(d, in + at * kS * cw, s.dilation_h * row * cw, s.kh, cw, wt, bias, o + at * cw,
                                      cw);
    }
  }
}

// The row kernels for a kernel kW wide at column stride kS; false where none is compiled.
template <size_t kS, size_t kW, class D>
HWY_INLINE bool DepthwiseRows(D d, const ConvShape& s, const float* frame, size_t row, size_t cw, const float* wt,
                              const float* bias, float* out) {
  if (s.stride_w != kS || s.kw != kW || s.dilation_w != 1) return false;
  // Eight outputs a block where 32 registers hold them and their inputs, else four.
  constexpr size_t kWide = kConvRegisters == 32 ? 8 : 4;
  if (s.w_out >= kWide) {
    DepthwiseRowBlocks<kWide, kS, kW>(d, s, frame, row, cw, wt, bias, out);
  } else if (s.w_out >= 4) {
    DepthwiseRowBlocks<4, kS, kW>(d, s, frame, row, cw, wt, bias, out);
  } else {
    DepthwiseRowBlocks<1, kS, kW>(d, s, frame, row, cw, wt, bias, out);
  }
  return true;
}

}  // namespace

void DepthwiseForwardTarget(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
                            ThreadPool* pool) {
  const hn::ScalableTag<float> d;
  const size_t lanes = hn::Lanes(d);
  const size_t k = s.kh * s.kw, positions = s.h_out * s.w_out;
  const size_t rows = s.h + 2 * s.pad_h, row = s.w + 2 * s.pad_w, frame_positions = rows * row;
  const size_t cp = (s.groups + lanes - 1) / lanes * lanes, vectors = cp / lanes;
  // The weights as [vector][tap][lane] and the bias as a row, zero past the last channel.
  thread_local std::vector<float> wt_buffer, bias_buffer;
  float* const wt = AtLeast(&wt_buffer, k * cp);
  std::fill(wt, wt + k * cp, 0.0f);
  for (size_t g = 0; g < s.groups; ++g) {
    for (size_t t = 0; t < k; ++t) wt[((g / lanes) * k + t) * lanes + g % lanes] = w[g * k + t];
  }
  float* bt = nullptr;
  if (bias != nullptr) {
    bt = AtLeast(&bias_buffer, cp);
    std::fill(bt, bt + cp, 0.0f);
    std::copy(bias, bias + s.groups, bt);
  }
  // Items: (sample, chunk of channel vectors), a chunk's frame at most about 8 K floats unless a
  // single vector's is larger: the frame and the outputs' buffer stay in the first-level cache.
  const size_t chunk = std::max<size_t>(1, std::min(vectors, (size_t{1} << 13) / (frame_positions * lanes)));
  const size_t chunks = (vectors + chunk - 1) / chunk;
  ForEachItem(pool, s.samples * chunks, s.samples * positions * k * cp, [&](size_t item) {
    const size_t n = item / chunks, v0 = (item % chunks) * chunk, nv = std::min(chunk, vectors - v0);
    const size_t c0 = v0 * lanes, channels = std::min(s.groups - c0, nv * lanes), cw = nv * lanes;
    thread_local std::vector<float> frame_buffer, out_buffer;
    thread_local std::vector<int64_t> off, start;
    bool offsets_ready = false;
    float* const frame = AtLeast(&frame_buffer, frame_positions * cw);
    float* const out = AtLeast(&out_buffer, positions * cw);
    ZeroFrameBorder(rows, row, s.pad_h, s.pad_w, s.h, s.w, channels, cw, frame);
    ToChannelsLast(x + n * s.x_sample_stride + c0 * s.h * s.w, channels, s.h * s.w, s.h, s.w, s.pad_h, s.pad_w,
                   row, cw, frame);
    for (size_t v = 0; v < nv; ++v) {
      const float* fv = frame + v * lanes;
      const float* wv = wt + (v0 + v) * k * lanes;
      const float* bv = bt != nullptr ? bt + c0 + v * lanes : nullptr;
      float* ov = out + v * lanes;
#if !HWY_HAVE_SCALABLE
      if (DepthwiseRows<1, 3>(d, s, fv, row, cw, wv, bv, ov) || DepthwiseRows<1, 5>(d, s, fv, row, cw, wv, bv, ov) ||
          DepthwiseRows<2, 3>(d, s, fv, row, cw, wv, bv, ov) || DepthwiseRows<2, 5>(d, s, fv, row, cw, wv, bv, ov)) {
        continue;
      }
#endif
      // Any other kernel, stride or dilation (and every layer on SVE): each output position's
      // first tap in the frame (the same for every vector of the chunk), the positions in blocks
      // across the rows (the last block ending at the last position).
      if (!offsets_ready) {
        off.resize(k);
        for (size_t i = 0; i < s.kh; ++i) {
          for (size_t j = 0; j < s.kw; ++j) {
            off[i * s.kw + j] = static_cast<int64_t>((i * s.dilation_h * row + j * s.dilation_w) * cw);
          }
        }
        start.resize(positions);
        for (size_t oy = 0; oy < s.h_out; ++oy) {
          for (size_t ox = 0; ox < s.w_out; ++ox) {
            start[oy * s.w_out + ox] = static_cast<int64_t>((oy * s.stride_h * row + ox * s.stride_w) * cw);
          }
        }
        offsets_ready = true;
      }
      size_t p = 0;
#if !HWY_HAVE_SCALABLE
      if (positions >= 4) {
        for (; p < positions; p += 4) {
          DepthwiseBlock<4>(d, std::min(p, positions - 4), fv, start.data(), off.data(), wv, k, bv, ov, cw);
        }
      }
#endif
      for (; p < positions; ++p) DepthwiseOne(d, fv + start[p], off.data(), wv, k, bv, ov + p * cw);
    }
    float* const y_chunk = y + n * s.y_sample_stride + c0 * positions;
    FromChannelsLast(out, positions, cw, channels, positions, y_chunk);
    if (s.epilogue != nullptr) ApplyEpilogueRuns(d, s.epilogue, c0, channels, positions, y_chunk);
  });
}

void DepthwiseWeightGradTarget(const ConvShape& s, const float* dy, const float* x, size_t samples_per_group,
                               float* dw, ThreadPool* pool) {
  const hn::ScalableTag<float> d;
  const size_t lanes = hn::Lanes(d);
  const size_t vectors = (s.groups + lanes - 1) / lanes;
  const size_t k = s.kh * s.kw, positions = s.h_out * s.w_out;
  const size_t wp = s.w + 2 * s.pad_w, plane = (s.h + 2 * s.pad_h) * wp;
  const size_t sample_groups = (s.samples + samples_per_group - 1) / samples_per_group;
  // Partials [sample group][vector][tap][lanes]. One task a chunk of channel vectors: sample by
  // sample, its channels of dY as [position][channel] and of the padded input as [padded
  // position][channel] (small enough to stay in the cache), then every tile of taps over them.
  thread_local std::vector<float> partials_buffer;
  float* const partials = AtLeast(&partials_buffer, sample_groups * vectors * k * lanes);
  const size_t chunk = std::max<size_t>(1, std::min<size_t>(4, vectors / 8));  // vectors a task
  const size_t chunks = (vectors + chunk - 1) / chunk;
  ForEachItem(pool, chunks, s.samples * positions * k * vectors * lanes, [&](size_t task) {
    const size_t v0 = task * chunk, nv = std::min(chunk, vectors - v0);
    const size_t c0 = v0 * lanes, channels = std::min(s.groups - c0, nv * lanes), cw = nv * lanes;
    thread_local std::vector<float> gs_buffer, xs_buffer;
    thread_local std::vector<int64_t> off;
    float* const gs = AtLeast(&gs_buffer, positions * cw);
    float* const xs = AtLeast(&xs_buffer, plane * cw);
    // The padding and the lanes past the last channel stay zero: only the rest is written below.
    std::fill(gs, gs + positions * cw, 0.0f);
    std::fill(xs, xs + plane * cw, 0.0f);
    off.resize(k);
    for (size_t i = 0; i < s.kh; ++i) {
      for (size_t j = 0; j < s.kw; ++j) off[i * s.kw + j] = static_cast<int64_t>((i * s.dilation_h * wp + j * s.dilation_w) * cw);
    }
    for (size_t grp = 0; grp < sample_groups; ++grp) {
      const size_t first = grp * samples_per_group, last = std::min(s.samples, first + samples_per_group);
      for (size_t n = first; n < last; ++n) {
        ToChannelsLast(dy + n * s.y_sample_stride + c0 * positions, channels, positions, s.h_out, s.w_out, 0, 0,
                       s.w_out, cw, gs);
        ToChannelsLast(x + n * s.x_sample_stride + c0 * s.h * s.w, channels, s.h * s.w, s.h, s.w, s.pad_h, s.pad_w,
                       wp, cw, xs);
        for (size_t v = 0; v < nv; ++v) {
          for (size_t t0 = 0; t0 < k; t0 += kWeightGradTileTaps) {
            WeightGradTileTaps<true>(d, std::min(k - t0, kWeightGradTileTaps), xs + v * lanes, s.stride_h * wp * cw,
                                     s.stride_w * cw, off.data() + t0, gs + v * lanes, cw, s.h_out, s.w_out,
                                     n == first, partials + ((grp * vectors + v0 + v) * k + t0) * lanes);
          }
        }
      }
    }
  });
  // The pairwise tree over the sample groups, then dw [group][tap].
  CombineGroupPartials(partials, sample_groups, vectors * k * lanes);
  for (size_t g = 0; g < s.groups; ++g) {
    for (size_t t = 0; t < k; ++t) {
      const float v = partials[((g / lanes) * k + t) * lanes + g % lanes];
      dw[g * k + t] = v != v ? __builtin_nanf("") : v;
    }
  }
}

// Stride 1, finite weights, padding no wider than the kernel's reach: each plane on its own, its
// positions as the lanes. dY is copied into a frame with (k - 1) dilation - padding zero rows and
// columns before it and enough after it, so that every tap of every input position reads the frame:
// a tap that reaches no output position reads a zero and adds w * 0 = +-0, which leaves the sum
// unchanged (it starts at +0 and so is never -0; the weights are finite, so the product is a zero).
void DepthwiseInputGradPlanes(const ConvShape& s, const float* dy, const float* w, float* dx, ThreadPool* pool) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t k = s.kh * s.kw;
  const size_t reach_h = (s.kh - 1) * s.dilation_h, reach_w = (s.kw - 1) * s.dilation_w;
  const size_t top = reach_h - s.pad_h, left = reach_w - s.pad_w;
  // Planes narrower than a vector (EfficientNet-B0's 2 x 2 to 8 x 8) run their vectors over the
  // frame's positions row after row, in a frame just w + reach_w wide: an output at (y, x) is frame
  // position y * row + x, and the sums that land on the frame's last reach_w columns are dropped.
  // Each kept sum reads the same frame values in the same order as with one vector a row, which
  // filled 2 to 8 of 16 lanes.
  const bool flat = s.w < N;
  const size_t rows = s.h + reach_h, row = flat ? s.w + reach_w : (s.w + N - 1) / N * N + reach_w;  // the frame
  const size_t span = (s.h - 1) * row + s.w;  // flattened: the first to the last output's position
  const size_t frame_size = rows * row + (flat ? N : 0);  // a last vector reads up to N - 1 past it
  ForEachItem(pool, s.samples * s.groups, s.samples * s.groups * s.h * s.w * k, [&](size_t item) {
    const size_t n = item / s.groups, g = item % s.groups;
    thread_local std::vector<float> frame_buffer, sums_buffer;
    float* const frame = AtLeast(&frame_buffer, frame_size);
    std::fill(frame, frame + frame_size, 0.0f);
    const float* plane = dy + n * s.y_sample_stride + g * s.h_out * s.w_out;
    for (size_t oy = 0; oy < s.h_out; ++oy) {
      memcpy(frame + (oy + top) * row + left, plane + oy * s.w_out, s.w_out * sizeof(float));
    }
    const float* wg = w + g * k;
    float* out = dx + n * s.x_sample_stride + g * s.h * s.w;
    if (flat) {
      float* const sums = AtLeast(&sums_buffer, (span + N - 1) / N * N);
      const float* const base = frame + reach_h * row + reach_w;
      for (size_t f = 0; f < span; f += N) {
        auto sum = hn::Zero(d);
        for (size_t i = 0; i < s.kh; ++i) {
          const float* r = base + f - i * s.dilation_h * row;
          for (size_t j = 0; j < s.kw; ++j) {
            sum = hn::Add(sum, hn::Mul(hn::Set(d, wg[i * s.kw + j]), hn::LoadU(d, r - j * s.dilation_w)));
          }
        }
        hn::StoreU(Canonicalize(d, sum), d, sums + f);
      }
      for (size_t y = 0; y < s.h; ++y) memcpy(out + y * s.w, sums + y * row, s.w * sizeof(float));
      return;
    }
    HWY_ALIGN float last[hn::MaxLanes(d)];
    for (size_t y = 0; y < s.h; ++y) {
      for (size_t x = 0; x < s.w; x += N) {
        auto sum = hn::Zero(d);
        for (size_t i = 0; i < s.kh; ++i) {
          const float* r = frame + (y + reach_h - i * s.dilation_h) * row + x + reach_w;
          for (size_t j = 0; j < s.kw; ++j) {
            sum = hn::Add(sum, hn::Mul(hn::Set(d, wg[i * s.kw + j]), hn::LoadU(d, r - j * s.dilation_w)));
          }
        }
        sum = Canonicalize(d, sum);
        if (x + N <= s.w) {
          hn::StoreU(sum, d, out + y * s.w + x);
        } else {
          hn::Store(sum, d, last);
          memcpy(out + y * s.w + x, last, (s.w - x) * sizeof(float));
        }
      }
    }
  });
}

void DepthwiseInputGradTarget(const ConvShape& s, const float* dy, const float* w, float* dx, ThreadPool* pool) {
  const hn::ScalableTag<float> d;
  const size_t lanes = hn::Lanes(d);
  bool finite = true;
  for (size_t i = 0; i < s.groups * s.kh * s.kw; ++i) finite = finite && w[i] - w[i] == 0.0f;
  if (finite && s.stride_h == 1 && s.stride_w == 1 && s.pad_h <= (s.kh - 1) * s.dilation_h &&
      s.pad_w <= (s.kw - 1) * s.dilation_w) {
    return DepthwiseInputGradPlanes(s, dy, w, dx, pool);
  }
  const size_t cp = (s.groups + lanes - 1) / lanes * lanes, vectors = cp / lanes;
  const size_t k = s.kh * s.kw, positions = s.h_out * s.w_out, in_positions = s.h * s.w;
  // The weights as [tap][channel].
  std::vector<float> wt(k * cp, 0.0f);
  for (size_t g = 0; g < s.groups; ++g) {
    for (size_t t = 0; t < k; ++t) wt[t * cp + g] = w[g * k + t];
  }
  // The taps that reach an output position from each input position, in increasing (kernel row,
  // kernel column) order: the same for every sample, so listed once ([position][tap], reached[p]
  // of them).
  std::vector<size_t> reached(in_positions), reach_tap(in_positions * k), reach_at(in_positions * k);
  for (size_t y = 0; y < s.h; ++y) {
    for (size_t xx = 0; xx < s.w; ++xx) {
      const size_t position = y * s.w + xx;
      size_t count = 0;
      for (size_t i = 0; i < s.kh; ++i) {
        const int64_t ry = static_cast<int64_t>(y + s.pad_h) - static_cast<int64_t>(i * s.dilation_h);
        if (ry < 0 || ry % static_cast<int64_t>(s.stride_h) != 0) continue;
        const size_t oy = static_cast<size_t>(ry) / s.stride_h;
        if (oy >= s.h_out) continue;
        for (size_t j = 0; j < s.kw; ++j) {
          const int64_t rx = static_cast<int64_t>(xx + s.pad_w) - static_cast<int64_t>(j * s.dilation_w);
          if (rx < 0 || rx % static_cast<int64_t>(s.stride_w) != 0) continue;
          const size_t ox = static_cast<size_t>(rx) / s.stride_w;
          if (ox >= s.w_out) continue;
          reach_tap[position * k + count] = (i * s.kw + j) * cp;
          reach_at[position * k + count++] = (oy * s.w_out + ox) * cp;
        }
      }
      reached[position] = count;
    }
  }
  // One sample a task: dY channels-last, each input position's sum over the taps that reach an
  // output position, then dx back in planes.
  ForEachItem(pool, s.samples, s.samples * in_positions * k * cp, [&](size_t n) {
    thread_local std::vector<float> dyt_buffer, dxt_buffer;
    float* const dyt = AtLeast(&dyt_buffer, positions * cp);
    float* const dxt = AtLeast(&dxt_buffer, in_positions * cp);
    if (cp != s.groups) std::fill(dyt, dyt + positions * cp, 0.0f);
    ToChannelsLast(dy + n * s.y_sample_stride, s.groups, positions, s.h_out, s.w_out, 0, 0, s.w_out, cp, dyt);
    for (size_t position = 0; position < in_positions; ++position) {
      const size_t* taps = reach_tap.data() + position * k;
      const size_t* at = reach_at.data() + position * k;
      float* out = dxt + position * cp;
      for (size_t v = 0; v < vectors; ++v) {
        auto sum = hn::Zero(d);
        for (size_t r = 0; r < reached[position]; ++r) {
          sum = hn::Add(sum, hn::Mul(hn::LoadU(d, wt.data() + taps[r] + v * lanes), hn::LoadU(d, dyt + at[r] + v * lanes)));
        }
        hn::StoreU(Canonicalize(d, sum), d, out + v * lanes);
      }
    }
    FromChannelsLast(dxt, in_positions, cp, s.groups, in_positions, dx + n * s.x_sample_stride);
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lockstep {
namespace simd {

HWY_EXPORT(DepthwiseForwardTarget);
HWY_EXPORT(DepthwiseWeightGradTarget);
HWY_EXPORT(DepthwiseInputGradTarget);

bool ConvDepthwise(const ConvShape& s) {
  return s.groups > 1 && s.c_in == 1 && s.c_out == 1 && CurrentConvPath() == ConvPath::kByShape;
}

// Below about 96 x 96 input positions. The planes-as-lanes kernels use their vectors well on a
// large plane, where the channels-last copies cost more than they save (a 112 x 112 layer ran
// about 12% slower channels-last; from 56 x 56 down, channels-last took half the time or less).
bool ConvDepthwiseForward(const ConvShape& s) { return ConvDepthwise(s) && s.h * s.w < 96 * 96; }

void DepthwiseForward(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
                      ThreadPool* pool) {
  HWY_DYNAMIC_DISPATCH(DepthwiseForwardTarget)(s, x, w, bias, y, pool);
}

void DepthwiseWeightGrad(const ConvShape& s, const float* dy, const float* x, size_t samples_per_group, float* dw,
                         ThreadPool* pool) {
  HWY_DYNAMIC_DISPATCH(DepthwiseWeightGradTarget)(s, dy, x, samples_per_group, dw, pool);
}

void DepthwiseInputGrad(const ConvShape& s, const float* dy, const float* w, float* dx, ThreadPool* pool) {
  HWY_DYNAMIC_DISPATCH(DepthwiseInputGradTarget)(s, dy, w, dx, pool);
}

}  // namespace simd
}  // namespace lockstep
#endif  // HWY_ONCE
