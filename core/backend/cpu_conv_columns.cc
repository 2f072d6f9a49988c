// The CPU's im2col / col2im kernels (kernel_list.h): the columns of a convolution's GEMM and their
// way back into the input gradient.
#include <algorithm>

#include "core/backend/cpu_layers.h"
#include "simd/elementwise.h"

namespace lockstep {
namespace cpu_layers {
namespace {

// The output columns [begin, end) whose input column ox * stride - padding + offset is inside
// [0, width).
void ValidColumns(int64_t width, int64_t out_width, int64_t stride, int64_t padding, int64_t offset, int64_t* begin,
                  int64_t* end) {
  // First ox with ox * stride >= padding - offset; last with ox * stride < width + padding - offset.
  const int64_t low = padding - offset, high = width + padding - offset;
  *begin = low <= 0 ? 0 : (low + stride - 1) / stride;
  *end = high <= 0 ? 0 : (high + stride - 1) / stride;
  if (*end > out_width) *end = out_width;
  if (*begin > *end) *begin = *end;
}

// cols [k, positions] for one sample: row (c, i, j), column (oy, ox), rows ld floats apart; zero
// padding.
void SampleIm2Col(const backend::ConvCall& g, const float* x, float* cols) {
  for (int64_t c = 0; c < g.c_in_group; ++c) {
    const float* plane = x + c * g.h * g.w;
    for (int64_t i = 0; i < g.kh; ++i) {
      for (int64_t j = 0; j < g.kw; ++j) {
        float* row = cols + ((c * g.kh + i) * g.kw + j) * g.ld;
        int64_t begin, end;
        ValidColumns(g.w, g.w_out, g.stride_w, g.padding_w, j * g.dilation_w, &begin, &end);
        for (int64_t oy = 0; oy < g.h_out; ++oy) {
          float* out = row + oy * g.w_out;
          const int64_t y = oy * g.stride_h - g.padding_h + i * g.dilation_h;
          if (y < 0 || y >= g.h) {
            std::fill(out, out + g.w_out, 0.0f);
            continue;
          }
          std::fill(out, out + begin, 0.0f);
          const float* in = plane + y * g.w - g.padding_w + j * g.dilation_w;
          if (g.stride_w == 1) {
            std::copy(in + begin, in + end, out + begin);
          } else {
            for (int64_t ox = begin; ox < end; ++ox) out[ox] = in[ox * g.stride_w];
          }
          std::fill(out + end, out + g.w_out, 0.0f);
        }
      }
    }
  }
}

// Adds one sample's cols back into its input-gradient planes in (c, i, j, oy, ox) order. Each
// target element receives at most one entry per (c, i, j, oy), so adding a whole ox segment at once
// keeps every element's order of additions.
void SampleCol2ImAdd(const backend::ConvCall& g, const float* cols, float* dx) {
  for (int64_t c = 0; c < g.c_in_group; ++c) {
    float* plane = dx + c * g.h * g.w;
    for (int64_t i = 0; i < g.kh; ++i) {
      for (int64_t j = 0; j < g.kw; ++j) {
        const float* row = cols + ((c * g.kh + i) * g.kw + j) * g.ld;
        int64_t begin, end;
        ValidColumns(g.w, g.w_out, g.stride_w, g.padding_w, j * g.dilation_w, &begin, &end);
        for (int64_t oy = 0; oy < g.h_out; ++oy) {
          const int64_t y = oy * g.stride_h - g.padding_h + i * g.dilation_h;
          if (y < 0 || y >= g.h || begin == end) continue;
          float* target = plane + y * g.w - g.padding_w + j * g.dilation_w;
          const float* source = row + oy * g.w_out;
          if (g.stride_w == 1) {
            simd::Binary(simd::BinaryOp::kAdd, target + begin, source + begin, target + begin,
                         static_cast<size_t>(end - begin));
          } else {
            for (int64_t ox = begin; ox < end; ++ox) {
              float& t = target[ox * g.stride_w];
              t = t + source[ox];
              if (t != t) t = __builtin_nanf("");  // canonical, as the stride-1 path
            }
          }
        }
      }
    }
  }
}

}  // namespace

void Im2Col(const backend::ConvCall& c, const float* x, float* cols) {
  const int64_t positions = c.h_out * c.w_out;
  for (int64_t s = 0; s < c.samples; ++s) SampleIm2Col(c, x + s * c.sample_stride, cols + s * positions);
}

void Col2ImAdd(const backend::ConvCall& c, const float* cols, float* dx) {
  const int64_t positions = c.h_out * c.w_out;
  for (int64_t s = 0; s < c.samples; ++s) SampleCol2ImAdd(c, cols + s * positions, dx + s * c.sample_stride);
}

}  // namespace cpu_layers
}  // namespace lockstep
