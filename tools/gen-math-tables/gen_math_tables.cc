// Writes simd/math_tables.h: every constant, table and polynomial coefficient used by the
// project's elementary functions (simd/math*-inl.h, simd/math.cc), computed with MPFR and printed
// as exact hex-float literals (C99 "%a") or integer bit patterns, so that no compiler's decimal
// parsing is trusted. Usage: gen_math_tables OUTPUT_HEADER
//
// Polynomials for erf and for the Gaussian tail factor of GELU are Chebyshev interpolants on each
// piece, converted to monomials at 256-bit precision, rounded to double; the degree is the smallest
// that keeps the relative error of the rounded polynomial (evaluated exactly) below 1.5*2^-53 (the
// floor that double coefficients allow), plus one for margin, on a
// dense sample of every piece. The achieved errors are written into the header as comments.
#include <mpfr.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr mpfr_prec_t kPrec = 256;

struct M {
  mpfr_t v;
  M() { mpfr_init2(v, kPrec); mpfr_set_zero(v, 1); }
  explicit M(double d) { mpfr_init2(v, kPrec); mpfr_set_d(v, d, MPFR_RNDN); }
  M(const M& o) { mpfr_init2(v, kPrec); mpfr_set(v, o.v, MPFR_RNDN); }
  M& operator=(const M& o) { mpfr_set(v, o.v, MPFR_RNDN); return *this; }
  ~M() { mpfr_clear(v); }
  double d() const { return mpfr_get_d(v, MPFR_RNDN); }
};
M operator+(const M& a, const M& b) { M r; mpfr_add(r.v, a.v, b.v, MPFR_RNDN); return r; }
M operator-(const M& a, const M& b) { M r; mpfr_sub(r.v, a.v, b.v, MPFR_RNDN); return r; }
M operator*(const M& a, const M& b) { M r; mpfr_mul(r.v, a.v, b.v, MPFR_RNDN); return r; }
M operator/(const M& a, const M& b) { M r; mpfr_div(r.v, a.v, b.v, MPFR_RNDN); return r; }

std::string Hex(double d) {
  char buf[64];
  if (d == 0) return std::signbit(d) ? "-0x0p+0" : "0x0p+0";
  snprintf(buf, sizeof(buf), "%a", d);
  return buf;
}

// Splits x into hi (rounded to `bits` significant bits) + lo (rounded to double).
void SplitHiLo(const M& x, int bits, double* hi, double* lo) {
  mpfr_t h;
  mpfr_init2(h, bits);
  mpfr_set(h, x.v, MPFR_RNDN);
  *hi = mpfr_get_d(h, MPFR_RNDN);
  M rest = x - M(*hi);
  *lo = rest.d();
  mpfr_clear(h);
}

FILE* out;

void EmitArray(const char* name, const std::vector<double>& v, size_t per_line = 3) {
  fprintf(out, "alignas(64) static const double %s[%zu] = {\n", name, v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (i % per_line == 0) fprintf(out, "    ");
    fprintf(out, "%s,", Hex(v[i]).c_str());
    fprintf(out, (i % per_line == per_line - 1 || i + 1 == v.size()) ? "\n" : " ");
  }
  fprintf(out, "};\n");
}
void EmitConst(const char* name, double v, const char* comment) {
  fprintf(out, "constexpr double %s = %s;  // %s\n", name, Hex(v).c_str(), comment);
}

// ---- piecewise Chebyshev fits ----
using Fn = std::function<M(const M&)>;

// Monomial coefficients (in h = x - center, |h| <= w) of the degree-`deg` Chebyshev interpolant
// of f on [center - w, center + w]. If `odd`, even coefficients are set to exactly zero.
std::vector<M> ChebFit(const Fn& f, const M& center, const M& w, int deg, bool odd) {
  const int n = deg + 1;
  M pi; mpfr_const_pi(pi.v, MPFR_RNDN);
  std::vector<M> fx(n), tn(n);
  for (int i = 0; i < n; ++i) {
    M ang = pi * M(i + 0.5) / M(n);
    mpfr_cos(tn[i].v, ang.v, MPFR_RNDN);
    fx[i] = f(center + w * tn[i]);
  }
  std::vector<M> c(n);
  for (int k = 0; k < n; ++k) {
    M s;
    for (int i = 0; i < n; ++i) {
      M tk; M ang = pi * M(k) * M(i + 0.5) / M(n);
      mpfr_cos(tk.v, ang.v, MPFR_RNDN);
      s = s + fx[i] * tk;
    }
    c[k] = s * M(2.0) / M(n);
  }
  c[0] = c[0] / M(2.0);
  // Chebyshev -> monomials in t: T_{k+1} = 2t T_k - T_{k-1}.
  std::vector<std::vector<M>> T(n, std::vector<M>(n));
  T[0][0] = M(1.0);
  if (n > 1) T[1][1] = M(1.0);
  for (int k = 2; k < n; ++k) {
    for (int j = 0; j < n; ++j) {
      M a = j > 0 ? T[k - 1][j - 1] * M(2.0) : M();
      T[k][j] = a - T[k - 2][j];
    }
  }
  std::vector<M> b(n);
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j) b[j] = b[j] + c[k] * T[k][j];
  // t = h / w: coefficient of h^j is b_j / w^j.
  M wp(1.0);
  for (int j = 0; j < n; ++j) {
    b[j] = b[j] / wp;
    wp = wp * w;
    if (odd && j % 2 == 0) b[j] = M();
  }
  return b;
}

