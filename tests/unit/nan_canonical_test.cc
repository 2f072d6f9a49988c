// Host arithmetic in the ops stores the contract's NaN (0x7FC00000), as the kernels do: x86 makes
// 0xFFC00000 for inf - inf and 0 / 0, and WebAssembly leaves the payload unspecified, so a NaN
// written as it comes would hash differently on different machines (--allow-nonfinite runs).
#include <doctest/doctest.h>

#include <string.h>

#include <limits>
#include <vector>

#include "core/ops.h"

namespace lockstep {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// How many elements are NaN, and how many of those are not 0x7FC00000.
struct NaNCount {
  size_t nans = 0, other_bits = 0;
};
NaNCount CountNaNs(const Tensor& t) {
  NaNCount c;
  for (float v : t.ToVector()) {
    if (v != v) {
      ++c.nans;
      uint32_t bits;
      memcpy(&bits, &v, 4);
      c.other_bits += bits != 0x7FC00000u;
    }
  }
  return c;
}

TEST_CASE("average pooling's backward: +inf and -inf meeting in one input give the canonical NaN") {
  Tensor x = Tensor::Zeros({1, 1, 1, 3});
  x.RequiresGrad();
  Pool2dOptions o{1, 2, 1, 1};  // windows [0, 1] and [1, 2] share input 1
  const Tensor y = AvgPool2d(x, o);
  y.Backward(Tensor::FromVector({1, 1, 1, 2}, {kInf, -kInf}));
  const NaNCount c = CountNaNs(x.grad());
  CHECK(c.nans == 1);
  CHECK(c.other_bits == 0);
}

TEST_CASE("batch norm's backward in training: an infinite gradient gives canonical NaNs") {
  Tensor x = Tensor::FromVector({4, 1}, {1.0f, 2.0f, 4.0f, 8.0f});
  x.RequiresGrad();
  const Tensor y = BatchNorm(x, Tensor(), Tensor(), Tensor(), Tensor(), /*training=*/true, 0.1f, 1e-5f);
  y.Backward(Tensor::FromVector({4, 1}, {kInf, 1.0f, 1.0f, 1.0f}));
  const NaNCount c = CountNaNs(x.grad());
  CHECK(c.nans > 0);  // inf - mean(inf): the case under test
  CHECK(c.other_bits == 0);
}

TEST_CASE("batch norm's running statistics: inf and -inf combined give the canonical NaN") {
  Tensor running_mean = Tensor::FromVector({1}, {kInf});
  Tensor running_var = Tensor::FromVector({1}, {kInf});
  const Tensor x = Tensor::FromVector({4, 1}, {-kInf, 1.0f, 2.0f, 3.0f});
  BatchNorm(x, running_mean, running_var, Tensor(), Tensor(), /*training=*/true, 0.1f, 1e-5f);
  const NaNCount c = CountNaNs(running_mean);
  CHECK(c.nans == 1);  // 0.9 * inf + 0.1 * -inf
  CHECK(c.other_bits == 0);
  CHECK(CountNaNs(running_var).other_bits == 0);
}

}  // namespace
}  // namespace lockstep
