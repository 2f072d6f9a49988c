// The CPU's batch-normalisation kernels (kernel_list.h, ChannelNormCall): one run of `inner`
// floats per (sample, channel), all its steps in one vectorised pass (simd::NormalizeRun); planes
// of fewer than kTabledBelow floats (the late stages of mobile networks: 2 x 2 to 7 x 7) a sample
// at a time, with each channel's parameters repeated over its plane (simd::NormalizeTabled): a
// call per plane of four floats cost more than its arithmetic. SiLU runs over each run or sample
// once it is stored, while it is in the cache.

#include <vector>

#include "core/backend/cpu_layers.h"
#include "simd/elementwise.h"
#include "simd/scratch.h"
#include "simd/silu_forward.h"
#include "simd/thread_pool.h"

namespace lockstep {
namespace cpu_layers {

namespace {

constexpr size_t kTabledBelow = 64;

// values[c] repeated `inner` times, channel after channel; null stays null.
const float* Repeated(const float* values, size_t channels, size_t inner, std::vector<float>* table) {
  return values != nullptr ? simd::RepeatEach(values, 0.0f, channels, inner, table) : nullptr;
}

static_assert(simd::NormActivation::kRelu == backend::kConvRelu && simd::NormActivation::kClamp == backend::kConvClamp &&
                  simd::NormActivation::kSilu == backend::kConvSilu &&
                  simd::NormActivation::kHardtanh == backend::kConvHardtanh,
              "one numbering of the activations");

}  // namespace

void ChannelNormalize(const backend::ChannelNormCall& c) {
  const size_t runs = c.outer * c.channels;
  simd::NormActivation activation;
  activation.kind = static_cast<simd::NormActivation::Kind>(c.activation);
  activation.lo = c.lo;
  activation.hi = c.hi;
  const bool silu = activation.kind == simd::NormActivation::kSilu;  // over each run once stored
  if (c.inner > 0 && c.inner < kTabledBelow) {
    std::vector<float> tables[4];
    const float* mean = Repeated(c.mean, c.channels, c.inner, &tables[0]);
    const float* rstd = Repeated(c.rstd, c.channels, c.inner, &tables[1]);
    const float* weight = Repeated(c.weight, c.channels, c.inner, &tables[2]);
    const float* bias = Repeated(c.bias, c.channels, c.inner, &tables[3]);
    const size_t sample = c.channels * c.inner;
    simd::ForEachItemChunk(c.outer, sample, [&](size_t first, size_t count) {
      for (size_t n = first; n < first + count; ++n) {
        const size_t at = n * sample;
        simd::NormalizeTabled(c.x + at, mean, rstd, weight, bias, c.xhat_out != nullptr ? c.xhat_out + at : nullptr,
                              c.out + at, sample, activation);
        if (silu) simd::SiluInPlace(c.out + at, c.sigmoid_out != nullptr ? c.sigmoid_out + at : nullptr, sample);
      }
    });
    return;
  }
  simd::ForEachItemChunk(runs, c.inner * 4, [&](size_t first, size_t count) {
    for (size_t run = first; run < first + count; ++run) {
      const size_t ch = run % c.channels, at = run * c.inner;
      simd::NormalizeRun(c.x + at, c.mean[ch], c.rstd[ch], c.weight != nullptr ? c.weight[ch] : 1.0f,
                         c.bias != nullptr ? c.bias[ch] : 0.0f, c.xhat_out != nullptr ? c.xhat_out + at : nullptr, c.out + at, c.inner,
                         activation);
      if (silu) simd::SiluInPlace(c.out + at, c.sigmoid_out != nullptr ? c.sigmoid_out + at : nullptr, c.inner);
    }
  });
}

void ChannelNormalizeBackward(const backend::ChannelNormCall& c) {
  const size_t runs = c.outer * c.channels;
  std::vector<float> mean_x(c.channels), mean_x_xhat(c.channels);
  for (size_t ch = 0; ch < c.channels; ++ch) {
    mean_x[ch] = c.sum_x[ch] / c.count;
    mean_x_xhat[ch] = c.sum_x_xhat[ch] / c.count;
  }
  if (c.inner > 0 && c.inner < kTabledBelow) {
    std::vector<float> tables[3];
    const float* mean_g = Repeated(mean_x.data(), c.channels, c.inner, &tables[0]);
    const float* mean_g_xhat = Repeated(mean_x_xhat.data(), c.channels, c.inner, &tables[1]);
    const float* rstd = Repeated(c.rstd, c.channels, c.inner, &tables[2]);
    const size_t sample = c.channels * c.inner;
    simd::ForEachItemChunk(c.outer, sample, [&](size_t first, size_t count) {
      for (size_t n = first; n < first + count; ++n) {
        const size_t at = n * sample;
        simd::NormalizeBackwardTabled(c.x + at, c.xhat + at, mean_g, mean_g_xhat, rstd, c.out + at, sample);
      }
    });
    return;
  }
  simd::ForEachItemChunk(runs, c.inner * 4, [&](size_t first, size_t count) {
    for (size_t run = first; run < first + count; ++run) {
      const size_t ch = run % c.channels, at = run * c.inner;
      simd::NormalizeRunBackward(c.x + at, c.xhat + at, mean_x[ch], mean_x_xhat[ch], c.rstd[ch], c.out + at, c.inner);
    }
  });
}

}  // namespace cpu_layers
}  // namespace lockstep
