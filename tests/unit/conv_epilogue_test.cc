// Conv2dNormActivation (inference's Conv -> BatchNorm -> Relu/Clamp/SiLU in one pass) gives the
// bits of the ops one after another: on every target, at 1 and 2 threads, through the direct kernels
// and both GEMM layouts, for grouped (depthwise) layers, with and without each part, and on
// special values (NaN, infinities, zeros of both signs, subnormals) in the input, the weights and
// the statistics. Where a gradient is needed it runs the three ops and so keeps their graph.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/ops.h"
#include "simd/conv_gemm.h"
#include "tests/unit/float_bits.h"
#include "tests/unit/for_each_target.h"
#include "tests/unit/tensor_values.h"

namespace lockstep {
namespace {

using Activation = ConvNormActivation::Activation;

Tensor Mixed(const Shape& shape, uint32_t seed, uint32_t special_every) {
  return Tensor::FromVector(shape, testing::MixedValues(static_cast<size_t>(NumElements(shape)), seed, special_every));
}

Tensor ThreeOps(const Tensor& x, const Tensor& w, const Tensor& b, const Conv2dOptions& o, const ConvNormActivation& a) {
  Tensor y = Conv2d(x, w, b, o);
  if (a.normalize) y = BatchNorm(y, a.running_mean, a.running_var, a.weight, a.bias, false, 0.1f, a.eps);
  if (a.activation == Activation::kRelu) y = Relu(y);
  if (a.activation == Activation::kClamp) y = Clamp(y, a.lo, a.hi);
  if (a.activation == Activation::kSilu) y = Mul(y, Sigmoid(y));
  return y;
}

struct Layer {
  const char* name;
  int64_t n, c_in, h, w, c_out, k, stride, pad, groups;
};

// A 3x3 layer (direct kernels), a 1x1 on a 7x7 plane and a 3x3 on 4x4 (the GEMM, weights as B
// and, with few positions against many channels, as A), depthwise 3x3 at stride 1 and 2, a
// batch of 2 across the tiles; a 1x1 on 8 x 6 (48 positions, whole vectors on every target, rows
// that end inside a vector: summed into y and finished in place).
const Layer kLayers[] = {
    {"1x1 in place", 2, 7, 8, 6, 11, 1, 1, 0, 1},
    {"3x3 direct", 1, 5, 11, 13, 10, 3, 1, 1, 1},        {"1x1 on 7x7 (GEMM)", 2, 24, 7, 7, 16, 1, 1, 0, 1},
    {"3x3 on 4x4 (GEMM, A)", 1, 16, 4, 4, 40, 3, 1, 1, 1}, {"depthwise 3x3", 1, 12, 9, 10, 12, 3, 1, 1, 12},
    {"depthwise 3x3 stride 2", 2, 8, 12, 11, 8, 3, 2, 1, 8}, {"2 groups, stride 2", 2, 6, 9, 9, 4, 3, 2, 0, 2},
};

TEST_CASE("conv2d_norm_activation equals conv2d, batch_norm and relu/clamp/silu one after another, bit for bit") {
  const float inf = __builtin_inff();
  testing::ForEachTarget([&](const simd::Target&) {
    testing::ForOneAndTwoThreads([&](size_t) {
      for (const Layer& l : kLayers) {
        CAPTURE(l.name);
        const Conv2dOptions o{l.stride, l.stride, l.pad, l.pad, 1, 1, l.groups};
        const Tensor x = Mixed({l.n, l.c_in, l.h, l.w}, 1, 97);
        const Tensor w = Mixed({l.c_out, l.c_in / l.groups, l.k, l.k}, 2, 53);
        const Tensor b = Mixed({l.c_out}, 3, 11);
        ConvNormActivation a;
        a.running_mean = Mixed({l.c_out}, 4, 13);
        a.running_var = Abs(Mixed({l.c_out}, 5, 17));
        a.weight = Mixed({l.c_out}, 6, 9);
        a.bias = Mixed({l.c_out}, 7, 9);
        a.eps = 1e-3f;
        for (int variant = 0; variant < 15; ++variant) {
          ConvNormActivation v = a;
          v.normalize = variant % 3 != 2;
          if (variant % 3 == 1) v.weight = v.bias = Tensor();  // batch_norm without affine parameters
          const Activation kinds[] = {Activation::kNone, Activation::kRelu, Activation::kClamp, Activation::kClamp,
                                      Activation::kSilu};
          v.activation = kinds[variant / 3];
          v.lo = variant == 9 ? -0.0f : 0.0f;
          v.hi = variant == 11 ? inf : 6.0f;
          const Tensor bias = variant % 2 == 0 ? b : Tensor();
          CAPTURE(variant);
          const Tensor fused = Conv2dNormActivation(x, w, bias, o, v);
          CHECK(testing::DifferingBits(fused, ThreeOps(x, w, bias, o, v)) == 0);
        }
      }
    });
  });
}

TEST_CASE("conv2d_norm_activation gives the same bits through the direct kernels and the GEMM") {
  const Tensor x = Mixed({2, 24, 7, 7}, 21, 89), w = Mixed({16, 24, 1, 1}, 22, 61), b = Mixed({16}, 23, 7);
  ConvNormActivation a;
  a.normalize = true;
  a.running_mean = Mixed({16}, 24, 13);
  a.running_var = Abs(Mixed({16}, 25, 17));
  a.weight = Mixed({16}, 26, 9);
  a.bias = Mixed({16}, 27, 9);
  a.activation = Activation::kClamp;
  a.lo = 0.0f;
  a.hi = 6.0f;
  const Conv2dOptions o;
  simd::SetConvPath(simd::ConvPath::kDirect);
  const Tensor direct = Conv2dNormActivation(x, w, b, o, a);
  simd::SetConvPath(simd::ConvPath::kGemm);
  const Tensor gemm = Conv2dNormActivation(x, w, b, o, a);
  simd::SetConvPath(simd::ConvPath::kByShape);
  CHECK(testing::DifferingBits(direct, gemm) == 0);
  CHECK(testing::DifferingBits(direct, ThreeOps(x, w, b, o, a)) == 0);
}

TEST_CASE("conv2d_norm_activation runs the three ops, and keeps their graph, where a gradient is needed") {
  Tensor x = testing::SeededValues({1, 3, 6, 6}, 31), w = testing::SeededValues({4, 3, 3, 3}, 32);
  ConvNormActivation a;
  a.normalize = true;
  a.running_mean = testing::SeededValues({4}, 33);
  a.running_var = Abs(testing::SeededValues({4}, 34));
  a.weight = testing::SeededValues({4}, 35);
  a.bias = testing::SeededValues({4}, 36);
  a.activation = Activation::kRelu;
  const Conv2dOptions o{1, 1, 1, 1, 1, 1, 1};
  w.RequiresGrad();
  const Tensor y = Conv2dNormActivation(x, w, Tensor(), o, a);
  REQUIRE(y.requires_grad());
  Sum(y).Backward();
  Tensor w2 = testing::SeededValues({4, 3, 3, 3}, 32);
  w2.RequiresGrad();
  Sum(ThreeOps(x, w2, Tensor(), o, a)).Backward();
  CHECK(testing::DifferingBits(w.grad(), w2.grad()) == 0);
  CHECK(testing::DifferingBits(y, ThreeOps(x, w2, Tensor(), o, a)) == 0);
}

TEST_CASE("conv2d_norm_activation refuses statistics of the wrong size, naming both") {
  const Tensor x = testing::SeededValues({1, 2, 5, 5}, 41), w = testing::SeededValues({3, 2, 3, 3}, 42);
  ConvNormActivation a;
  a.normalize = true;
  a.running_mean = testing::SeededValues({4}, 43);
  a.running_var = testing::SeededValues({3}, 44);
  CHECK_THROWS_WITH(Conv2dNormActivation(x, w, Tensor(), Conv2dOptions{}, a),
                    doctest::Contains("parameter shape [4] does not match 3 channels"));
}

}  // namespace
}  // namespace lockstep
