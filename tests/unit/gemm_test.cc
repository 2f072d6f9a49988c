// GEMM against the one-output-at-a-time definition: bit-identical for all four transpose
// combinations, edge sizes, every target and 1, 2, 3 and 8 threads.
#include <doctest/doctest.h>
#include <string.h>

#include <vector>

#include "simd/gemm.h"
#include "simd/thread_pool.h"
#include "tests/unit/float_bits.h"
#include "tests/unit/for_each_target.h"

namespace lockstep {
namespace {

using testing::Bits;

struct Problem {
  bool trans_a, trans_b;
  size_t m, n, k;
};

// Runs one product with padded leading dimensions; returns C. k_per_group > 0: the batch-grouped
// product.
std::vector<float> Run(const Problem& p, bool reference, simd::ThreadPool* pool, size_t k_per_group = 0,
                       const float* bias = nullptr) {
  const size_t lda = (p.trans_a ? p.m : p.k) + 3, ldb = (p.trans_b ? p.k : p.n) + 1, ldc = p.n + 2;
  // Specials about once per output's 2K operands: with one in 7, every long sum met an infinity
  // or a NaN, and every output was the canonical NaN whatever the kernel did.
  const uint32_t special_every = p.k < 4 ? 7 : static_cast<uint32_t>(2 * p.k);
  const std::vector<float> a = testing::MixedValues((p.trans_a ? p.k : p.m) * lda, 7, special_every);
  const std::vector<float> b = testing::MixedValues((p.trans_b ? p.n : p.k) * ldb, 8, special_every);
  std::vector<float> c(p.m * ldc, 99.0f);
  simd::GemmArgs g;
  g.trans_a = p.trans_a; g.trans_b = p.trans_b;
  g.m = p.m; g.n = p.n; g.k = p.k;
  g.a = a.data(); g.lda = lda; g.b = b.data(); g.ldb = ldb; g.c = c.data(); g.ldc = ldc;
  g.bias = bias;
  if (k_per_group > 0) {
    if (reference) simd::GemmBatchGroupedReference(g, k_per_group);
    else simd::GemmBatchGrouped(g, k_per_group, pool);
  } else if (reference) {
    simd::GemmReference(g);
  } else {
    simd::Gemm(g, pool);
  }
  return c;
}

void ExpectSame(const std::vector<float>& got, const std::vector<float>& want, const Problem& p) {
  REQUIRE(got.size() == want.size());
  // The values are sparse in specials (Run): many outputs must be finite, or a wrong sum would hide
  // behind the canonical NaN.
  size_t finite = 0;
  for (float x : want) finite += x - x == 0.0f;
  INFO("m=" << p.m << " n=" << p.n << " k=" << p.k << " finite " << finite << " of " << want.size());
  CHECK(finite * 3 >= want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    // Bit-identical, except that a NaN of the reference may have any payload while lockstep must
    // store the canonical 0x7FC00000 (contract rule 6).
    const bool both_nan = got[i] != got[i] && want[i] != want[i];
    if (both_nan ? Bits(got[i]) != 0x7FC00000u : Bits(got[i]) != Bits(want[i])) {
      FAIL("m=" << p.m << " n=" << p.n << " k=" << p.k << " ta=" << p.trans_a << " tb=" << p.trans_b
                << " element " << i << ": " << got[i] << " vs " << want[i]);
    }
  }
}

TEST_CASE("gemm equals the definition for all transposes, edge sizes and targets") {
  std::vector<Problem> problems;
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    // {29, 790, 500}: AVX-512's tall 12-row tiles beside 6-row ones, a partial last panel and two K
    // blocks.
    const size_t shapes[][3] = {{1, 1, 1},  {5, 7, 3},   {6, 16, 9},  {13, 33, 17},
                                {48, 256, 40}, {50, 260, 300}, {7, 1, 600}, {1, 70, 5}, {3, 4, 0},
                                {29, 790, 500}, {7, 1, 1700}, {20, 200, 900}};
    for (const auto& s : shapes) problems.push_back({ta, tb, s[0], s[1], s[2]});
  }
  testing::ForEachTarget([&](const simd::Target&) {
    for (const Problem& p : problems) ExpectSame(Run(p, false, nullptr), Run(p, true, nullptr), p);
  });
}

// 131 x 800 x 457: two column blocks (the second partial) and two K blocks. Rows that fit one
// block go whole to every task, each packing its own columns, where B has a panel per task (here
// at 2 and 3 threads): 72 x 500 x 100 reads B's full panels in place and packs the partial last
// one; 72 x 790 x 300 transposes B.
TEST_CASE("gemm gives the same bits for 1, 2, 3 and 8 threads") {
  for (const Problem& p : {Problem{false, true, 131, 300, 257}, Problem{false, false, 131, 800, 457},
                           Problem{false, false, 72, 500, 100}, Problem{false, true, 72, 790, 300}}) {
    const std::vector<float> want = Run(p, true, nullptr);
    for (size_t threads : {1, 2, 3, 8}) {
      simd::ThreadPool pool(threads);
      INFO("threads " << threads);
      ExpectSame(Run(p, false, &pool), want, p);
    }
  }
}

TEST_CASE("gemm stores the canonical NaN, whatever NaN or infinity made it, on every target") {
  // Row 0 of A holds a NaN with a sign and payload (0xFFC00001); row 1 makes inf - inf; row 2
  // inf * 0. Every result in those rows is NaN and must be stored as 0x7FC00000.
  const size_t m = 3, n = 5, k = 4;
  std::vector<float> a(m * k, 1.0f), b(k * n, 1.0f), c(m * n, 0.0f);
  uint32_t odd_nan = 0xFFC00001u;
  memcpy(&a[0 * k + 2], &odd_nan, 4);
  a[1 * k + 0] = __builtin_inff();
  a[1 * k + 1] = -__builtin_inff();
  a[2 * k + 3] = __builtin_inff();
  for (size_t j = 0; j < n; ++j) b[3 * n + j] = 0.0f;
  testing::ForEachTarget([&](const simd::Target&) {
    simd::GemmArgs g;
    g.m = m; g.n = n; g.k = k;
    g.a = a.data(); g.lda = k; g.b = b.data(); g.ldb = n; g.c = c.data(); g.ldc = n;
    simd::Gemm(g, nullptr);
    for (size_t i = 0; i < m * n; ++i) CHECK(Bits(c[i]) == 0x7FC00000u);
  });
}

// The batch-grouped product (docs/numerics.md, section 4) in one pass against its definition, a
// GEMM per group and the pairwise combination: group counts that are and are not powers of two
// (the odd partial moving up), a short last group, every transpose, target and thread count.
TEST_CASE("the batch-grouped gemm equals its definition: groups, odd counts, targets, threads") {
  std::vector<Problem> problems;
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    const size_t shapes[][3] = {{5, 7, 64}, {13, 33, 96}, {6, 32, 160}, {7, 40, 224}, {19, 70, 33 * 8 + 5},
                                {3, 5, 32 * 13}, {25, 17, 32 * 21 + 31}, {2, 3, 32 * 64}, {1, 1, 32 * 37}};
    for (const auto& s : shapes) problems.push_back({ta, tb, s[0], s[1], s[2]});
  }
  testing::ForEachTarget([&](const simd::Target&) {
    for (const Problem& p : problems) {
      INFO("groups of 32, k " << p.k);
      ExpectSame(Run(p, false, nullptr, 32), Run(p, true, nullptr, 32), p);
    }
  });
  const Problem big{true, false, 130, 140, 32 * 45 + 3};
  const std::vector<float> want = Run(big, true, nullptr, 32);
  for (size_t threads : {1, 2, 3, 8}) {
    simd::ThreadPool pool(threads);
    INFO("threads " << threads);
    ExpectSame(Run(big, false, &pool, 32), want, big);
  }
  // Groups of another size (a convolution's 32 samples x positions).
  ExpectSame(Run({true, false, 9, 11, 100 * 7 + 3}, false, nullptr, 100), Run({true, false, 9, 11, 100 * 7 + 3}, true, nullptr, 100),
             {true, false, 9, 11, 100 * 7 + 3});
}

