// Data-movement kernel bodies of the layers (core/backend/kernel_table.h): broadcast arithmetic,
// strided copies, im2col / col2im, max pooling, embedding rows. Copies move bits unchanged; every
// addition stores the canonical NaN.
#ifndef LOCKSTEP_CUDA_KERNELS_LAYERS_H_
#define LOCKSTEP_CUDA_KERNELS_LAYERS_H_

#include "core/backend/kernel_table.h"
#include "cuda/kernels/elementwise.h"
#include "cuda/kernels/portable.h"
#include "cuda/kernels/reduce.h"

namespace lockstep {
namespace cuda {

using backend::BroadcastOperand;
using backend::ConvCall;
using backend::PoolCall;
using backend::StridedCopyCall;

LS_HD float At(const BroadcastOperand& o, size_t i) { return o.x[(i / o.div) % o.mod]; }

struct BinaryBroadcastBody {
  BinaryOp op;
  BroadcastOperand a, b;
  float* out;
  LS_HD void operator()(size_t i) const { out[i] = ApplyBinary(op, At(a, i), At(b, i)); }
};

struct FillBody {
  uint32_t word;
  uint32_t* out;
  LS_HD void operator()(size_t i) const { out[i] = word; }
};

// Element i of the index space (row-major), copied as 32-bit words.
struct StridedCopyBody {
  StridedCopyCall c;
  LS_HD void operator()(size_t i) const {
    int64_t src = 0, dst = 0;
    size_t rest = i;
    for (int d = c.rank - 1; d >= 0; --d) {
      const int64_t index = static_cast<int64_t>(rest % static_cast<size_t>(c.shape[d]));
      rest /= static_cast<size_t>(c.shape[d]);
      src += index * c.src_strides[d];
      dst += index * c.dst_strides[d];
    }
    static_cast<uint32_t*>(c.dst)[dst] = static_cast<const uint32_t*>(c.src)[src];
  }
};

// One column entry: t over (sample, row (c, i, j), position (oy, ox)).
struct Im2ColBody {
  ConvCall g;
  const float* x;
  float* cols;
  LS_HD void operator()(size_t t) const {
    const int64_t positions = g.h_out * g.w_out, k = g.c_in_group * g.kh * g.kw;
    const int64_t s = static_cast<int64_t>(t) / (k * positions), rest = static_cast<int64_t>(t) % (k * positions);
    const int64_t r = rest / positions, q = rest % positions;
    const int64_t c = r / (g.kh * g.kw), i = (r / g.kw) % g.kh, j = r % g.kw;
    const int64_t y = (q / g.w_out) * g.stride_h - g.padding_h + i * g.dilation_h;
    const int64_t xx = (q % g.w_out) * g.stride_w - g.padding_w + j * g.dilation_w;
    const bool inside = y >= 0 && y < g.h && xx >= 0 && xx < g.w;
    cols[s * positions + r * g.ld + q] = inside ? x[s * g.sample_stride + (c * g.h + y) * g.w + xx] : 0.0f;
  }
};

// The output index o with o * stride - padding + offset == at, or -1.
LS_HD int64_t SourceIndex(int64_t at, int64_t stride, int64_t padding, int64_t offset, int64_t count) {
  const int64_t num = at + padding - offset;
  if (num < 0 || num % stride != 0 || num / stride >= count) return -1;
  return num / stride;
}

// One input-gradient element: t over (sample, channel, y, x); adds its entries in (i, j) order.
struct Col2ImBody {
  ConvCall g;
  const float* cols;
  float* dx;
  LS_HD void operator()(size_t t) const {
    const int64_t plane = g.h * g.w, per_sample = g.c_in_group * plane, positions = g.h_out * g.w_out;
    const int64_t s = static_cast<int64_t>(t) / per_sample, rest = static_cast<int64_t>(t) % per_sample;
    const int64_t c = rest / plane, y = (rest % plane) / g.w, xx = rest % g.w;
    float* target = dx + s * g.sample_stride + rest;
    float acc = *target;
    for (int64_t i = 0; i < g.kh; ++i) {
      const int64_t oy = SourceIndex(y, g.stride_h, g.padding_h, i * g.dilation_h, g.h_out);
      if (oy < 0) continue;
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t ox = SourceIndex(xx, g.stride_w, g.padding_w, j * g.dilation_w, g.w_out);
        if (ox < 0) continue;
        const int64_t row = (c * g.kh + i) * g.kw + j;
        acc = Canonical(acc + cols[s * positions + row * g.ld + oy * g.w_out + ox]);
      }
    }
    *target = acc;
  }
};

struct MaxPoolForwardBody {
  PoolCall p;
  const float* x;
  float* out;
  int64_t* argmax;
  LS_HD void operator()(size_t t) const {
    const int64_t per_plane = p.h_out * p.w_out;
    const int64_t plane = static_cast<int64_t>(t) / per_plane, q = static_cast<int64_t>(t) % per_plane;
    const int64_t oy = q / p.w_out, ox = q % p.w_out;
    const float* in = x + plane * p.h * p.w;
    int64_t best = -1;
    for (int64_t i = 0; i < p.kernel_h; ++i) {
      const int64_t y = oy * p.stride_h - p.padding_h + i;
      if (y < 0 || y >= p.h) continue;
      for (int64_t j = 0; j < p.kernel_w; ++j) {
        const int64_t xx = ox * p.stride_w - p.padding_w + j;
        if (xx < 0 || xx >= p.w) continue;
        if (best < 0 || GreaterByContract(in[y * p.w + xx], in[best])) best = y * p.w + xx;
      }
    }
    out[t] = Canonical(in[best]);
    if (argmax != nullptr) argmax[t] = best;
  }
};

// One plane: +0, then its output gradients added at their argmax in increasing output order.
struct MaxPoolBackwardBody {
  PoolCall p;
  const float* grad;
  const int64_t* argmax;
  float* dx;
  LS_HD void operator()(size_t plane) const {
    const int64_t per_plane = p.h_out * p.w_out;
    float* target = dx + static_cast<int64_t>(plane) * p.h * p.w;
    for (int64_t e = 0; e < p.h * p.w; ++e) target[e] = 0.0f;
    for (int64_t q = 0; q < per_plane; ++q) {
      const int64_t at = static_cast<int64_t>(plane) * per_plane + q;
      target[argmax[at]] = Canonical(target[argmax[at]] + grad[at]);
    }
  }
};

struct GatherRowsBody {
  const float* table;
  const int64_t* ids;
  size_t dim;
  float* out;
  LS_HD void operator()(size_t t) const {
    const size_t i = t / dim, k = t % dim;
    out[t] = table[static_cast<size_t>(ids[i]) * dim + k];
  }
};

// One column k of the table gradient: rows accumulate in index order.
struct ScatterAddRowsBody {
  const int64_t* ids;
  size_t count, dim;
  const float* grad;
  float* table_grad;
  LS_HD void operator()(size_t k) const {
    for (size_t i = 0; i < count; ++i) {
      float& target = table_grad[static_cast<size_t>(ids[i]) * dim + k];
      target = Canonical(target + grad[i * dim + k]);
    }
  }
};

struct NllForwardBody {
  const float* log_probs;
  const int64_t* targets;
  size_t c;
  int64_t ignore_index;
  float* losses;
  LS_HD void operator()(size_t i) const {
    const int64_t t = targets[i];
    losses[i] = t == ignore_index ? 0.0f : Canonical(-log_probs[i * c + static_cast<size_t>(t)]);
  }
};

struct NllBackwardBody {
  const int64_t* targets;
  size_t c;
  int64_t ignore_index;
  const float* grad;
  size_t grad_step;
  float divisor;
  float* grad_log_probs;
  LS_HD void operator()(size_t i) const {
    const int64_t t = targets[i];
    if (t == ignore_index) return;
    grad_log_probs[i * c + static_cast<size_t>(t)] = Canonical(-(grad[i * grad_step] / divisor));
  }
};

}  // namespace cuda
}  // namespace lockstep

#endif  // LOCKSTEP_CUDA_KERNELS_LAYERS_H_
