// Every elementwise kernel against a plain scalar statement of its contract, on every target,
// for every count from 0 to past two of the widest vectors and at misaligned offsets.
#include <doctest/doctest.h>

#include <math.h>

#include <ios>
#include <vector>

#include "simd/elementwise.h"
#include "tests/unit/float_bits.h"
#include "tests/unit/for_each_target.h"

namespace lockstep {
namespace {

using simd::BinaryOp;
using simd::UnaryOp;
using testing::Bits;
using testing::FromBits;

constexpr uint32_t kNaN = 0x7FC00000u;

float Canonical(float x) { return x != x ? FromBits(kNaN) : x; }

float MaxRef(float a, float b) {
  if (a != a || b != b) return FromBits(kNaN);
  if (a == b) return FromBits(Bits(a) & Bits(b));  // +0 wins over -0
  return a > b ? a : b;
}
float MinRef(float a, float b) {
  if (a != a || b != b) return FromBits(kNaN);
  if (a == b) return FromBits(Bits(a) | Bits(b));  // -0 wins over +0
  return a < b ? a : b;
}

float BinaryRef(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::kAdd: return Canonical(a + b);
    case BinaryOp::kSub: return Canonical(a - b);
    case BinaryOp::kMul: return Canonical(a * b);
    case BinaryOp::kDiv: return Canonical(a / b);
    case BinaryOp::kMax: return MaxRef(a, b);
    case BinaryOp::kMin: return MinRef(a, b);
    case BinaryOp::kEq: return a == b ? 1.0f : 0.0f;
    case BinaryOp::kNe: return a != b ? 1.0f : 0.0f;
    case BinaryOp::kLt: return a < b ? 1.0f : 0.0f;
    case BinaryOp::kLe: return a <= b ? 1.0f : 0.0f;
    case BinaryOp::kGt: return a > b ? 1.0f : 0.0f;
    case BinaryOp::kGe: return a >= b ? 1.0f : 0.0f;
    case BinaryOp::kFmod: return Canonical(fmodf(a, b));
    case BinaryOp::kRemainder: {  // Python's %: as Python computes it for floats
      const float r = fmodf(a, b);
      return Canonical(r != 0.0f && (r < 0.0f) != (b < 0.0f) ? r + b : r);
    }
  }
  return 0.0f;
}

// Rounding to a format of `bits` significant bits whose smallest normal is 2^min_exp and largest
// finite value max_finite, by scaling in double and libm's nearbyint: another method than the
// kernels' bit arithmetic.
float RoundToFormat(float x, int bits, int min_exp, double max_finite) {
  if (x != x) return FromBits(kNaN);
  if (x == 0.0f || __builtin_isinf(x)) return x;
  const double a = fabs(static_cast<double>(x));
  const int e = ilogb(a) < min_exp ? min_exp : ilogb(a);
  double q = ldexp(nearbyint(ldexp(a, bits - 1 - e)), e - (bits - 1));
  if (q > max_finite) q = __builtin_inf();
  return copysignf(static_cast<float>(q), x);
}

float UnaryRef(UnaryOp op, float a) {
  switch (op) {
    case UnaryOp::kNeg: return Canonical(FromBits(Bits(a) ^ 0x80000000u));
    case UnaryOp::kAbs: return Canonical(FromBits(Bits(a) & 0x7FFFFFFFu));
    case UnaryOp::kSqrt: return Canonical(__builtin_sqrtf(a));
    case UnaryOp::kRelu: return a != a ? FromBits(kNaN) : (a > 0.0f ? a : 0.0f);
    case UnaryOp::kCanonicalize: return Canonical(a);
    case UnaryOp::kReciprocal: return Canonical(1.0f / a);
    case UnaryOp::kSquare: return Canonical(a * a);
    // libm's, in the default rounding mode (nearbyintf: to nearest, ties to even)
    case UnaryOp::kFloor: return Canonical(floorf(a));
    case UnaryOp::kCeil: return Canonical(ceilf(a));
    case UnaryOp::kRoundEven: return Canonical(nearbyintf(a));
    case UnaryOp::kRoundFloat16: return RoundToFormat(a, 11, -14, 65504.0);
    case UnaryOp::kRoundBFloat16: return RoundToFormat(a, 8, -126, 3.3895313892515355e38);
  }
  return 0.0f;
}

const BinaryOp kBinaryOps[] = {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kDiv,
                               BinaryOp::kMax, BinaryOp::kMin, BinaryOp::kEq,  BinaryOp::kNe,
                               BinaryOp::kLt,  BinaryOp::kLe,  BinaryOp::kGt,  BinaryOp::kGe,
                               BinaryOp::kFmod, BinaryOp::kRemainder};
const UnaryOp kUnaryOps[] = {UnaryOp::kNeg,          UnaryOp::kAbs,        UnaryOp::kSqrt,
                             UnaryOp::kRelu,         UnaryOp::kCanonicalize, UnaryOp::kReciprocal,
                             UnaryOp::kSquare,       UnaryOp::kFloor,        UnaryOp::kCeil,
                             UnaryOp::kRoundEven,    UnaryOp::kRoundFloat16, UnaryOp::kRoundBFloat16};

constexpr size_t kMaxCount = 2 * 64 + 3;  // past two vectors of the widest target (SVE 2048)

TEST_CASE("binary kernels match the scalar contract on every target, count and offset") {
  const std::vector<float> a = testing::MixedValues(kMaxCount + 4, 1);
  const std::vector<float> b = testing::MixedValues(kMaxCount + 4, 2);
  testing::ForEachTarget([&](const simd::Target&) {
    for (BinaryOp op : kBinaryOps) {
      INFO("op " << simd::BinaryOpName(op));
      for (size_t offset = 0; offset < 4; ++offset) {
        for (size_t n = 0; n <= kMaxCount; ++n) {
          std::vector<float> out(n + 1, 42.0f);
          simd::Binary(op, a.data() + offset, b.data() + offset, out.data(), n);
          for (size_t i = 0; i < n; ++i) {
            const float want = BinaryRef(op, a[offset + i], b[offset + i]);
            if (Bits(out[i]) != Bits(want)) {
              FAIL_CHECK("n=" << n << " offset=" << offset << " i=" << i << " a=" << a[offset + i]
                              << " b=" << b[offset + i] << " got bits " << Bits(out[i])
                              << " want " << Bits(want));
            }
          }
          CHECK(out[n] == 42.0f);  // nothing written past the end
          std::vector<float> right(n), left(n);
          simd::BinaryScalarRight(op, a.data() + offset, b[0], right.data(), n);
          simd::BinaryScalarLeft(op, b[1], a.data() + offset, left.data(), n);
          for (size_t i = 0; i < n; ++i) {
            CHECK(Bits(right[i]) == Bits(BinaryRef(op, a[offset + i], b[0])));
            CHECK(Bits(left[i]) == Bits(BinaryRef(op, b[1], a[offset + i])));
          }
        }
      }
    }
  });
}

TEST_CASE("unary kernels and select match the scalar contract on every target") {
  const std::vector<float> a = testing::MixedValues(kMaxCount + 4, 3);
  const std::vector<float> b = testing::MixedValues(kMaxCount + 4, 4);
  const std::vector<float> cond = testing::MixedValues(kMaxCount + 4, 5);
  testing::ForEachTarget([&](const simd::Target&) {
    for (size_t offset = 0; offset < 4; ++offset) {
      for (size_t n = 0; n <= kMaxCount; ++n) {
        for (UnaryOp op : kUnaryOps) {
          std::vector<float> out(n);
          simd::Unary(op, a.data() + offset, out.data(), n);
          for (size_t i = 0; i < n; ++i) {
            INFO("op " << simd::UnaryOpName(op) << " x=" << a[offset + i]);
            CHECK(Bits(out[i]) == Bits(UnaryRef(op, a[offset + i])));
          }
        }
        std::vector<float> out(n);
        simd::Select(cond.data() + offset, a.data(), b.data() + offset, out.data(), n);
        for (size_t i = 0; i < n; ++i) {
          const float want = Canonical(cond[offset + i] != 0.0f ? a[i] : b[offset + i]);
          CHECK(Bits(out[i]) == Bits(want));
        }
      }
    }
  });
}

TEST_CASE("special values follow the contract exactly") {
  const float nan = FromBits(0xFFC00001u), pz = 0.0f, nz = -0.0f, inf = FromBits(0x7F800000u);
  float out;
  simd::Binary(BinaryOp::kMax, &pz, &nz, &out, 1);
  CHECK(Bits(out) == 0x00000000u);  // max(+0, -0) = +0
  simd::Binary(BinaryOp::kMin, &pz, &nz, &out, 1);
  CHECK(Bits(out) == 0x80000000u);  // min(+0, -0) = -0
  const float one = 1.0f;
  simd::Binary(BinaryOp::kMax, &one, &nan, &out, 1);
  CHECK(Bits(out) == kNaN);  // NaN propagates (NEON's fmax would give 1)
  simd::Binary(BinaryOp::kSub, &inf, &inf, &out, 1);
  CHECK(Bits(out) == kNaN);  // x86 would give 0xFFC00000
  simd::Unary(UnaryOp::kRelu, &nz, &out, 1);
  CHECK(Bits(out) == 0x00000000u);  // ReLU(-0) = +0
  simd::Unary(UnaryOp::kRelu, &nan, &out, 1);
  CHECK(Bits(out) == kNaN);
  const float tiny = FromBits(0x00000001u), half = 0.5f;
  simd::Binary(BinaryOp::kMul, &tiny, &half, &out, 1);
  CHECK(Bits(out) == 0x00000000u);  // ties-to-even into zero, not a flush
  const float smallest_normal = FromBits(0x00800000u);
  simd::Binary(BinaryOp::kMul, &smallest_normal, &half, &out, 1);
  CHECK(Bits(out) == 0x00400000u);  // subnormal result kept
}

// floor, ceil and round against libm on a strided sample of all 2^32 floats (every exponent,
// both signs, NaNs and infinities) and at the halfway points, on every target.
TEST_CASE("rounding to an integer matches libm bit for bit on every target") {
  std::vector<float> x;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 65521) x.push_back(FromBits(static_cast<uint32_t>(u)));
  for (float v : {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 8388607.5f, -8388607.5f, 4194303.5f, 0.49999997f,
                  -0.0f, 0.0f, 8388608.0f, -16777217.0f, 1e-45f, -1e-45f}) {
    x.push_back(v);
  }
  std::vector<float> out(x.size());
  testing::ForEachTarget([&](const simd::Target&) {
    for (UnaryOp op : {UnaryOp::kFloor, UnaryOp::kCeil, UnaryOp::kRoundEven}) {
      INFO("op " << simd::UnaryOpName(op));
      simd::Unary(op, x.data(), out.data(), x.size());
      size_t wrong = 0;
      for (size_t i = 0; i < x.size(); ++i) wrong += Bits(out[i]) != Bits(UnaryRef(op, x[i]));
      CHECK(wrong == 0);
    }
  });
}

