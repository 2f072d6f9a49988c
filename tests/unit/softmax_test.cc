// Softmax and log-softmax: the composition written in softmax.h, on every target.
#include <doctest/doctest.h>

#include <limits>
#include <vector>

#include "simd/elementwise.h"
#include "simd/math.h"
#include "simd/reduce.h"
#include "simd/softmax.h"
#include "tests/unit/float_bits.h"
#include "tests/unit/for_each_target.h"

namespace lockstep {
namespace {

using testing::Bits;

TEST_CASE("softmax equals its definition step by step on every target") {
  const size_t rows = 5, cols = 77;
  std::vector<float> x(rows * cols);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101) / 7.0f - 6.0f;
  testing::ForEachTarget([&](const simd::Target&) {
    std::vector<float> soft(x.size()), log_soft(x.size());
    simd::Softmax(x.data(), rows, cols, soft.data());
    simd::LogSoftmax(x.data(), rows, cols, log_soft.data());
    for (size_t r = 0; r < rows; ++r) {
      const float* row = x.data() + r * cols;
      float max = row[0];
      for (size_t c = 1; c < cols; ++c) max = row[c] > max ? row[c] : max;
      std::vector<float> shifted(cols), e(cols);
      for (size_t c = 0; c < cols; ++c) shifted[c] = row[c] - max;
      simd::Math(simd::MathFn::kExp, shifted.data(), e.data(), cols);
      const float total = simd::CanonicalSumReference(e.data(), cols, 1);
      float log_total;
      simd::Math(simd::MathFn::kLog, &total, &log_total, 1);
      float probability_sum = 0.0f;
      for (size_t c = 0; c < cols; ++c) {
        CHECK(Bits(soft[r * cols + c]) == Bits(e[c] / total));
        CHECK(Bits(log_soft[r * cols + c]) == Bits(shifted[c] - log_total));
        probability_sum += soft[r * cols + c];
      }
      CHECK(probability_sum == doctest::Approx(1.0f).epsilon(1e-5));
    }
  });
}

TEST_CASE("softmax of a row of -inf is NaN, and large inputs do not overflow") {
  const float minus_inf = -std::numeric_limits<float>::infinity();
  const float row[3] = {minus_inf, minus_inf, minus_inf};
  float out[3];
  simd::Softmax(row, 1, 3, out);
  for (float v : out) CHECK(Bits(v) == 0x7FC00000u);
  const float big[2] = {1e30f, 1e30f};
  simd::Softmax(big, 1, 2, out);
  CHECK(out[0] == 0.5f);
  CHECK(out[1] == 0.5f);
}

// Rows are processed in blocks, and the blocks spread over threads: every row must still be the
// row computed alone.
TEST_CASE("softmax over many short rows equals each row alone, on 1 and 2 threads") {
  const size_t rows = 3001, cols = 64;
  std::vector<float> x = testing::MixedValues(rows * cols, 21);
  for (size_t i = 0; i < x.size(); i += 2) x[i] = static_cast<float>(static_cast<int>((i * 13) % 801) - 400) / 40.0f;
  testing::ForOneAndTwoThreads([&](size_t) {
    testing::ForEachTarget([&](const simd::Target&) {
      std::vector<float> soft(x.size()), log_soft(x.size()), alone(cols), log_alone(cols);
      simd::Softmax(x.data(), rows, cols, soft.data());
      simd::LogSoftmax(x.data(), rows, cols, log_soft.data());
      size_t differ = 0;
      for (size_t r = 0; r < rows; ++r) {
        simd::Softmax(x.data() + r * cols, 1, cols, alone.data());
        simd::LogSoftmax(x.data() + r * cols, 1, cols, log_alone.data());
        for (size_t c = 0; c < cols; ++c) {
          differ += Bits(soft[r * cols + c]) != Bits(alone[c]);
          differ += Bits(log_soft[r * cols + c]) != Bits(log_alone[c]);
        }
      }
      CHECK(differ == 0);
    });
  });
}

}  // namespace
}  // namespace lockstep
