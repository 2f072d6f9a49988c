// Hardtanh's kernels (hardtanh, hardtanh_backward) give the bits of the composition they replaced:
// two masked fills, each mask testing x (x <= lo, then x >= hi), and those fills' gradients. On
// every target, over values with every special class (NaN, infinities, both zeros, subnormals) and
// values on the bounds, with ReLU6's bounds, bounds of either sign, zero's two signs, one-sided
// and equal bounds; min_val above max_val is refused.
#include <doctest/doctest.h>

#include <vector>

#include "core/ops.h"
#include "tests/unit/float_bits.h"
#include "tests/unit/for_each_target.h"
#include "tests/unit/tensor_values.h"

namespace lockstep {
namespace {

struct Result {
  Tensor y, dx;
};

// x: mixed values with the bounds themselves and zeros of both signs spliced in.
Tensor Input(float lo, float hi) {
  std::vector<float> v = testing::MixedValues(1000, 5, 9);
  for (size_t i = 0; i < v.size(); i += 37) v[i] = lo;
  for (size_t i = 11; i < v.size(); i += 41) v[i] = hi;
  for (size_t i = 23; i < v.size(); i += 43) v[i] = i % 2 == 0 ? 0.0f : -0.0f;
  return Tensor::FromVector({1000}, v);
}

Result Run(float lo, float hi, bool kernel) {
  Tensor x = Input(lo, hi);
  x.RequiresGrad();
  Result r;
  if (kernel) {
    r.y = Hardtanh(x, lo, hi);
  } else {
    const Tensor low = MaskedFill(x, LessEqual(x, Tensor::Scalar(lo)), lo);
    r.y = MaskedFill(low, GreaterEqual(x, Tensor::Scalar(hi)), hi);
  }
  const Tensor g = Tensor::FromVector({1000}, testing::MixedValues(1000, 6, 7));
  Sum(Mul(r.y, g)).Backward();
  r.dx = x.grad();
  return r;
}

TEST_CASE("hardtanh's kernels give the bits of its two masked fills, values and gradients") {
  const float inf = __builtin_inff();
  const float bounds[][2] = {{0.0f, 6.0f}, {-1.5f, 2.25f}, {-0.0f, 0.0f}, {0.0f, -0.0f},
                             {-inf, 0.5f}, {-3.0f, inf},   {2.0f, 2.0f},  {-inf, inf}};
  testing::ForEachTarget([&](const simd::Target&) {
    for (const auto& b : bounds) {
      CAPTURE(b[0]);
      CAPTURE(b[1]);
      const Result kernel = Run(b[0], b[1], true), fills = Run(b[0], b[1], false);
      CHECK(testing::DifferingBits(kernel.y, fills.y) == 0);
      CHECK(testing::DifferingBits(kernel.dx, fills.dx) == 0);
    }
  });
}

TEST_CASE("hardtanh refuses min_val above max_val, naming both") {
  CHECK_THROWS_WITH(Hardtanh(Tensor::Scalar(1.0f), 2.0f, 1.0f), doctest::Contains("min_val 2 is above max_val 1"));
}

}  // namespace
}  // namespace lockstep
