// The CPU's broadcast arithmetic (core/backend/cpu_layers.h BinaryBroadcast) against its definition:
// the whole-operand kernel on both operands expanded. Every route is taken: a value per run (runs
// long and short), a repeated trailing block (long and short), both operands broadcast, sizes past
// the expansion's chunks, on 1 and 2 threads.
#include <doctest/doctest.h>

#include <vector>

#include "core/backend/cpu_layers.h"
#include "simd/elementwise.h"
#include "simd/thread_pool.h"
#include "tests/unit/float_bits.h"

namespace lockstep {
namespace {

std::vector<float> Mixed(size_t n, uint32_t seed) {
  std::vector<float> out(n);
  uint32_t state = seed * 2654435761u + 5u;
  for (size_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    const uint32_t pick = (state >> 24) % 32;
    out[i] = pick == 0 ? testing::FromBits(0xFFC00001u) : pick == 1 ? -0.0f
                                                                    : static_cast<float>(static_cast<int32_t>(state >> 8) % 2001 - 1000) / 37.0f;
  }
  return out;
}

std::vector<float> Expand(const std::vector<float>& x, size_t div, size_t mod, size_t n) {
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = x[(i / div) % mod];
  return out;
}

TEST_CASE("broadcast arithmetic equals the whole-operand kernel on the operands expanded") {
  struct Pattern {
    size_t a_div, a_mod, b_div, b_mod, n;  // mod 0: n (a whole operand)
  };
  const Pattern patterns[] = {
      {1, 0, 1024, 24, 2 * 24 * 1024},  // a per-channel value over 32x32 planes
      {1, 0, 4, 320, 8 * 320 * 4},       // over 2x2 planes: short runs, several chunks
      {16, 80, 1, 0, 2 * 80 * 16},       // the value on the left
      {1, 0, 1, 1000, 20000},            // a long trailing block, repeated
      {1, 0, 1, 7, 21007},               // a short one
      {3, 11, 5, 13, 15015},             // both broadcast
      {1, 0, 100, 7, 9100},
      {1, 0, 4, 1000, 20 * 1000 * 4}};   // enough chunks for the pool
  const size_t threads_before = simd::DefaultThreadCount();
  for (size_t threads : {1, 2}) {
    simd::SetDefaultThreadCount(threads);
    for (const Pattern& p : patterns) {
      const size_t a_mod = p.a_mod == 0 ? p.n : p.a_mod, b_mod = p.b_mod == 0 ? p.n : p.b_mod;
      const std::vector<float> a = Mixed(a_mod, 1), b = Mixed(b_mod, 2);
      const std::vector<float> ea = Expand(a, p.a_div, a_mod, p.n), eb = Expand(b, p.b_div, b_mod, p.n);
      for (backend::BinaryOp op : {backend::BinaryOp::kSub, backend::BinaryOp::kDiv, backend::BinaryOp::kMax}) {
        std::vector<float> got(p.n, 123.0f), want(p.n);
        cpu_layers::BinaryBroadcast(op, {a.data(), p.a_div, a_mod}, {b.data(), p.b_div, b_mod}, got.data(), p.n);
        simd::Binary(static_cast<simd::BinaryOp>(op), ea.data(), eb.data(), want.data(), p.n);
        INFO("threads " << threads << " a " << p.a_div << "/" << a_mod << " b " << p.b_div << "/" << b_mod << " n "
                        << p.n << " op " << static_cast<int>(op));
        size_t first_difference = 0;
        while (first_difference < p.n && testing::Bits(got[first_difference]) == testing::Bits(want[first_difference])) {
          ++first_difference;
        }
        INFO("first differing element " << first_difference);
        REQUIRE(first_difference == p.n);
      }
    }
  }
  simd::SetDefaultThreadCount(threads_before);
}

}  // namespace
}  // namespace lockstep
