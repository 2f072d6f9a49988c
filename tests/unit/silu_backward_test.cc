// SiLU as one op: the one-pass gradient kernel against its definition (the elementwise kernels
// step by step) bit for bit on every target, across chunk edges, in place and on 1 and 2 threads;
// and the op against its composition Mul(x, Sigmoid(x)), whose values and gradients it must keep.
#include <doctest/doctest.h>

#include <vector>

#include "core/ops.h"
#include "simd/elementwise.h"
#include "simd/silu_backward.h"
#include "tests/unit/float_bits.h"
#include "tests/unit/for_each_target.h"
#include "tests/unit/tensor_values.h"

namespace lockstep {
namespace {

using simd::BinaryOp;

// The gradients of Mul(x, s) and Sigmoid(x) (core/backward_rules.cc) and their sum, one whole-array
// step at a time.
std::vector<float> Definition(const std::vector<float>& x, const std::vector<float>& s, const std::vector<float>& g) {
  const size_t n = x.size();
  std::vector<float> direct(n), through_sigmoid(n), one_minus_s(n), out(n);
  simd::Binary(BinaryOp::kMul, g.data(), s.data(), direct.data(), n);
  simd::Binary(BinaryOp::kMul, g.data(), x.data(), through_sigmoid.data(), n);
  simd::Unary(simd::UnaryOp::kNeg, s.data(), one_minus_s.data(), n);
  simd::BinaryScalarRight(BinaryOp::kAdd, one_minus_s.data(), 1.0f, one_minus_s.data(), n);
  simd::Binary(BinaryOp::kMul, through_sigmoid.data(), one_minus_s.data(), through_sigmoid.data(), n);
  simd::Binary(BinaryOp::kMul, through_sigmoid.data(), s.data(), through_sigmoid.data(), n);
  simd::Binary(BinaryOp::kAdd, direct.data(), through_sigmoid.data(), out.data(), n);
  return out;
}

size_t Differing(const std::vector<float>& got, const std::vector<float>& want) {
  size_t differ = 0;
  for (size_t i = 0; i < got.size(); ++i) differ += testing::Bits(got[i]) != testing::Bits(want[i]);
  return differ;
}

TEST_CASE("the one-pass SiLU gradient equals its seven-step definition on every target") {
  testing::ForOneAndTwoThreads([&](size_t threads) {
    testing::ForEachTarget([&](const simd::Target&) {
      for (size_t n : {1, 7, 17, 32767, 32768, 65536 + 9, 100001}) {
        INFO("n = " << n << ", threads " << threads);
        std::vector<float> x = testing::MixedValues(n, 5), s = testing::MixedValues(n, 6), g = testing::MixedValues(n, 7);
        for (size_t i = 0; i < n; i += 2) s[i] = static_cast<float>(i % 1001) / 1000.0f;  // sigmoid's range too
        const std::vector<float> want = Definition(x, s, g);
        std::vector<float> got(n);
        simd::SiluBackward(x.data(), s.data(), g.data(), got.data(), n);
        CHECK(Differing(got, want) == 0);
        for (int alias = 0; alias < 3; ++alias) {
          std::vector<float> xa = x, sa = s, ga = g;
          float* out = alias == 0 ? xa.data() : alias == 1 ? sa.data() : ga.data();
          simd::SiluBackward(xa.data(), sa.data(), ga.data(), out, n);
          CHECK(Differing(std::vector<float>(out, out + n), want) == 0);
        }
      }
    });
  });
}

TEST_CASE("Silu keeps the values and gradients of Mul(x, Sigmoid(x))") {
  for (const Shape& shape : {Shape{7}, Shape{2, 3, 33, 17}}) {
    Tensor x = MulScalar(testing::SeededValues(shape, 11), 3.0f);
    x.RequiresGrad(true);
    Tensor composed_x = x.Detach();
    composed_x.RequiresGrad(true);
    const Tensor g = testing::SeededValues(shape, 12);
    const Tensor y = Silu(x), want = Mul(composed_x, Sigmoid(composed_x));
    CHECK(testing::DifferingBits(y, want) == 0);
    Sum(Mul(y, g)).Backward();
    Sum(Mul(want, g)).Backward();
    CHECK(testing::DifferingBits(x.grad(), composed_x.grad()) == 0);
  }
  SUBCASE("a strided input") {
    Tensor x = testing::SeededValues({5, 9}, 13);
    x.RequiresGrad(true);
    Tensor composed_x = x.Detach();
    composed_x.RequiresGrad(true);
    const Tensor transposed = composed_x.Transpose(0, 1);
    const Tensor y = Silu(x.Transpose(0, 1)), want = Mul(transposed, Sigmoid(transposed));
    CHECK(testing::DifferingBits(y, want) == 0);
    Sum(y).Backward();
    Sum(want).Backward();
    CHECK(testing::DifferingBits(x.grad(), composed_x.grad()) == 0);
  }
}

}  // namespace
}  // namespace lockstep