// fmod and remainder against libm on pairs of every exponent distance (subnormals, the largest
// floats, equal and adjacent magnitudes, zeros, infinities, NaN), on every target.
TEST_CASE("fmod and remainder match libm bit for bit on every target") {
  std::vector<float> a, b;
  uint64_t state = 12345;
  const auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state >> 32);
  };
  for (int i = 0; i < 200000; ++i) {
    a.push_back(FromBits(next()));
    b.push_back(FromBits(next()));
  }
  const float special[] = {0.0f, -0.0f, 1.0f, -1.0f, 3.0f, 0.1f, 1e-45f, 1.1754942e-38f, 3.4028235e38f,
                           __builtin_inff(), -__builtin_inff(), FromBits(kNaN), 7.5f, -2.5f, 16777216.0f};
  for (float x : special) {
    for (float y : special) {
      a.push_back(x);
      b.push_back(y);
    }
  }
  std::vector<float> out(a.size());
  testing::ForEachTarget([&](const simd::Target&) {
    for (BinaryOp op : {BinaryOp::kFmod, BinaryOp::kRemainder}) {
      INFO("op " << simd::BinaryOpName(op));
      simd::Binary(op, a.data(), b.data(), out.data(), a.size());
      size_t wrong = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        if (Bits(out[i]) != Bits(BinaryRef(op, a[i], b[i])) && wrong++ < 5) {
          INFO("a " << a[i] << " b " << b[i]);
          CHECK(Bits(out[i]) == Bits(BinaryRef(op, a[i], b[i])));
        }
      }
      CHECK(wrong == 0);
    }
  });
}

