// Direct convolution: per-sample scratch layouts, the tile loops and their split over threads
// (simd/conv.h states the sums; simd/conv-inl.h holds the register tiles).
//
// Layouts. Forward and input gradient work in the padded input's frame: plane Hp x Wp
// (Hp = h + 2 pad_h, Wp = w + 2 pad_w), output position (oy, ox) at q = oy * Wp + ox, so the
// column of kernel tap (c, i, j) is the padded input read from offset c Hp Wp + i dh Wp + j dw:
// a contiguous row, no im2col. (With a stride, the forward pass splits the padded input into
// phases, one per (row, column) remainder, which makes its columns contiguous rows again; at stride
// 1 its rows share one run of pad columns, Wp = w + pad_w: Phases.) Columns ox >= w_out of that layout are computed and dropped
// (forward), or hold zero gradients (input gradient; hence ConvInputGradExact). The weight
// gradient reads the input by those offsets too, with the output gradient transposed to
// [position][channel] so one vector holds several output channels.
#include "simd/conv.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/conv.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "simd/conv-inl.h"
#include "simd/conv_epilogue-inl.h"
#include "simd/conv_depthwise.h"
#include "simd/conv_gemm.h"

#include <string.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "simd/scratch.h"
#include "simd/thread_pool.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {

namespace {

// Floats of slack after every scratch row: the widest tile (4 vectors) may run past its end.
template <class D>
size_t Slack(D d) {
  return 4 * hn::Lanes(d);
}

// The forward pass's packed weights one group of output-channel tiles shares (floats: 256 KiB, a
// quarter of a second-level cache, so the input rows and outputs fit beside them). 128 and 512
// KiB measured the same on ResNet-18's layers; larger groups read the weights from the third level.
constexpr size_t kForwardGroupWeights = size_t{1} << 16;

size_t PaddedH(const ConvShape& s) { return s.h + 2 * s.pad_h; }
size_t PaddedW(const ConvShape& s) { return s.w + 2 * s.pad_w; }

// Whether the forward pass's frame pads both sides of its rows with one run of zero columns: stride
// 1, and no wider than the kernel reaches (an output row then fits in the frame's row).
bool SharedPadColumns(const ConvShape& s) {
  return s.stride_h == 1 && s.stride_w == 1 && s.pad_w > 0 && s.pad_w <= (s.kw - 1) * s.dilation_w;
}
size_t Taps(const ConvShape& s) { return s.c_in * s.kh * s.kw; }

// Offset of tap (c, i, j) in a padded sample whose planes are `plane` floats apart.
void TapOffsets(const ConvShape& s, size_t plane, std::vector<int64_t>* off) {
  off->resize(Taps(s));
  const size_t wp = PaddedW(s);
  size_t k = 0;
  for (size_t c = 0; c < s.c_in; ++c) {
    for (size_t i = 0; i < s.kh; ++i) {
      for (size_t j = 0; j < s.kw; ++j) (*off)[k++] = static_cast<int64_t>(c * plane + i * s.dilation_h * wp + j * s.dilation_w);
    }
  }
}

// Writes channel c of one sample into its zero-padded plane whole (rows wp floats apart, `plane`
// floats in all): zero rows above, each input row between pad_w zeros and zeros to wp, zero rows
// below; an unpadded plane in one copy. Every float is written once: a zero fill of the whole
// buffer first, then the copies, wrote it twice through the second-level cache (the fill alone was
// 2% of a 56 x 56 forward layer at batch 1).
void FillPaddedPlane(const ConvShape& s, const float* x, size_t c, size_t wp, size_t plane, float* out) {
  const float* const src = x + c * s.h * s.w;
  if (s.pad_h == 0 && s.pad_w == 0 && plane == s.h * s.w) {
    memcpy(out, src, plane * sizeof(float));
    return;
  }
  std::fill(out, out + s.pad_h * wp, 0.0f);
  for (size_t y = 0; y < s.h; ++y) {
    float* row = out + (y + s.pad_h) * wp;
    std::fill(row, row + s.pad_w, 0.0f);
    memcpy(row + s.pad_w, src + y * s.w, s.w * sizeof(float));
    std::fill(row + s.pad_w + s.w, row + wp, 0.0f);
  }
  std::fill(out + (s.pad_h + s.h) * wp, out + plane, 0.0f);
}

// The forward pass's frame for any stride: the padded input split into stride_h x stride_w phase
// planes (phase (r, c) holds the padded rows r, r + stride_h, ... and columns c, c + stride_w, ...),
// each Hq x Wq. Output (oy, ox) is at q = oy * Wq + ox, and the tap (ch, i, j) reads phase
// ((i dh) mod sh, (j dw) mod sw) at q + ((i dh) div sh) Wq + (j dw) div sw: a contiguous row again,
// as for stride 1 (where the one phase is the padded input itself).
struct Phases {
  size_t sh, sw, hq, wq, plane;  // plane: the floats of one channel's phases
  explicit Phases(const ConvShape& s)
      : sh(s.stride_h), sw(s.stride_w), hq((PaddedH(s) + sh - 1) / sh), wq((PaddedW(s) + sw - 1) / sw),
        plane(sh * sw * hq * wq) {
    if (SharedPadColumns(s)) {
      // One run of pad_w zero columns pads both sides: a row's right padding is the next row's
      // left (a tap past a row's end reads the next row's first pad_w columns, all zero), and one
      // more row of zeros follows the last. Each output row then has kw - 1 - pad_w columns to
      // drop, not kw - 1: a 28 x 28 plane at 3x3 computes 29 columns a row, not 30 (51 vectors of
      // 16 instead of 53: ResNet-18's 28 x 28 layers about 4% faster, its 56 x 56 ones 1.5%).
      wq = s.w + s.pad_w;
      hq = PaddedH(s) + 1;
      plane = hq * wq;
    }
  }
  size_t Offset(size_t ch, size_t row, size_t col) const {
    return ch * plane + ((row % sh) * sw + col % sw) * hq * wq + (row / sh) * wq + col / sw;
  }
};

void PhaseTapOffsets(const ConvShape& s, const Phases& ph, std::vector<int64_t>* off) {
  off->resize(Taps(s));
  size_t k = 0;
  for (size_t c = 0; c < s.c_in; ++c) {
    for (size_t i = 0; i < s.kh; ++i) {
      for (size_t j = 0; j < s.kw; ++j) (*off)[k++] = static_cast<int64_t>(ph.Offset(c, i * s.dilation_h, j * s.dilation_w));
    }
  }
}

// Whether some tap reads phase (row r, column c) of a strided frame: the taps of a 1x1 kernel at
// stride 2 read one phase of four, and filling the other three was a third of those layers' time.
bool PhaseRead(const ConvShape& s, size_t r, size_t c) {
  bool row = false, col = false;
  for (size_t i = 0; i < s.kh; ++i) row = row || (i * s.dilation_h) % s.stride_h == r;
  for (size_t j = 0; j < s.kw; ++j) col = col || (j * s.dilation_w) % s.stride_w == c;
  return row && col;
}

// One channel's phases that some tap reads (PhaseRead), each zeroed and filled on its own.
void FillReadPhases(const ConvShape& s, const Phases& ph, const float* x, size_t c, float* plane) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t phase_floats = ph.hq * ph.wq;
  for (size_t r = 0; r < ph.sh; ++r) {
    for (size_t col = 0; col < ph.sw; ++col) {
      if (!PhaseRead(s, r, col)) continue;
      float* const phase = plane + (r * ph.sw + col) * phase_floats;
      std::fill(phase, phase + phase_floats, 0.0f);
      // Input row y is padded row y + pad_h, in row phase (y + pad_h) % sh; likewise columns.
      const size_t x0 = (col + ph.sw - s.pad_w % ph.sw) % ph.sw;
      for (size_t y = (r + ph.sh - s.pad_h % ph.sh) % ph.sh; y < s.h; y += ph.sh) {
        const float* src = x + (c * s.h + y) * s.w;
        float* out = plane + ph.Offset(0, y + s.pad_h, x0 + s.pad_w);
        size_t m = 0;
        if (ph.sw == 2) {
          for (; x0 + 2 * (m + N) <= s.w; m += N) {
            hn::Vec<decltype(d)> e, o;
            hn::LoadInterleaved2(d, src + x0 + 2 * m, e, o);
            hn::StoreU(e, d, out + m);
          }
        }
        for (size_t xx = x0 + m * ph.sw; xx < s.w; ++m, xx += ph.sw) out[m] = src[xx];
      }
    }
  }
}

