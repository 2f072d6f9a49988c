// prove_math: exhaustive proof that lockstep's elementary functions (simd/math.h) are correctly
// rounded for every float32 input, and the generator of their exception tables.
//
// For each function, every input (or every S-th with --stride S) is run through the real,
// dispatched kernel in large batches. Each output is then checked against a reference:
//   1. special inputs (NaN, +-inf, +-0, out of domain) have fixed IEEE answers, and GELU of
//      |x| < 2^-60 an analytic one (see GeluTiny);
//   2. a fast filter: glibc's double functions (error < 2^-44) give v; if v(1 - 2^-40) and
//      v(1 + 2^-40) round to the same float32, that float is the correctly rounded result;
//   3. otherwise ("undecided"), MPFR: the function at precision P with Ziv's loop
//      (mpfr_can_round, P doubling) gives the correctly rounded float32 (subnormals included).
// A filter verdict that disagrees with the kernel is re-checked with MPFR before it counts.
//
// Options:
//   --fn NAME          (repeatable; default: all) exp log tanh sigmoid erf gelu_erf gelu_tanh
//                      softplus rsqrt sin cos tan asin acos atan sinh cosh asinh acosh atanh
//                      pow_int_-4 .. pow_int_4 pow_half
//   --stride S         check inputs 0, S, 2S, ... only (quick runs)
//   --threads T        worker threads (default 2)
//   --emit-exceptions FILE   run with the exception tables disabled and write FILE (the new
//                      simd/math_exceptions.h): for each function checked, every input whose fast
//                      result is wrong, with its correct result; tables of functions not checked in
//                      this run are copied from the ones compiled in.
//   --against-float64  instead of the proof: compare every output with the float64 evaluation
//                      alone (MathFloat64 / PowIntFloat64, the path that answered before the float32
//                      first steps existed), bit for bit; seconds per function, no MPFR.
//   --target NAME      run on this SIMD target (one this CPU runs: AVX3_DL, AVX2, SSE4, EMU128...)
//                      instead of the best one.
// Exit status: 0 when no mismatch was found (always 0 with --emit-exceptions, unless an internal
// error), 1 otherwise.
#include <mpfr.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "simd/math.h"
#include "simd/targets.h"

