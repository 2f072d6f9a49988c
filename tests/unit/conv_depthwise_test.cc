// A depthwise layer's gradients with the channels as lanes (simd/conv_depthwise.h) give the bits
// of the group-by-group kernels (ConvPath::kDirect): on every target, at 1 and 2 threads, for
// channel counts around the vector widths, strides, dilations, paddings, 1xk and 5x5 kernels,
// batches that span several groups of samples (the pairwise tree), and special values (NaN,
// infinities, zeros of both signs, subnormals) in the input, the weights and the gradient.
#include <doctest/doctest.h>

#include <vector>

#include "simd/conv.h"
#include "simd/conv_depthwise.h"
#include "simd/conv_gemm.h"
#include "tests/unit/conv_shape.h"
#include "tests/unit/float_bits.h"
#include "tests/unit/for_each_target.h"

namespace lockstep {
namespace {

struct Layer {
  const char* name;
  size_t samples, channels, h, w, kh, kw, stride, pad, dilation, samples_per_group;
};

const Layer kLayers[] = {
    {"3x3, 12 channels", 1, 12, 9, 10, 3, 3, 1, 1, 1, 32},
    {"3x3 stride 2, 37 channels, 5 samples in groups of 2", 5, 37, 12, 11, 3, 3, 2, 1, 1, 2},
    {"5x5 stride 2 pad 2, 17 channels", 3, 17, 11, 13, 5, 5, 2, 2, 1, 32},
    {"3x3 dilation 2, 3 channels", 2, 3, 10, 9, 3, 3, 1, 2, 2, 1},
    {"1x3 no padding, 64 channels", 4, 64, 6, 7, 1, 3, 1, 0, 1, 3},
    {"3x3 on 2x2, 33 channels, 37 samples", 37, 33, 2, 2, 3, 3, 1, 1, 1, 32},
    {"3x3 on 4x5, 300 channels (several vectors a task), 3 samples in groups of 2", 3, 300, 4, 5, 3, 3, 1, 1, 1, 2},
};

simd::ConvShape ShapeOf(const Layer& l) {
  return testing::ConvShapeOf(l.samples, 1, l.h, l.w, 1, l.kh, l.kw, l.stride, l.pad, l.pad, l.dilation, l.channels);
}

size_t DifferingBits(const std::vector<float>& a, const std::vector<float>& b) {
  size_t differ = a.size() != b.size() ? 1 : 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) differ += testing::Bits(a[i]) != testing::Bits(b[i]);
  return differ;
}

struct Gradients {
  std::vector<float> dx, dw;
};

Gradients Run(const simd::ConvShape& s, const Layer& l, const std::vector<float>& x, const std::vector<float>& w,
              const std::vector<float>& dy) {
  // Sentinels: every element must be written.
  Gradients g{std::vector<float>(x.size(), 12345.0f), std::vector<float>(w.size(), 12345.0f)};
  simd::ConvInputGrad(s, dy.data(), w.data(), g.dx.data());
  simd::ConvWeightGrad(s, dy.data(), x.data(), l.samples_per_group, g.dw.data());
  return g;
}

TEST_CASE("depthwise gradients with the channels as lanes equal the group-by-group kernels, bit for bit") {
  testing::ForEachTarget([&](const simd::Target&) {
    testing::ForOneAndTwoThreads([&](size_t) {
      for (const Layer& l : kLayers) {
        CAPTURE(l.name);
        const simd::ConvShape s = ShapeOf(l);
        for (uint32_t special_every : {0u, 13u}) {
          CAPTURE(special_every);
          // special_every 0: finite values only (the stride-1 direct kernel's fast path).
          auto values = [&](size_t n, uint32_t seed) {
            std::vector<float> v = testing::MixedValues(n, seed, special_every == 0 ? 1000000u : special_every);
            if (special_every == 0) {
              for (float& f : v) f = f != f || f - f != 0.0f ? 0.5f : f;
            }
            return v;
          };
          const std::vector<float> x = values(l.samples * s.x_sample_stride, 1);
          const std::vector<float> w = values(l.channels * l.kh * l.kw, 2);
          const std::vector<float> dy = values(l.samples * s.y_sample_stride, 3);
          REQUIRE(simd::ConvDepthwise(s));
          const Gradients lanes = Run(s, l, x, w, dy);
          simd::SetConvPath(simd::ConvPath::kDirect);
          REQUIRE_FALSE(simd::ConvDepthwise(s));
          const Gradients groups = Run(s, l, x, w, dy);
          simd::SetConvPath(simd::ConvPath::kByShape);
          CHECK(DifferingBits(lanes.dx, groups.dx) == 0);
          CHECK(DifferingBits(lanes.dw, groups.dw) == 0);
        }
      }
    });
  });
}

}  // namespace
}  // namespace lockstep
