// Batch normalisation's gradient sums in one pass (simd::ChannelNormBackwardSums, the kernel
// table's channel_norm_backward_sums) give the bits of what they replace: dxhat = g * weight by
// the binary kernel, then ChannelSums of dxhat, of dxhat * xhat, of g * xhat and of g. On every
// target, at 1 and 2 threads, with and without the weight, with outputs left out, on planes that
// are whole rows of the reduction's lanes and planes that are not, blocks crossed within a sample
// and between samples, finite values (where the order shows in the bits) and special ones.
#include <doctest/doctest.h>

#include <vector>

#include "simd/elementwise.h"
#include "simd/reduce.h"
#include "tests/unit/float_bits.h"
#include "tests/unit/for_each_target.h"

namespace lockstep {
namespace {

struct Expected {
  std::vector<float> dxhat, sum_dxhat, sum_dxhat_xhat, sum_g_xhat, sum_g;
};

// The separate kernels.
Expected Separately(const std::vector<float>& g, const std::vector<float>& xhat, const float* weight, size_t samples,
                    size_t channels, size_t positions) {
  const size_t n = samples * channels * positions;
  Expected e{std::vector<float>(n), std::vector<float>(channels), std::vector<float>(channels),
             std::vector<float>(channels), std::vector<float>(channels)};
  std::vector<float> product(n);
  for (size_t s = 0; s < samples; ++s) {
    for (size_t c = 0; c < channels; ++c) {
      const size_t at = (s * channels + c) * positions;
      simd::BinaryScalarRight(simd::BinaryOp::kMul, g.data() + at, weight != nullptr ? weight[c] : 1.0f,
                              e.dxhat.data() + at, positions);
    }
  }
  simd::ChannelSums(e.dxhat.data(), samples, channels, positions, e.sum_dxhat.data());
  simd::Binary(simd::BinaryOp::kMul, e.dxhat.data(), xhat.data(), product.data(), n);
  simd::ChannelSums(product.data(), samples, channels, positions, e.sum_dxhat_xhat.data());
  simd::Binary(simd::BinaryOp::kMul, g.data(), xhat.data(), product.data(), n);
  simd::ChannelSums(product.data(), samples, channels, positions, e.sum_g_xhat.data());
  simd::ChannelSums(g.data(), samples, channels, positions, e.sum_g.data());
  return e;
}

size_t DifferingBits(const std::vector<float>& a, const std::vector<float>& b) {
  size_t differ = a.size() != b.size() ? 1 : 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) differ += testing::Bits(a[i]) != testing::Bits(b[i]);
  return differ;
}

TEST_CASE("batch normalisation's gradient sums in one pass equal the products and channel sums, bit for bit") {
  // [samples, channels, positions].
  // Planes of whole lane rows (read in place), of positions dividing the lanes (several blocks of
  // samples too: {300, 2, 32}, {4500, 2, 2}), and of other positions (gathered).
  const size_t shapes[][3] = {{32, 5, 4},  {3, 4, 7},   {2, 3, 4097}, {9, 2, 1024},  {5, 2, 2560},
                              {40, 3, 64}, {1, 70, 1},  {300, 2, 32}, {4500, 2, 2},  {7, 33, 16}};
  testing::ForEachTarget([&](const simd::Target&) {
    testing::ForOneAndTwoThreads([&](size_t) {
      for (const auto& s : shapes) {
        const size_t samples = s[0], channels = s[1], positions = s[2], n = samples * channels * positions;
        CAPTURE(samples);
        CAPTURE(channels);
        CAPTURE(positions);
        for (uint32_t special_every : {1u << 30, 13u}) {
          CAPTURE(special_every);
          const std::vector<float> g = testing::MixedValues(n, 1, special_every);
          const std::vector<float> xhat = testing::MixedValues(n, 2, special_every);
          const std::vector<float> weight = testing::MixedValues(channels, 3, special_every);
          for (const float* w : {weight.data(), static_cast<const float*>(nullptr)}) {
            const Expected want = Separately(g, xhat, w, samples, channels, positions);
            Expected got{std::vector<float>(n, 7.0f), std::vector<float>(channels, 7.0f),
                         std::vector<float>(channels, 7.0f), std::vector<float>(channels, 7.0f),
                         std::vector<float>(channels, 7.0f)};
            simd::ChannelNormSums a;
            a.samples = samples;
            a.channels = channels;
            a.positions = positions;
            a.g = g.data();
            a.xhat = xhat.data();
            a.weight = w;
            a.dxhat_out = got.dxhat.data();
            a.sum_dxhat = got.sum_dxhat.data();
            a.sum_dxhat_xhat = got.sum_dxhat_xhat.data();
            a.sum_g_xhat = got.sum_g_xhat.data();
            a.sum_g = got.sum_g.data();
            simd::ChannelNormBackwardSums(a);
            CHECK(DifferingBits(got.dxhat, want.dxhat) == 0);
            CHECK(DifferingBits(got.sum_dxhat, want.sum_dxhat) == 0);
            CHECK(DifferingBits(got.sum_dxhat_xhat, want.sum_dxhat_xhat) == 0);
            CHECK(DifferingBits(got.sum_g_xhat, want.sum_g_xhat) == 0);
            CHECK(DifferingBits(got.sum_g, want.sum_g) == 0);
            // With the other outputs left out, the one asked for is the same.
            std::vector<float> only(channels, 7.0f);
            a.dxhat_out = a.sum_dxhat = a.sum_dxhat_xhat = a.sum_g = nullptr;
            a.sum_g_xhat = only.data();
            simd::ChannelNormBackwardSums(a);
            CHECK(DifferingBits(only, want.sum_g_xhat) == 0);
          }
        }
      }
    });
  });
}

}  // namespace
}  // namespace lockstep
