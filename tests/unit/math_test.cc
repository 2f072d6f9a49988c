// The correctly rounded elementary functions (simd/math.h) on every runnable SIMD target: a strided
// sample of 2^20 inputs per function against a reference (glibc/musl double filter, MPFR for what
// the filter cannot decide; without MPFR those few are skipped), every exception-table entry,
// special values, identical bits on every target, counts 0..2 vectors, misaligned and in-place
// buffers, and the scalar float64 helpers. The exhaustive proof is tools/prove-math.
#include <doctest/doctest.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <string>
#include <vector>

#include "simd/math.h"
#include "simd/targets.h"
#include "tests/unit/float_bits.h"
#include "tests/unit/for_each_target.h"

#if defined(LOCKSTEP_HAVE_MPFR) && LOCKSTEP_HAVE_MPFR
#include <mpfr.h>
#define LOCKSTEP_MATH_TEST_MPFR 1
#else
#define LOCKSTEP_MATH_TEST_MPFR 0
#endif

namespace lockstep {
namespace {

using simd::MathFn;
using testing::Bits;
using testing::FromBits;

constexpr uint32_t kNaNBits = 0x7FC00000u;
const float kInf = FromBits(0x7F800000u);

// One function under test: a MathFn, an integer power, or pow(x, 0.5).
struct Fn {
  enum Kind { kMath, kPowInt, kPowHalf } kind;
  MathFn fn;
  int exponent;
  std::string Name() const {
    if (kind == kMath) return simd::MathFnName(fn);
    if (kind == kPowInt) return "pow_int_" + std::to_string(exponent);
    return "pow_half";
  }
  void Run(const float* in, float* out, size_t n) const {
    if (kind == kMath) simd::Math(fn, in, out, n);
    else if (kind == kPowInt) simd::PowInt(in, exponent, out, n);
    else simd::PowHalf(in, out, n);
  }
};

std::vector<Fn> AllFns() {
  std::vector<Fn> v;
  for (int f = 0; f < simd::kMathFnCount; ++f) v.push_back({Fn::kMath, static_cast<MathFn>(f), 0});
  for (int e = simd::kPowIntProvenMin; e <= simd::kPowIntProvenMax; ++e) v.push_back({Fn::kPowInt, MathFn::kExp, e});
  v.push_back({Fn::kPowHalf, MathFn::kExp, 0});
  return v;
}

// ---- reference ----
// Returns true and sets *out when the answer is certain: special inputs, then a double filter
// (libm error < 2^-44) accepted only when v(1 +- 2^-40) round to the same float, then MPFR.
bool SpecialRef(const Fn& f, float x, float* out) {
  const bool nan = x != x, inf = isinf(x), zero = x == 0, neg = signbit(x);
  const float qnan = FromBits(kNaNBits);
  if (f.kind == Fn::kPowInt) {
    if (f.exponent == 0) { *out = 1.0f; return true; }
    if (nan) { *out = qnan; return true; }
    if (zero || inf) {
      double p = x;
      for (int i = 1; i < abs(f.exponent); ++i) p *= x;
      *out = static_cast<float>(f.exponent < 0 ? 1.0 / p : p);
      return true;
    }
    return false;
  }
  if (nan) { *out = qnan; return true; }
  if (f.kind == Fn::kPowHalf) {
    if (zero) { *out = 0.0f; return true; }
    if (inf) { *out = kInf; return true; }
    if (neg) { *out = qnan; return true; }
    return false;
  }
  switch (f.fn) {
    case MathFn::kExp: if (inf) { *out = neg ? 0.0f : kInf; return true; } return false;
    case MathFn::kLog:
      if (zero) { *out = -kInf; return true; }
      if (neg) { *out = qnan; return true; }
      if (inf) { *out = kInf; return true; }
      return false;
    case MathFn::kTanh:
    case MathFn::kErf:
      if (inf) { *out = neg ? -1.0f : 1.0f; return true; }
      if (zero) { *out = x; return true; }
      return false;
    case MathFn::kSigmoid:
      if (inf) { *out = neg ? 0.0f : 1.0f; return true; }
      if (zero) { *out = 0.5f; return true; }
      return false;
    case MathFn::kGeluErf:
    case MathFn::kGeluTanh:
      if (inf) { *out = neg ? -0.0f : kInf; return true; }
      if (zero) { *out = x; return true; }
      if (fabsf(x) < 0x1p-60f) {  // x/2 + O(x^2), O(x^2) > 0 and far below a double ulp of x/2
        *out = static_cast<float>(nextafter(0.5 * x, HUGE_VAL));
        return true;
      }
      return false;
    case MathFn::kSoftplus: if (inf) { *out = neg ? 0.0f : kInf; return true; } return false;
    case MathFn::kRsqrt:
      if (zero) { *out = neg ? -kInf : kInf; return true; }
      if (neg) { *out = qnan; return true; }
      if (inf) { *out = 0.0f; return true; }
      return false;
    case MathFn::kSin:
    case MathFn::kTan:
      if (inf) { *out = qnan; return true; }
      if (zero) { *out = x; return true; }
      return false;
    case MathFn::kCos: if (inf) { *out = qnan; return true; } return false;
    case MathFn::kAsin:
      if (fabsf(x) > 1) { *out = qnan; return true; }
      if (zero) { *out = x; return true; }
      return false;
    case MathFn::kAcos: if (fabsf(x) > 1) { *out = qnan; return true; } return false;
    case MathFn::kAtan: if (zero) { *out = x; return true; } return false;
    case MathFn::kSinh:
    case MathFn::kAsinh: if (inf || zero) { *out = x; return true; } return false;
    case MathFn::kCosh: if (inf) { *out = kInf; return true; } return false;
    case MathFn::kAcosh:
      if (x < 1) { *out = qnan; return true; }
      if (inf) { *out = kInf; return true; }
      return false;
    case MathFn::kAtanh:
      if (fabsf(x) > 1) { *out = qnan; return true; }
      if (fabsf(x) == 1) { *out = neg ? -kInf : kInf; return true; }
      if (zero) { *out = x; return true; }
      return false;
  }
  return false;
}

double FilterValue(const Fn& f, float xf) {
  const double x = xf;
  if (f.kind == Fn::kPowInt) {
    double p = x;
    for (int i = 1; i < abs(f.exponent); ++i) p *= x;
    return f.exponent < 0 ? 1.0 / p : p;
  }
  if (f.kind == Fn::kPowHalf) return sqrt(x);
  switch (f.fn) {
    case MathFn::kExp: return exp(x);
    case MathFn::kLog: return log(x);
    case MathFn::kTanh: return tanh(x);
    case MathFn::kSigmoid: return 1.0 / (1.0 + exp(-x));
    case MathFn::kErf: return erf(x);
    case MathFn::kGeluErf: {
      const double t = x * 0.70710678118654752440;
      return x < 0 ? 0.5 * x * erfc(-t) : 0.5 * x * (1.0 + erf(t));
    }
    case MathFn::kGeluTanh: {
      const double c = 2.0 * sqrt(2.0 / 3.14159265358979323846);
      return x / (1.0 + exp(-x * (c + c * 0.044715 * (x * x))));
    }
    case MathFn::kSoftplus: return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
    case MathFn::kRsqrt: return 1.0 / sqrt(x);
    case MathFn::kSin: return sin(x);
    case MathFn::kCos: return cos(x);
    case MathFn::kTan: return tan(x);
    case MathFn::kAsin: return asin(x);
    case MathFn::kAcos: return acos(x);
    case MathFn::kAtan: return atan(x);
    case MathFn::kSinh: return sinh(x);
    case MathFn::kCosh: return cosh(x);
    case MathFn::kAsinh: return asinh(x);
    case MathFn::kAcosh: return acosh(x);
    case MathFn::kAtanh: return atanh(x);
  }
  return 0;
}

#if LOCKSTEP_MATH_TEST_MPFR
float MpfrRef(const Fn& f, float xf) {
  for (mpfr_prec_t p = 96; p <= 4096; p *= 2) {
    mpfr_t x, y, t, u;
    mpfr_inits2(p + 32, t, u, (mpfr_ptr)nullptr);
    mpfr_init2(x, 24);
    mpfr_init2(y, p);
    mpfr_set_flt(x, xf, MPFR_RNDN);
    int exact = 0;  // 1: one correctly rounded call that was exact
    bool one_call = true;
    if (f.kind == Fn::kPowInt) {
      exact = mpfr_pow_si(y, x, f.exponent, MPFR_RNDN) == 0;
    } else if (f.kind == Fn::kPowHalf) {
      exact = mpfr_sqrt(y, x, MPFR_RNDN) == 0;
    } else {
      switch (f.fn) {
        case MathFn::kExp: exact = mpfr_exp(y, x, MPFR_RNDN) == 0; break;
        case MathFn::kLog: exact = mpfr_log(y, x, MPFR_RNDN) == 0; break;
        case MathFn::kTanh: exact = mpfr_tanh(y, x, MPFR_RNDN) == 0; break;
        case MathFn::kErf: exact = mpfr_erf(y, x, MPFR_RNDN) == 0; break;
        case MathFn::kRsqrt: exact = mpfr_rec_sqrt(y, x, MPFR_RNDN) == 0; break;
        case MathFn::kSin: exact = mpfr_sin(y, x, MPFR_RNDN) == 0; break;
        case MathFn::kCos: exact = mpfr_cos(y, x, MPFR_RNDN) == 0; break;
        case MathFn::kTan: exact = mpfr_tan(y, x, MPFR_RNDN) == 0; break;
        case MathFn::kAsin: exact = mpfr_asin(y, x, MPFR_RNDN) == 0; break;
        case MathFn::kAcos: exact = mpfr_acos(y, x, MPFR_RNDN) == 0; break;
        case MathFn::kAtan: exact = mpfr_atan(y, x, MPFR_RNDN) == 0; break;
        case MathFn::kSinh: exact = mpfr_sinh(y, x, MPFR_RNDN) == 0; break;
        case MathFn::kCosh: exact = mpfr_cosh(y, x, MPFR_RNDN) == 0; break;
        case MathFn::kAsinh: exact = mpfr_asinh(y, x, MPFR_RNDN) == 0; break;
        case MathFn::kAcosh: exact = mpfr_acosh(y, x, MPFR_RNDN) == 0; break;
        case MathFn::kAtanh: exact = mpfr_atanh(y, x, MPFR_RNDN) == 0; break;
        case MathFn::kSigmoid:
          one_call = false;
          mpfr_neg(t, x, MPFR_RNDN);
          mpfr_exp(t, t, MPFR_RNDN);
          mpfr_add_ui(t, t, 1, MPFR_RNDN);
          mpfr_ui_div(y, 1, t, MPFR_RNDN);
          break;
        case MathFn::kGeluErf:
          one_call = false;
          mpfr_sqrt_ui(t, 2, MPFR_RNDN);
          mpfr_div(t, x, t, MPFR_RNDN);
          if (xf < 0) {
            mpfr_neg(t, t, MPFR_RNDN);
            mpfr_erfc(t, t, MPFR_RNDN);
          } else {
            mpfr_erf(t, t, MPFR_RNDN);
            mpfr_add_ui(t, t, 1, MPFR_RNDN);
          }
          mpfr_mul(t, t, x, MPFR_RNDN);
          mpfr_div_2ui(y, t, 1, MPFR_RNDN);
          break;
        case MathFn::kGeluTanh:
          one_call = false;
          mpfr_const_pi(t, MPFR_RNDN);
          mpfr_ui_div(t, 2, t, MPFR_RNDN);
          mpfr_sqrt(t, t, MPFR_RNDN);
          mpfr_mul_2ui(t, t, 1, MPFR_RNDN);
          mpfr_set_str(u, "0.044715", 10, MPFR_RNDN);
          mpfr_mul(u, u, t, MPFR_RNDN);
          mpfr_mul(u, u, x, MPFR_RNDN);
          mpfr_mul(u, u, x, MPFR_RNDN);
          mpfr_add(t, t, u, MPFR_RNDN);
          mpfr_mul(t, t, x, MPFR_RNDN);
          mpfr_neg(t, t, MPFR_RNDN);
          mpfr_exp(t, t, MPFR_RNDN);
          mpfr_add_ui(t, t, 1, MPFR_RNDN);
          mpfr_div(y, x, t, MPFR_RNDN);
          break;
        case MathFn::kSoftplus:
          one_call = false;
          mpfr_exp(t, x, MPFR_RNDN);
          mpfr_log1p(y, t, MPFR_RNDN);
          break;
      }
    }
    const mpfr_prec_t err = one_call ? p - 1 : p - 24;
    const bool ok = exact || mpfr_zero_p(y) || mpfr_can_round(y, err, MPFR_RNDN, MPFR_RNDZ, 25);
    const float r = mpfr_get_flt(y, MPFR_RNDN);
    mpfr_clears(x, y, t, u, (mpfr_ptr)nullptr);
    if (ok) return r;
  }
  FAIL("MPFR could not round " << f.Name() << "(" << xf << ")");
  return 0;
}
#endif

// Sets *out to the correctly rounded result; false when undecidable without MPFR.
bool Reference(const Fn& f, float x, float* out) {
  if (SpecialRef(f, x, out)) return true;
  const double v = FilterValue(f, x);
  const float lo = static_cast<float>(v * (1 - 0x1p-40)), hi = static_cast<float>(v * (1 + 0x1p-40));
  if (Bits(lo) == Bits(hi) && lo == lo) {
    *out = lo;
    return true;
  }
#if LOCKSTEP_MATH_TEST_MPFR
  *out = MpfrRef(f, x);
  return true;
#else
  return false;
#endif
}

std::string Hex(float x) {
  char buf[64];
  snprintf(buf, sizeof(buf), "%a (0x%08X)", x, Bits(x));
  return buf;
}

// Inputs 0, 4096, 2*4096, ...: 2^20 of them, every exponent and sign, plus a phase that varies
// the low mantissa bits.
std::vector<float> StridedSample() {
  std::vector<float> v;
  v.reserve(1u << 20);
  for (uint64_t i = 0; i < (uint64_t{1} << 20); ++i) {
    v.push_back(FromBits(static_cast<uint32_t>(i * 4096u + (i * 2654435761u >> 20) % 4096u)));
  }
  return v;
}

TEST_CASE("math: strided sample of 2^20 inputs is correctly rounded on every target") {
  const std::vector<float> in = StridedSample();
  for (const Fn& f : AllFns()) {
    INFO("function " << f.Name());
    std::vector<float> want(in.size());
    std::vector<char> known(in.size());
    size_t undecided = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      known[i] = Reference(f, in[i], &want[i]);
      if (!known[i]) ++undecided;
    }
    std::vector<float> first;
    testing::ForEachTarget([&](const simd::Target& t) {
      std::vector<float> out(in.size());
      f.Run(in.data(), out.data(), in.size());
      size_t bad = 0;
      for (size_t i = 0; i < in.size(); ++i) {
        if (known[i] && Bits(out[i]) != Bits(want[i])) {
          if (++bad <= 5) {
            INFO(t.name << ": x = " << Hex(in[i]) << " got " << Hex(out[i]) << " want " << Hex(want[i]));
            CHECK(false);
          }
        }
      }
      CHECK(bad == 0);
      if (first.empty()) {
        first = out;
      } else {
        CHECK(memcmp(first.data(), out.data(), out.size() * 4) == 0);  // same bits everywhere
      }
    });
    if (undecided != 0) MESSAGE(f.Name() << ": " << undecided << " sample inputs left unchecked (no MPFR)");
  }
}

TEST_CASE("math: every exception-table entry, on every target") {
  for (const Fn& f : AllFns()) {
    if (f.kind == Fn::kPowHalf) continue;
    size_t n = 0;
    const uint32_t* pairs = simd::MathExceptionTable(f.Name().c_str(), &n);
    REQUIRE(pairs != nullptr);
    std::vector<float> in(n), want(n);
    for (size_t i = 0; i < n; ++i) {
      in[i] = FromBits(pairs[2 * i]);
      want[i] = FromBits(pairs[2 * i + 1]);
      if (i > 0) CHECK(pairs[2 * i - 2] < pairs[2 * i]);  // sorted, no duplicates
#if LOCKSTEP_MATH_TEST_MPFR
      float ref;
      REQUIRE(Reference(f, in[i], &ref));
      CHECK(Bits(ref) == pairs[2 * i + 1]);
#endif
    }
    testing::ForEachTarget([&](const simd::Target&) {
      std::vector<float> out(n);
      f.Run(in.data(), out.data(), n);
      for (size_t i = 0; i < n; ++i) {
        INFO(f.Name() << " x = " << Hex(in[i]));
        CHECK(Bits(out[i]) == Bits(want[i]));
      }
    });
  }
}

TEST_CASE("math: special values on every target") {
  std::vector<float> in = {0.0f, -0.0f, kInf, -kInf, FromBits(0x7FC00000u), FromBits(0xFFC00001u),
                           FromBits(0x7F800001u), 1.0f, -1.0f, 0.5f, -0.5f, 2.0f, 4.0f,
                           FromBits(0x00000001u), FromBits(0x80000001u), FromBits(0x007FFFFFu),
                           FromBits(0x00800000u), FromBits(0x7F7FFFFFu), FromBits(0xFF7FFFFFu),
                           88.72283f, 88.7228394f, 89.0f, -87.33654f, -103.97208f, -103.972084f,
                           -104.0f, -150.0f, 9.010913f, 9.1f, 3.9192059f, 3.92f, 17.0f, -17.0f,
                           5.5f, -10.0f, -13.0f, -14.5f, -15.0f, -20.0f, 1e-30f, -1e-30f,
                           0x1p-60f, -0x1p-60f, 0x1.8p-130f, -0x1.8p-130f, 100.0f, -100.0f};
  for (int i = -64; i <= 64; ++i) in.push_back(i * 0.25f);
  for (const Fn& f : AllFns()) {
    std::vector<float> want(in.size());
    std::vector<char> known(in.size());
    for (size_t i = 0; i < in.size(); ++i) known[i] = Reference(f, in[i], &want[i]);
    testing::ForEachTarget([&](const simd::Target&) {
      std::vector<float> out(in.size());
      f.Run(in.data(), out.data(), in.size());
      for (size_t i = 0; i < in.size(); ++i) {
        INFO(f.Name() << " x = " << Hex(in[i]) << " got " << Hex(out[i]));
        if (known[i]) CHECK(Bits(out[i]) == Bits(want[i]));
        if (out[i] != out[i]) CHECK(Bits(out[i]) == kNaNBits);  // every NaN is canonical
      }
    });
  }
  // A few the contract spells out.
  float out[8];
  const float in2[8] = {-0.0f, 0.0f, -1.0f, -kInf, kInf, -0.0f, 0.0f, -kInf};
  simd::Math(MathFn::kLog, in2, out, 3);
  CHECK(Bits(out[0]) == Bits(-kInf));
  CHECK(Bits(out[1]) == Bits(-kInf));
  CHECK(Bits(out[2]) == kNaNBits);
  simd::Math(MathFn::kRsqrt, in2, out, 3);
  CHECK(Bits(out[0]) == Bits(-kInf));
  CHECK(Bits(out[1]) == Bits(kInf));
  CHECK(Bits(out[2]) == kNaNBits);
  simd::PowHalf(in2, out, 8);
  CHECK(Bits(out[0]) == 0u);
  CHECK(Bits(out[3]) == Bits(kInf));
  CHECK(Bits(out[2]) == kNaNBits);
  const float nan_in = FromBits(0xFFC00001u);
  simd::PowInt(&nan_in, 0, out, 1);
  CHECK(out[0] == 1.0f);
  simd::PowInt(in2, -3, out, 2);
  CHECK(Bits(out[0]) == Bits(-kInf));
  CHECK(Bits(out[1]) == Bits(kInf));
}

TEST_CASE("math: counts 0..2 vectors, misaligned and in-place buffers, on every target") {
  const std::vector<float> values = testing::MixedValues(80, 7);
  std::vector<Fn> fns = AllFns();
  fns.push_back({Fn::kPowInt, MathFn::kExp, 5});
  fns.push_back({Fn::kPowInt, MathFn::kExp, -7});
  fns.push_back({Fn::kPowInt, MathFn::kExp, 12});
  for (const Fn& f : fns) {
    // Element-by-element results (one call per element) are the reference for batched calls.
    std::vector<float> single(values.size());
    for (size_t i = 0; i < values.size(); ++i) f.Run(&values[i], &single[i], 1);
    testing::ForEachTarget([&](const simd::Target&) {
      for (size_t n = 0; n <= 40; ++n) {
        for (size_t offset = 0; offset < 4; ++offset) {
          INFO(f.Name() << " n = " << n << " offset = " << offset);
          std::vector<float> in(n + 8), out(n + 8, 12345.0f);
          memcpy(in.data() + offset, values.data() + offset, n * sizeof(float));
          f.Run(in.data() + offset, out.data() + offset, n);
          for (size_t i = 0; i < out.size(); ++i) {
            if (i < offset || i >= offset + n) {
              CHECK(out[i] == 12345.0f);  // nothing written outside [offset, offset + n)
            } else {
              CHECK(Bits(out[i]) == Bits(single[i]));
            }
          }
          std::vector<float> inplace(in);
          f.Run(inplace.data() + offset, inplace.data() + offset, n);
          for (size_t i = 0; i < n; ++i) CHECK(Bits(inplace[offset + i]) == Bits(single[offset + i]));
        }
      }
    });
  }
}

TEST_CASE("math: integer powers outside the proven range agree on every target") {
  const std::vector<float> in = StridedSample();
  for (int e : {-9, -6, -5, 5, 6, 7, 8, 16, 31}) {
    std::vector<float> first;
    testing::ForEachTarget([&](const simd::Target&) {
      std::vector<float> out(in.size());
      simd::PowInt(in.data(), e, out.data(), in.size());
      if (first.empty()) first = out;
      else CHECK(memcmp(first.data(), out.data(), out.size() * 4) == 0);
    });
    // Close to the exact power (these are not proven correctly rounded, only accurate).
    for (size_t i = 0; i < in.size(); i += 97) {
      const double x = in[i];
      const double p = pow(x, e);
      if (!(fabs(p) > 0x1p-120 && fabs(p) < 0x1p120)) continue;
      CHECK(fabs(first[i] - p) <= fabs(p) * 0x1p-23);
    }
  }
}

TEST_CASE("math: LogF64, SinPiF64, CosPiF64") {
  const double kPi = 3.14159265358979323846;
  uint64_t state = 88172645463325252ull;
  double worst_log = 0, worst_sin = 0, worst_cos = 0;
  for (int i = 0; i < 200000; ++i) {
    state ^= state << 13; state ^= state >> 7; state ^= state << 17;
    const double u = static_cast<double>(state >> 11) * 0x1p-53;  // [0, 1)
    const double x = (1.0 - u) * pow(2.0, static_cast<int>(state % 400) - 200.0);
    const double l = simd::LogF64(x), lr = log(x);
    worst_log = fmax(worst_log, fabs(l - lr) / fabs(lr));
    const double t = 2.0 * u;
    const double s = simd::SinPiF64(t), c = simd::CosPiF64(t);
    worst_sin = fmax(worst_sin, fabs(s - sin(kPi * t)));  // absolute: sin(pi t) itself is near 0 at 1, 2
    worst_cos = fmax(worst_cos, fabs(c - cos(kPi * t)));
  }
  CHECK(worst_log < 0x1p-50);
  CHECK(worst_sin < 0x1p-50);
  CHECK(worst_cos < 0x1p-50);
  CHECK(simd::LogF64(1.0) == 0.0);
  CHECK(simd::LogF64(0.0) == -HUGE_VAL);
  CHECK(simd::LogF64(-1.0) != simd::LogF64(-1.0));
  CHECK(fabs(simd::LogF64(0x1p-1074) - (-1074 * 0.69314718055994530942)) < 1e-12);
  CHECK(simd::SinPiF64(0.0) == 0.0);
  CHECK(simd::SinPiF64(0.5) == 1.0);
  CHECK(simd::CosPiF64(0.0) == 1.0);
  CHECK(simd::CosPiF64(1.0) == -1.0);
  CHECK(simd::CosPiF64(2.0) == 1.0);
  CHECK(fabs(simd::SinPiF64(1.0 / 6) - 0.5) < 1e-16);
}

}  // namespace
}  // namespace lockstep
