// Clamp (ONNX's Clip, PyTorch's clamp in one kernel) gives the bits of the two selects it replaced,
// Where(x < lo, lo, x) then Where(y > hi, hi, y), forward and backward: on every special value,
// with bounds of either sign, zero's two signs, one-sided bounds and lo > hi.
#include <doctest/doctest.h>

#include <vector>

#include "core/ops.h"
#include "tests/unit/float_bits.h"

namespace lockstep {
namespace {

Tensor TwoSelects(const Tensor& x, float lo, float hi) {
  const Tensor lo_t = Tensor::Scalar(lo), hi_t = Tensor::Scalar(hi);
  const Tensor y = Where(Less(x, lo_t), lo_t, x);
  return Where(Greater(y, hi_t), hi_t, y);
}

TEST_CASE("clamp equals the two selects of ONNX's Clip, values and gradient, bit for bit") {
  const float inf = __builtin_inff();
  const float bounds[][2] = {{0.0f, 6.0f}, {-1.5f, 2.25f}, {-0.0f, 0.0f}, {0.0f, -0.0f},
                             {-inf, 0.5f}, {-3.0f, inf},   {1.0f, -1.0f}, {-inf, inf}};
  const size_t n = 1000;
  const std::vector<float> xv = testing::MixedValues(n, 11, 5), gv = testing::MixedValues(n, 12, 9);
  for (const auto& bound : bounds) {
    CAPTURE(bound[0]);
    CAPTURE(bound[1]);
    Tensor x1 = Tensor::FromVector({static_cast<int64_t>(n)}, xv), x2 = Tensor::FromVector({static_cast<int64_t>(n)}, xv);
    x1.RequiresGrad();
    x2.RequiresGrad();
    const Tensor fused = Clamp(x1, bound[0], bound[1]), selects = TwoSelects(x2, bound[0], bound[1]);
    const Tensor g = Tensor::FromVector({static_cast<int64_t>(n)}, gv);
    Sum(Mul(fused, g)).Backward();
    Sum(Mul(selects, g)).Backward();
    size_t values_differ = 0, gradients_differ = 0;
    for (size_t i = 0; i < n; ++i) {
      values_differ += testing::Bits(fused.data_f32()[i]) != testing::Bits(selects.data_f32()[i]);
      gradients_differ += testing::Bits(x1.grad().data_f32()[i]) != testing::Bits(x2.grad().data_f32()[i]);
    }
    CHECK(values_differ == 0);
    CHECK(gradients_differ == 0);
  }
}

}  // namespace
}  // namespace lockstep
