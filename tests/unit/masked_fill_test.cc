// masked_fill keeps a mask that repeats over leading dimensions as one period (attention's causal
// [T, T] mask over [B, heads, T, T]) instead of expanding it: the same values and gradient as with
// the mask expanded to the input's shape, and short periods still expanded.
#include <doctest/doctest.h>

#include <vector>

#include "core/ops.h"
#include "core/ops_internal.h"
#include "tests/unit/float_bits.h"

namespace lockstep {
namespace {

void CheckAgainstExpanded(const Shape& x_shape, const Shape& mask_shape) {
  const int64_t n = NumElements(x_shape), period = NumElements(mask_shape);
  std::vector<float> xv(static_cast<size_t>(n)), mv(static_cast<size_t>(period)), wv(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) xv[i] = static_cast<float>((i * 37) % 101) / 7.0f - 7.0f;
  for (int64_t i = 0; i < n; ++i) wv[i] = static_cast<float>((i * 13) % 29) / 5.0f - 3.0f;
  for (int64_t i = 0; i < period; ++i) mv[i] = (i * 7) % 3 == 0 ? 1.0f : 0.0f;
  Tensor x1 = Tensor::FromVector(x_shape, xv), x2 = Tensor::FromVector(x_shape, xv);
  x1.RequiresGrad();
  x2.RequiresGrad();
  const Tensor mask = Tensor::FromVector(mask_shape, mv);
  const Tensor repeated = MaskedFill(x1, mask, -1e30f);
  const Tensor expanded = MaskedFill(x2, mask.Expand(x_shape).Contiguous(), -1e30f);
  const Tensor weights = Tensor::FromVector(x_shape, wv);
  Sum(Mul(repeated, weights)).Backward();
  Sum(Mul(expanded, weights)).Backward();
  size_t differ = 0;
  for (int64_t i = 0; i < n; ++i) {
    differ += testing::Bits(repeated.data_f32()[i]) != testing::Bits(expanded.data_f32()[i]);
    differ += testing::Bits(x1.grad().data_f32()[i]) != testing::Bits(x2.grad().data_f32()[i]);
  }
  CHECK(differ == 0);
}

TEST_CASE("masked_fill with a mask repeating over leading dimensions equals the expanded mask") {
  CHECK(MaskPeriod({3, 2, 40, 40}, {40, 40}) == 1600);
  CHECK(MaskPeriod({3, 2, 40, 40}, {1, 1, 40, 40}) == 1600);
  CHECK(MaskPeriod({3, 2, 40, 40}, {2, 1, 40}) == 3 * 2 * 40 * 40);  // broadcasts inside: expanded
  CHECK(MaskPeriod({3, 4}, {1, 4}) == 12);                           // short: expanded
  CheckAgainstExpanded({3, 2, 40, 40}, {40, 40});
  CheckAgainstExpanded({5, 1100}, {1, 1100});
  CheckAgainstExpanded({2, 3, 40, 40}, {2, 1, 40, 40});
}

}  // namespace
}  // namespace lockstep