// Writes one sample's frame, channel by channel: the input where it lands, zeros everywhere else
// (the padding, the phases' last partial rows and columns), a channel's zeros and copies together
// while they are in the first-level cache. Phases that no tap reads are left as they were (a
// vector that runs past a read phase's end reads them only for columns that are dropped).
void FillPhases(const ConvShape& s, const Phases& ph, const float* x, float* phases) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  bool all_read = true;
  for (size_t r = 0; r < ph.sh; ++r) {
    for (size_t c = 0; c < ph.sw; ++c) all_read = all_read && PhaseRead(s, r, c);
  }
  for (size_t c = 0; c < s.c_in; ++c) {
    float* const plane = phases + c * ph.plane;
    if (ph.sh == 1 && ph.sw == 1) {
      FillPaddedPlane(s, x, c, ph.wq, ph.plane, plane);
      continue;
    }
    if (!all_read) {
      FillReadPhases(s, ph, x, c, plane);
      continue;
    }
    std::fill(plane, plane + ph.plane, 0.0f);
    for (size_t y = 0; y < s.h; ++y) {
      const float* src = x + (c * s.h + y) * s.w;
      if (ph.sw == 2 && s.w >= 2) {
        // Two column phases: a vector pair of the row split into its even and odd elements (the
        // element-wise copy below made the stride-2 depthwise convolutions a third of the speed
        // of the stride-1 ones).
        float* even = phases + ph.Offset(c, y + s.pad_h, s.pad_w);
        float* odd = phases + ph.Offset(c, y + s.pad_h, 1 + s.pad_w);
        size_t m = 0;
        for (; 2 * (m + N) <= s.w; m += N) {
          hn::Vec<decltype(d)> e, o;
          hn::LoadInterleaved2(d, src + 2 * m, e, o);
          hn::StoreU(e, d, even + m);
          hn::StoreU(o, d, odd + m);
        }
        for (; 2 * m < s.w; ++m) {
          even[m] = src[2 * m];
          if (2 * m + 1 < s.w) odd[m] = src[2 * m + 1];
        }
        continue;
      }
      for (size_t x0 = 0; x0 < ph.sw && x0 < s.w; ++x0) {
        float* dst = phases + ph.Offset(c, y + s.pad_h, x0 + s.pad_w);
        for (size_t m = 0, xx = x0; xx < s.w; ++m, xx += ph.sw) dst[m] = src[xx];
      }
    }
  }
}

