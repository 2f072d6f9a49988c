// Linear adds its bias in the GEMM's store: the same output and gradients (input, weight, bias)
// as the matmul and the addition done one after the other, for 2-D and 3-D inputs, and the
// strided input that takes the two ops.
#include <doctest/doctest.h>

#include "core/ops.h"
#include "tests/unit/tensor_values.h"

namespace lockstep {
namespace {

void Compare(const Shape& x_shape, bool transposed_input) {
  const int64_t in = x_shape.back(), out = 37;
  Tensor x1 = testing::SeededValues(x_shape, 1), w1 = testing::SeededValues({out, in}, 2), b1 = testing::SeededValues({out}, 3);
  Tensor x2 = x1.Clone(), w2 = w1.Clone(), b2 = b1.Clone();
  for (Tensor* t : {&x1, &w1, &b1, &x2, &w2, &b2}) t->RequiresGrad();
  const Tensor input1 = transposed_input ? x1.Transpose(0, 1).Contiguous().Transpose(0, 1) : x1;
  const Tensor fused = Linear(input1, w1, b1);
  const Tensor separate = Add(Matmul(x2, w2.Transpose(0, 1)), b2);
  CHECK(testing::DifferingBits(fused, separate) == 0);
  const Tensor weights = testing::SeededValues(fused.shape(), 4);
  Sum(Mul(fused, weights)).Backward();
  Sum(Mul(separate, weights)).Backward();
  CHECK(testing::DifferingBits(x1.grad(), x2.grad()) == 0);
  CHECK(testing::DifferingBits(w1.grad(), w2.grad()) == 0);
  CHECK(testing::DifferingBits(b1.grad(), b2.grad()) == 0);
}

TEST_CASE("Linear with a bias equals matmul then add, values and gradients") {
  Compare({70, 45}, false);
  Compare({3, 50, 45}, false);
  Compare({70, 45}, true);  // a strided input: matmul and add as two ops
}

// A right operand that is a transposed view (W^T) gets its batch-grouped gradient made in W's
// layout: the bits of the gradient of a contiguous W^T, and W's gradient contiguous (not copied).
TEST_CASE("matmul's gradient for a transposed weight equals the contiguous operand's, in W's layout") {
  for (const Shape& x_shape : {Shape{100, 45}, Shape{3, 50, 45}}) {
    const int64_t in = x_shape.back(), out = 37;
    Tensor x = testing::SeededValues(x_shape, 5), w = testing::SeededValues({out, in}, 6);
    Tensor wt_leaf = w.Transpose(0, 1).Contiguous();
    w.RequiresGrad();
    wt_leaf.RequiresGrad();
    const Tensor weights = testing::SeededValues(Shape(x_shape.begin(), x_shape.end() - 1), 7).Reshape({-1, 1});
    const Tensor y1 = Matmul(x, w.Transpose(0, 1)), y2 = Matmul(x, wt_leaf);
    Sum(Mul(y1.Reshape({-1, out}), weights)).Backward();
    Sum(Mul(y2.Reshape({-1, out}), weights)).Backward();
    CHECK(w.grad().is_contiguous());
    CHECK(testing::DifferingBits(w.grad(), wt_leaf.grad().Transpose(0, 1)) == 0);
  }
}

}  // namespace
}  // namespace lockstep
