// Convolution through the GEMM (simd/conv_gemm.h): the columns, the transposes in and out, and
// col2im; the products are simd::Gemm's and simd::GemmBatchGrouped's.
#include "simd/conv_gemm.h"

#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "simd/conv_columns.h"
#include "simd/gemm.h"
#include "simd/scratch.h"
#include "simd/thread_pool.h"

namespace lockstep {
namespace simd {

namespace {

size_t Taps(const ConvShape& s) { return s.c_in * s.kh * s.kw; }
size_t Positions(const ConvShape& s) { return s.h_out * s.w_out; }

// The direct kernels' widest tile (AVX-512: 3 vectors of 16) runs along the output rows laid out
// at the padded input's width (its phases' with a stride). Where fewer than 60% of those lanes
// hold outputs, the GEMM is faster (measured on Zen 5 at 1 thread: 7x7, 4x4 and 2x2 planes
// with 256-512 channels, 1.4-8x; 8x8 at 67% and 14x14 at 82%, the direct kernels by 1.2x).
constexpr size_t kDirectTileLanes = 48;
constexpr size_t kMinDirectLanesPercent = 60;
constexpr size_t kMinChannels = 8;
// The columns' size limit (floats): beyond it the direct kernels, which need no columns.
constexpr size_t kMaxColumnFloats = size_t{1} << 24;

// body(n) for every sample, on the pool when the floats moved are worth it.
template <class Body>
void ForEachSample(const ConvShape& s, size_t floats_per_sample, ThreadPool* pool, const Body& body) {
  ForEachItem(pool, s.samples, s.samples * floats_per_sample, body);
}

// The input row and column that tap (i, j) of output (oy, ox) reads; negative or past the plane
// in the padding.
int64_t InputRow(const ConvShape& s, size_t oy, size_t i) {
  return static_cast<int64_t>(oy * s.stride_h + i * s.dilation_h) - static_cast<int64_t>(s.pad_h);
}
int64_t InputCol(const ConvShape& s, size_t ox, size_t j) {
  return static_cast<int64_t>(ox * s.stride_w + j * s.dilation_w) - static_cast<int64_t>(s.pad_w);
}

// What tap (i, j) of output (oy, ox) reads from a channel's plane: the input, or +0 in the padding.
float TapValue(const ConvShape& s, const float* plane, size_t oy, size_t ox, size_t i, size_t j) {
  const int64_t yy = InputRow(s, oy, i), xx = InputCol(s, ox, j);
  const bool inside = yy >= 0 && yy < static_cast<int64_t>(s.h) && xx >= 0 && xx < static_cast<int64_t>(s.w);
  return inside ? plane[static_cast<size_t>(yy) * s.w + static_cast<size_t>(xx)] : 0.0f;
}

// dst[j * ld_dst + i] = f(src[i * ld_src + j]) for i < rows, j < cols, in tiles that stay in
// the cache on both sides.
template <class F>
void TransposeTiles(const float* src, size_t rows, size_t cols, size_t ld_src, float* dst, size_t ld_dst, const F& f) {
  constexpr size_t kTile = 16;
  for (size_t i0 = 0; i0 < rows; i0 += kTile) {
    const size_t i1 = std::min(rows, i0 + kTile);
    for (size_t j0 = 0; j0 < cols; j0 += kTile) {
      const size_t j1 = std::min(cols, j0 + kTile);
      for (size_t j = j0; j < j1; ++j) {
        for (size_t i = i0; i < i1; ++i) dst[j * ld_dst + i] = f(src[i * ld_src + j]);
      }
    }
  }
}
inline float Same(float v) { return v; }

// A 1x1 kernel at stride 1 without padding: the columns are the input transposed.
bool Pointwise(const ConvShape& s) {
  return s.kh == 1 && s.kw == 1 && s.stride_h == 1 && s.stride_w == 1 && s.pad_h == 0 && s.pad_w == 0;
}

// Sample n's rows of the columns [samples * positions, taps]: row (n, oy, ox), column (c, i, j)
// holds the input that tap reads, +0 in the padding.
void Im2ColRows(const ConvShape& s, const float* x, size_t n, float* cols) {
  const size_t k = Taps(s), positions = Positions(s);
  const float* xs = x + n * s.x_sample_stride;
  float* row = cols + n * positions * k;
  if (Pointwise(s)) return TransposeTiles(xs, s.c_in, positions, positions, row, k, Same);
  const size_t plane = s.h * s.w;
  for (size_t oy = 0; oy < s.h_out; ++oy) {
    for (size_t ox = 0; ox < s.w_out; ++ox, row += k) {
      float* out = row;
      const int64_t y0 = InputRow(s, oy, 0), x0 = InputCol(s, ox, 0);
      const bool inside = y0 >= 0 && x0 >= 0 && InputRow(s, oy, s.kh - 1) < static_cast<int64_t>(s.h) &&
                          InputCol(s, ox, s.kw - 1) < static_cast<int64_t>(s.w);
      if (inside) {  // the whole window: no checks per tap
        const float* first = xs + static_cast<size_t>(y0) * s.w + static_cast<size_t>(x0);
        for (size_t c = 0; c < s.c_in; ++c, first += plane) {
          for (size_t i = 0; i < s.kh; ++i) {
            const float* in = first + i * s.dilation_h * s.w;
            for (size_t j = 0; j < s.kw; ++j) *out++ = in[j * s.dilation_w];
          }
        }
        continue;
      }
      for (size_t c = 0; c < s.c_in; ++c) {
        for (size_t i = 0; i < s.kh; ++i) {
          for (size_t j = 0; j < s.kw; ++j) *out++ = TapValue(s, xs + c * plane, oy, ox, i, j);
        }
      }
    }
  }
}

// Sample n of dY [c_out, positions] as rows (n, p) of dY^T [samples * positions, c_out].
void TransposeGradRows(const ConvShape& s, const float* dy, size_t n, float* dyt) {
  const size_t positions = Positions(s);
  TransposeTiles(dy + n * s.y_sample_stride, s.c_out, positions, positions, dyt + n * positions * s.c_out, s.c_out,
                 Same);
}

float* Columns(const ConvShape& s, const float* x, ThreadPool* pool) {
  thread_local std::vector<float> buffer;
  float* const cols = AtLeast(&buffer, s.samples * Positions(s) * Taps(s));
  ForEachSample(s, Positions(s) * Taps(s), pool, [&](size_t n) { Im2ColRows(s, x, n, cols); });
  return cols;
}

// One row (c, i, j) of a sample's transposed columns: out[oy * w_out + ox] is what tap (i, j) of
// output (oy, ox) reads from the channel's plane (+0 in the padding).
void TransposedColumnRow(const ConvShape& s, const float* plane, size_t i, size_t j, float* out) {
  for (size_t oy = 0; oy < s.h_out; ++oy, out += s.w_out) {
    const int64_t yy = InputRow(s, oy, i);
    if (yy < 0 || yy >= static_cast<int64_t>(s.h)) {
      std::fill(out, out + s.w_out, 0.0f);
      continue;
    }
    const float* row = plane + static_cast<size_t>(yy) * s.w;
    if (s.stride_w == 1) {
      // Consecutive outputs read consecutive inputs: zeros, one copy, zeros (element by element,
      // this was 2% of a batch-1 ResNet-18 inference).
      const int64_t first = InputCol(s, 0, j), w = static_cast<int64_t>(s.w), n = static_cast<int64_t>(s.w_out);
      const int64_t begin = std::min(n, std::max<int64_t>(0, -first));
      const int64_t end = std::max(begin, std::min(n, w - first));
      std::fill(out, out + begin, 0.0f);
      if (end > begin) std::copy(row + first + begin, row + first + end, out + begin);
      std::fill(out + end, out + n, 0.0f);
      continue;
    }
    for (size_t ox = 0; ox < s.w_out; ++ox) {
      const int64_t xx = InputCol(s, ox, j);
      out[ox] = xx >= 0 && xx < static_cast<int64_t>(s.w) ? row[static_cast<size_t>(xx)] : 0.0f;
    }
  }
}

// The columns transposed, [taps, samples * positions]: row (c, i, j), column (n, oy, ox). Work
// items are (sample, block of channels), so that a batch of one spreads over the pool too.
float* TransposedColumns(const ConvShape& s, const float* x, ThreadPool* pool) {
  thread_local std::vector<float> buffer;
  const size_t positions = Positions(s), rows = s.samples * positions, taps = s.kh * s.kw;
  float* const cols = AtLeast(&buffer, rows * Taps(s));
  const size_t per_channel = taps * positions;
  const size_t channels_per_item = std::max<size_t>(1, 4096 / std::max<size_t>(1, per_channel));
  const size_t blocks = (s.c_in + channels_per_item - 1) / channels_per_item, items = s.samples * blocks;
  auto body = [&](size_t item) {
    const size_t n = item / blocks, c0 = item % blocks * channels_per_item;
    const size_t c1 = std::min(s.c_in, c0 + channels_per_item);
    for (size_t c = c0; c < c1; ++c) {
      const float* plane = x + n * s.x_sample_stride + c * s.h * s.w;
      for (size_t t = 0; t < taps; ++t) {
        TransposedColumnRow(s, plane, t / s.kw, t % s.kw, cols + (c * taps + t) * rows + n * positions);
      }
    }
  };
  ForEachItem(pool, items, rows * Taps(s), body);
  return cols;
}

float* TransposedGrad(const ConvShape& s, const float* dy, ThreadPool* pool) {
  thread_local std::vector<float> buffer;
  float* const dyt = AtLeast(&buffer, s.samples * Positions(s) * s.c_out);
  ForEachSample(s, Positions(s) * s.c_out, pool, [&](size_t n) { TransposeGradRows(s, dy, n, dyt); });
  return dyt;
}

std::atomic<int> conv_path{static_cast<int>(ConvPath::kByShape)};

}  // namespace

void SetConvPath(ConvPath path) { conv_path.store(static_cast<int>(path), std::memory_order_relaxed); }
ConvPath CurrentConvPath() { return static_cast<ConvPath>(conv_path.load(std::memory_order_relaxed)); }

bool ConvThroughGemm(const ConvShape& s) {
  const ConvPath path = CurrentConvPath();
  if (s.groups != 1 || path == ConvPath::kDirect) return false;
  if (path == ConvPath::kGemm) return true;
  if (s.samples * Positions(s) * Taps(s) > kMaxColumnFloats) return false;
  // A product needs channels on both sides (a depthwise layer's gradients come one channel at a
  // time: 1 x 9 products through the GEMM cost more than the direct kernels' empty lanes).
  if (s.c_out < kMinChannels || Taps(s) < kMinChannels) return false;
  // The direct layout's row length and the lanes its tiles cover.
  const size_t row = ConvForwardFrameWidth(s);
  const size_t span = (s.h_out - 1) * row + s.w_out;
  const size_t lanes = (span + kDirectTileLanes - 1) / kDirectTileLanes * kDirectTileLanes;
  return 100 * Positions(s) < kMinDirectLanesPercent * lanes;
}

void ConvForwardGemm(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
                     ThreadPool* pool) {
  const size_t k = Taps(s), positions = Positions(s), rows = s.samples * positions;
  thread_local std::vector<float> product_buffer;
  float* const product = AtLeast(&product_buffer, rows * s.c_out);
  GemmArgs g;
  g.k = k;
  if (2 * rows <= s.c_out) {
    // Few positions against many channels (a small batch's last stages): W [c_out, taps] as A
    // and the columns transposed as B, so the weights stream through once instead of being
    // packed as B for a handful of rows. C^T [c_out, rows]; the bias follows. Where the target
    // has eight-channel tiles, simd/conv_columns.h computes it (the columns past the last whole
    // vector as vectors of channels; the GEMM's bits).
    g.m = s.c_out;
    g.n = rows;
    g.a = w;
    g.lda = k;
    g.b = TransposedColumns(s, x, pool);
    g.ldb = rows;
    g.c = product;
    g.ldc = rows;
    if (!NarrowColumnsProduct(w, s.c_out, k, g.b, rows, product, rows, pool)) Gemm(g, pool);
    ForEachSample(s, positions * s.c_out, pool, [&](size_t n) {
      float* out = y + n * s.y_sample_stride;
      for (size_t co = 0; co < s.c_out; ++co) {
        const float* t = product + co * rows + n * positions;
        if (bias == nullptr) {
          memcpy(out + co * positions, t, positions * sizeof(float));
          continue;
        }
        for (size_t p = 0; p < positions; ++p) {
          const float v = t[p] + bias[co];  // sum, then + bias: one rounded addition
          out[co * positions + p] = v != v ? __builtin_nanf("") : v;
        }
      }
      ApplyConvEpilogue(s.epilogue, s.c_out, positions, out);  // while the sample's outputs are in cache
    });
    return;
  }
  g.trans_b = true;  // W [c_out, taps] is B^T
  g.m = rows;
  g.n = s.c_out;
  g.a = Columns(s, x, pool);
  g.lda = k;
  g.b = w;
  g.ldb = k;
  g.c = product;
  g.ldc = s.c_out;
  g.bias = bias;  // sum, then + bias[co]: one rounded addition, as the direct kernels do
  Gemm(g, pool);
  // Back to [c_out, positions] per sample; the GEMM stored every NaN canonical.
  ForEachSample(s, positions * s.c_out, pool, [&](size_t n) {
    TransposeTiles(product + n * positions * s.c_out, positions, s.c_out, s.c_out, y + n * s.y_sample_stride,
                   positions, Same);
    ApplyConvEpilogue(s.epilogue, s.c_out, positions, y + n * s.y_sample_stride);
  });
}

void ConvInputGradGemm(const ConvShape& s, const float* dy, const float* w, float* dx, ThreadPool* pool) {
  const size_t k = Taps(s), positions = Positions(s), rows = s.samples * positions;
  const float* dyt = TransposedGrad(s, dy, pool);
  thread_local std::vector<float> dcols_buffer;
  float* const dcols = AtLeast(&dcols_buffer, rows * k);
  GemmArgs g;
  g.m = rows;
  g.n = k;
  g.k = s.c_out;  // each column entry sums over the output channels in increasing order
  g.a = dyt;
  g.lda = s.c_out;
  g.b = w;
  g.ldb = k;
  g.c = dcols;
  g.ldc = k;
  Gemm(g, pool);
  // col2im: every input element from +0, adding the entries that land on it in increasing
  // (channel, kernel row, kernel column) order: the taps outermost.
  const size_t plane = s.h * s.w;
  ForEachSample(s, positions * k, pool, [&](size_t n) {
    float* out = dx + n * s.x_sample_stride;
    if (Pointwise(s)) {  // one entry per input element: +0 + entry (-0 becomes +0), canonical
      return TransposeTiles(dcols + n * positions * k, positions, k, k, out, positions, [](float v) {
        const float sum = 0.0f + v;
        return sum != sum ? __builtin_nanf("") : sum;
      });
    }
    std::fill(out, out + s.c_in * plane, 0.0f);
    const float* rows_of_sample = dcols + n * positions * k;
    size_t tap = 0;
    for (size_t c = 0; c < s.c_in; ++c) {
      for (size_t i = 0; i < s.kh; ++i) {
        for (size_t j = 0; j < s.kw; ++j, ++tap) {
          for (size_t oy = 0; oy < s.h_out; ++oy) {
            const int64_t yy = InputRow(s, oy, i);
            if (yy < 0 || yy >= static_cast<int64_t>(s.h)) continue;
            for (size_t ox = 0; ox < s.w_out; ++ox) {
              const int64_t xx = InputCol(s, ox, j);
              if (xx < 0 || xx >= static_cast<int64_t>(s.w)) continue;
              float& t = out[c * plane + static_cast<size_t>(yy) * s.w + static_cast<size_t>(xx)];
              t = t + rows_of_sample[(oy * s.w_out + ox) * k + tap];
            }
          }
        }
      }
    }
    for (size_t e = 0; e < s.c_in * plane; ++e) out[e] = out[e] != out[e] ? __builtin_nanf("") : out[e];
  });
}

void ConvWeightGradGemm(const ConvShape& s, const float* dy, const float* x, size_t samples_per_group, float* dw,
                        ThreadPool* pool) {
  const size_t k = Taps(s), positions = Positions(s);
  const float* dyt = TransposedGrad(s, dy, pool);
  const float* cols = Columns(s, x, pool);
  GemmArgs g;
  g.trans_a = true;  // dY^T [(sample, position), c_out] is A^T
  g.m = s.c_out;
  g.n = k;
  g.k = s.samples * positions;
  g.a = dyt;
  g.lda = s.c_out;
  g.b = cols;
  g.ldb = k;
  g.c = dw;
  g.ldc = k;
  GemmBatchGrouped(g, samples_per_group * positions, pool);
}

}  // namespace simd
}  // namespace lockstep