// Runs body(first, count) over chunks of samples, on the pool when the work is worth it: at
// least min_work in all (multiply-adds; or floats moved, for the copies of the weight gradient).
template <class Body>
void ForSampleChunks(size_t samples, size_t work_per_sample, ThreadPool* pool, const Body& body,
                     size_t min_work = size_t{1} << 18) {
  const size_t threads = pool == nullptr ? 1 : pool->num_threads();
  const bool parallel = threads > 1 && samples > 1 && samples * work_per_sample >= min_work;
  if (!parallel) {
    body(0, samples);
    return;
  }
  // Many small chunks: each thread starts on its own contiguous share of them (the pool's ranges)
  // and then helps with what is left of the other's, so a faster core ends up with more.
  size_t chunks = 16 * threads < samples ? 16 * threads : samples;
  const size_t per_chunk = (samples + chunks - 1) / chunks;
  chunks = (samples + per_chunk - 1) / per_chunk;
  pool->ParallelFor(chunks, [&](size_t chunk, size_t /*worker*/) {
    const size_t first = chunk * per_chunk;
    body(first, samples - first < per_chunk ? samples - first : per_chunk);
  });
}

// A number for each kernel call: a chunk sets up its thread's scratch (zeroing the parts that stay
// zero) only when that thread has not done so in this call, so small chunks cost no extra passes.
uint64_t NewCallId() {
  static std::atomic<uint64_t> last{0};
  return last.fetch_add(1) + 1;
}

// dx = +0, then each element adds its column entries in increasing (c, i, j, oy, ox) order.
void Col2ImSample(const ConvShape& s, const float* cols, size_t ld, float* dx) {
  std::fill(dx, dx + s.c_in * s.h * s.w, 0.0f);
  const float* row = cols;
  for (size_t c = 0; c < s.c_in; ++c) {
    for (size_t i = 0; i < s.kh; ++i) {
      for (size_t j = 0; j < s.kw; ++j, row += ld) {
        for (size_t oy = 0; oy < s.h_out; ++oy) {
          const int64_t yy = static_cast<int64_t>(oy * s.stride_h + i * s.dilation_h) - static_cast<int64_t>(s.pad_h);
          if (yy < 0 || yy >= static_cast<int64_t>(s.h)) continue;
          for (size_t ox = 0; ox < s.w_out; ++ox) {
            const int64_t xx = static_cast<int64_t>(ox * s.stride_w + j * s.dilation_w) - static_cast<int64_t>(s.pad_w);
            if (xx < 0 || xx >= static_cast<int64_t>(s.w)) continue;
            float& t = dx[(c * s.h + static_cast<size_t>(yy)) * s.w + static_cast<size_t>(xx)];
            t = t + row[oy * s.w_out + ox];
          }
        }
      }
    }
  }
  for (size_t e = 0; e < s.c_in * s.h * s.w; ++e) dx[e] = dx[e] != dx[e] ? __builtin_nanf("") : dx[e];
}

}  // namespace

