// A depthwise layer's forward pass and gradients with the channels as lanes (simd/conv_depthwise.h)
// give the bits of the group-by-group kernels (ConvPath::kDirect): on every target, at 1 and 2
// threads, for channel counts around the vector widths, strides, dilations, paddings, 1xk, 3x3,
// 5x5 and 7x7 kernels, output rows narrower than four, four to seven and eight or more outputs
// wide (the forward pass's row blocks), batches that span several groups of samples (the
// pairwise tree), bias and the fused epilogues (batch normalisation with ReLU, Clip or SiLU), and
// special values (NaN, infinities, zeros of both signs, subnormals) in the input, the weights and
// the gradient.
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
    {"5x5 pad 2, 20 channels, 16 wide", 2, 20, 9, 16, 5, 5, 1, 2, 1, 32},
    {"3x3 stride 2, 40 channels, 17 outputs wide", 1, 40, 20, 33, 3, 3, 2, 1, 1, 32},
    {"7x7 pad 3, 18 channels", 1, 18, 9, 9, 7, 7, 1, 3, 1, 32},
    {"3x3 stride 3 on 4x4, 5 channels (one output)", 2, 5, 4, 4, 3, 3, 3, 0, 1, 32},
};

simd::ConvShape ShapeOf(const Layer& l) {
  return testing::ConvShapeOf(l.samples, 1, l.h, l.w, 1, l.kh, l.kw, l.stride, l.pad, l.pad, l.dilation, l.channels);
}

// f(layer, shape) for every layer, on every target, at 1 and 2 threads.
template <class F>
void ForEachLayer(const F& f) {
  testing::ForEachTarget([&](const simd::Target&) {
    testing::ForOneAndTwoThreads([&](size_t) {
      for (const Layer& l : kLayers) {
        CAPTURE(l.name);
        f(l, ShapeOf(l));
      }
    });
  });
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
  ForEachLayer([&](const Layer& l, const simd::ConvShape& s) {
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
  });
}

// The forward pass with and without bias, with each fused epilogue.
std::vector<std::vector<float>> Forward(const simd::ConvShape& shape, const Layer& l, const std::vector<float>& x,
                                        const std::vector<float>& w, const std::vector<float>& per_channel) {
  std::vector<std::vector<float>> outputs;
  const float* mean = per_channel.data();
  const float* rstd = per_channel.data() + l.channels;
  const float* weight = per_channel.data() + 2 * l.channels;
  const float* bias = per_channel.data() + 3 * l.channels;
  const simd::ConvActivation activations[] = {simd::ConvActivation::kNone, simd::ConvActivation::kRelu,
                                              simd::ConvActivation::kClamp, simd::ConvActivation::kSilu};
  for (int with_bias = 0; with_bias < 2; ++with_bias) {
    for (int e = -1; e < 4; ++e) {
      simd::ConvEpilogue epilogue;
      if (e >= 0) {
        epilogue.mean = mean;
        epilogue.rstd = rstd;
        epilogue.weight = e == 1 ? nullptr : weight;
        epilogue.bias = bias;
        epilogue.activation = activations[e];
        epilogue.lo = 0.0f;
        epilogue.hi = 6.0f;
      }
      simd::ConvShape s = shape;
      s.epilogue = e >= 0 ? &epilogue : nullptr;
      std::vector<float> y(l.samples * s.y_sample_stride, 12345.0f);  // every element must be written
      simd::ConvForward(s, x.data(), w.data(), with_bias ? bias : nullptr, y.data());
      outputs.push_back(y);
    }
  }
  return outputs;
}

TEST_CASE("a depthwise forward pass with the channels as lanes equals the group-by-group kernels, bit for bit") {
  ForEachLayer([&](const Layer& l, const simd::ConvShape& s) {
    for (uint32_t special_every : {1000000u, 13u}) {
      CAPTURE(special_every);
      const std::vector<float> x = testing::MixedValues(l.samples * s.x_sample_stride, 4, special_every);
      const std::vector<float> w = testing::MixedValues(l.channels * l.kh * l.kw, 5, special_every);
      std::vector<float> per_channel = testing::MixedValues(4 * l.channels, 6, special_every);
      for (size_t c = l.channels; c < 2 * l.channels; ++c) per_channel[c] = 0.5f + 0.25f * static_cast<float>(c % 3);
      REQUIRE(simd::ConvDepthwiseForward(s));
      const std::vector<std::vector<float>> lanes = Forward(s, l, x, w, per_channel);
      simd::SetConvPath(simd::ConvPath::kDirect);
      REQUIRE_FALSE(simd::ConvDepthwiseForward(s));
      const std::vector<std::vector<float>> groups = Forward(s, l, x, w, per_channel);
      simd::SetConvPath(simd::ConvPath::kByShape);
      for (size_t i = 0; i < lanes.size(); ++i) {
        CAPTURE(i);
        CHECK(DifferingBits(lanes[i], groups[i]) == 0);
      }
    }
  });
}

TEST_CASE("a depthwise layer on a large plane keeps the planes-as-lanes forward kernels") {
  const simd::ConvShape large = testing::ConvShapeOf(1, 1, 112, 112, 1, 3, 3, 1, 1, 1, 1, 32);
  CHECK(simd::ConvDepthwise(large));
  CHECK_FALSE(simd::ConvDepthwiseForward(large));
  const simd::ConvShape small = testing::ConvShapeOf(1, 1, 56, 56, 1, 3, 3, 1, 1, 1, 1, 32);
  CHECK(simd::ConvDepthwiseForward(small));
}

}  // namespace
}  // namespace lockstep
