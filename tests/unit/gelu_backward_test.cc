// The one-pass GELU (erf) gradient against its definition, eleven whole-array steps with the
// elementwise and math kernels: bit for bit on every target, across chunk edges, in place, and
// on 1 and 2 threads.
#include <doctest/doctest.h>

#include <vector>

#include "simd/elementwise.h"
#include "simd/gelu_backward.h"
#include "simd/math.h"
#include "simd/thread_pool.h"
#include "tests/unit/float_bits.h"
#include "tests/unit/for_each_target.h"

namespace lockstep {
namespace {

using simd::BinaryOp;

std::vector<float> Definition(const std::vector<float>& x, const std::vector<float>& g) {
  const size_t n = x.size();
  std::vector<float> cdf(n), pdf(n), out(n);
  simd::BinaryScalarRight(BinaryOp::kMul, x.data(), simd::kGeluInvSqrt2, cdf.data(), n);
  simd::Math(simd::MathFn::kErf, cdf.data(), cdf.data(), n);
  simd::BinaryScalarRight(BinaryOp::kAdd, cdf.data(), 1.0f, cdf.data(), n);
  simd::BinaryScalarRight(BinaryOp::kMul, cdf.data(), 0.5f, cdf.data(), n);
  simd::Binary(BinaryOp::kMul, x.data(), x.data(), pdf.data(), n);
  simd::BinaryScalarRight(BinaryOp::kMul, pdf.data(), -0.5f, pdf.data(), n);
  simd::Math(simd::MathFn::kExp, pdf.data(), pdf.data(), n);
  simd::BinaryScalarRight(BinaryOp::kMul, pdf.data(), simd::kGeluInvSqrt2Pi, pdf.data(), n);
  simd::Binary(BinaryOp::kMul, x.data(), pdf.data(), pdf.data(), n);
  simd::Binary(BinaryOp::kAdd, cdf.data(), pdf.data(), cdf.data(), n);
  simd::Binary(BinaryOp::kMul, g.data(), cdf.data(), out.data(), n);
  return out;
}

TEST_CASE("the one-pass GELU gradient equals its eleven-step definition on every target") {
  testing::ForOneAndTwoThreads([&](size_t threads) {
    testing::ForEachTarget([&](const simd::Target&) {
      for (size_t n : {1, 7, 2047, 2048, 2049, 4096 + 5, 70001}) {
        INFO("n = " << n << ", threads " << threads);
        // Mixed values (special values, subnormals, the whole range) and a normal-like range.
        std::vector<float> x = testing::MixedValues(n, 3), g = testing::MixedValues(n, 4);
        for (size_t i = 0; i < n; i += 2) x[i] = static_cast<float>(static_cast<int>(i % 1201) - 600) / 100.0f;
        const std::vector<float> want = Definition(x, g);
        std::vector<float> got(n);
        simd::GeluErfBackward(x.data(), g.data(), got.data(), n);
        std::vector<float> in_place = g;
        simd::GeluErfBackward(x.data(), in_place.data(), in_place.data(), n);
        size_t differ = 0;
        for (size_t i = 0; i < n; ++i) {
          if (testing::Bits(got[i]) != testing::Bits(want[i]) || testing::Bits(in_place[i]) != testing::Bits(want[i])) {
            if (differ++ == 0) {
              INFO("first: element " << i << ": x " << x[i] << " g " << g[i] << ": " << got[i] << " / "
                                     << in_place[i] << " vs " << want[i]);
              CHECK(false);
            }
          }
        }
        CHECK(differ == 0);
      }
    });
  });
}

}  // namespace
}  // namespace lockstep