void ConvForwardTarget(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
                       ThreadPool* pool) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t k = Taps(s), positions = s.h_out * s.w_out;
  // The padded input's phases stand in for the columns: tap k's row starts at off[k].
  const Phases ph(s);
  const size_t width = ph.wq;                         // of the output layout
  const size_t q_end = (s.h_out - 1) * ph.wq + s.w_out;  // its positions
  const size_t ld = q_end + Slack(d);
  // A pointwise layer (1x1, stride 1, no padding) whose planes are whole vectors reads its input
  // in place, the frame being a copy of it, and sums straight into y, where the epilogue then runs
  // in place: MobileNetV2's 16 -> 96 layer on 112 x 112 planes wrote its 4.8 MB of sums to the
  // scratch, read them back and wrote y, at 19 GMAC/s. Same sums, same order, other addresses.
  const bool in_place = s.kh == 1 && s.kw == 1 && s.stride_h == 1 && s.stride_w == 1 && s.pad_h == 0 &&
                        s.pad_w == 0 && positions % N == 0;
  const size_t sums_ld = in_place ? positions : ld;
  std::vector<int64_t> off;
  PhaseTapOffsets(s, ph, &off);
  const size_t groups = s.groups, group_weights = s.c_out * k;
  // Kept between calls: a fresh vector zero-filled a layer's weights' size before the packing
  // overwrote it (ResNet-18: 44 MB an inference), and a large one came from fresh pages.
  thread_local std::vector<float> packed_buffer;
  float* const packed = AtLeast(&packed_buffer, groups * group_weights);
  // Work items: (sample, group, block of output channels). When the samples and groups are fewer
  // than the pool's threads, a group's channels are split into blocks of whole tiles, so a single
  // image keeps every thread busy; each output's sum is the same whichever thread computes it.
  const size_t threads = pool == nullptr ? 1 : pool->num_threads();
  const size_t planes = s.samples * groups;  // (sample, group) pairs
  const size_t tiles = (s.c_out + kConvTileRows - 1) / kConvTileRows;
  const size_t blocks = planes >= threads ? 1 : std::min(tiles, 4 * threads);
  const size_t tiles_per_block = (tiles + blocks - 1) / blocks;
  const size_t items_per_plane = (tiles + tiles_per_block - 1) / tiles_per_block;
  const size_t items = planes * items_per_plane;
  // One plane split into blocks (a single image): each item packs its own block's weights, so the
  // packing (a pass over every weight, as long as a small layer's sums at batch 1) runs on every
  // thread. Otherwise they are packed once here for all the items.
  const bool pack_in_items = planes == 1 && items_per_plane > 1;
  if (!pack_in_items) {
    for (size_t g = 0; g < groups; ++g) PackRowTiles(w + g * group_weights, s.c_out, k, packed + g * group_weights);
  }
  const size_t x_group = s.c_in * s.h * s.w, y_group = s.c_out * positions;
  const bool silu = s.epilogue != nullptr && s.epilogue->activation == ConvActivation::kSilu;
  const bool channel_tails = HasChannelTails();
  const uint64_t call = NewCallId();
  ForSampleChunks(items, group_weights * positions / items_per_plane, pool, [&](size_t first, size_t count) {
    thread_local std::vector<float> source, ypad;
    thread_local uint64_t prepared = 0;
    thread_local size_t plane_in_source = 0;
    if (prepared != call && !in_place) {
      // Every item's FillPhases writes every phase a tap reads (a vector past a read phase's end
      // reaches the others only for dropped columns): only the slack is zeroed here.
      const size_t interior = s.c_in * ph.plane;
      float* const at = AtLeast(&source, interior + Slack(d));
      std::fill(at + interior, at + interior + Slack(d), 0.0f);
      // Grown only: every sum the epilogue reads is stored first (a resize after a smaller layer
      // zero-filled the difference, 1% of ResNet-18's batch-1 inference).
      AtLeast(&ypad, s.c_out * ld);
      prepared = call;
      plane_in_source = ~size_t{0};
    }
    for (size_t item = first; item < first + count; ++item) {
      const size_t plane = item / items_per_plane, block = item % items_per_plane;
      const size_t n = plane / groups, g = plane % groups;
      const size_t row_begin = block * tiles_per_block * kConvTileRows;
      const size_t row_end = std::min(s.c_out, row_begin + tiles_per_block * kConvTileRows);
      const float* const x_plane = x + n * s.x_sample_stride + g * x_group;
      if (!in_place && plane_in_source != plane) {
        FillPhases(s, ph, x_plane, source.data());
        plane_in_source = plane;
      }
      const float* group_packed = packed + g * group_weights;
      const float* const input = in_place ? x_plane : source.data();
      float* const out = y + n * s.y_sample_stride + g * y_group;
      float* const sums = in_place ? out : ypad.data();
      if (pack_in_items) PackRowTiles(w + row_begin * k, row_end - row_begin, k, packed + row_begin * k);
      // Steps of the widest tile's vectors, each step's inputs summed by every tile of a group of
      // output channels before the next step: one step's input rows stay in the first-level cache
      // for the group, whose weights stay in the second (a whole plane per tile read the input
      // from the second-level cache for every tile). ResNet-18's stride-2 3x3 layer at 56 x 56:
      // 65 -> 75 GMAC/s; its 14 x 14 layers +4-5% (also from the last step's fewer vectors).
      const size_t step = ConvTileVectors(kConvTileRows) * N;
      const size_t group_rows = std::max<size_t>(1, kForwardGroupWeights / (kConvTileRows * k)) * kConvTileRows;
      for (size_t g0 = row_begin; g0 < row_end; g0 += group_rows) {
        const size_t g1 = std::min(row_end, g0 + group_rows);
        for (size_t q0 = 0; q0 < q_end; q0 += step) {
          const size_t left = std::min(step, q_end - q0), vectors = (left + N - 1) / N;
          // A plane's last one to four positions past a whole vector as vectors of eight channels
          // (a 14 x 14 plane's 209 positions: 13 vectors and one, not 14 vectors).
          const size_t whole = left / N, rest = left % N;
          // (A step is three vectors: with a tail, at most two whole ones, as EightRows needs.)
          const bool channel_tail = channel_tails && whole != 0 && whole < 3 && rest != 0 && rest <= 4;
          for (size_t r0 = g0; r0 < g1; r0 += kConvTileRows) {
            const size_t mr = g1 - r0 < kConvTileRows ? g1 - r0 : kConvTileRows;
            const float* const ap = group_packed + r0 * k;
            float* const tile_out = sums + r0 * sums_ld + q0;
            if (channel_tail && mr == 8) {
              EightRows<false>(d, whole, rest, ap, input + q0, off.data(), k, tile_out, sums_ld, false, nullptr, 0);
            } else {
              OutputTileShape(d, mr, vectors, ap, input + q0, off.data(), k, tile_out, sums_ld);
            }
          }
        }
      }
      // Epilogue: the valid columns, plus the bias, then the shape's epilogue, canonical (in place
      // for a pointwise layer's sums). A vector may run past a row's end into the next row, which
      // is written after it; never past this item's outputs.
      const float* group_bias = bias != nullptr ? bias + g * s.c_out : nullptr;
      float* const out_end = out + row_end * positions;
      for (size_t co = row_begin; co < row_end; ++co) {
        const auto b = hn::Set(d, group_bias != nullptr ? group_bias[co] : 0.0f);
        const ChannelEpilogue ep(s.epilogue, g * s.c_out + co);
        // In place, a channel is one run: a vector past a row's end would take the next row's
        // elements through the epilogue twice.
        const size_t rows = in_place ? 1 : s.h_out, row_floats = in_place ? positions : s.w_out;
        for (size_t oy = 0; oy < rows; ++oy) {
          const float* src = sums + co * sums_ld + oy * width;
          float* dst = out + co * positions + oy * s.w_out;
          size_t ox = 0;
          for (; ox < row_floats && dst + ox + N <= out_end; ox += N) {
            auto v = hn::LoadU(d, src + ox);
            if (group_bias != nullptr) v = hn::Add(v, b);
            hn::StoreU(Canonicalize(d, ep.Apply(d, v)), d, dst + ox);
          }
          for (; ox < row_floats; ++ox) {
            const float v = group_bias != nullptr ? src[ox] + group_bias[co] : src[ox];
            dst[ox] = EpilogueScalar(s.epilogue, g * s.c_out + co, v);
          }
        }
        // The channel's values are final (a later channel's vectors start at its own first
        // element): SiLU's sigmoid runs over them while they are in the cache.
        if (silu) SiluInPlace(out + co * positions, nullptr, positions);
      }
    }
  });
}

