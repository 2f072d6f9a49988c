// The one-pass LayerNorm rows (simd/layer_norm.h) against their definition, step by step over
// whole arrays with the reduction and math kernels: bit for bit on every target, with and without
// weight and bias, special values, rows longer than a reduction block, on 1 and 2 threads.
#include <doctest/doctest.h>

#include <vector>

#include "simd/layer_norm.h"
#include "simd/math.h"
#include "simd/reduce.h"
#include "simd/thread_pool.h"
#include "tests/unit/float_bits.h"
#include "tests/unit/for_each_target.h"

namespace lockstep {
namespace {

float Canonical(float v) { return v != v ? __builtin_nanf("") : v; }

struct Forward {
  std::vector<float> xhat, rstd, out;
};

Forward ForwardDefinition(const std::vector<float>& x, const float* w, const float* b, float eps, size_t rows,
                          size_t d) {
  const size_t n = rows * d;
  Forward f{std::vector<float>(n), std::vector<float>(rows), std::vector<float>(n)};
  std::vector<float> mean(rows), sq(n);
  simd::MeanAxis(x.data(), rows, d, 1, mean.data());
  for (size_t i = 0; i < n; ++i) f.xhat[i] = Canonical(x[i] - mean[i / d]);
  for (size_t i = 0; i < n; ++i) sq[i] = Canonical(f.xhat[i] * f.xhat[i]);
  simd::SumAxis(sq.data(), rows, d, 1, f.rstd.data());
  for (float& v : f.rstd) v = Canonical(Canonical(v / static_cast<float>(d)) + eps);
  simd::Math(simd::MathFn::kRsqrt, f.rstd.data(), f.rstd.data(), rows);
  for (size_t i = 0; i < n; ++i) f.xhat[i] = Canonical(f.xhat[i] * f.rstd[i / d]);
  for (size_t i = 0; i < n; ++i) {
    f.out[i] = w != nullptr ? Canonical(f.xhat[i] * w[i % d]) : f.xhat[i];
    if (b != nullptr) f.out[i] = Canonical(f.out[i] + b[i % d]);
  }
  return f;
}

std::vector<float> BackwardDefinition(const std::vector<float>& g, const float* w, const std::vector<float>& xhat,
                                      const std::vector<float>& rstd, size_t rows, size_t d) {
  const size_t n = rows * d;
  std::vector<float> dxhat(n), prod(n), m1(rows), m2(rows), dx(n);
  for (size_t i = 0; i < n; ++i) dxhat[i] = w != nullptr ? Canonical(g[i] * w[i % d]) : g[i];
  for (size_t i = 0; i < n; ++i) prod[i] = Canonical(dxhat[i] * xhat[i]);
  simd::MeanAxis(dxhat.data(), rows, d, 1, m1.data());
  simd::MeanAxis(prod.data(), rows, d, 1, m2.data());
  for (size_t i = 0; i < n; ++i) {
    const float centered = Canonical(dxhat[i] - m1[i / d]);
    const float projected = Canonical(xhat[i] * m2[i / d]);
    dx[i] = Canonical(Canonical(centered - projected) * rstd[i / d]);
  }
  return dx;
}

size_t CountDiffering(const std::vector<float>& got, const std::vector<float>& want) {
  size_t differ = 0;
  for (size_t i = 0; i < want.size(); ++i) differ += testing::Bits(got[i]) != testing::Bits(want[i]);
  return differ;
}

TEST_CASE("one-pass LayerNorm rows equal their step-by-step definition on every target") {
  struct Shape { size_t rows, d; };
  const Shape shapes[] = {{1, 1}, {3, 5}, {200, 128}, {130, 33}, {2, 4096 + 37}};
  testing::ForOneAndTwoThreads([&](size_t threads) {
    testing::ForEachTarget([&](const simd::Target&) {
      for (const Shape& s : shapes) {
        const size_t n = s.rows * s.d;
        // Normal-like rows, a few special values and extremes among them. Specials in g, w and b
        // about once per 3d values: the backward pass's row means spread one infinity or NaN over
        // its whole row (a w with one, over every row), and with one in 7 every row of 128 was NaN.
        const uint32_t special_every = s.d * 3 < 7 ? 7 : static_cast<uint32_t>(s.d * 3);
        std::vector<float> x(n), g = testing::MixedValues(n, 12, special_every);
        for (size_t i = 0; i < n; ++i) x[i] = static_cast<float>(static_cast<int>((i * 37) % 1001) - 500) / 97.0f;
        const std::vector<float> mixed = testing::MixedValues(n, 11);
        for (size_t i = 0; i < n; i += 97) x[i] = mixed[i];
        for (size_t i = 0; i < n; i += 3) g[i] = static_cast<float>(static_cast<int>((i * 13) % 401) - 200) / 50.0f;
        const std::vector<float> w = testing::MixedValues(s.d, 13, special_every);
        const std::vector<float> b = testing::MixedValues(s.d, 14, special_every);
        for (int variant = 0; variant < 3; ++variant) {  // weight and bias, weight only, neither
          const float* wp = variant < 2 ? w.data() : nullptr;
          const float* bp = variant < 1 ? b.data() : nullptr;
          INFO("rows " << s.rows << " d " << s.d << " variant " << variant << " threads " << threads);
          const Forward want = ForwardDefinition(x, wp, bp, 1e-5f, s.rows, s.d);
          Forward got{std::vector<float>(n), std::vector<float>(s.rows), std::vector<float>(n)};
          simd::LayerNormRows(x.data(), wp, bp, 1e-5f, s.rows, s.d, got.xhat.data(), got.rstd.data(), got.out.data());
          CHECK(CountDiffering(got.xhat, want.xhat) == 0);
          CHECK(CountDiffering(got.rstd, want.rstd) == 0);
          CHECK(CountDiffering(got.out, want.out) == 0);
          const std::vector<float> want_dx = BackwardDefinition(g, wp, want.xhat, want.rstd, s.rows, s.d);
          std::vector<float> dx(n);
          simd::LayerNormRowsBackward(g.data(), wp, want.xhat.data(), want.rstd.data(), s.rows, s.d, dx.data());
          CHECK(CountDiffering(dx, want_dx) == 0);
          size_t finite = 0;
          for (float v : want_dx) finite += v - v == 0.0f;
          CHECK(finite * 3 >= n);  // or a wrong gradient would hide behind NaN
        }
      }
    });
  });
}

}  // namespace
}  // namespace lockstep
