// Deterministic test tensors and a bitwise comparison of two tensors, for tests of ops whose
// fast paths must give the bits of their plain composition.
#ifndef LOCKSTEP_TESTS_UNIT_TENSOR_VALUES_H_
#define LOCKSTEP_TESTS_UNIT_TENSOR_VALUES_H_

#include <doctest/doctest.h>

#include <vector>

#include "core/tensor.h"
#include "tests/unit/float_bits.h"

namespace lockstep {
namespace testing {

// Values in [-2.97, 2.97] from a linear congruential sequence started at seed.
inline Tensor SeededValues(const Shape& shape, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(NumElements(shape)));
  uint32_t state = seed;
  for (float& x : v) {
    state = state * 1664525u + 1013904223u;
    x = static_cast<float>(static_cast<int32_t>(state >> 8) % 2001 - 1000) / 337.0f;
  }
  return Tensor::FromVector(shape, v);
}

// The number of elements whose bits differ (shapes must match).
inline size_t DifferingBits(const Tensor& got, const Tensor& want) {
  REQUIRE(got.shape() == want.shape());
  const Tensor g = got.Contiguous(), w = want.Contiguous();
  size_t differ = 0;
  for (int64_t i = 0; i < g.numel(); ++i) differ += Bits(g.data_f32()[i]) != Bits(w.data_f32()[i]);
  return differ;
}

}  // namespace testing
}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_UNIT_TENSOR_VALUES_H_