// Any geometry and weights: the sample's columns W^T dY [k][positions], then col2im.
void ConvInputGradColumns(const ConvShape& s, const float* dy, const float* packed, float* dx, ThreadPool* pool) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t k = Taps(s), positions = s.h_out * s.w_out, ld = positions + Slack(d);
  std::vector<int64_t> row_off(s.c_out);
  for (size_t co = 0; co < s.c_out; ++co) row_off[co] = static_cast<int64_t>(co * ld);
  const uint64_t call = NewCallId();
  ForSampleChunks(s.samples, s.c_out * k * positions, pool, [&](size_t first, size_t count) {
    thread_local std::vector<float> dyc, cols;
    thread_local uint64_t prepared = 0;
    if (prepared != call) {
      dyc.assign(s.c_out * ld, 0.0f);  // the slack stays zero
      cols.resize(k * ld);
      prepared = call;
    }
    for (size_t n = first; n < first + count; ++n) {
      for (size_t co = 0; co < s.c_out; ++co) {
        memcpy(dyc.data() + co * ld, dy + n * s.y_sample_stride + co * positions, positions * sizeof(float));
      }
      for (size_t t0 = 0; t0 < k; t0 += kConvTileRows) {
        const size_t mr = k - t0 < kConvTileRows ? k - t0 : kConvTileRows;
        const size_t step = ConvTileVectors(mr) * N;
        for (size_t q0 = 0; q0 < positions; q0 += step) {
          OutputTileRows(d, mr, packed + t0 * s.c_out, dyc.data() + q0, row_off.data(), s.c_out,
                         cols.data() + t0 * ld + q0, ld);
        }
      }
      Col2ImSample(s, cols.data(), ld, dx + n * s.x_sample_stride);
    }
  });
}

