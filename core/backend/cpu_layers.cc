#include "core/backend/cpu_layers.h"

#include <string.h>

#include <algorithm>
#include <vector>

#include "simd/conv.h"
#include "simd/elementwise.h"
#include "simd/pool.h"
#include "simd/thread_pool.h"

namespace lockstep {
namespace cpu_layers {

namespace {

simd::BinaryOp B(backend::BinaryOp op) { return static_cast<simd::BinaryOp>(op); }

bool IsWhole(const backend::BroadcastOperand& o, size_t n) { return o.div == 1 && o.mod == n; }

// Elements [first, first + count) of the operand expanded into buffer.
const float* ExpandRange(const backend::BroadcastOperand& o, size_t first, size_t count, std::vector<float>* buffer) {
  if (buffer->size() < count) buffer->resize(count);
  float* out = buffer->data();
  // Run by run: element e holds x[(e / div) % mod].
  size_t run = first / o.div, in_run = first % o.div, index = run % o.mod;
  for (size_t i = 0; i < count;) {
    const size_t take = std::min(o.div - in_run, count - i);
    std::fill(out + i, out + i + take, o.x[index]);
    i += take;
    in_run = 0;
    if (++index == o.mod) index = 0;
  }
  return out;
}

float CanonicalSum(float a, float b) {
  const float s = a + b;
  return s != s ? __builtin_nanf("") : s;
}

}  // namespace

void BinaryBroadcast(backend::BinaryOp op, backend::BroadcastOperand a, backend::BroadcastOperand b,
                     float* out, size_t n) {
  if (n == 0) return;
  const bool a_whole = IsWhole(a, n), b_whole = IsWhole(b, n);
  if (a_whole && b_whole) return simd::Binary(B(op), a.x, b.x, out, n);
  if (a_whole && b.mod == 1) return simd::BinaryScalarRight(B(op), a.x, b.x[0], out, n);
  if (b_whole && a.mod == 1) return simd::BinaryScalarLeft(B(op), a.x[0], b.x, out, n);
  // Blocks long enough to be worth a kernel call each.
  constexpr size_t kMinRun = 256;
  if (a_whole && b.div == 1 && n % b.mod == 0 && b.mod >= kMinRun) {  // a trailing block of b, repeated
    for (size_t c = 0; c < n; c += b.mod) simd::Binary(B(op), a.x + c, b.x, out + c, b.mod);
    return;
  }
  if (b_whole && a.div == 1 && n % a.mod == 0 && a.mod >= kMinRun) {
    for (size_t c = 0; c < n; c += a.mod) simd::Binary(B(op), a.x, b.x + c, out + c, a.mod);
    return;
  }
  // One value of b per run of b.div elements (a per-channel value over [n, c, h, w]).
  constexpr size_t kMinScalarRun = 16;
  if (a_whole && b.div >= kMinScalarRun && n % b.div == 0) {
    return simd::BinaryScalarRuns(B(op), a.x, b.x, b.mod, b.div, false, out, n);
  }
  if (b_whole && a.div >= kMinScalarRun && n % a.div == 0) {
    return simd::BinaryScalarRuns(B(op), b.x, a.x, a.mod, a.div, true, out, n);
  }
  // Short runs (batch normalisation's per-channel values over a late stage's 2x2 planes were a
  // kernel call per 4 elements) and anything else: chunks with the broadcast operands expanded
  // into buffers, on the pool. Each element's operation is the same as the whole-operand kernel's.
  constexpr size_t kChunk = 4096;
  simd::ForEachItemChunk((n + kChunk - 1) / kChunk, kChunk, [&](size_t first_chunk, size_t chunks) {
    thread_local std::vector<float> ea, eb;
    for (size_t chunk = first_chunk; chunk < first_chunk + chunks; ++chunk) {
      const size_t first = chunk * kChunk, count = std::min(kChunk, n - first);
      const float* pa = a.x + first;
      const float* pb = b.x + first;
      if (!a_whole) pa = ExpandRange(a, first, count, &ea);
      if (!b_whole) pb = ExpandRange(b, first, count, &eb);
      simd::Binary(B(op), pa, pb, out + first, count);
    }
  });
}

namespace {

void StridedCopyRange(const backend::StridedCopyCall& c) {
  const int rank = c.rank;
  const uint32_t* src = static_cast<const uint32_t*>(c.src);
  uint32_t* dst = static_cast<uint32_t*>(c.dst);
  if (rank == 0) {
    dst[0] = src[0];
    return;
  }
  // An odometer over every dimension but the last; the last is one strided run.
  const int64_t inner = c.shape[rank - 1], src_step = c.src_strides[rank - 1], dst_step = c.dst_strides[rank - 1];
  int64_t index[backend::kMaxCopyRank] = {0};
  int64_t s = 0, t = 0;
  while (true) {
    if (src_step == 1 && dst_step == 1) {
      memcpy(dst + t, src + s, static_cast<size_t>(inner) * 4);
    } else {
      for (int64_t k = 0; k < inner; ++k) dst[t + k * dst_step] = src[s + k * src_step];
    }
    int d = rank - 2;
    for (; d >= 0; --d) {
      s += c.src_strides[d];
      t += c.dst_strides[d];
      if (++index[d] < c.shape[d]) break;
      s -= c.src_strides[d] * c.shape[d];
      t -= c.dst_strides[d] * c.shape[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace

void StridedCopy(const backend::StridedCopyCall& c) {
  int64_t n = 1;
  for (int d = 0; d < c.rank; ++d) {
    if (c.shape[d] == 0) return;
    n *= c.shape[d];
  }
  // Large copies run on the thread pool in ranges of the outermost dimension: each range writes
  // its own elements of the destination (a tensor never holds one element twice).
  constexpr int64_t kChunkElements = int64_t{1} << 15;
  if (c.rank == 0 || c.shape[0] < 2 || n < 2 * kChunkElements) {
    StridedCopyRange(c);
    return;
  }
  const size_t per_index = static_cast<size_t>(n / c.shape[0]);
  simd::ForEachItemChunk(static_cast<size_t>(c.shape[0]), per_index, [&](size_t first, size_t count) {
    backend::StridedCopyCall part = c;
    part.shape[0] = static_cast<int64_t>(count);
    part.src = static_cast<const uint32_t*>(c.src) + static_cast<int64_t>(first) * c.src_strides[0];
    part.dst = static_cast<uint32_t*>(c.dst) + static_cast<int64_t>(first) * c.dst_strides[0];
    StridedCopyRange(part);
  });
}

namespace {

simd::ConvShape ShapeOf(const backend::Conv2dCall& call) {
  const backend::ConvCall& c = call.conv;
  simd::ConvShape s;
  s.samples = static_cast<size_t>(c.samples);
  s.c_in = static_cast<size_t>(c.c_in_group);
  s.h = static_cast<size_t>(c.h); s.w = static_cast<size_t>(c.w);
  s.c_out = static_cast<size_t>(call.c_out_group);
  s.kh = static_cast<size_t>(c.kh); s.kw = static_cast<size_t>(c.kw);
  s.h_out = static_cast<size_t>(c.h_out); s.w_out = static_cast<size_t>(c.w_out);
  s.stride_h = static_cast<size_t>(c.stride_h); s.stride_w = static_cast<size_t>(c.stride_w);
  s.pad_h = static_cast<size_t>(c.padding_h); s.pad_w = static_cast<size_t>(c.padding_w);
  s.dilation_h = static_cast<size_t>(c.dilation_h); s.dilation_w = static_cast<size_t>(c.dilation_w);
  s.x_sample_stride = static_cast<size_t>(c.sample_stride);
  s.y_sample_stride = static_cast<size_t>(call.out_sample_stride);
  s.groups = static_cast<size_t>(call.groups);
  return s;
}


}  // namespace

void Conv2dForward(const backend::Conv2dCall& call, const float* x, const float* w, const float* bias, float* y) {
  simd::ConvShape s = ShapeOf(call);
  const backend::ConvEpilogue& from = call.epilogue;
  simd::ConvEpilogue epilogue;
  if (from.mean != nullptr || from.activation != backend::kConvNoActivation) {
    epilogue.mean = from.mean;
    epilogue.rstd = from.rstd;
    epilogue.weight = from.weight;
    epilogue.bias = from.bias;
    epilogue.activation = from.activation == backend::kConvRelu    ? simd::ConvActivation::kRelu
                          : from.activation == backend::kConvClamp ? simd::ConvActivation::kClamp
                          : from.activation == backend::kConvSilu  ? simd::ConvActivation::kSilu
                                                                   : simd::ConvActivation::kNone;
    epilogue.lo = from.lo;
    epilogue.hi = from.hi;
    s.epilogue = &epilogue;
  }
  simd::ConvForward(s, x, w, bias, y);
}

void Conv2dInputGrad(const backend::Conv2dCall& call, const float* dy, const float* w, float* dx) {
  simd::ConvInputGrad(ShapeOf(call), dy, w, dx);
}

void Conv2dWeightGrad(const backend::Conv2dCall& call, const float* dy, const float* x, float* dw) {
  simd::ConvWeightGrad(ShapeOf(call), dy, x, static_cast<size_t>(call.samples_per_group), dw);
}

void MaxPoolForward(const backend::PoolCall& p, const float* x, float* out, int64_t* argmax) {
  // The 2x2 kernel takes whole windows only (not a ceil_mode window past the input's end).
  if (p.kernel_h == 2 && p.kernel_w == 2 && p.stride_h == 2 && p.stride_w == 2 && p.padding_h == 0 &&
      p.padding_w == 0 && 2 * p.h_out <= p.h && 2 * p.w_out <= p.w) {
    return simd::MaxPool2x2(x, static_cast<size_t>(p.planes), static_cast<size_t>(p.h), static_cast<size_t>(p.w),
                            static_cast<size_t>(p.h_out), static_cast<size_t>(p.w_out), out, argmax);
  }
  simd::MaxPoolShape s;
  s.planes = static_cast<size_t>(p.planes);
  s.h = static_cast<size_t>(p.h);
  s.w = static_cast<size_t>(p.w);
  s.h_out = static_cast<size_t>(p.h_out);
  s.w_out = static_cast<size_t>(p.w_out);
  s.kh = static_cast<size_t>(p.kernel_h);
  s.kw = static_cast<size_t>(p.kernel_w);
  s.stride_h = static_cast<size_t>(p.stride_h);
  s.stride_w = static_cast<size_t>(p.stride_w);
  s.pad_h = static_cast<size_t>(p.padding_h);
  s.pad_w = static_cast<size_t>(p.padding_w);
  simd::MaxPool(s, x, out, argmax);
}

void MaxPoolBackward(const backend::PoolCall& p, const float* grad, const int64_t* argmax, float* dx) {
  const int64_t per_plane = p.h_out * p.w_out, plane_size = p.h * p.w;
  // Planes are independent (each is zeroed, then added into in increasing output order), so
  // groups of planes (floats read and written) run on the thread pool.
  const size_t work = static_cast<size_t>(per_plane + plane_size);
  simd::ForEachItemChunk(static_cast<size_t>(p.planes), work, [&](size_t first, size_t count) {
    for (int64_t plane = static_cast<int64_t>(first); plane < static_cast<int64_t>(first + count); ++plane) {
      float* target = dx + plane * plane_size;
      std::fill(target, target + plane_size, 0.0f);
      for (int64_t q = 0; q < per_plane; ++q) {
        const int64_t at = plane * per_plane + q;
        target[argmax[at]] = CanonicalSum(target[argmax[at]], grad[at]);
      }
    }
  });
}

void GatherRows(const float* table, const int64_t* ids, size_t count, size_t dim, float* out) {
  for (size_t i = 0; i < count; ++i) {
    memcpy(out + i * dim, table + static_cast<size_t>(ids[i]) * dim, dim * sizeof(float));
  }
}

void ScatterAddRows(const int64_t* ids, size_t count, size_t dim, const float* grad, float* table_grad) {
  for (size_t i = 0; i < count; ++i) {  // rows accumulate in index order
    float* row = table_grad + static_cast<size_t>(ids[i]) * dim;
    simd::Binary(simd::BinaryOp::kAdd, row, grad + i * dim, row, dim);
  }
}

namespace {
float Canonical(float x) { return x != x ? __builtin_nanf("") : x; }
}  // namespace

void NllForward(const float* log_probs, const int64_t* targets, size_t n, size_t c, int64_t ignore_index,
                float* losses) {
  for (size_t i = 0; i < n; ++i) {
    const int64_t t = targets[i];
    losses[i] = t == ignore_index ? 0.0f : Canonical(-log_probs[i * c + static_cast<size_t>(t)]);
  }
}

void NllBackward(const int64_t* targets, size_t n, size_t c, int64_t ignore_index, const float* grad,
                 size_t grad_step, float divisor, float* grad_log_probs) {
  for (size_t i = 0; i < n; ++i) {
    const int64_t t = targets[i];
    if (t == ignore_index) continue;
    grad_log_probs[i * c + static_cast<size_t>(t)] = Canonical(-(grad[i * grad_step] / divisor));
  }
}

}  // namespace cpu_layers
}  // namespace lockstep