// Max relative error of the double-rounded polynomial against f on a dense sample.
double FitError(const Fn& f, const M& center, const M& w, const std::vector<double>& coef,
                int samples) {
  double worst = 0;
  for (int s = 0; s <= samples; ++s) {
    M h = w * (M(2.0 * s / samples - 1.0));
    M x = center + h;
    if (mpfr_sgn(x.v) == 0) continue;
    M p;
    for (int j = static_cast<int>(coef.size()) - 1; j >= 0; --j) p = p * h + M(coef[j]);
    M fx = f(x);
    M rel = (p - fx) / fx;
    worst = std::fmax(worst, std::fabs(rel.d()));
  }
  return worst;
}

struct Piecewise {
  int deg;
  std::vector<double> coef;  // piece i, coefficient k at [i * (deg + 1) + k]
  double worst;
};

// Pieces centred at i * step (i = 0..count-1), half-width step / 2; piece 0 is odd if `odd0`.
// The smallest degree that reaches `target`, plus one for margin.
Piecewise FitPiecewise(const Fn& f, double step, int count, bool odd0, double target) {
  bool reached = false;
  for (int deg = 6; deg <= 24; ++deg) {
    Piecewise pw{deg, {}, 0};
    bool ok = true;
    for (int i = 0; i < count && ok; ++i) {
      M center(i * step), w(step / 2);
      std::vector<M> b = ChebFit(f, center, w, deg, odd0 && i == 0);
      std::vector<double> cd;
      for (auto& m : b) cd.push_back(m.d());
      const double err = FitError(f, center, w, cd, 400);
      pw.worst = std::fmax(pw.worst, err);
      if (getenv("GEN_DEBUG")) fprintf(stderr, "deg %d piece %d err %g\n", deg, i, err);
      if (err > target && !reached) ok = false;
      pw.coef.insert(pw.coef.end(), cd.begin(), cd.end());
    }
    if (ok && reached) return pw;
    if (ok) reached = true;
  }
  fprintf(stderr, "no degree reaches the target\n");
  exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s OUTPUT_HEADER\n", argv[0]);
    return 2;
  }
  out = fopen(argv[1], "w");
  if (!out) { perror(argv[1]); return 1; }
  M ln2; mpfr_const_log2(ln2.v, MPFR_RNDN);
  M pi; mpfr_const_pi(pi.v, MPFR_RNDN);

  fprintf(out,
          "// GENERATED by tools/gen-math-tables (MPFR %s). Do not edit: rerun\n"
          "//   build/.../gen_math_tables simd/math_tables.h\n"
          "// Constants, tables and polynomial coefficients of the elementary functions, as exact\n"
          "// hex-float literals. See docs/numerics-math.md for the algorithms they serve.\n"
          "#ifndef LOCKSTEP_SIMD_MATH_TABLES_H_\n#define LOCKSTEP_SIMD_MATH_TABLES_H_\n\n"
          "#include <stdint.h>\n\n"
          "namespace lockstep {\nnamespace simd {\nnamespace math_tables {\n\n",
          mpfr_get_version());

  // ---- exp: Tang's method, N = 64 ----
  {
    fprintf(out, "// exp(z) = 2^m * 2^(j/64) * exp(r), k = 64m + j = round(z * 64/ln2),\n"
                 "// r = (z - k*kExpL1) - k*kExpL2 with k*kExpL1 exact (|k| < 2^15, L1 has 38 bits).\n");
    M inv = M(64.0) / ln2;
    EmitConst("kExpInvL", inv.d(), "64/ln2");
    double l1, l2;
    SplitHiLo(ln2 / M(64.0), 38, &l1, &l2);
    EmitConst("kExpL1", l1, "ln2/64, 38 bits");
    EmitConst("kExpL2", l2, "ln2/64 - kExpL1");
    std::vector<double> thi, tlo;
    for (int j = 0; j < 64; ++j) {
      M e = M(j) / M(64.0), t;
      mpfr_exp2(t.v, e.v, MPFR_RNDN);
      double h, l;
      SplitHiLo(t, 53, &h, &l);
      thi.push_back(h);
      tlo.push_back(l);
    }
    fprintf(out, "// 2^(j/64) = kExpTHi[j] + kExpTLo[j]\n");
    EmitArray("kExpTHi", thi);
    EmitArray("kExpTLo", tlo);
    fprintf(out, "// exp(r) - 1 = r + r^2 (c2 + r (c3 + r (c4 + r (c5 + r c6)))), Taylor, |r| < 0.0055:\n"
                 "// truncation < 2^-64 relative\n");
    std::vector<double> c;
    M fact(1.0);
    for (int k = 1; k <= 6; ++k) {
      fact = fact * M(k);
      if (k >= 2) c.push_back((M(1.0) / fact).d());
    }
    EmitArray("kExpPoly", c);
    fprintf(out, "\n");
  }

  // ---- log ----
  {
    const uint64_t off = 0x3FE6A09E667F3BCDull;  // sqrt(1/2)
    fprintf(out,
            "// log(a): tmp = bits(a) - kLogOffset; e = tmp >> 52; j = (tmp >> 44) & 255;\n"
            "// m = a * 2^-e in [sqrt(1/2), sqrt(2)); r = m * kLogC[j] - 1 (exact for the 24-bit m\n"
            "// of a float; c has at most 21 bits, a multiple of 2^-20); log(a) = e*ln2 - log(c) + log1p(r).\n");
    fprintf(out, "constexpr uint64_t kLogOffset = 0x%016llXull;  // bits of sqrt(1/2)\n",
            (unsigned long long)off);
    std::vector<double> cs, thi, tlo;
    double rmax = 0;
    uint64_t one = 0x3FF0000000000000ull;
    int j_one = static_cast<int>(((one - off) >> 44) & 255);
    for (int j = 0; j < 256; ++j) {
      uint64_t lo_bits = off + (uint64_t(j) << 44), hi_bits = off + (uint64_t(j + 1) << 44) - 1;
      double lo, hi;
      memcpy(&lo, &lo_bits, 8);
      memcpy(&hi, &hi_bits, 8);
      double c;
      if (j == j_one) {
        c = 1.0;
      } else {
        M mid = (M(lo) + M(hi)) / M(2.0);
        M inv = M(1048576.0) / mid;
        mpfr_rint(inv.v, inv.v, MPFR_RNDN);
        c = (inv / M(1048576.0)).d();
      }
      cs.push_back(c);
      rmax = std::fmax(rmax, std::fabs((M(lo) * M(c) - M(1.0)).d()));
      rmax = std::fmax(rmax, std::fabs((M(hi) * M(c) - M(1.0)).d()));
      M lc; mpfr_log(lc.v, M(c).v, MPFR_RNDN);
      mpfr_neg(lc.v, lc.v, MPFR_RNDN);
      double h, l;
      SplitHiLo(lc, 53, &h, &l);
      thi.push_back(h);
      tlo.push_back(l);
    }
    fprintf(out, "// max |r| = %a (%.3g); the piece holding 1.0 is j = %d, with c = 1\n", rmax, rmax,
            j_one);
    EmitArray("kLogC", cs);
    fprintf(out, "// -log(kLogC[j]) = kLogTHi[j] + kLogTLo[j]\n");
    EmitArray("kLogTHi", thi);
    EmitArray("kLogTLo", tlo);
    double h, l;
    SplitHiLo(ln2, 42, &h, &l);
    EmitConst("kLn2Hi", h, "ln2, 42 bits: e * kLn2Hi exact for |e| < 2^11");
    EmitConst("kLn2Lo", l, "ln2 - kLn2Hi");
    fprintf(out, "// log1p(r) = r + r^2 (p0 + r (p1 + ... + r p5)), Taylor: -1/2, 1/3, ..., 1/7;\n"
                 "// truncation |r|^7/8 < 2^-60 relative for |r| < 2^-8.4\n");
    std::vector<double> p;
    for (int k = 2; k <= 7; ++k) p.push_back((M(k % 2 ? 1.0 : -1.0) / M(k)).d());
    EmitArray("kLogPoly", p);
    fprintf(out, "\n");
  }

  // ---- erf: pieces centred at i/8, |h| <= 1/16, i = 0..32 ----
  {
    Fn f = [](const M& x) { M r; mpfr_erf(r.v, x.v, MPFR_RNDN); return r; };
    Piecewise pw = FitPiecewise(f, 0.125, 33, true, 0x1.8p-53);
    fprintf(out, "// erf(x), 0 <= x <= 4: piece i = round(8x), h = x - i/8, erf = sum_k c[i*%d+k] h^k\n"
                 "// (piece 0 odd). Max relative error of the rounded polynomials: %a (2^%.1f)\n",
            pw.deg + 1, pw.worst, std::log2(pw.worst));
    fprintf(out, "constexpr int kErfDegree = %d;\n", pw.deg);
    EmitArray("kErfCoef", pw.coef);
    fprintf(out, "\n");
  }

  // ---- Gaussian tail factor: Q(t) = Phi(-t) = exp(-t^2/2) * G(t), t in [0, 16] ----
  {
    Fn f = [](const M& t) {
      M s; mpfr_sqrt_ui(s.v, 2, MPFR_RNDN);
      M a = t / s, ec, ex;
      mpfr_erfc(ec.v, a.v, MPFR_RNDN);
      M h = t * t / M(2.0);
      mpfr_exp(ex.v, h.v, MPFR_RNDN);
      return ec * ex / M(2.0);
    };
    Piecewise pw = FitPiecewise(f, 0.25, 65, false, 0x1.8p-53);
    fprintf(out, "// G(t) = Phi(-t) * exp(t^2/2) = erfc(t/sqrt2) exp(t^2/2) / 2, 0 <= t <= 16: piece\n"
                 "// i = round(4t), h = t - i/4, G = sum_k c[i*%d+k] h^k. Max relative error: %a (2^%.1f)\n",
            pw.deg + 1, pw.worst, std::log2(pw.worst));
    fprintf(out, "constexpr int kGaussTailDegree = %d;\n", pw.deg);
    M tp = M(2.0) * pi, r;
    mpfr_rec_sqrt(r.v, tp.v, MPFR_RNDN);
    EmitConst("kInvSqrt2Pi", r.d(), "1/sqrt(2 pi): Phi(x) - 1/2 = x/sqrt(2 pi) (1 + O(x^2))");
    EmitArray("kGaussTailCoef", pw.coef);
    fprintf(out, "\n");
  }

  // ---- GELU tanh form: 2u = x (C + D x^2), C = 2 sqrt(2/pi), D = C * 0.044715 ----
  {
    M c; mpfr_const_pi(c.v, MPFR_RNDN);
    c = M(2.0) / c;
    mpfr_sqrt(c.v, c.v, MPFR_RNDN);
    c = c * M(2.0);
    M k; mpfr_set_str(k.v, "0.044715", 10, MPFR_RNDN);
    M d = c * k;
    double h, l;
    fprintf(out, "// GELU tanh form: 2u = x (C + D x^2), C = 2 sqrt(2/pi), D = 0.044715 C (exact reals)\n");
    SplitHiLo(c, 53, &h, &l);
    EmitConst("kGeluTanhCHi", h, "C");
    EmitConst("kGeluTanhCLo", l, "C - kGeluTanhCHi");
    SplitHiLo(d, 53, &h, &l);
    EmitConst("kGeluTanhDHi", h, "D");
    EmitConst("kGeluTanhDLo", l, "D - kGeluTanhDHi");
    fprintf(out, "\n");
  }

  // ---- sinpi / cospi on [0, 1/4]: Taylor ----
  {
    std::vector<double> s, co;
    M fact(1.0), pw(1.0);
    for (int k = 1; k <= 21; ++k) {
      fact = fact * M(k);
      pw = pw * pi;
      M term = pw / fact;
      if ((k / 2) % 2) mpfr_neg(term.v, term.v, MPFR_RNDN);
      if (k % 2) s.push_back(term.d()); else co.push_back(term.d());
    }
    fprintf(out, "// sin(pi t) = t (s0 + t^2 (s1 + ...)), cos(pi t) = 1 + t^2 (c0 + t^2 (c1 + ...)),\n"
                 "// Taylor, 0 <= t <= 1/4 (truncation < 2^-60)\n");
    EmitArray("kSinPiPoly", s);
    EmitArray("kCosPiPoly", co);
  }

  fprintf(out, "\n}  // namespace math_tables\n}  // namespace simd\n}  // namespace lockstep\n\n"
               "#endif  // LOCKSTEP_SIMD_MATH_TABLES_H_\n");
  fclose(out);
  return 0;
}
