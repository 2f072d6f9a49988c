// Matmul reads strided operands in place (attention's heads, transposed views): the same bits as
// on contiguous copies, forward and backward, for every layout it accepts and some it copies.
#include <doctest/doctest.h>

#include <vector>

#include "core/ops.h"
#include "tests/unit/tensor_values.h"

namespace lockstep {
namespace {

using testing::SeededValues;

void ExpectSameBits(const Tensor& got, const Tensor& want) { CHECK(testing::DifferingBits(got, want) == 0); }

// Matmul on views a and b against Matmul on their contiguous copies; then both gradients.
void Compare(const Tensor& a_base, const Tensor& b_base, Tensor (*view_a)(const Tensor&),
             Tensor (*view_b)(const Tensor&)) {
  Tensor a1 = a_base.Clone(), b1 = b_base.Clone(), a2 = a_base.Clone(), b2 = b_base.Clone();
  a1.RequiresGrad(); b1.RequiresGrad(); a2.RequiresGrad(); b2.RequiresGrad();
  const Tensor in_place = Matmul(view_a(a1), view_b(b1));
  const Tensor copied = Matmul(view_a(a2).Contiguous(), view_b(b2).Contiguous());
  ExpectSameBits(in_place, copied);
  const Tensor weights = SeededValues(in_place.shape(), 99);
  Sum(Mul(in_place, weights)).Backward();
  Sum(Mul(copied, weights)).Backward();
  ExpectSameBits(a1.grad(), a2.grad());
  ExpectSameBits(b1.grad(), b2.grad());
}

TEST_CASE("matmul on strided views equals matmul on contiguous copies, forward and backward") {
  // Attention: [B, T, 3C] split into heads [B, h, T, hs]; q @ k^T and att @ v.
  const Tensor qkv = SeededValues({2, 5, 3 * 12}, 1);
  Compare(qkv, qkv,
          [](const Tensor& t) { return t.Slice(2, 0, 12).Reshape({2, 5, 3, 4}).Transpose(1, 2); },
          [](const Tensor& t) { return t.Slice(2, 12, 24).Reshape({2, 5, 3, 4}).Transpose(1, 2).Transpose(-2, -1); });
  Compare(SeededValues({2, 3, 5, 5}, 2), qkv, [](const Tensor& t) { return t; },
          [](const Tensor& t) { return t.Slice(2, 24, 36).Reshape({2, 5, 3, 4}).Transpose(1, 2); });
  // A 2-D right operand transposed (Linear's weight), a left operand transposed.
  Compare(SeededValues({7, 9}, 3), SeededValues({6, 9}, 4), [](const Tensor& t) { return t; },
          [](const Tensor& t) { return t.Transpose(0, 1); });
  Compare(SeededValues({9, 7}, 5), SeededValues({9, 6}, 6), [](const Tensor& t) { return t.Transpose(0, 1); },
          [](const Tensor& t) { return t; });
  // Batch dimensions permuted; a row stride wider than the row; single rows and columns.
  Compare(SeededValues({3, 4, 5, 6}, 7), SeededValues({4, 3, 6, 2}, 8), [](const Tensor& t) { return t.Transpose(0, 1); },
          [](const Tensor& t) { return t; });
  Compare(SeededValues({4, 10}, 9), SeededValues({5, 3}, 10), [](const Tensor& t) { return t.Slice(1, 2, 7); },
          [](const Tensor& t) { return t; });
  Compare(SeededValues({1, 5}, 11), SeededValues({5, 1}, 12), [](const Tensor& t) { return t; },
          [](const Tensor& t) { return t; });
  // Neither layout (a stride on both axes): copied.
  Compare(SeededValues({6, 8}, 13), SeededValues({3, 5}, 14), [](const Tensor& t) { return t.Slice(0, 0, 6, 2).Slice(1, 0, 8, 3); },
          [](const Tensor& t) { return t; });
}

}  // namespace
}  // namespace lockstep
