// Philox4x32-10 against the published known-answer vectors (Random123's kat_vectors), and the
// stream, uniform, normal and dropout definitions built on it.
#include <doctest/doctest.h>

#include <vector>

#include "simd/philox.h"
#include "tests/unit/for_each_target.h"

namespace lockstep {
namespace {

TEST_CASE("Philox4x32-10 reproduces the published known-answer vectors") {
  using simd::PhiloxCounter;
  CHECK(simd::Philox4x32_10({0, 0, 0, 0}, {0, 0}) ==
        PhiloxCounter{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u});
  CHECK(simd::Philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                            {0xffffffffu, 0xffffffffu}) ==
        PhiloxCounter{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu});
  CHECK(simd::Philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                            {0xa4093822u, 0x299f31d0u}) ==
        PhiloxCounter{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u});
}

TEST_CASE("a draw depends only on seed, stream and index") {
  std::vector<uint32_t> all(40), part(13);
  simd::PhiloxUint32(99, 3, 0, all.data(), all.size());
  simd::PhiloxUint32(99, 3, 22, part.data(), part.size());
  for (size_t i = 0; i < part.size(); ++i) CHECK(part[i] == all[22 + i]);
  // Word 4b + w is word w of block b with counter (b, 0, stream, 0) and key (seed, 0).
  const simd::PhiloxCounter block5 = simd::Philox4x32_10({5, 0, 3, 0}, {99, 0});
  for (int w = 0; w < 4; ++w) CHECK(all[20 + w] == block5[w]);
  std::vector<uint32_t> other_stream(40);
  simd::PhiloxUint32(99, 4, 0, other_stream.data(), other_stream.size());
  CHECK(other_stream != all);
}

// The words drawn a block per SIMD lane are the scalar block function's, on every target: long runs
// from every offset within a block, seeds and streams using both 32-bit halves, and a run across the
// point where the block counter's low word wraps.
TEST_CASE("vectorised draws are the scalar block function's words on every target") {
  testing::ForEachTarget([](const simd::Target&) {
    struct Case { uint64_t seed, stream, first; size_t n; };
    const Case cases[] = {{0, 0, 0, 4096}, {99, 3, 1, 3001}, {0x123456789abcdef0ull, 0xfedcba9876543210ull, 7, 2050},
                          {5, 1, (uint64_t{0xffffffffu} - 300) * 4 + 2, 4000}, {1, 2, uint64_t{1} << 40, 1027}};
    for (const Case& c : cases) {
      std::vector<uint32_t> words(c.n);
      simd::PhiloxUint32(c.seed, c.stream, c.first, words.data(), c.n);
      size_t wrong = 0;
      for (size_t i = 0; i < c.n; ++i) {
        const uint64_t index = c.first + i, block = index / 4;
        const simd::PhiloxCounter expected = simd::Philox4x32_10(
            {static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), static_cast<uint32_t>(c.stream),
             static_cast<uint32_t>(c.stream >> 32)},
            {static_cast<uint32_t>(c.seed), static_cast<uint32_t>(c.seed >> 32)});
        if (words[i] != expected[index % 4]) ++wrong;
      }
      INFO("seed " << c.seed << " stream " << c.stream << " first " << c.first);
      CHECK(wrong == 0);
    }
  });
}

TEST_CASE("uniform values are (u >> 8) * 2^-24") {
  std::vector<uint32_t> words(100);
  std::vector<float> uniform(100);
  simd::PhiloxUint32(1, 2, 7, words.data(), 100);
  simd::PhiloxUniform(1, 2, 7, uniform.data(), 100);
  for (size_t i = 0; i < 100; ++i) {
    CHECK(uniform[i] == static_cast<float>(words[i] >> 8) / 16777216.0f);
    CHECK(uniform[i] >= 0.0f);
    CHECK(uniform[i] < 1.0f);
  }
}

TEST_CASE("normal draws have the right moments and repeat exactly") {
  const size_t n = 200000;
  std::vector<float> z(n), again(n);
  simd::PhiloxNormal(42, 1, 0, 0.0f, 1.0f, z.data(), n);
  simd::PhiloxNormal(42, 1, 0, 0.0f, 1.0f, again.data(), n);
  CHECK(z == again);
  double sum = 0, sum_sq = 0;
  for (float v : z) {
    sum += v;
    sum_sq += double{v} * v;
  }
  const double mean = sum / n, var = sum_sq / n - mean * mean;
  CHECK(mean == doctest::Approx(0.0).epsilon(0.01).scale(1.0));
  CHECK(var == doctest::Approx(1.0).epsilon(0.01));
  std::vector<float> tail(10);
  simd::PhiloxNormal(42, 1, 1234, 0.0f, 1.0f, tail.data(), 10);
  for (size_t i = 0; i < 10; ++i) CHECK(tail[i] == z[1234 + i]);
}

TEST_CASE("dropout keeps (u >> 8) >= round(p * 2^24) and scales by 1 / (1 - p)") {
  CHECK(simd::DropoutThreshold(0.0f) == 0u);
  CHECK(simd::DropoutThreshold(1.0f) == 16777216u);
  CHECK(simd::DropoutThreshold(0.5f) == 8388608u);
  CHECK(simd::DropoutThreshold(0.1f) == 1677722u);  // 0.1f * 2^24 = 1677721.625 -> 1677722
  const size_t n = 100000;
  std::vector<float> mask(n);
  std::vector<uint32_t> words(n);
  simd::PhiloxDropoutMask(5, 6, 0, 0.1f, mask.data(), n);
  simd::PhiloxUint32(5, 6, 0, words.data(), n);
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    const bool keep = (words[i] >> 8) >= 1677722u;
    CHECK(mask[i] == (keep ? 1.0f / (1.0f - 0.1f) : 0.0f));
    kept += keep;
  }
  CHECK(kept > 89000);
  CHECK(kept < 91000);
  simd::PhiloxDropoutMask(5, 6, 0, 1.0f, mask.data(), n);
  for (float m : mask) CHECK(m == 0.0f);
}

}  // namespace
}  // namespace lockstep
