// Canonical reductions against the plain definition (reduce_reference.cc) on every target:
// contiguous and strided paths, blocks, and the special-value rules.
#include <doctest/doctest.h>

#include <vector>

#include "simd/reduce.h"
#include "simd/thread_pool.h"
#include "tests/unit/float_bits.h"
#include "tests/unit/for_each_target.h"

namespace lockstep {
namespace {

using testing::Bits;
using testing::FromBits;

std::vector<float> Ordinary(size_t n, uint32_t seed) {
  std::vector<float> v = testing::MixedValues(n, seed);
  for (float& x : v) {
    if (x != x || x - x != 0.0f) x = 1.5f;  // keep sums finite so order differences show
  }
  return v;
}

TEST_CASE("sum follows the canonical order on every target") {
  const size_t sizes[] = {0,   1,   2,   3,    7,    15,   16,   17,   63,   64,   65,    127,
                          128, 129, 191, 200,  1000, 4095, 4096, 4097, 8192, 9001, 20000, 70001};
  const std::vector<float> x = Ordinary(70001 + 3, 11);
  testing::ForEachTarget([&](const simd::Target&) {
    for (size_t n : sizes) {
      for (size_t offset = 0; offset < 3; ++offset) {
        const float got = simd::Sum(x.data() + offset, n);
        const float want = simd::CanonicalSumReference(x.data() + offset, n, 1);
        INFO("n=" << n << " offset=" << offset);
        CHECK(Bits(got) == Bits(want));
      }
    }
  });
}

TEST_CASE("the canonical order is not the sequential order") {
  // 1 + 2^-24 * 64 sequentially loses every small term; lane-wise it keeps them.
  std::vector<float> x(65, 0x1p-24f);
  x[0] = 1.0f;
  float sequential = -0.0f;
  for (float v : x) sequential += v;
  CHECK(sequential == 1.0f);
  // Lane 0 holds 1 + 2^-24 -> 1 (tie to even); lanes 1..63 hold 2^-24 each and the halving tree
  // adds them in exact power-of-two groups before they meet lane 0, so most of them survive.
  const float canonical = simd::Sum(x.data(), x.size());
  CHECK(canonical > 1.0f);
  CHECK(Bits(canonical) == Bits(simd::CanonicalSumReference(x.data(), x.size(), 1)));
}

TEST_CASE("axis sums equal the contiguous sums of the same columns") {
  // Columns past the last whole vector (fewer than a vector's, too) are summed as padded vectors:
  // one block and several (4,096 rows a block).
  const size_t shapes[][3] = {{1, 5, 1},  {2, 3, 7},   {3, 64, 9},  {2, 130, 33}, {1, 4100, 17},
                              {2, 1, 40}, {1, 0, 5},   {4, 9, 2},   {2, 8200, 3}};
  for (const auto& s : shapes) {
    const size_t outer = s[0], len = s[1], inner = s[2];
    const std::vector<float> x = Ordinary(outer * len * inner, 21);
    testing::ForEachTarget([&](const simd::Target&) {
      std::vector<float> out(outer * inner);
      simd::SumAxis(x.data(), outer, len, inner, out.data());
      for (size_t o = 0; o < outer; ++o) {
        for (size_t j = 0; j < inner; ++j) {
          const float want = simd::CanonicalSumReference(x.data() + o * len * inner + j, len, inner);
          INFO("shape " << outer << "x" << len << "x" << inner << " o=" << o << " j=" << j);
          CHECK(Bits(out[o * inner + j]) == Bits(want));
        }
      }
    });
  }
}

// Column blocks shorter than the virtual lanes (a batch group of 32 rows) skip the lanes that stay
// -0.0: exact for every value, signed zeros and NaN included.
TEST_CASE("short column sums with special values equal the canonical order") {
  // Narrow columns (squeeze-and-excitation planes: 2 x 2 to 32 x 32), past one block of rows, and
  // short slices by the thousand (several pieces of the many-slices path).
  const size_t shapes[][3] = {{1, 33, 32}, {2, 17, 48}, {1, 32, 16}, {3, 2, 20}, {1, 63, 40}, {1, 65, 40},
                              {9, 2, 2},   {7, 4, 4},   {5, 8, 8},   {3, 16, 16}, {2, 32, 32}, {4, 3, 5},
                              {2, 200, 3}, {1, 4100, 6}, {1, 129, 64}, {2, 70, 65}, {2100, 2, 2},
                              {300, 64, 1}, {130, 63, 1}, {70, 64, 8}, {3, 65, 8}, {5, 1, 9}};
  for (const auto& s : shapes) {
    const size_t outer = s[0], len = s[1], inner = s[2];
    std::vector<float> x = testing::MixedValues(outer * len * inner, 23);
    for (size_t i = 0; i < x.size(); i += 5) x[i] = i % 2 == 0 ? -0.0f : 0.0f;
    testing::ForEachTarget([&](const simd::Target&) {
      std::vector<float> out(outer * inner);
      simd::SumAxis(x.data(), outer, len, inner, out.data());
      size_t differ = 0;
      for (size_t o = 0; o < outer; ++o) {
        for (size_t j = 0; j < inner; ++j) {
          float want = simd::CanonicalSumReference(x.data() + o * len * inner + j, len, inner);
          if (want != want) want = __builtin_nanf("");
          differ += Bits(out[o * inner + j]) != Bits(want);
        }
      }
      INFO("shape " << outer << "x" << len << "x" << inner);
      CHECK(differ == 0);
    });
  }
}

// Rows shorter than the virtual lanes skip the tree's additions of lanes that stay -0.0.
TEST_CASE("short contiguous sums with special values equal the canonical order") {
  for (const size_t len : {1, 2, 3, 4, 5, 8, 16, 31, 33, 63, 64}) {
    const size_t outer = 37;
    std::vector<float> x = testing::MixedValues(outer * len, 29);
    for (size_t i = 0; i < x.size(); i += 3) x[i] = i % 2 == 0 ? -0.0f : 0.0f;
    for (size_t i = 0; i < 2 * len && i < x.size(); ++i) x[i] = -0.0f;  // a row of -0 (and one mixed)
    testing::ForEachTarget([&](const simd::Target&) {
      std::vector<float> out(outer);
      simd::SumAxis(x.data(), outer, len, 1, out.data());
      size_t differ = 0;
      for (size_t o = 0; o < outer; ++o) {
        float want = simd::CanonicalSumReference(x.data() + o * len, len, 1);
        if (want != want) want = __builtin_nanf("");
        differ += Bits(out[o]) != Bits(want);
      }
      INFO("rows of " << len);
      CHECK(differ == 0);
    });
  }
}

TEST_CASE("empty sums are +0 and -0 sums stay -0") {
  CHECK(Bits(simd::Sum(nullptr, 0)) == 0u);
  const float zeros[3] = {-0.0f, -0.0f, -0.0f};
  CHECK(Bits(simd::Sum(zeros, 3)) == 0x80000000u);
}

TEST_CASE("max, min and argmax follow the special-value rules") {
  const float nan = FromBits(0xFFC00123u);
  testing::ForEachTarget([&](const simd::Target&) {
    std::vector<float> x(37, -5.0f);
    x[20] = -0.0f;
    x[30] = 0.0f;
    float m;
    int64_t arg;
    simd::MaxAxis(x.data(), 1, x.size(), 1, &m);
    simd::ArgmaxAxis(x.data(), 1, x.size(), 1, &arg);
    CHECK(Bits(m) == 0u);
    CHECK(arg == 30);  // +0 beats -0
    simd::MinAxis(x.data(), 1, x.size(), 1, &m);
    CHECK(m == -5.0f);
    x[25] = nan;
    x[33] = nan;
    simd::MaxAxis(x.data(), 1, x.size(), 1, &m);
    simd::ArgmaxAxis(x.data(), 1, x.size(), 1, &arg);
    CHECK(Bits(m) == 0x7FC00000u);
    CHECK(arg == 25);  // the first NaN
    const float ties[4] = {2.0f, 7.0f, 7.0f, 1.0f};
    simd::ArgmaxAxis(ties, 1, 4, 1, &arg);
    CHECK(arg == 1);  // lowest index among equals
    // Over a middle axis: [2, 3, 5], max over the 3.
    std::vector<float> y = Ordinary(30, 5);
    std::vector<float> out(10);
    simd::MaxAxis(y.data(), 2, 3, 5, out.data());
    for (size_t o = 0; o < 2; ++o) {
      for (size_t j = 0; j < 5; ++j) {
        float want = y[o * 15 + j];
        for (size_t i = 1; i < 3; ++i) want = y[o * 15 + i * 5 + j] > want ? y[o * 15 + i * 5 + j] : want;
        CHECK(out[o * 5 + j] == want);
      }
    }
  });
}

TEST_CASE("mean and variance use the documented formulas") {
  const float x[4] = {1.0f, 2.0f, 3.0f, 5.0f};
  float mean, var;
  simd::MeanAxis(x, 1, 4, 1, &mean);
  CHECK(mean == 2.75f);
  simd::VarianceAxis(x, 1, 4, 1, 1, &var);
  // deviations: -1.75, -0.75, 0.25, 2.25; squares sum to 8.75; / 3
  CHECK(var == 8.75f / 3.0f);
  simd::VarianceAxis(x, 1, 1, 1, 1, &var);
  CHECK(Bits(var) == 0x7FC00000u);  // one element, correction 1: no variance
}

TEST_CASE(
    "channel sums (of the values, of their squared deviations) equal the canonical sum of each channel's values "
    "copied out, every target") {
  // [samples, channels, positions]: few positions, blocks crossed inside a sample and between
  // samples, specials, empty planes; planes of whole rows of the virtual lanes (read in place:
  // blocks ending at a sample's end and inside one); on 1 and 2 threads.
  const size_t shapes[][3] = {{32, 40, 4}, {3, 5, 7},    {2, 3, 4097}, {32, 3, 300}, {1, 64, 1},
                              {5, 2, 33},  {4, 6, 0},    {9, 2, 1000}, {3, 4, 1024}, {9, 2, 1024},
                              {5, 3, 192}, {5, 2, 2560}, {40, 3, 64}, {300, 2, 32}, {4500, 2, 2}, {7, 33, 16}};
  // With specials (most long sums NaN) and without (every sum finite: the order shows in the bits).
  const std::vector<float> with_specials = testing::MixedValues(32 * 3 * 300, 21);
  const std::vector<float> finite = testing::MixedValues(32 * 3 * 300, 22, 1u << 30);
  // The centres of the squared deviations (ChannelDeviationSquareSums): a NaN and infinities among them.
  const std::vector<float> means = testing::MixedValues(64, 23);
  const size_t threads_before = simd::DefaultThreadCount();
  for (size_t threads : {1, 2}) {
    simd::SetDefaultThreadCount(threads);
    testing::ForEachTarget([&](const simd::Target&) {
      for (const std::vector<float>* values : {&with_specials, &finite}) {
        const std::vector<float>& x = *values;
        for (const auto& s : shapes) {
          const size_t samples = s[0], channels = s[1], positions = s[2];
          std::vector<float> got(channels, 123.0f), got_squares(channels, 123.0f);
          simd::ChannelSums(x.data(), samples, channels, positions, got.data());
          simd::ChannelDeviationSquareSums(x.data(), means.data(), samples, channels, positions, got_squares.data());
          for (size_t c = 0; c < channels; ++c) {
            std::vector<float> copied, squares;
            for (size_t n = 0; n < samples; ++n) {
              for (size_t p = 0; p < positions; ++p) {
                copied.push_back(x[(n * channels + c) * positions + p]);
                const float deviation = copied.back() - means[c];
                squares.push_back(deviation * deviation);
              }
            }
            const float want = simd::Sum(copied.data(), copied.size());
            float want_squares = simd::Sum(squares.data(), squares.size());
            if (want_squares != want_squares) want_squares = __builtin_nanf("");
            INFO("threads " << threads << " shape " << samples << "x" << channels << "x"
                            << positions << " channel " << c);
            REQUIRE(Bits(got[c]) == Bits(want));
            REQUIRE(Bits(got_squares[c]) == Bits(want_squares));
          }
        }
      }
    });
  }
  simd::SetDefaultThreadCount(threads_before);
}

}  // namespace
}  // namespace lockstep
