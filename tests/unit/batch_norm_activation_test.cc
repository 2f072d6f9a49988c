// BatchNorm with an activation (the Relu, Clamp, SiLU or Hardtanh applied as the output is stored, and its gradient
// folded into the normalisation's backward sums) gives the bits of BatchNorm, then that op:
// the output, the running statistics and the gradients of x, weight and bias, on every target, at 1
// and 2 threads, in training and evaluation, with and without the affine parameters, over planes
// that take each path of the kernels (whole rows of the reduction's lanes read in place, planes
// dividing them, other planes gathered, runs with tails), with values at the bounds (weight 0 puts
// y exactly on 0, -0 or 6) and special values in x and in the incoming gradient.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/ops.h"
#include "tests/unit/float_bits.h"
#include "tests/unit/for_each_target.h"
#include "tests/unit/tensor_values.h"

namespace lockstep {
namespace {

using Kind = BatchNormActivation::Kind;

struct Run {
  Tensor y, running_mean, running_var, dx, dweight, dbias;
};

// x of `shape` with channel 1 holding a NaN and an infinity (in evaluation; in training the
// channel's statistics are NaN, every y of it NaN).
Tensor Input(const Shape& shape) {
  Tensor x = testing::SeededValues(shape, 11);
  std::vector<float> v = x.ToVector();
  const int64_t per_channel = NumElements(shape) / (shape[0] * shape[1]);
  v[static_cast<size_t>(per_channel)] = __builtin_nanf("");
  v[static_cast<size_t>(per_channel + per_channel / 2)] = __builtin_inff();
  return Tensor::FromVector(shape, v);
}

// Channel 0 of weight is 0 with bias 0 (y is +0 or -0 + 0 = +0), channel 2 weight 0 and bias 6
// (y = 6 exactly, a bound), channel 3 weight 0 and bias -0 (y = -0 where xhat < 0).
void AffineAtBounds(Tensor* weight, Tensor* bias) {
  std::vector<float> w = weight->ToVector(), b = bias->ToVector();
  w[0] = w[2] = w[3] = 0.0f;
  b[0] = 0.0f;
  b[2] = 6.0f;
  b[3] = -0.0f;
  *weight = Tensor::FromVector(weight->shape(), w);
  *bias = Tensor::FromVector(bias->shape(), b);
}

Run Forward(const Shape& shape, bool training, bool affine, const BatchNormActivation& after, bool fused) {
  const int64_t c = shape[1];
  Tensor x = Input(shape), weight, bias;
  if (affine) {
    weight = testing::SeededValues({c}, 12);
    bias = testing::SeededValues({c}, 13);
    AffineAtBounds(&weight, &bias);
    weight.RequiresGrad();
    bias.RequiresGrad();
  }
  x.RequiresGrad();
  Run r;
  r.running_mean = testing::SeededValues({c}, 14);
  r.running_var = Abs(testing::SeededValues({c}, 15));
  if (fused) {
    r.y = BatchNorm(x, r.running_mean, r.running_var, weight, bias, training, 0.1f, 1e-3f, after);
  } else {
    r.y = BatchNorm(x, r.running_mean, r.running_var, weight, bias, training, 0.1f, 1e-3f);
    switch (after.kind) {
      case Kind::kRelu: r.y = Relu(r.y); break;
      case Kind::kSilu: r.y = Silu(r.y); break;
      case Kind::kHardtanh: r.y = Hardtanh(r.y, after.lo, after.hi); break;
      default: r.y = Clamp(r.y, after.lo, after.hi);
    }
  }
  // The gradient reaching y: mixed values, every special class among them.
  const Tensor g = Tensor::FromVector(shape, testing::MixedValues(static_cast<size_t>(NumElements(shape)), 16, 13));
  Sum(Mul(r.y, g)).Backward();
  r.dx = x.grad();
  if (affine) {
    r.dweight = weight.grad();
    r.dbias = bias.grad();
  }
  return r;
}

TEST_CASE("batch_norm with relu, clamp, silu or hardtanh equals batch_norm and then the activation, values and gradients, bit for bit") {
  const float inf = __builtin_inff();
  // 64 positions (read in place), 16 and 4 and 1 (dividing the lanes), 49 and 65 (gathered; runs
  // with tails).
  const Shape shapes[] = {{2, 5, 8, 8}, {3, 5, 4, 4}, {4, 5, 2, 2}, {6, 5}, {2, 5, 7, 7}, {2, 5, 5, 13}};
  BatchNormActivation activations[7];
  activations[0].kind = Kind::kRelu;
  activations[4].kind = Kind::kSilu;
  activations[5].kind = activations[6].kind = Kind::kHardtanh;
  activations[5].hi = 6.0f;
  activations[6].lo = -1.5f;
  activations[6].hi = 0.5f;
  activations[1].kind = activations[2].kind = activations[3].kind = Kind::kClamp;
  activations[1].lo = 0.0f;
  activations[1].hi = 6.0f;
  activations[2].lo = -0.0f;
  activations[2].hi = inf;
  activations[3].lo = -1.5f;
  activations[3].hi = 0.5f;
  testing::ForEachTarget([&](const simd::Target&) {
    testing::ForOneAndTwoThreads([&](size_t) {
      for (const Shape& shape : shapes) {
        CAPTURE(ShapeString(shape));
        for (int variant = 0; variant < 28; ++variant) {
          const bool training = variant % 2 == 0, affine = variant % 4 < 2;
          const BatchNormActivation& after = activations[variant / 4];
          CAPTURE(variant);
          const Run fused = Forward(shape, training, affine, after, true);
          const Run separate = Forward(shape, training, affine, after, false);
          CHECK(testing::DifferingBits(fused.y, separate.y) == 0);
          CHECK(testing::DifferingBits(fused.running_mean, separate.running_mean) == 0);
          CHECK(testing::DifferingBits(fused.running_var, separate.running_var) == 0);
          CHECK(testing::DifferingBits(fused.dx, separate.dx) == 0);
          if (affine) {
            CHECK(testing::DifferingBits(fused.dweight, separate.dweight) == 0);
            CHECK(testing::DifferingBits(fused.dbias, separate.dbias) == 0);
          }
        }
      }
    });
  });
}

TEST_CASE("batch_norm with an activation keeps one node, and its gradient masks where the activation does") {
  Tensor x = Tensor::FromVector({1, 1, 2, 2}, {-1.0f, 1.0f, 3.0f, -3.0f});
  x.RequiresGrad();
  BatchNormActivation relu;
  relu.kind = Kind::kRelu;
  const Tensor y = BatchNorm(x, Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1f, 1e-5f, relu);
  const std::vector<float> v = y.ToVector();
  CHECK(v[0] == 0.0f);
  CHECK(v[3] == 0.0f);
  CHECK(v[1] > 0.0f);
  CHECK(v[2] > v[1]);
  Sum(y).Backward();
  // Only the two positive outputs pass a gradient; their normalisation's gradient sums to zero.
  const std::vector<float> dx = x.grad().ToVector();
  CHECK(dx[0] != 0.0f);
  CHECK(dx[1] + dx[2] + dx[0] + dx[3] == doctest::Approx(0.0f).epsilon(1e-5));
}

}  // namespace
}  // namespace lockstep