// A Linear layer's bias added in the GEMM's store: the stored product plus bias[j], one rounded
// addition (special values included), on every target, transpose and edge size, K blocks and K == 0.
TEST_CASE("gemm with a bias equals the product plus the bias, added after") {
  testing::ForEachTarget([&](const simd::Target&) {
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      const size_t shapes[][3] = {{1, 1, 1}, {13, 33, 17}, {48, 256, 40}, {50, 260, 300}, {7, 1, 600},
                                  {100, 84, 120}, {3, 4, 0}, {29, 790, 500}};
      for (const auto& s : shapes) {
        const Problem p{ta, tb, s[0], s[1], s[2]};
        const std::vector<float> bias = testing::MixedValues(p.n, 9);
        std::vector<float> want = Run(p, false, nullptr);
        const size_t ldc = p.n + 2;
        for (size_t i = 0; i < p.m; ++i) {
          for (size_t j = 0; j < p.n; ++j) {
            const float sum = want[i * ldc + j] + bias[j];
            want[i * ldc + j] = sum != sum ? __builtin_nanf("") : sum;
          }
        }
        ExpectSame(Run(p, false, nullptr, 0, bias.data()), want, p);
        ExpectSame(Run(p, true, nullptr, 0, bias.data()), want, p);
      }
    }
  });
}

TEST_CASE("K == 0 gives +0") {
  const Problem p{false, false, 3, 4, 0};
  const std::vector<float> c = Run(p, false, nullptr);
  for (size_t i = 0; i < 3; ++i) {
    for (size_t j = 0; j < 4; ++j) CHECK(Bits(c[i * 6 + j]) == 0u);
  }
}

}  // namespace
}  // namespace lockstep