void ConvInputGradTarget(const ConvShape& s, const float* dy, const float* w, float* dx, ThreadPool* pool) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t wp = PaddedW(s), plane = PaddedH(s) * wp, k = Taps(s), positions = s.h_out * s.w_out;
  const size_t taps = s.kh * s.kw;  // per input channel
  const size_t q_end = (s.h_out - 1) * wp + s.w_out;
  const size_t ld = q_end + Slack(d);
  // Column rows: a zero margin of `reach` floats (the largest tap offset within a channel), the
  // row's q_end values (and the tile's overrun, zero gradients), zeros to plane + N.
  const size_t reach = (s.kh - 1) * s.dilation_h * wp + (s.kw - 1) * s.dilation_w;
  const size_t row = reach + plane + Slack(d);
  std::vector<int64_t> tap_off, row_off(s.c_out);
  TapOffsets(s, plane, &tap_off);
  for (size_t co = 0; co < s.c_out; ++co) row_off[co] = static_cast<int64_t>(co * ld);
  // W^T [K, c_out] packed per tile of taps: A of the tile product cols = W^T dY.
  thread_local std::vector<float> wt_buffer, packed_buffer;  // kept: no zero-filled allocation per call
  float* const wt = AtLeast(&wt_buffer, k * s.c_out);
  float* const packed = AtLeast(&packed_buffer, k * s.c_out);
  for (size_t co = 0; co < s.c_out; ++co) {
    for (size_t t = 0; t < k; ++t) wt[t * s.c_out + co] = w[co * k + t];
  }
  PackRowTiles(wt, k, s.c_out, packed);
  // The padded-frame sums below add zero columns where no output position lands: exact for
  // finite weights only (Inf * 0 is NaN), and for stride 1 only.
  bool finite = true;
  for (size_t i = 0; i < s.c_out * k; ++i) finite = finite && w[i] - w[i] == 0.0f;
  if (!finite || s.stride_h != 1 || s.stride_w != 1) return ConvInputGradColumns(s, dy, packed, dx, pool);
  const bool padded = s.pad_h != 0 || s.pad_w != 0;
  const uint64_t call = NewCallId();
  ForSampleChunks(s.samples, s.c_out * k * positions, pool, [&](size_t first, size_t count) {
    thread_local std::vector<float> dypad, cols, plane_buffer;
    thread_local uint64_t prepared = 0;
    if (prepared != call) {
      dypad.assign(s.c_out * ld, 0.0f);  // columns ox >= w_out stay zero
      cols.assign(k * row, 0.0f);        // the margins stay zero
      plane_buffer.resize(plane + Slack(d));
      prepared = call;
    }
    for (size_t n = first; n < first + count; ++n) {
      const float* g = dy + n * s.y_sample_stride;
      for (size_t co = 0; co < s.c_out; ++co) {
        for (size_t oy = 0; oy < s.h_out; ++oy) {
          memcpy(dypad.data() + co * ld + oy * wp, g + co * positions + oy * s.w_out, s.w_out * sizeof(float));
        }
      }
      // Every column of the sample: cols = W^T dY over the padded-width positions.
      for (size_t t0 = 0; t0 < k; t0 += kConvTileRows) {
        const size_t mr = k - t0 < kConvTileRows ? k - t0 : kConvTileRows;
        const size_t step = ConvTileVectors(mr) * N;
        for (size_t q0 = 0; q0 < q_end; q0 += step) {
          OutputTileRows(d, mr, packed + t0 * s.c_out, dypad.data() + q0, row_off.data(), s.c_out,
                         cols.data() + t0 * row + reach + q0, row);
        }
      }
      // Input element e of channel c (padded frame) = +0 + col(c, 0, 0)[e - off(0, 0)] + ... in
      // increasing tap order; a tap whose output position is outside the output reads a zero
      // gradient column or the zero margin, and adds +-0 (no change: the sum is never -0).
      float* out = dx + n * s.x_sample_stride;
      float* const out_end = out + s.c_in * s.h * s.w;
      for (size_t c = 0; c < s.c_in; ++c) {
        const float* col0 = cols.data() + c * taps * row + reach;
        const int64_t* off = tap_off.data() + c * taps;
        const int64_t base = static_cast<int64_t>(c * plane);
        float* target = padded ? plane_buffer.data() : out + c * plane;
        size_t e = 0;
        for (; e + 2 * N <= plane; e += 2 * N) {
          auto a0 = hn::Zero(d), a1 = hn::Zero(d);
          for (size_t t = 0; t < taps; ++t) {
            const float* src = col0 + t * row + static_cast<int64_t>(e) - (off[t] - base);
            a0 = hn::Add(a0, hn::LoadU(d, src));
            a1 = hn::Add(a1, hn::LoadU(d, src + N));
          }
          hn::StoreU(Canonicalize(d, a0), d, target + e);
          hn::StoreU(Canonicalize(d, a1), d, target + e + N);
        }
        for (; e < plane; e += N) {
          auto a0 = hn::Zero(d);
          for (size_t t = 0; t < taps; ++t) {
            a0 = hn::Add(a0, hn::LoadU(d, col0 + t * row + static_cast<int64_t>(e) - (off[t] - base)));
          }
          a0 = Canonicalize(d, a0);
          if (padded || target + e + N <= out_end) {
            hn::StoreU(a0, d, target + e);
          } else {  // the sample's last vector: only its own elements
            HWY_ALIGN float lanes[hn::MaxLanes(d)];
            hn::Store(a0, d, lanes);
            for (size_t i = 0; e + i < plane; ++i) target[e + i] = lanes[i];
          }
        }
        if (padded) {
          for (size_t yy = 0; yy < s.h; ++yy) {
            memcpy(out + (c * s.h + yy) * s.w, plane_buffer.data() + (yy + s.pad_h) * wp + s.pad_w,
                   s.w * sizeof(float));
          }
        }
      }
    }
  });
}

