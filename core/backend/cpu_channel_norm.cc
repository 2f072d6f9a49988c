// The CPU's batch-normalisation kernels (kernel_list.h, ChannelNormCall): one run of `inner`
// floats per (sample, channel), all its steps in one vectorised pass (simd::NormalizeRun).

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
      simd::NormalizeRun(c.x + at, c.mean[ch], c.rstd[ch], c.weight != nullptr ? c.weight[ch] : 1.0f,
                         c.bias != nullptr ? c.bias[ch] : 0.0f, c.xhat_out != nullptr ? c.xhat_out + at : nullptr, c.out + at, c.inner);
    }
  });
}

void ChannelNormalizeBackward(const backend::ChannelNormCall& c) {
  const size_t runs = c.outer * c.channels;
  simd::ForEachItemChunk(runs, c.inner * 4, [&](size_t first, size_t count) {
    for (size_t run = first; run < first + count; ++run) {
      const size_t ch = run % c.channels, at = run * c.inner;
      const float mean_x = c.sum_x[ch] / c.count, mean_x_xhat = c.sum_x_xhat[ch] / c.count;
      simd::NormalizeRunBackward(c.x + at, c.xhat + at, mean_x, mean_x_xhat, c.rstd[ch], c.out + at, c.inner);
    }
  });
}

}  // namespace cpu_layers
}  // namespace lockstep
