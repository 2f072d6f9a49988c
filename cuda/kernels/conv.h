// Convolution kernel bodies (core/backend/kernel_table.h, Conv2dCall): one thread per output,
// each summing in the contract's order (docs/numerics.md, "Convolution"), the same sums as
// im2col + the GEMM body, without the columns. Every stored NaN is canonical.
#ifndef LOCKSTEP_CUDA_KERNELS_CONV_H_
#define LOCKSTEP_CUDA_KERNELS_CONV_H_

#include "core/backend/kernel_table.h"
#include "cuda/kernels/layers.h"
#include "cuda/kernels/math.h"
#include "cuda/kernels/portable.h"
#include "cuda/kernels/reduce.h"

namespace lockstep {
namespace cuda {

using backend::Conv2dCall;

// x[.., c, oy * stride - padding + i * dilation, ..] of one sample (plane at x), or +0.0 in the
// padding, as im2col writes it.
LS_HD float ConvInput(const ConvCall& g, const float* x, int64_t c, int64_t i, int64_t j, int64_t oy, int64_t ox) {
  const int64_t y = oy * g.stride_h - g.padding_h + i * g.dilation_h;
  const int64_t xx = ox * g.stride_w - g.padding_w + j * g.dilation_w;
  const bool inside = y >= 0 && y < g.h && xx >= 0 && xx < g.w;
  return inside ? x[(c * g.h + y) * g.w + xx] : 0.0f;
}

// The forward epilogue (kernel_table.h, ConvEpilogue) on output channel c, canonical.
LS_HD float ConvEpilogueValue(const backend::ConvEpilogue& e, int64_t c, float v) {
  if (e.mean != nullptr) {
    const float h = (v - e.mean[c]) * e.rstd[c];
    const float scaled = h * (e.weight != nullptr ? e.weight[c] : 1.0f);
    v = scaled + (e.bias != nullptr ? e.bias[c] : 0.0f);
  }
  if (e.activation == backend::kConvRelu) {
    v = (v > 0.0f || v != v) ? v : 0.0f;
  } else if (e.activation == backend::kConvClamp) {
    v = v < e.lo ? e.lo : v;
    v = v > e.hi ? e.hi : v;
  }
  return Canonical(v);
}

// SiLU after the epilogue's other steps: y = y * sigmoid(y) (the math kernel's correctly rounded
// sigmoid), canonical, over t = n * per_sample + e of a batch whose samples are `stride` apart.
struct ConvSiluBody {
  MathTables tables;
  float* y;
  int64_t per_sample, stride;
  LS_HD void operator()(size_t t) const {
    float* v = y + static_cast<int64_t>(t) / per_sample * stride + static_cast<int64_t>(t) % per_sample;
    *v = Canonical(*v * ApplyMath(tables, MathFn::kSigmoid, *v));
  }
};

// y[n, co, oy, ox] over t = ((n * c_out + co) * h_out + oy) * w_out + ox: the sum over (c, i, j)
// from -0.0 (+0 when empty), canonical, then plus the bias, canonical, then the epilogue of
// channel first_channel + co (this group's first channel among every group's).
struct Conv2dForwardBody {
  Conv2dCall call;
  const float* x;
  const float* w;
  const float* bias;
  float* y;
  int64_t first_channel;
  LS_HD void operator()(size_t t) const {
    const ConvCall& g = call.conv;
    const int64_t positions = g.h_out * g.w_out, k = g.c_in_group * g.kh * g.kw;
    const int64_t n = static_cast<int64_t>(t) / (call.c_out_group * positions);
    const int64_t co = (static_cast<int64_t>(t) / positions) % call.c_out_group, q = static_cast<int64_t>(t) % positions;
    const float* xs = x + n * g.sample_stride;
    float acc = k == 0 ? 0.0f : -0.0f;
    for (int64_t r = 0; r < k; ++r) {
      const int64_t c = r / (g.kh * g.kw), i = (r / g.kw) % g.kh, j = r % g.kw;
      const float product = w[co * k + r] * ConvInput(g, xs, c, i, j, q / g.w_out, q % g.w_out);
      acc = acc + product;
    }
    acc = Canonical(acc);
    const float v = bias == nullptr ? acc : Canonical(acc + bias[co]);
    y[n * call.out_sample_stride + co * positions + q] = ConvEpilogueValue(call.epilogue, first_channel + co, v);
  }
};

// dx[n, c, y, x] over t = ((n * c_in + c) * h + y) * w + x: from +0, each tap (i, j) in
// increasing order whose output position exists adds its column entry, the sum over output
// channels (increasing) of w * dy from -0.0, canonical.
struct Conv2dInputGradBody {
  Conv2dCall call;
  const float* dy;
  const float* w;
  float* dx;
  LS_HD void operator()(size_t t) const {
    const ConvCall& g = call.conv;
    const int64_t plane = g.h * g.w, per_sample = g.c_in_group * plane, positions = g.h_out * g.w_out;
    const int64_t taps = g.kh * g.kw, k = g.c_in_group * taps;
    const int64_t n = static_cast<int64_t>(t) / per_sample, rest = static_cast<int64_t>(t) % per_sample;
    const int64_t c = rest / plane, y = (rest % plane) / g.w, xx = rest % g.w;
    const float* g_sample = dy + n * call.out_sample_stride;
    float acc = 0.0f;
    for (int64_t i = 0; i < g.kh; ++i) {
      const int64_t oy = SourceIndex(y, g.stride_h, g.padding_h, i * g.dilation_h, g.h_out);
      if (oy < 0) continue;
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t ox = SourceIndex(xx, g.stride_w, g.padding_w, j * g.dilation_w, g.w_out);
        if (ox < 0) continue;
        const int64_t r = c * taps + i * g.kw + j;
        float column = call.c_out_group == 0 ? 0.0f : -0.0f;
        for (int64_t co = 0; co < call.c_out_group; ++co) {
          const float product = w[co * k + r] * g_sample[co * positions + oy * g.w_out + ox];
          column = column + product;
        }
        acc = Canonical(acc + Canonical(column));
      }
    }
    dx[n * g.sample_stride + rest] = acc;
  }
};

// One group's partial of dw[e], e = co * k + r, over t = e * groups + group: the sum over
// (sample of the group, oy, ox) in increasing order from -0.0, canonical.
struct Conv2dWeightGradBody {
  Conv2dCall call;
  const float* dy;
  const float* x;
  size_t groups;
  float* partials;  // [c_out * k][groups]
  LS_HD void operator()(size_t t) const {
    const ConvCall& g = call.conv;
    const int64_t positions = g.h_out * g.w_out, k = g.c_in_group * g.kh * g.kw;
    const int64_t e = static_cast<int64_t>(t / groups), group = static_cast<int64_t>(t % groups);
    const int64_t co = e / k, r = e % k;
    const int64_t c = r / (g.kh * g.kw), i = (r / g.kw) % g.kh, j = r % g.kw;
    const int64_t first = group * call.samples_per_group;
    const int64_t last = first + call.samples_per_group < g.samples ? first + call.samples_per_group : g.samples;
    float acc = -0.0f;
    for (int64_t n = first; n < last; ++n) {
      const float* g_row = dy + n * call.out_sample_stride + co * positions;
      for (int64_t q = 0; q < positions; ++q) {
        const float product = g_row[q] * ConvInput(g, x + n * g.sample_stride, c, i, j, q / g.w_out, q % g.w_out);
        acc = acc + product;
      }
    }
    partials[t] = Canonical(acc);
  }
};

// dw[e] = +0: the weight gradient of an empty batch.
struct Conv2dZeroBody {
  float* dw;
  LS_HD void operator()(size_t e) const { dw[e] = 0.0f; }
};

// dw[e]: its group partials combined by the pairwise tree over adjacent groups, canonical.
struct Conv2dCombineGroupsBody {
  float* partials;
  size_t groups;
  float* dw;
  LS_HD void operator()(size_t e) const { dw[e] = Canonical(CombinePairwise(partials + e * groups, groups)); }
};

}  // namespace cuda
}  // namespace lockstep

#endif  // LOCKSTEP_CUDA_KERNELS_CONV_H_
