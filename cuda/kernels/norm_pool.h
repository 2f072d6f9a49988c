// Kernel bodies of average pooling and batch normalisation (the semantics of kernel_list.h's
// avg_pool_* and channel_normalize*, as core/backend/cpu_avg_pool.cc and cpu_channel_norm.cc
// compute them).
#ifndef LOCKSTEP_CUDA_KERNELS_NORM_POOL_H_
#define LOCKSTEP_CUDA_KERNELS_NORM_POOL_H_

#include "core/backend/kernel_table.h"
#include "cuda/kernels/elementwise.h"
#include "cuda/kernels/portable.h"
#include "cuda/kernels/reduce.h"

namespace lockstep {
namespace cuda {

// The divisor of output (oy, ox): the window's size, or its positions inside the input.
LS_HD float AvgPoolDivisor(const backend::PoolCall& p, int64_t oy, int64_t ox) {
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

// Element k of an output's window in row-major order, +0 where it is padding.
struct WindowLoad {
  const backend::PoolCall* p;
  const float* plane;
  int64_t oy, ox;
  LS_HD float operator()(size_t k) const {
    const int64_t i = static_cast<int64_t>(k) / p->kernel_w, j = static_cast<int64_t>(k) % p->kernel_w;
    const int64_t y = oy * p->stride_h - p->padding_h + i, x = ox * p->stride_w - p->padding_w + j;
    return y >= 0 && y < p->h && x >= 0 && x < p->w ? plane[y * p->w + x] : 0.0f;
  }
};

struct AvgPoolForwardBody {
  backend::PoolCall p;
  const float* x;
  float* out;
  LS_HD void operator()(size_t t) const {
    const int64_t per_plane = p.h_out * p.w_out;
    const int64_t plane = static_cast<int64_t>(t) / per_plane, q = static_cast<int64_t>(t) % per_plane;
    const int64_t oy = q / p.w_out, ox = q % p.w_out;
    const WindowLoad load{&p, x + plane * p.h * p.w, oy, ox};
    const float sum = CanonicalSum(load, static_cast<size_t>(p.kernel_h * p.kernel_w));
    out[t] = Canonical(sum / AvgPoolDivisor(p, oy, ox));
  }
};

// One input element: +0, then the share of every output whose window covers it, in increasing
// output order (the order in which the CPU's plane loop adds them).
struct AvgPoolBackwardBody {
  backend::PoolCall p;
  const float* grad;
  float* dx;
  LS_HD void operator()(size_t t) const {
    const int64_t plane_size = p.h * p.w;
    const int64_t plane = static_cast<int64_t>(t) / plane_size, e = static_cast<int64_t>(t) % plane_size;
    const int64_t y = e / p.w, x = e % p.w;
    const float* g = grad + plane * p.h_out * p.w_out;
    float acc = 0.0f;
    for (int64_t oy = 0; oy < p.h_out; ++oy) {
      const int64_t i = y - (oy * p.stride_h - p.padding_h);
      if (i < 0 || i >= p.kernel_h) continue;
      for (int64_t ox = 0; ox < p.w_out; ++ox) {
        const int64_t j = x - (ox * p.stride_w - p.padding_w);
        if (j < 0 || j >= p.kernel_w) continue;
        acc = Canonical(acc + g[oy * p.w_out + ox] / AvgPoolDivisor(p, oy, ox));
      }
    }
    dx[t] = acc;
  }
};

// Batch normalisation's y = xhat * weight + bias for channel ch (null weight: times 1; null bias:
// plus +0), canonical.
LS_HD float NormAffine(const float* weight, const float* bias, size_t ch, float xhat) {
  const float scaled = Canonical(xhat * (weight != nullptr ? weight[ch] : 1.0f));
  return Canonical(scaled + (bias != nullptr ? bias[ch] : 0.0f));
}

// The forward activation on a canonical y (ChannelNormCall): Relu's, Clip's and hardtanh's bits (SiLU's
// sigmoid and product run after, over the stored y).
LS_HD float NormActivate(int32_t activation, float lo, float hi, float y) {
  if (activation == backend::kConvRelu) return y > 0.0f || y != y ? y : 0.0f;
  if (activation == backend::kConvHardtanh) return HardtanhValue(y, lo, hi);
  return activation == backend::kConvClamp ? ClampValue(y, lo, hi) : y;
}

struct ChannelNormalizeBody {
  backend::ChannelNormCall c;
  LS_HD void operator()(size_t i) const {
    const size_t ch = (i / c.inner) % c.channels;
    const float xhat = Canonical(Canonical(c.x[i] - c.mean[ch]) * c.rstd[ch]);
    if (c.xhat_out != nullptr) c.xhat_out[i] = xhat;
    c.out[i] = NormActivate(c.activation, c.lo, c.hi, NormAffine(c.weight, c.bias, ch, xhat));
  }
};

// The gradient of the forward activation at y formed again from xhat (ChannelNormSumsCall): Relu's
// rule g * (y > 0 ? 1 : 0), Clip's +0 outside [lo, hi], hardtanh's +0 at and beyond them, SiLU's
// g * s + ((g * y) * (-s + 1)) * s, canonical.
struct NormActivationGradientBody {
  backend::ChannelNormSumsCall c;
  float* out;
  LS_HD void operator()(size_t i) const {
    const float y = NormAffine(c.weight, c.bias, (i / c.positions) % c.channels, c.xhat[i]);
    if (c.activation == backend::kConvRelu) {
      out[i] = Canonical(c.g[i] * (y > 0.0f ? 1.0f : 0.0f));
    } else if (c.activation == backend::kConvHardtanh) {
      out[i] = HardtanhGradient(y, c.lo, c.hi, c.g[i]);
    } else if (c.activation == backend::kConvSilu) {
      const float s = c.sigmoid[i], g = c.g[i];
      const float sigmoid_part = Canonical(Canonical(Canonical(g * y) * Canonical(-s + 1.0f)) * s);
      out[i] = Canonical(Canonical(g * s) + sigmoid_part);
    } else {
      out[i] = ClampGradient(y, c.lo, c.hi, c.g[i]);
    }
  }
};

// out[i] = g[i] * weight[channel] (weight null: g[i] * 1), canonical: batch normalisation's dxhat.
struct ChannelScaleBody {
  const float* g;
  const float* weight;
  size_t channels, positions;
  float* out;
  LS_HD void operator()(size_t i) const {
    out[i] = Canonical(g[i] * (weight != nullptr ? weight[(i / positions) % channels] : 1.0f));
  }
};

struct ChannelNormalizeBackwardBody {
  backend::ChannelNormCall c;
  LS_HD void operator()(size_t i) const {
    const size_t ch = (i / c.inner) % c.channels;
    const float mean_x = c.sum_x[ch] / c.count, mean_x_xhat = c.sum_x_xhat[ch] / c.count;
    const float centered = Canonical(c.x[i] - mean_x);
    const float projected = Canonical(c.xhat[i] * mean_x_xhat);
    c.out[i] = Canonical(Canonical(centered - projected) * c.rstd[ch]);
  }
};

}  // namespace cuda
}  // namespace lockstep

#endif  // LOCKSTEP_CUDA_KERNELS_NORM_POOL_H_