namespace {

using lockstep::simd::MathFn;

uint32_t Bits(float x) { uint32_t u; memcpy(&u, &x, 4); return u; }
float FromBits(uint32_t u) { float x; memcpy(&x, &u, 4); return x; }
const float kNaN = FromBits(0x7FC00000u);
const float kInf = FromBits(0x7F800000u);

enum class Kind { kMath, kPowInt, kPowHalf };

// A reference: special(x, &out) answers fixed cases; approx(x) is the filter value (long double);
// mp(y, x) evaluates at y's precision and returns the MPFR ternary value, and sets *single when
// the value came from one correctly rounded MPFR call (so ternary == 0 means exact).
struct Spec {
  std::string name;
  Kind kind;
  MathFn fn;
  int exponent;
};

bool IsNaN(float x) { return x != x; }

// ---------- special inputs ----------
bool Special(const Spec& s, float x, float* out) {
  const bool nan = IsNaN(x), inf = std::isinf(x), zero = x == 0, neg = std::signbit(x);
  if (s.kind == Kind::kPowInt) {
    if (s.exponent == 0) { *out = 1.0f; return true; }
    if (nan) { *out = kNaN; return true; }
    if (zero || inf) {
      long double p = 1.0L;
      int k = std::abs(s.exponent);
      for (int i = 0; i < k; ++i) p = i == 0 ? x : p * x;
      if (s.exponent < 0) p = 1.0L / p;
      *out = static_cast<float>(p);
      return true;
    }
    return false;
  }
  if (nan) { *out = kNaN; return true; }
  if (s.kind == Kind::kPowHalf) {
    if (zero) { *out = 0.0f; return true; }
    if (inf) { *out = kInf; return true; }
    if (neg) { *out = kNaN; return true; }
    return false;
  }
  switch (s.fn) {
    case MathFn::kExp:
      if (inf) { *out = neg ? 0.0f : kInf; return true; }
      return false;
    case MathFn::kLog:
      if (zero) { *out = -kInf; return true; }
      if (neg) { *out = kNaN; return true; }
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
      return false;
    case MathFn::kSoftplus:
      if (inf) { *out = neg ? 0.0f : kInf; return true; }
      return false;
    case MathFn::kRsqrt:
      if (zero) { *out = neg ? -kInf : kInf; return true; }
      if (neg) { *out = kNaN; return true; }
      if (inf) { *out = 0.0f; return true; }
      return false;
    case MathFn::kSin:
    case MathFn::kTan:
      if (inf) { *out = kNaN; return true; }
      if (zero) { *out = x; return true; }
      return false;
    case MathFn::kCos:
      if (inf) { *out = kNaN; return true; }
      return false;
    case MathFn::kAsin:
      if (std::fabs(x) > 1) { *out = kNaN; return true; }
      if (zero) { *out = x; return true; }
      return false;
    case MathFn::kAcos:
      if (std::fabs(x) > 1) { *out = kNaN; return true; }
      return false;
    case MathFn::kAtan:
      if (zero) { *out = x; return true; }
      return false;  // atan(+-inf) = +-pi/2 rounded: the filter decides
    case MathFn::kSinh:
    case MathFn::kAsinh:
      if (inf || zero) { *out = x; return true; }
      return false;
    case MathFn::kCosh:
      if (inf) { *out = kInf; return true; }
      return false;
    case MathFn::kAcosh:
      if (x < 1) { *out = kNaN; return true; }
      if (inf) { *out = kInf; return true; }
      return false;
    case MathFn::kAtanh:
      if (std::fabs(x) > 1) { *out = kNaN; return true; }
      if (std::fabs(x) == 1) { *out = neg ? -kInf : kInf; return true; }
      if (zero) { *out = x; return true; }
      return false;
  }
  return false;
}

// Both GELU forms near 0: gelu(x) = x/2 + x^2/sqrt(2 pi) (1 + O(x^2)) = h + delta with h = x/2
// (exact in double) and 0 < delta < ulp_double(h)/2^30 for 0 < |x| < 2^-60. The exact value then lies
// strictly between h and the next double above it, an interval that holds no float32 midpoint in its
// interior, so it rounds like that next double. (Where x/2 is itself a float32 midpoint, x
// subnormal and odd, the filter below could not decide, and MPFR would be needed 2^24 times.)
bool GeluTiny(const Spec& s, float x, float* out) {
  if (s.kind != Kind::kMath || (s.fn != MathFn::kGeluErf && s.fn != MathFn::kGeluTanh)) return false;
  if (x == 0 || !(std::fabs(x) < 0x1p-60f)) return false;
  *out = static_cast<float>(std::nextafter(0.5 * static_cast<double>(x), HUGE_VAL));
  return true;
}

// ---------- filter (glibc double; error below 2^-44 relative, 16 times under the margin) ----------
// Worst conditioned: gelu_erf for x < 0 (x/sqrt2 rounded, erfc's relative condition number 2t^2 <
// 2^8) and gelu_tanh (2u rounded, |2u| < 2^7 where the result does not underflow): about 2^-45.
const double kGeluC = 2.0 * std::sqrt(2.0 / 3.14159265358979323846);
const double kGeluD = kGeluC * 0.044715;

double Approx(const Spec& s, float xf) {
  const double x = xf;
  if (s.kind == Kind::kPowInt) {
    const int k = std::abs(s.exponent);
    double p = x;
    for (int i = 1; i < k; ++i) p *= x;
    return s.exponent < 0 ? 1.0 / p : p;
  }
  if (s.kind == Kind::kPowHalf) return std::sqrt(x);
  switch (s.fn) {
    case MathFn::kExp: return std::exp(x);
    case MathFn::kLog: return std::log(x);
    case MathFn::kTanh: return std::tanh(x);
    case MathFn::kSigmoid: return 1.0 / (1.0 + std::exp(-x));
    case MathFn::kErf: return std::erf(x);
    case MathFn::kGeluErf: {
      const double t = x * 0.70710678118654752440;
      return x < 0 ? 0.5 * x * std::erfc(-t) : 0.5 * x * (1.0 + std::erf(t));
    }
    case MathFn::kGeluTanh: {
      const double u2 = x * (kGeluC + kGeluD * (x * x));
      return x / (1.0 + std::exp(-u2));
    }
    case MathFn::kSoftplus:
      return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    case MathFn::kRsqrt: return 1.0 / std::sqrt(x);
    case MathFn::kSin: return std::sin(x);
    case MathFn::kCos: return std::cos(x);
    case MathFn::kTan: return std::tan(x);
    case MathFn::kAsin: return std::asin(x);
    case MathFn::kAcos: return std::acos(x);
    case MathFn::kAtan: return std::atan(x);
    case MathFn::kSinh: return std::sinh(x);
    case MathFn::kCosh: return std::cosh(x);
    case MathFn::kAsinh: return std::asinh(x);
    case MathFn::kAcosh: return std::acosh(x);
    case MathFn::kAtanh: return std::atanh(x);
  }
  return 0;
}

// ---------- MPFR ----------
// Evaluates at y's precision; returns true when the value is exact (a single correctly rounded
// call with ternary 0).
bool MpEval(const Spec& s, mpfr_t y, float xf) {
  const mpfr_prec_t p = mpfr_get_prec(y);
  mpfr_t x, t, u;
  mpfr_init2(x, 24);
  mpfr_set_flt(x, xf, MPFR_RNDN);
  mpfr_init2(t, p + 32);
  mpfr_init2(u, p + 32);
  bool exact = false;
  if (s.kind == Kind::kPowInt) {
    exact = mpfr_pow_si(y, x, s.exponent, MPFR_RNDN) == 0;
  } else if (s.kind == Kind::kPowHalf) {
    exact = mpfr_sqrt(y, x, MPFR_RNDN) == 0;
  } else {
    switch (s.fn) {
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
        mpfr_neg(t, x, MPFR_RNDN);
        mpfr_exp(t, t, MPFR_RNDN);
        mpfr_add_ui(t, t, 1, MPFR_RNDN);
        mpfr_ui_div(y, 1, t, MPFR_RNDN);
        break;
      case MathFn::kGeluErf:
        mpfr_sqrt_ui(t, 2, MPFR_RNDN);
        mpfr_div(t, x, t, MPFR_RNDN);  // x / sqrt2
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
        // 2u = x (C + D x^2), C = 2 sqrt(2/pi), D = 0.044715 C
        mpfr_const_pi(t, MPFR_RNDN);
        mpfr_ui_div(t, 2, t, MPFR_RNDN);
        mpfr_sqrt(t, t, MPFR_RNDN);
        mpfr_mul_2ui(t, t, 1, MPFR_RNDN);  // C
        mpfr_set_str(u, "0.044715", 10, MPFR_RNDN);
        mpfr_mul(u, u, t, MPFR_RNDN);      // D
        mpfr_mul(u, u, x, MPFR_RNDN);
        mpfr_mul(u, u, x, MPFR_RNDN);      // D x^2
        mpfr_add(t, t, u, MPFR_RNDN);
        mpfr_mul(t, t, x, MPFR_RNDN);      // 2u
        mpfr_neg(t, t, MPFR_RNDN);
        mpfr_exp(t, t, MPFR_RNDN);
        mpfr_add_ui(t, t, 1, MPFR_RNDN);
        mpfr_div(y, x, t, MPFR_RNDN);
        break;
      case MathFn::kSoftplus:
        mpfr_exp(t, x, MPFR_RNDN);
        mpfr_log1p(y, t, MPFR_RNDN);
        break;
    }
  }
  mpfr_clears(x, t, u, (mpfr_ptr)nullptr);
  return exact;
}

// The correctly rounded float32 result by MPFR (x finite, not special).
float MpReference(const Spec& s, float x) {
  for (mpfr_prec_t p = 96; p <= 8192; p *= 2) {
    mpfr_t y;
    mpfr_init2(y, p);
    const bool exact = MpEval(s, y, x);
    float r;
    // Error bound: 1/2 ulp for one MPFR call; 2^-(p-24) for the short compositions above (their
    // worst conditioning, erfc and exp of a large argument, costs < 2^12 with p + 32 bits inside).
    const bool composed = s.kind == Kind::kMath && (s.fn == MathFn::kSigmoid || s.fn == MathFn::kGeluErf ||
                                                     s.fn == MathFn::kGeluTanh || s.fn == MathFn::kSoftplus);
    const mpfr_prec_t err = composed ? p - 24 : p - 1;
    if (exact || mpfr_zero_p(y) || mpfr_can_round(y, err, MPFR_RNDN, MPFR_RNDZ, 25)) {
      r = mpfr_get_flt(y, MPFR_RNDN);
      mpfr_clear(y);
      return r;
    }
    mpfr_clear(y);
  }
  fprintf(stderr, "MPFR: cannot round %s(%a) even at 8192 bits\n", s.name.c_str(), x);
  abort();
}

// ---------- the run ----------
constexpr double kMargin = 0x1p-40;
constexpr size_t kChunk = 1 << 16;

struct Result {
  uint64_t checked = 0, undecided = 0, mismatches = 0;
  double seconds = 0;
  std::vector<std::pair<uint32_t, uint32_t>> wrong;  // input bits, correct output bits
};

void RunKernel(const Spec& s, const float* in, float* out, size_t n) {
  switch (s.kind) {
    case Kind::kMath: lockstep::simd::Math(s.fn, in, out, n); break;
    case Kind::kPowInt: lockstep::simd::PowInt(in, s.exponent, out, n); break;
    case Kind::kPowHalf: lockstep::simd::PowHalf(in, out, n); break;
  }
}

// The float64 evaluation alone; false where there is none (pow(x, 0.5) and exponents the float32
// operations compute exactly).
bool RunFloat64(const Spec& s, const float* in, float* out, size_t n) {
  switch (s.kind) {
    case Kind::kMath: lockstep::simd::MathFloat64(s.fn, in, out, n); return true;
    case Kind::kPowInt:
      if (s.exponent == 0 || s.exponent == 1 || s.exponent == 2 || s.exponent == -1) return false;
      lockstep::simd::PowIntFloat64(in, s.exponent, out, n);
      return true;
    case Kind::kPowHalf: return false;
  }
  return false;
}

// Every input through both paths; the differing inputs (at most 10 kept) and their count.
Result CompareWithFloat64(const Spec& s, uint64_t stride, int threads) {
  Result total;
  std::mutex mu;
  const uint64_t count = ((uint64_t{1} << 32) + stride - 1) / stride;
  const uint64_t chunks = (count + kChunk - 1) / kChunk;
  std::atomic<uint64_t> next{0};
  const auto t0 = std::chrono::steady_clock::now();
  auto worker = [&]() {
    std::vector<float> in(kChunk), out(kChunk), ref(kChunk);
    Result local;
    for (;;) {
      const uint64_t c = next.fetch_add(1);
      if (c >= chunks) break;
      const uint64_t first = c * kChunk;
      const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, count - first));
      for (size_t i = 0; i < n; ++i) in[i] = FromBits(static_cast<uint32_t>((first + i) * stride));
      RunKernel(s, in.data(), out.data(), n);
      RunFloat64(s, in.data(), ref.data(), n);
      for (size_t i = 0; i < n; ++i) {
        ++local.checked;
        if (Bits(out[i]) != Bits(ref[i])) {
          ++local.mismatches;
          if (local.wrong.size() < 10) local.wrong.emplace_back(Bits(in[i]), Bits(ref[i]));
        }
      }
    }
    std::lock_guard<std::mutex> lock(mu);
    total.checked += local.checked;
    total.mismatches += local.mismatches;
    total.wrong.insert(total.wrong.end(), local.wrong.begin(), local.wrong.end());
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  total.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::sort(total.wrong.begin(), total.wrong.end());
  return total;
}

