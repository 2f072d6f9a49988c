// The float32 first steps of the elementary functions (simd/math_fast-inl.h) against the float64
// evaluation alone (simd::MathFloat64, the path that answered every lane before them), bit for bit
// on every runnable target: a strided sample of every bit pattern, dense windows of consecutive
// floats where the steps change piece, table entry or domain, typical activations, and blocks where
// many lanes take the float64 path, in place and not. The exhaustive comparison and the proof are
// tools/prove-math (--against-float64, and without options).
#include <doctest/doctest.h>

#include <stdint.h>
#include <string.h>

#include <string>
#include <vector>

#include "simd/math.h"
#include "simd/targets.h"
#include "tests/unit/float_bits.h"
#include "tests/unit/for_each_target.h"

namespace lockstep {
namespace {

using simd::MathFn;
using testing::Bits;
using testing::FromBits;

// The functions with a first step.
const MathFn kFirstStepFns[] = {MathFn::kExp, MathFn::kErf, MathFn::kGeluErf, MathFn::kSigmoid};

void AddWindow(std::vector<float>* v, float centre, int half_width) {
  const uint32_t c = Bits(centre);
  for (int d = -half_width; d <= half_width; ++d) v->push_back(FromBits(c + static_cast<uint32_t>(d)));
}

std::vector<float> Inputs() {
  std::vector<float> v;
  for (uint64_t i = 0; i < (uint64_t{1} << 20); ++i) {  // every exponent, both signs, varied mantissas
    v.push_back(FromBits(static_cast<uint32_t>(i * 4096u + (i * 2654435761u >> 20) % 4096u)));
  }
  // Domain edges of exp, erf, gelu_erf and sigmoid, the bands in between, and the boundaries of
  // erf's and gelu_erf's pieces (odd multiples of 1/32) and sigmoid's (odd multiples of 1/16).
  for (float c : {-104.0f, -103.97208f, -87.33654f, -86.0f, 88.5f, 88.72284f, 89.0f, 3.9375f, -3.9375f,
                  0x1p-100f, -0x1p-100f, 0x1p-126f, 1.0f, -1.0f, 0.0f, -4.03125f, 3.96875f, -4.0625f, 5.5f,
                  0x1p-60f, -0x1p-60f}) {
    AddWindow(&v, c, 2048);
  }
  for (int i = 1; i < 128; ++i) {
    AddWindow(&v, i / 32.0f, 256);
    AddWindow(&v, -i / 32.0f, 64);
  }
  // exp's table index changes every ln2/64.
  for (int k = -60; k <= 60; ++k) AddWindow(&v, static_cast<float>(k * 0.010830424696249145), 64);
  // Typical activations: a uniform grid over [-12, 12].
  for (int i = -(1 << 16); i <= (1 << 16); ++i) v.push_back(static_cast<float>(i) * (12.0f / 65536));
  return v;
}

std::string Hex(float x) {
  char buf[64];
  snprintf(buf, sizeof(buf), "%a (0x%08X)", x, Bits(x));
  return buf;
}

TEST_CASE("math first steps: the float64 evaluation's bits on every target") {
  const std::vector<float> in = Inputs();
  for (MathFn fn : kFirstStepFns) {
    INFO("function " << simd::MathFnName(fn));
    testing::ForEachTarget([&](const simd::Target& t) {
      std::vector<float> got(in.size()), want(in.size());
      simd::Math(fn, in.data(), got.data(), in.size());
      simd::MathFloat64(fn, in.data(), want.data(), in.size());
      size_t bad = 0;
      for (size_t i = 0; i < in.size(); ++i) {
        if (Bits(got[i]) != Bits(want[i]) && ++bad <= 5) {
          INFO(t.name << ": x = " << Hex(in[i]) << " got " << Hex(got[i]) << " want " << Hex(want[i]));
          CHECK(false);
        }
      }
      CHECK(bad == 0);
    });
  }
}

TEST_CASE("math first steps: blocks with many float64 lanes, in place and not") {
  // Every third element lies in a band that the first steps leave to float64 (exp between -104 and
  // -86, erf below 2^-100, gelu_erf and sigmoid below -4.03125), so whole blocks of pending lanes are written
  // back; lengths cross the driver's blocks and end in partial vectors.
  for (MathFn fn : kFirstStepFns) {
    const float band = fn == MathFn::kExp ? -95.5f : fn == MathFn::kErf ? 0x1.8p-120f : -4.5f;
    for (size_t n : {size_t{1}, size_t{17}, size_t{2047}, size_t{2048}, size_t{2049}, size_t{6151}}) {
      std::vector<float> in(n);
      for (size_t i = 0; i < n; ++i) {
        in[i] = i % 3 == 0 ? band * (1.0f + static_cast<float>(i) * 0x1p-20f)
                           : static_cast<float>(static_cast<int>(i % 97) - 48) * 0.0625f;
      }
      std::vector<float> want(n);
      simd::MathFloat64(fn, in.data(), want.data(), n);
      testing::ForEachTarget([&](const simd::Target&) {
        INFO(simd::MathFnName(fn) << " n = " << n);
        std::vector<float> out(n + 1, 7.0f);
        simd::Math(fn, in.data(), out.data(), n);
        CHECK(memcmp(out.data(), want.data(), n * sizeof(float)) == 0);
        CHECK(out[n] == 7.0f);
        std::vector<float> inplace(in);
        simd::Math(fn, inplace.data(), inplace.data(), n);
        CHECK(memcmp(inplace.data(), want.data(), n * sizeof(float)) == 0);
      });
    }
  }
}

}  // namespace
}  // namespace lockstep