void ConvWeightGradTarget(const ConvShape& s, const float* dy, const float* x, size_t samples_per_group, float* dw,
                          ThreadPool* pool) {
  const hn::ScalableTag<float> full;
  const hn::CappedTag<float, 8> narrow;
  // One vector holds several output channels: the narrower vector when it wastes fewer lanes.
  const bool use_narrow = hn::Lanes(full) > 8 && s.c_out <= 8;
  const size_t lanes = use_narrow ? hn::Lanes(narrow) : hn::Lanes(full);
  const size_t vectors = (s.c_out + lanes - 1) / lanes, co_pad = vectors * lanes;
  const size_t k = Taps(s), positions = s.h_out * s.w_out;
  const bool padded = s.pad_h != 0 || s.pad_w != 0;
  const size_t wp = PaddedW(s), plane = PaddedH(s) * wp;
  const size_t sample_floats = s.c_in * plane;
  std::vector<int64_t> off;
  TapOffsets(s, plane, &off);
  // Phase 1, per sample: dY transposed to [position][co_pad] (zero past c_out), and the padded
  // input where there is padding.
  thread_local std::vector<float> dyt_buffer, xpad_buffer, partials_buffer;  // kept: no allocation per call
  float* const dyt = AtLeast(&dyt_buffer, s.samples * positions * co_pad);
  float* const xpad = padded ? AtLeast(&xpad_buffer, s.samples * sample_floats) : nullptr;
  // Plain copies: worth the pool from fewer floats than the multiply-adds are.
  const size_t moved_per_sample = positions * co_pad + (padded ? sample_floats : 0);
  ForSampleChunks(s.samples, moved_per_sample, pool, [&](size_t first, size_t count) {
    for (size_t n = first; n < first + count; ++n) {
      const float* g = dy + n * s.y_sample_stride;
      float* t = dyt + n * positions * co_pad;
      if (co_pad != s.c_out) std::fill(t, t + positions * co_pad, 0.0f);
      for (size_t co = 0; co < s.c_out; ++co) {
        const float* row = g + co * positions;
        for (size_t p = 0; p < positions; ++p) t[p * co_pad + co] = row[p];
      }
      if (padded) {
        for (size_t c = 0; c < s.c_in; ++c) {
          FillPaddedPlane(s, x + n * s.x_sample_stride, c, wp, plane, xpad + n * sample_floats + c * plane);
        }
      }
    }
  }, size_t{1} << 16);
  // Phase 2: group partials [group][vector][tap][lanes], one task per (group, tap tile, vector).
  const size_t groups = (s.samples + samples_per_group - 1) / samples_per_group;
  const size_t tile_taps = kWeightGradTileTaps;
  const size_t tiles = (k + tile_taps - 1) / tile_taps;
  float* const partials = AtLeast(&partials_buffer, groups * vectors * k * lanes);
  const size_t tasks = groups * tiles * vectors;
  auto run = [&](size_t task, size_t /*worker*/) {
    const size_t grp = task / (tiles * vectors), tile = (task / vectors) % tiles, v = task % vectors;
    const size_t t0 = tile * tile_taps, taps = k - t0 < tile_taps ? k - t0 : tile_taps;
    float* acc = partials + ((grp * vectors + v) * k + t0) * lanes;
    const size_t first = grp * samples_per_group;
    const size_t last = first + samples_per_group < s.samples ? first + samples_per_group : s.samples;
    for (size_t n = first; n < last; ++n) {
      const float* xs = padded ? xpad + n * sample_floats : x + n * s.x_sample_stride;
      const float* g = dyt + n * positions * co_pad + v * lanes;
      if (use_narrow) {
        WeightGradTileTaps(narrow, taps, xs, s.stride_h * wp, s.stride_w, off.data() + t0, g, co_pad, s.h_out,
                           s.w_out, n == first, acc);
      } else {
        WeightGradTileTaps(full, taps, xs, s.stride_h * wp, s.stride_w, off.data() + t0, g, co_pad, s.h_out,
                           s.w_out, n == first, acc);
      }
    }
  };
  const size_t threads = pool == nullptr ? 1 : pool->num_threads();
  if (threads > 1 && tasks > 1 && s.samples * positions * k * s.c_out >= (size_t{1} << 18)) {
    pool->ParallelFor(tasks, run);
  } else {
    for (size_t t = 0; t < tasks; ++t) run(t, 0);
  }
  // Phase 3: the pairwise tree over adjacent groups, then dw.
  CombineGroupPartials(partials, groups, vectors * k * lanes);
  for (size_t co = 0; co < s.c_out; ++co) {
    for (size_t t = 0; t < k; ++t) {
      const float v = partials[((co / lanes) * k + t) * lanes + co % lanes];
      dw[co * k + t] = v != v ? __builtin_nanf("") : v;
    }
  }
}