Result Prove(const Spec& s, uint64_t stride, int threads) {
  Result total;
  std::mutex mu;
  const uint64_t count = ((uint64_t{1} << 32) + stride - 1) / stride;
  const uint64_t chunks = (count + kChunk - 1) / kChunk;
  std::atomic<uint64_t> next{0}, done{0};
  const auto t0 = std::chrono::steady_clock::now();
  auto worker = [&]() {
    std::vector<float> in(kChunk), out(kChunk);
    Result local;
    for (;;) {
      const uint64_t c = next.fetch_add(1);
      if (c >= chunks) break;
      const uint64_t first = c * kChunk;
      const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, count - first));
      for (size_t i = 0; i < n; ++i) in[i] = FromBits(static_cast<uint32_t>((first + i) * stride));
      RunKernel(s, in.data(), out.data(), n);
      for (size_t i = 0; i < n; ++i) {
        const float x = in[i];
        const uint32_t got = Bits(out[i]);
        float want;
        bool decided = Special(s, x, &want) || GeluTiny(s, x, &want);
        if (!decided) {
          const double v = Approx(s, x);
          const float lo = static_cast<float>(v * (1.0 - kMargin));
          const float hi = static_cast<float>(v * (1.0 + kMargin));
          if (Bits(lo) == Bits(hi) && !IsNaN(lo)) {
            want = lo;
            decided = Bits(want) == got;  // a disagreement is settled by MPFR below
          }
          if (!decided) {
            if (Bits(lo) != Bits(hi) || IsNaN(lo)) ++local.undecided;
            want = MpReference(s, x);
          }
        }
        ++local.checked;
        if (Bits(want) != got) {
          ++local.mismatches;
          local.wrong.emplace_back(Bits(x), Bits(want));
        }
      }
      const uint64_t d = done.fetch_add(1) + 1;
      if (d % 4096 == 0) {
        const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        fprintf(stderr, "  %s: %.1f%% (%.0f s)\n", s.name.c_str(), 100.0 * d / chunks, el);
      }
    }
    std::lock_guard<std::mutex> lock(mu);
    total.checked += local.checked;
    total.undecided += local.undecided;
    total.mismatches += local.mismatches;
    total.wrong.insert(total.wrong.end(), local.wrong.begin(), local.wrong.end());
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  total.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::sort(total.wrong.begin(), total.wrong.end());
  return total;
}

