// The CPU's batch-normalisation kernels (kernel_list.h, ChannelNormCall): one run of `inner`
// floats per (sample, channel), each step one vectorised pass of simd/elementwise.h.
#include <vector>

#include "core/backend/cpu_layers.h"
#include "simd/elementwise.h"
#include "simd/thread_pool.h"

namespace lockstep {
namespace cpu_layers {

void ChannelNormalize(const backend::ChannelNormCall& c) {
  const size_t runs = c.outer * c.channels;
  simd::ForEachItemChunk(runs, c.inner * 4, [&](size_t first, size_t count) {
    for (size_t run = first; run < first + count; ++run) {
      const size_t ch = run % c.channels, at = run * c.inner;
      float* xhat = c.xhat_out + at;
      float* out = c.out + at;
      simd::BinaryScalarRight(simd::BinaryOp::kSub, c.x + at, c.mean[ch], xhat, c.inner);
      simd::BinaryScalarRight(simd::BinaryOp::kMul, xhat, c.rstd[ch], xhat, c.inner);
      simd::BinaryScalarRight(simd::BinaryOp::kMul, xhat, c.weight != nullptr ? c.weight[ch] : 1.0f, out, c.inner);
      simd::BinaryScalarRight(simd::BinaryOp::kAdd, out, c.bias != nullptr ? c.bias[ch] : 0.0f, out, c.inner);
    }
  });
}

void ChannelNormalizeBackward(const backend::ChannelNormCall& c) {
  const size_t runs = c.outer * c.channels;
  simd::ForEachItemChunk(runs, c.inner * 4, [&](size_t first, size_t count) {
    std::vector<float> projected(c.inner);
    for (size_t run = first; run < first + count; ++run) {
      const size_t ch = run % c.channels, at = run * c.inner;
      const float mean_x = c.sum_x[ch] / c.count, mean_x_xhat = c.sum_x_xhat[ch] / c.count;
      float* dx = c.out + at;
      simd::BinaryScalarRight(simd::BinaryOp::kSub, c.x + at, mean_x, dx, c.inner);
      simd::BinaryScalarRight(simd::BinaryOp::kMul, c.xhat + at, mean_x_xhat, projected.data(), c.inner);
      simd::Binary(simd::BinaryOp::kSub, dx, projected.data(), dx, c.inner);
      simd::BinaryScalarRight(simd::BinaryOp::kMul, dx, c.rstd[ch], dx, c.inner);
    }
  });
}

}  // namespace cpu_layers
}  // namespace lockstep