void ConvEpilogueRunsTarget(const ConvEpilogue* e, size_t channels, size_t positions, float* y) {
  const hn::ScalableTag<float> d;
  ApplyEpilogueRuns(d, e, 0, channels, positions, y);
}

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lockstep {
namespace simd {

HWY_EXPORT(ConvForwardTarget);
HWY_EXPORT(ConvInputGradTarget);
HWY_EXPORT(ConvWeightGradTarget);
HWY_EXPORT(ConvEpilogueRunsTarget);

size_t ConvForwardFrameWidth(const ConvShape& s) {
  return HWY_NAMESPACE::Phases(s).wq;
}

void ApplyConvEpilogue(const ConvEpilogue* e, size_t channels, size_t positions, float* y) {
  if (e == nullptr || (e->mean == nullptr && e->activation == ConvActivation::kNone)) return;
  HWY_DYNAMIC_DISPATCH(ConvEpilogueRunsTarget)(e, channels, positions, y);
}

namespace {

// The default pool unless given one, held while the kernel runs.
template <class F>
void WithPool(ThreadPool* pool, const F& f) {
  if (pool != nullptr) return f(pool);
  const std::shared_ptr<ThreadPool> held = DefaultThreadPool();
  f(held.get());
}

// f(shape of one group, its input, output and weight offsets) for each group in turn.
template <class F>
void ForEachGroup(const ConvShape& s, const F& f) {
  ConvShape one = s;
  one.groups = 1;
  for (size_t g = 0; g < s.groups; ++g) {
    f(one, g * s.c_in * s.h * s.w, g * s.c_out * s.h_out * s.w_out, g * s.c_out * s.c_in * s.kh * s.kw);
  }
}

}  // namespace

void ConvForward(const ConvShape& s, const float* x, const float* w, const float* bias, float* y, ThreadPool* pool) {
  if (s.samples == 0 || s.c_out == 0) return;
  if (s.c_in * s.kh * s.kw == 0) {  // empty sums are +0 (every group's channels)
    const size_t positions = s.h_out * s.w_out;
    for (size_t n = 0; n < s.samples; ++n) {
      for (size_t co = 0; co < s.c_out * s.groups; ++co) {
        const float v = bias != nullptr ? 0.0f + bias[co] : 0.0f;
        for (size_t p = 0; p < positions; ++p) y[n * s.y_sample_stride + co * positions + p] = v != v ? __builtin_nanf("") : v;
      }
      ApplyConvEpilogue(s.epilogue, s.c_out * s.groups, positions, y + n * s.y_sample_stride);
    }
    return;
  }
  WithPool(pool, [&](ThreadPool* p) {
    if (ConvDepthwiseForward(s)) return DepthwiseForward(s, x, w, bias, y, p);
    if (ConvThroughGemm(s)) return ConvForwardGemm(s, x, w, bias, y, p);
    HWY_DYNAMIC_DISPATCH(ConvForwardTarget)(s, x, w, bias, y, p);
  });
}

void ConvInputGrad(const ConvShape& s, const float* dy, const float* w, float* dx, ThreadPool* pool) {
  if (s.samples == 0 || s.c_in == 0) return;
  if (s.kh * s.kw == 0 || s.h_out * s.w_out == 0) {  // no column reaches dx
    for (size_t n = 0; n < s.samples; ++n) {
      for (size_t e = 0; e < s.groups * s.c_in * s.h * s.w; ++e) dx[n * s.x_sample_stride + e] = 0.0f;
    }
    return;
  }
  WithPool(pool, [&](ThreadPool* p) {
    if (ConvDepthwise(s)) return DepthwiseInputGrad(s, dy, w, dx, p);
    ForEachGroup(s, [&](const ConvShape& g, size_t x_at, size_t y_at, size_t w_at) {
      if (ConvThroughGemm(g)) return ConvInputGradGemm(g, dy + y_at, w + w_at, dx + x_at, p);
      HWY_DYNAMIC_DISPATCH(ConvInputGradTarget)(g, dy + y_at, w + w_at, dx + x_at, p);
    });
  });
}

void ConvWeightGrad(const ConvShape& s, const float* dy, const float* x, size_t samples_per_group, float* dw,
                    ThreadPool* pool) {
  const size_t n = s.groups * s.c_out * s.c_in * s.kh * s.kw;
  if (n == 0) return;
  if (s.samples == 0 || s.h_out == 0 || s.w_out == 0) {  // an empty sum
    for (size_t i = 0; i < n; ++i) dw[i] = 0.0f;
    return;
  }
  const size_t group = samples_per_group == 0 ? s.samples : samples_per_group;
  WithPool(pool, [&](ThreadPool* p) {
    if (ConvDepthwise(s)) return DepthwiseWeightGrad(s, dy, x, group, dw, p);
    ForEachGroup(s, [&](const ConvShape& g, size_t x_at, size_t y_at, size_t w_at) {
      if (ConvThroughGemm(g)) return ConvWeightGradGemm(g, dy + y_at, x + x_at, group, dw + w_at, p);
      HWY_DYNAMIC_DISPATCH(ConvWeightGradTarget)(g, dy + y_at, x + x_at, group, dw + w_at, p);
    });
  });
}

}  // namespace simd
}  // namespace lockstep
#endif  // HWY_ONCE