std::vector<Spec> AllSpecs() {
  std::vector<Spec> v;
  for (int f = 0; f < lockstep::simd::kMathFnCount; ++f) {
    const MathFn fn = static_cast<MathFn>(f);
    v.push_back({lockstep::simd::MathFnName(fn), Kind::kMath, fn, 0});
  }
  for (int e = -4; e <= 4; ++e) v.push_back({"pow_int_" + std::to_string(e), Kind::kPowInt, MathFn::kExp, e});
  v.push_back({"pow_half", Kind::kPowHalf, MathFn::kExp, 0});
  return v;
}

std::string Ident(const std::string& name) {
  std::string out = "k";
  bool up = true;
  for (char c : name) {
    if (c == '_') { up = true; continue; }
    if (c == '-') { out += 'M'; continue; }
    out += up ? static_cast<char>(toupper(c)) : c;
    up = false;
  }
  return out;
}

bool WriteExceptions(const char* path, const std::vector<Spec>& specs,
                     const std::vector<std::pair<std::string, Result>>& results) {
  FILE* f = fopen(path, "w");
  if (!f) { perror(path); return false; }
  fprintf(f,
          "// GENERATED by tools/prove-math --emit-exceptions. Do not edit.\n"
          "// For each function, the float32 inputs whose fast float64 path (simd/math-inl.h) rounds\n"
          "// to the wrong float32, with the correctly rounded result (MPFR): pairs (input bits,\n"
          "// output bits) sorted by input. Consulted only where Ziv's rounding test fails.\n"
          "#ifndef LOCKSTEP_SIMD_MATH_EXCEPTIONS_H_\n#define LOCKSTEP_SIMD_MATH_EXCEPTIONS_H_\n\n"
          "#include <stddef.h>\n#include <stdint.h>\n\n"
          "namespace lockstep {\nnamespace simd {\nnamespace math_exceptions {\n\n"
          "struct Table {\n  const char* name;\n"
          "  const uint32_t* pairs;  // (input bits, output bits), sorted by input, then a sentinel pair\n"
          "  size_t count;           // number of pairs before the sentinel\n};\n\n");
  std::vector<std::pair<std::string, size_t>> counts;
  for (const Spec& s : specs) {
    if (s.kind == Kind::kPowHalf) continue;
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    bool found = false;
    for (auto& r : results) {
      if (r.first == s.name) { pairs = r.second.wrong; found = true; }
    }
    if (!found) {
      size_t n = 0;
      const uint32_t* p = lockstep::simd::MathExceptionTable(s.name.c_str(), &n);
      for (size_t i = 0; i < n; ++i) pairs.emplace_back(p[2 * i], p[2 * i + 1]);
    }
    fprintf(f, "static const uint32_t %s[] = {\n", Ident(s.name).c_str());
    for (auto& pr : pairs) fprintf(f, "    0x%08Xu, 0x%08Xu,\n", pr.first, pr.second);
    fprintf(f, "    0xFFFFFFFFu, 0xFFFFFFFFu};\n");
    counts.emplace_back(s.name, pairs.size());
  }
  fprintf(f, "\nstatic const Table kTables[] = {\n");
  for (auto& c : counts) fprintf(f, "    {\"%s\", %s, %zu},\n", c.first.c_str(), Ident(c.first).c_str(), c.second);
  fprintf(f, "};\n\n}  // namespace math_exceptions\n}  // namespace simd\n}  // namespace lockstep\n\n"
             "#endif  // LOCKSTEP_SIMD_MATH_EXCEPTIONS_H_\n");
  fclose(f);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> names;
  uint64_t stride = 1;
  int threads = 2;
  const char* emit = nullptr;
  bool against_float64 = false;
  std::string target;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--fn" && i + 1 < argc) names.push_back(argv[++i]);
    else if (a == "--stride" && i + 1 < argc) stride = std::strtoull(argv[++i], nullptr, 0);
    else if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (a == "--emit-exceptions" && i + 1 < argc) emit = argv[++i];
    else if (a == "--against-float64") against_float64 = true;
    else if (a == "--target" && i + 1 < argc) target = argv[++i];
    else {
      fprintf(stderr, "usage: %s [--fn NAME]... [--stride S] [--threads T] [--target NAME] [--emit-exceptions FILE | --against-float64]\n", argv[0]);
      return 2;
    }
  }
  if (stride == 0 || threads < 1) return 2;
  if (!target.empty()) {
    std::string runnable;
    int64_t bits = 0;
    for (const lockstep::simd::Target& t : lockstep::simd::RunnableTargets()) {
      runnable += " " + t.name;
      if (t.name == target) bits = t.bits;
    }
    if (bits == 0) {
      fprintf(stderr, "--target %s: not a target this CPU runs in this build (runnable:%s)\n", target.c_str(),
              runnable.c_str());
      return 2;
    }
    lockstep::simd::ForceTarget(bits);
  }
  if (emit && stride != 1) {
    fprintf(stderr, "--emit-exceptions needs every input (stride 1)\n");
    return 2;
  }
  const std::vector<Spec> all = AllSpecs();
  std::vector<Spec> specs;
  for (const Spec& s : all) {
    if (names.empty() || std::find(names.begin(), names.end(), s.name) != names.end()) specs.push_back(s);
  }
  for (const std::string& n : names) {
    if (std::none_of(all.begin(), all.end(), [&](const Spec& s) { return s.name == n; })) {
      fprintf(stderr, "unknown function %s\n", n.c_str());
      return 2;
    }
  }
  if (emit && against_float64) {
    fprintf(stderr, "--emit-exceptions and --against-float64 exclude each other\n");
    return 2;
  }
  if (against_float64) {
    printf("prove_math --against-float64: target %s, stride %llu, %d threads\n",
           lockstep::simd::ActiveTargetName().c_str(), (unsigned long long)stride, threads);
    printf("%-12s %12s %10s %9s\n", "function", "checked", "differ", "seconds");
    uint64_t differ = 0;
    for (const Spec& s : specs) {
      float probe_in = 1.0f, probe_out;
      if (!RunFloat64(s, &probe_in, &probe_out, 1)) continue;
      const Result r = CompareWithFloat64(s, stride, threads);
      printf("%-12s %12llu %10llu %9.1f\n", s.name.c_str(), (unsigned long long)r.checked,
             (unsigned long long)r.mismatches, r.seconds);
      for (const auto& w : r.wrong) {
        float got;
        const float x = FromBits(w.first);
        RunKernel(s, &x, &got, 1);
        printf("    x = %a (0x%08X): got %a (0x%08X), float64 %a (0x%08X)\n", x, w.first, got, Bits(got),
               FromBits(w.second), w.second);
      }
      fflush(stdout);
      differ += r.mismatches;
    }
    return differ ? 1 : 0;
  }
  if (emit) lockstep::simd::SetMathExceptionsEnabled(false);

  printf("prove_math: target %s, stride %llu, %d threads%s\n",
         lockstep::simd::ActiveTargetName().c_str(), (unsigned long long)stride, threads,
         emit ? ", exception tables DISABLED (emitting)" : "");
  printf("%-12s %12s %10s %10s %9s\n", "function", "checked", "undecided", "mismatches", "seconds");
  fflush(stdout);
  std::vector<std::pair<std::string, Result>> results;
  uint64_t bad = 0;
  for (const Spec& s : specs) {
    Result r = Prove(s, stride, threads);
    printf("%-12s %12llu %10llu %10llu %9.1f\n", s.name.c_str(), (unsigned long long)r.checked,
           (unsigned long long)r.undecided, (unsigned long long)r.mismatches, r.seconds);
    const size_t show = emit ? 0 : std::min<size_t>(r.wrong.size(), 10);
    for (size_t i = 0; i < show; ++i) {
      float got;
      const float x = FromBits(r.wrong[i].first);
      lockstep::simd::SetMathExceptionsEnabled(true);
      RunKernel(s, &x, &got, 1);
      printf("    x = %a (0x%08X): got %a (0x%08X), correct %a (0x%08X)\n", x, r.wrong[i].first, got,
             Bits(got), FromBits(r.wrong[i].second), r.wrong[i].second);
    }
    fflush(stdout);
    bad += r.mismatches;
    results.emplace_back(s.name, std::move(r));
  }
  if (emit) {
    if (!WriteExceptions(emit, all, results)) return 1;
    printf("wrote %s\n", emit);
    return 0;
  }
  return bad ? 1 : 0;
}