// Rounding to float16 and bfloat16 against a scaling reference on a strided sample of all 2^32
// floats and at the formats' edges (ties, the largest finite values, subnormals), on every target.
TEST_CASE("rounding to float16 and bfloat16 is to nearest even on every target") {
  std::vector<float> x;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 65521) x.push_back(FromBits(static_cast<uint32_t>(u)));
  for (float v : {65504.0f, 65519.99f, 65520.0f, 65536.0f, 1.0009765625f, 1.00048828125f, 1.00146484375f,
                  6.103515625e-05f, 6.0975551605e-05f, 5.9604644775e-08f, 2.98023223877e-08f, 2.98023259e-08f,
                  8.94069671631e-08f, 1.00390625f, 1.005859375f, 3.3895314e38f, 3.4028235e38f, -1.00048828125f,
                  1e-45f, 1.1754942e-38f}) {
    x.push_back(v);
    x.push_back(-v);
  }
  x.push_back(FromBits(0x7F800001u));  // a signaling NaN: its payload must not reach the exponent
  std::vector<float> out(x.size());
  testing::ForEachTarget([&](const simd::Target&) {
    for (UnaryOp op : {UnaryOp::kRoundFloat16, UnaryOp::kRoundBFloat16}) {
      INFO("op " << simd::UnaryOpName(op));
      simd::Unary(op, x.data(), out.data(), x.size());
      size_t wrong = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        if (Bits(out[i]) != Bits(UnaryRef(op, x[i])) && wrong++ < 5) {
          INFO("x " << x[i] << " bits " << std::hex << Bits(x[i]));
          CHECK(Bits(out[i]) == Bits(UnaryRef(op, x[i])));
        }
      }
      CHECK(wrong == 0);
    }
  });
}

}  // namespace
}  // namespace lockstep
