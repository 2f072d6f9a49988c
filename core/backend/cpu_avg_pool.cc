// The CPU's average-pooling kernels (kernel_list.h, PoolCall).
#include <algorithm>
#include <vector>

#include "core/backend/cpu_layers.h"
#include "simd/reduce.h"
#include "simd/thread_pool.h"

namespace lockstep {
namespace cpu_layers {
namespace {

float Canonical(float x) { return x != x ? __builtin_nanf("") : x; }

// The divisor of output (oy, ox): the window's size, or its positions inside the input.
float Divisor(const backend::PoolCall& p, int64_t oy, int64_t ox) {
  if (p.count_include_pad) return static_cast<float>(p.kernel_h * p.kernel_w);
  int64_t inside = 0;
  for (int64_t i = 0; i < p.kernel_h; ++i) {
    const int64_t y = oy * p.stride_h - p.padding_h + i;
    for (int64_t j = 0; j < p.kernel_w; ++j) {
      const int64_t x = ox * p.stride_w - p.padding_w + j;
      inside += y >= 0 && y < p.h && x >= 0 && x < p.w;
    }
  }
  return static_cast<float>(inside);
}

}  // namespace

void AvgPoolForward(const backend::PoolCall& p, const float* x, float* out) {
  const size_t window_size = static_cast<size_t>(p.kernel_h * p.kernel_w);
  simd::ForEachItemChunk(static_cast<size_t>(p.planes), static_cast<size_t>(p.h_out * p.w_out) * window_size,
                         [&](size_t first, size_t count) {
    std::vector<float> window(window_size);
    for (int64_t plane = static_cast<int64_t>(first); plane < static_cast<int64_t>(first + count); ++plane) {
      const float* in = x + plane * p.h * p.w;
      for (int64_t oy = 0; oy < p.h_out; ++oy) {
        for (int64_t ox = 0; ox < p.w_out; ++ox) {
          // The window in row-major order, padded positions as zeros, summed canonically.
          size_t k = 0;
          for (int64_t i = 0; i < p.kernel_h; ++i) {
            const int64_t y = oy * p.stride_h - p.padding_h + i;
            for (int64_t j = 0; j < p.kernel_w; ++j) {
              const int64_t xx = ox * p.stride_w - p.padding_w + j;
              window[k++] = y >= 0 && y < p.h && xx >= 0 && xx < p.w ? in[y * p.w + xx] : 0.0f;
            }
          }
          out[(plane * p.h_out + oy) * p.w_out + ox] = Canonical(simd::Sum(window.data(), k) / Divisor(p, oy, ox));
        }
      }
    }
  });
}

void AvgPoolBackward(const backend::PoolCall& p, const float* grad, float* dx) {
  const int64_t plane_size = p.h * p.w, per_plane = p.h_out * p.w_out;
  simd::ForEachItemChunk(static_cast<size_t>(p.planes), static_cast<size_t>(plane_size + per_plane),
                         [&](size_t first, size_t count) {
    for (int64_t plane = static_cast<int64_t>(first); plane < static_cast<int64_t>(first + count); ++plane) {
      float* target = dx + plane * plane_size;
      std::fill(target, target + plane_size, 0.0f);
      for (int64_t oy = 0; oy < p.h_out; ++oy) {
        for (int64_t ox = 0; ox < p.w_out; ++ox) {
          const float share = grad[plane * per_plane + oy * p.w_out + ox] / Divisor(p, oy, ox);
          for (int64_t i = 0; i < p.kernel_h; ++i) {
            const int64_t y = oy * p.stride_h - p.padding_h + i;
            if (y < 0 || y >= p.h) continue;
            for (int64_t j = 0; j < p.kernel_w; ++j) {
              const int64_t xx = ox * p.stride_w - p.padding_w + j;
              if (xx < 0 || xx >= p.w) continue;
              float& t = target[y * p.w + xx];
              t = Canonical(t + share);
            }
          }
        }
      }
    }
  });
}

}  // namespace cpu_layers
}  // namespace lockstep
