// MPFR helpers shared by the table generators (gen_math_tables, gen_math_fast_tables): a 256-bit
// number type with arithmetic operators, hex-float printing, hi/lo splits and piecewise Chebyshev
// fits converted to monomials.
#ifndef LOCKSTEP_TOOLS_GEN_MATH_TABLES_MPFR_NUMBER_H_
#define LOCKSTEP_TOOLS_GEN_MATH_TABLES_MPFR_NUMBER_H_

#include <mpfr.h>
#include <stdio.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace gen_math {

constexpr mpfr_prec_t kPrec = 256;

struct M {
  mpfr_t v;
  M() { mpfr_init2(v, kPrec); mpfr_set_zero(v, 1); }
  explicit M(double d) { mpfr_init2(v, kPrec); mpfr_set_d(v, d, MPFR_RNDN); }
  M(const M& o) { mpfr_init2(v, kPrec); mpfr_set(v, o.v, MPFR_RNDN); }
  M& operator=(const M& o) { mpfr_set(v, o.v, MPFR_RNDN); return *this; }
  ~M() { mpfr_clear(v); }
  double d() const { return mpfr_get_d(v, MPFR_RNDN); }
  float f() const { return mpfr_get_flt(v, MPFR_RNDN); }
};
inline M operator+(const M& a, const M& b) { M r; mpfr_add(r.v, a.v, b.v, MPFR_RNDN); return r; }
inline M operator-(const M& a, const M& b) { M r; mpfr_sub(r.v, a.v, b.v, MPFR_RNDN); return r; }
inline M operator*(const M& a, const M& b) { M r; mpfr_mul(r.v, a.v, b.v, MPFR_RNDN); return r; }
inline M operator/(const M& a, const M& b) { M r; mpfr_div(r.v, a.v, b.v, MPFR_RNDN); return r; }

inline std::string Hex(double d) {
  char buf[64];
  if (d == 0) return std::signbit(d) ? "-0x0p+0" : "0x0p+0";
  snprintf(buf, sizeof(buf), "%a", d);
  return buf;
}

// Splits x into hi (rounded to `bits` significant bits) + lo (rounded to double).
inline void SplitHiLo(const M& x, int bits, double* hi, double* lo) {
  mpfr_t h;
  mpfr_init2(h, bits);
  mpfr_set(h, x.v, MPFR_RNDN);
  *hi = mpfr_get_d(h, MPFR_RNDN);
  M rest = x - M(*hi);
  *lo = rest.d();
  mpfr_clear(h);
}

// ---- piecewise Chebyshev fits ----
using Fn = std::function<M(const M&)>;

// Monomial coefficients (in h = x - center, |h| <= w) of the degree-`deg` Chebyshev interpolant
// of f on [center - w, center + w]. If `odd`, even coefficients are set to exactly zero.
inline std::vector<M> ChebFit(const Fn& f, const M& center, const M& w, int deg, bool odd) {
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

}  // namespace gen_math

#endif  // LOCKSTEP_TOOLS_GEN_MATH_TABLES_MPFR_NUMBER_H_
