// Writes simd/math_fast_tables.h: the constants, tables and error bounds of the float32 first steps
// of the elementary functions (simd/math_fast-inl.h), computed with MPFR and printed as exact
// hex-float literals. Usage: gen_math_fast_tables OUTPUT_HEADER
//
// Each first step computes the function as an unevaluated sum s + l of two floats and a bound B on
// |f(x) - (s + l)|; where every real within B of s + l rounds to the same float32, that float is the
// correctly rounded result (docs/numerics-math.md, "The float32 first step"). The bounds written
// here come from a running-error analysis of the exact operation sequence of math_fast-inl.h: every
// float32 operation contributes at most u = 2^-24 times the magnitude of its result, the magnitudes
// are maximised over each piece, and the approximation error of the polynomials (with their float
// coefficients, evaluated exactly) is measured on a dense sample of each piece. The total is then
// multiplied by a safety factor (kSafety). The exhaustive proof (tools/prove-math) checks the final
// combination on every float32 input.
#include <mpfr.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tools/gen-math-tables/mpfr_number.h"

namespace {

using namespace gen_math;  // NOLINT

constexpr double kU = 0x1p-24;   // unit roundoff of float32
constexpr double kSafety = 2.0;  // multiplies every analysed bound

FILE* out;

std::string HexF(float f) {
  char buf[64];
  if (f == 0) return std::signbit(f) ? "-0x0p+0f" : "0x0p+0f";
  snprintf(buf, sizeof(buf), "%af", static_cast<double>(f));
  return buf;
}

// x rounded to `bits` significant bits (as a float).
float RoundToBits(const M& x, int bits) {
  mpfr_t h;
  mpfr_init2(h, bits);
  mpfr_set(h, x.v, MPFR_RNDN);
  const float r = mpfr_get_flt(h, MPFR_RNDN);
  mpfr_clear(h);
  return r;
}

void EmitConstF(const char* name, float v, const char* comment) {
  fprintf(out, "constexpr float %s = %s;  // %s\n", name, HexF(v).c_str(), comment);
}

void EmitArrayF(const char* name, const std::vector<float>& v, size_t per_line = 4) {
  fprintf(out, "alignas(64) static const float %s[%zu] = {\n", name, v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (i % per_line == 0) fprintf(out, "    ");
    fprintf(out, "%s,", HexF(v[i]).c_str());
    fprintf(out, (i % per_line == per_line - 1 || i + 1 == v.size()) ? "\n" : " ");
  }
  fprintf(out, "};\n");
}

// ---- exp: exp(x) = 2^m 2^(j/64) exp(r), k = 64 m + j = round(64 x / ln2) ----
void EmitExp() {
  M ln2;
  mpfr_const_log2(ln2.v, MPFR_RNDN);
  const M L = ln2 / M(64.0);
  const float inv_l = (M(64.0) / ln2).f();
  const float l1 = RoundToBits(L, 11);
  const float l2 = RoundToBits(L - M(l1), 11);
  const float l3 = (L - M(l1) - M(l2)).f();
  const double l_rep = std::fabs((L - M(l1) - M(l2) - M(l3)).d());  // |L - (L1 + L2 + L3)|
  std::vector<float> thi, tlo;
  double tlo_max = 0;
  for (int j = 0; j < 64; ++j) {
    M e = M(j) / M(64.0), t;
    mpfr_exp2(t.v, e.v, MPFR_RNDN);
    const float h = RoundToBits(t, 16);
    const float lo = (t - M(h)).f();
    thi.push_back(h);
    tlo.push_back(lo);
    tlo_max = std::max(tlo_max, std::fabs(static_cast<double>(lo)));
  }
  const float c3 = (M(1.0) / M(6.0)).f(), c4 = (M(1.0) / M(24.0)).f();

  // Error analysis (absolute, on the unscaled result T e^r, T = 2^(j/64) in [1, 2)), for the
  // fast domain -86 <= x <= 88.5, where |k| <= 8170. T e^r = THi + THi rh + THi (r - rh + P(r)) +
  // TLo (1 + r + P(r)) + (T - THi - TLo) e^r with P(r) = e^r - 1 - r, and THi rh = A + THi r16.
  const double kmax = 8170, tmax = 2.0;
  const double rlo0 = kmax * std::fabs(static_cast<double>(l3)) * (1 + kU);  // |RN(-k L3)|
  const double rmax = L.d() / 2 * (1 + 0x1p-20) + rlo0;
  // r - (rh + rl): RN(k L3), L's representation, and the Fast2Sum (exact unless t2 is tiny).
  const double err_r = kU * rlo0 + kmax * l_rep + kU * rlo0;
  const double rl = kU * rmax * 1.01 + kU * rlo0;  // |rl|: half an ulp of rh (+ the Fast2Sum's error)
  const double cmax = 0.5 + rmax * (c3 + rmax * c4);
  const double err_c = kU * cmax + kU * rmax * (c3 + rmax * c4) * 2;
  const double pmax = rmax * rmax * cmax * (1 + 4 * kU);
  // P computed: RN(RN(rh^2) c): two roundings and c's error; the polynomial's truncation and
  // coefficients; and P evaluated at rh instead of r (|P'| <= |r| + r^2).
  const double err_p = 2 * kU * pmax + rmax * rmax * err_c;
  const double trunc = std::pow(rmax, 5) / 120 * 1.01 +
                       std::pow(rmax, 3) * std::fabs((M(c3) - M(1.0) / M(6.0)).d()) +
                       std::pow(rmax, 4) * std::fabs((M(c4) - M(1.0) / M(24.0)).d());
  const double err_p_at_rh = (rmax + rmax * rmax) * (rl + err_r);
  const double m_thi_r16 = tmax * 0x1p-7 * rmax;      // |THi r16|, r16 = rh - r8 < 2^-7 |rh|
  const double m_rlp = rl + pmax;                      // |RN(rl + P)|
  const double m_thi_rlp = tmax * m_rlp;               // |THi (rl + P)|
  const double m_tlo = tlo_max * (1 + rmax + pmax);    // |TLo + TLo w|
  const double m_sum = m_thi_rlp + m_tlo;
  const double m_part = m_thi_r16 + m_sum;
  const double m_l = kU * tmax * std::exp(rmax) + m_part;  // e is at most half an ulp of s
  const double rounding = kU * (m_thi_r16 + m_rlp + m_thi_rlp + m_tlo + m_sum + m_part + m_l) +
                          tlo_max * kU * (rmax + pmax) /* RN(rh + P) */ + kU * tlo_max * rmax /* TLo w */;
  const double total = tmax * (err_r + err_p + trunc + err_p_at_rh) +
                       tlo_max * (err_r + err_p + trunc + kU * rmax) + rounding +
                       kU * tlo_max * std::exp(rmax) /* T's representation */;
  const float bound = static_cast<float>(kSafety * total);

  fprintf(out,
          "// ---- exp ----\n"
          "// k = round(x * kExpInvL) = 64 m + j; t2 = (x - k kExpL1) - k kExpL2 (both exact: 11-bit\n"
          "// constants, |k| < 2^13); r = t2 - k kExpL3 = rh + rl (Fast2Sum), |r| <= %a;\n"
          "// exp(r) - 1 - r = P = rh^2 (1/2 + rh (kExpC3 + rh kExpC4)) (truncation < %a);\n"
          "// 2^(j/64) = kExpTHi[j] (16 bits) + kExpTLo[j]; A = THi * r8 (exact: r8 = rh cut to 8 bits);\n"
          "// s + l = THi + A + THi (rh - r8) + THi (rl + P) + TLo (1 + rh + P), scaled by 2^m.\n",
          rmax, trunc);
  EmitConstF("kExpInvL", inv_l, "64/ln2");
  EmitConstF("kExpL1", l1, "ln2/64, 11 bits");
  EmitConstF("kExpL2", l2, "ln2/64 - kExpL1, 11 bits");
  EmitConstF("kExpL3", l3, "ln2/64 - kExpL1 - kExpL2");
  EmitConstF("kExpC3", c3, "1/6");
  EmitConstF("kExpC4", c4, "1/24");
  fprintf(out, "// |exp(x) 2^-m - (s + l)| <= kExpBound (analysis: %a = 2^%.1f, times %g)\n", total,
          std::log2(total), kSafety);
  EmitConstF("kExpBound", bound, "absolute, on the unscaled result in [1, 2.02)");
  EmitArrayF("kExpTHi", thi);
  EmitArrayF("kExpTLo", tlo);
  fprintf(out, "\n");
}

// ---- the pieces of erf, Phi (gelu) and sigmoid: s + l = P0 + P1 h + h^2 Q(h) around a centre c ----
// (math_fast-inl.h, PieceSum): P0 = P0Hi + P0Lo, P1 = P1Hi (12 bits) + P1Lo, Q = P2 + ... + Pd h^(d-2);
// a table row per coefficient part, then the piece's relative bound.
struct Piece {
  float p0h, p0l, p1h, p1l;
  std::vector<float> pk;  // P2 .. Pd at their indices
};

Piece FitPiece(const Fn& f, const M& c, const M& w, int degree, bool odd) {
  const std::vector<M> b = ChebFit(f, c, w, degree, odd);
  Piece p;
  p.p0h = b[0].f();
  p.p0l = (b[0] - M(p.p0h)).f();
  p.p1h = RoundToBits(b[1], 12);
  p.p1l = (b[1] - M(p.p1h)).f();
  p.pk.assign(degree + 1, 0.0f);
  for (int k = 2; k <= degree; ++k) p.pk[k] = b[k].f();
  return p;
}

void StorePiece(const Piece& p, int degree, int column, std::vector<std::vector<float>>* rows) {
  (*rows)[0][column] = p.p0h;
  (*rows)[1][column] = p.p0l;
  (*rows)[2][column] = p.p1h;
  (*rows)[3][column] = p.p1l;
  for (int k = 2; k <= degree; ++k) (*rows)[2 + k][column] = p.pk[k];
}

// At x = c + h: y = |f(x)|, the float polynomial's approximation error (exact evaluation), the
// error of the computed s + l (approximation, roundings, the coefficients' representation), and a
// bound on |l|.
struct PieceError {
  double y, approx, err, l;
};

PieceError PieceErrorAt(const Fn& f, const Piece& pc, const M& c, const M& h, int degree) {
  const M x = c + h;
  const double hd = std::fabs(h.d());
  // Horner Q = P2 + h (P3 + ...): running error of each RN(P_k + RN(h acc)).
  double qv = std::fabs(pc.pk[degree]), dq = 0;
  for (int k = degree - 1; k >= 2; --k) {
    const double prod = hd * qv, next = std::fabs(pc.pk[k]) + prod;
    dq = hd * dq + kU * prod + kU * next;
    qv = next;
  }
  M p(static_cast<double>(pc.pk[degree]));
  for (int k = degree - 1; k >= 2; --k) p = p * h + M(static_cast<double>(pc.pk[k]));
  const double qd = std::fabs((p * h * h).d());
  p = p * h * h + (M(pc.p1h) + M(pc.p1l)) * h + M(pc.p0h) + M(pc.p0l);
  const M fx = f(x);
  PieceError e;
  e.y = std::fabs(fx.d());
  e.approx = std::fabs((p - fx).d());
  // q = RN(RN(h^2) Q): h^2 and the product each u, Q's running error.
  const double err_q = kU * qd + hd * hd * dq + kU * hd * hd * qv + kU * qd;
  // a1 = RN(P1Lo h), a2 = RN(P1Hi hl + a1) (P1Hi hl exact, hl < 2^-11 |h|), a3 = RN(a2 + P0Lo),
  // a4 = RN(e + a3) (e: Fast2Sum error of P0Hi + P1Hi hh, at most u |s|), l = RN(a4 + q).
  const double a1 = std::fabs(pc.p1l) * hd;
  const double a2 = std::fabs(pc.p1h) * hd * 0x1p-11 + a1;
  const double a3 = a2 + std::fabs(pc.p0l);
  const double a4 = kU * e.y * 1.01 + a3;
  e.l = a4 + qd;
  const double representation = kU * std::fabs(pc.p0l) + kU * std::fabs(pc.p1l) * hd;
  e.err = e.approx + err_q + kU * (a1 + a2 + a3 + a4 + e.l) + representation;
  return e;
}

// A piece's relative bound: the largest error of s + l over |f| at 4001 points across the piece
// (those with x > 0 only, where positive_only), times the safety factor and the test's (it
// multiplies by |s| >= |f(x)| (1 - 2^-20)); the worst approximation error is raised to this
// piece's.
double PieceRelativeBound(const Fn& f, const Piece& piece, const M& c, const M& w, int degree, bool positive_only,
                          double* worst_approx) {
  double rel = 0;
  const int samples = 4000;
  for (int sidx = 0; sidx <= samples; ++sidx) {
    const M h = w * M(2.0 * sidx / samples - 1.0);
    if (positive_only && mpfr_sgn((c + h).v) <= 0) continue;
    const PieceError e = PieceErrorAt(f, piece, c, h, degree);
    *worst_approx = std::max(*worst_approx, e.approx / e.y);
    rel = std::max(rel, e.err / e.y);
  }
  return kSafety * rel * (1 + 0x1p-20);
}

void EmitCoefTable(const char* name, const std::vector<std::vector<float>>& rows) {
  const size_t pieces = rows[0].size();
  fprintf(out, "alignas(64) static const float %s[%zu][%zu] = {\n", name, rows.size(), pieces);
  for (const std::vector<float>& row : rows) {
    fprintf(out, "  {\n");
    for (size_t i = 0; i < pieces; ++i) {
      if (i % 4 == 0) fprintf(out, "    ");
      fprintf(out, "%s,", HexF(row[i]).c_str());
      fprintf(out, (i % 4 == 3) ? "\n" : " ");
    }
    fprintf(out, "  },\n");
  }
  fprintf(out, "};\n\n");
}

// ---- erf: 64 pieces centred at i/16, |h| <= 1/32 ----
constexpr int kErfPieces = 64;
constexpr int kErfDegree = 6;

void EmitErf() {
  Fn f = [](const M& x) {
    M r;
    mpfr_erf(r.v, x.v, MPFR_RNDN);
    return r;
  };
  // Rows: E0Hi, E0Lo, E1Hi, E1Lo, E2 .. E6, relative bound.
  constexpr int kRows = 4 + (kErfDegree - 1) + 1;
  std::vector<std::vector<float>> rows(kRows, std::vector<float>(kErfPieces));
  double worst_bound = 0, worst_approx = 0;
  for (int i = 0; i < kErfPieces; ++i) {
    const M c(i / 16.0), w(1.0 / 32);
    const Piece piece = FitPiece(f, c, w, kErfDegree, i == 0);
    StorePiece(piece, kErfDegree, i, &rows);
    const double bound = PieceRelativeBound(f, piece, c, w, kErfDegree, /*positive_only=*/true, &worst_approx);
    rows[kRows - 1][i] = static_cast<float>(bound);
    worst_bound = std::max(worst_bound, bound);
  }
  fprintf(out,
          "// ---- erf, 0 <= |x| < 4 ----\n"
          "// piece i = round(16 |x|), h = |x| - i/16 (exact), |h| <= 1/32; erf = E0 + E1 h + h^2 (E2 + ... +\n"
          "// E%d h^%d), Chebyshev interpolants (MPFR), piece 0 odd; E0 = E0Hi + E0Lo, E1 = E1Hi (12 bits)\n"
          "// + E1Lo. Rows of kErfCoef: E0Hi, E0Lo, E1Hi, E1Lo, E2 .. E%d, then the piece's relative\n"
          "// error bound of s + l (analysis times %g). Worst approximation error %a (2^%.1f),\n"
          "// worst bound %a (2^%.1f).\n",
          kErfDegree, kErfDegree - 2, kErfDegree, kSafety, worst_approx, std::log2(worst_approx), worst_bound,
          std::log2(worst_bound));
  fprintf(out, "constexpr int kErfPieces = %d;\nconstexpr int kErfRows = %d;\n", kErfPieces, kRows);
  EmitCoefTable("kErfCoef", rows);
}

// ---- gelu (erf form): gelu(x) = x Phi(x), 128 pieces of Phi centred at i/16, -64 <= i <= 63 ----
constexpr int kGeluPieces = 128;
constexpr int kGeluFirstPiece = -64;
constexpr int kGeluDegree = 6;

M Phi(const M& x) {  // Phi(x) = erfc(-x / sqrt 2) / 2, no cancellation for x < 0
  M r, t, two(2.0);
  mpfr_sqrt(t.v, two.v, MPFR_RNDN);
  t = M(0.0) - x / t;
  mpfr_erfc(r.v, t.v, MPFR_RNDN);
  return r / two;
}

void EmitGelu() {
  Fn f = Phi;
  // Rows: P0Hi, P0Lo, P1Hi, P1Lo, P2 .. P6, relative bound.
  constexpr int kRows = 4 + (kGeluDegree - 1) + 1;
  std::vector<std::vector<float>> rows(kRows, std::vector<float>(kGeluPieces));
  double worst_bound = 0, worst_approx = 0;
  for (int j = 0; j < kGeluPieces; ++j) {
    const int i = j + kGeluFirstPiece;
    const M c(i / 16.0), w(1.0 / 32);
    const Piece piece = FitPiece(f, c, w, kGeluDegree, false);
    StorePiece(piece, kGeluDegree, j, &rows);
    // Relative bound on x Phi(x): at each sample point, the error of Phi's s + l, then the
    // roundings of the product x (s + l) = S + L (math_fast-inl.h, GeluErfFast), over x Phi(x).
    // Every term scales with |x|, so it is divided out.
    double rel = 0;
    const int samples = 4000;
    for (int sidx = 0; sidx <= samples; ++sidx) {
      const M h = w * M(2.0 * sidx / samples - 1.0);
      const PieceError e = PieceErrorAt(f, piece, c, h, kGeluDegree);
      const double y = e.y;  // Phi(x) > 0
      worst_approx = std::max(worst_approx, e.approx / y);
      // The product, per unit of |x|: x = xh + xl, s = sh + sl (12-bit truncations, so xh sh, xh sl,
      // xl sh and xl sl are exact); B = RN(xh sl + xl sh) (|B| <= 2^-10 |x s|); S + E = xh sh + B
      // (Fast2Sum); C = xl sl (exact, <= 2^-22 |x s|); m1 = RN(x l); m2 = RN(C + m1);
      // L = RN(E + m2).
      const double sv = y * 1.01 + e.l;
      const double mb = 0x1p-10 * sv, mc = 0x1p-22 * sv, m1 = e.l * (1 + kU), m2 = mc + m1;
      const double ml = kU * sv + m2;
      const double err_prod = kU * mb + kU * (m1 + m2 + ml);
      rel = std::max(rel, (e.err + err_prod) / y);
    }
    // The test multiplies by |S| >= |x Phi(x)| (1 - 2^-20).
    const double bound = kSafety * rel * (1 + 0x1p-20);
    rows[kRows - 1][j] = static_cast<float>(bound);
    worst_bound = std::max(worst_bound, bound);
  }
  fprintf(out,
          "// ---- gelu (erf form), -4.03125 <= x < 3.96875 ----\n"
          "// gelu(x) = x Phi(x); piece i = round(16 x), h = x - i/16 (exact), |h| <= 1/32, table index\n"
          "// i + %d; Phi = P0 + P1 h + h^2 (P2 + ... + P%d h^%d), Chebyshev interpolants (MPFR);\n"
          "// P0 = P0Hi + P0Lo, P1 = P1Hi (12 bits) + P1Lo. Rows of kGeluCoef: P0Hi, P0Lo, P1Hi, P1Lo,\n"
          "// P2 .. P%d, then the piece's relative error bound of S + L = x (s + l) (analysis times %g).\n"
          "// Worst approximation error of Phi %a (2^%.1f),\n// worst bound %a (2^%.1f).\n",
          -kGeluFirstPiece, kGeluDegree, kGeluDegree - 2, kGeluDegree, kSafety, worst_approx,
          std::log2(worst_approx), worst_bound, std::log2(worst_bound));
  fprintf(out, "constexpr int kGeluPieces = %d;\nconstexpr int kGeluFirstPiece = %d;\n"
               "constexpr int kGeluRows = %d;\n", kGeluPieces, kGeluFirstPiece, kRows);
  EmitCoefTable("kGeluCoef", rows);
}

// ---- sigmoid: 32 pieces of width 1/8 centred at i/8, -31 <= i <= 0 ----
// The first step evaluates sigmoid(-|x|) and takes x > 0 as 1 - sigmoid(-x) (simd/math_fast-inl.h),
// so the pieces cover -3.9375 <= a <= 0 only: 32 entries a table, one two-register permute a lookup
// on AVX-512 (64 entries took two and a blend); degree 5 keeps the approximation error far below
// the roundings'.
constexpr int kSigmoidPieces = 32;
constexpr int kSigmoidPerUnit = 8;
constexpr int kSigmoidFirstPiece = -31;
constexpr int kSigmoidDegree = 5;

M Sigmoid(const M& x) {  // 1 / (1 + e^-x)
  M e, neg = M(0.0) - x;
  mpfr_exp(e.v, neg.v, MPFR_RNDN);
  return M(1.0) / (M(1.0) + e);
}

void EmitSigmoid() {
  Fn f = Sigmoid;
  // Rows: S0Hi, S0Lo, S1Hi, S1Lo, S2 .. Sd, relative bound.
  constexpr int kRows = 4 + (kSigmoidDegree - 1) + 1;
  std::vector<std::vector<float>> rows(kRows, std::vector<float>(kSigmoidPieces));
  double worst_bound = 0, worst_approx = 0;
  for (int j = 0; j < kSigmoidPieces; ++j) {
    const int i = j + kSigmoidFirstPiece;
    const M c(static_cast<double>(i) / kSigmoidPerUnit), w(0.5 / kSigmoidPerUnit);
    const Piece piece = FitPiece(f, c, w, kSigmoidDegree, false);
    StorePiece(piece, kSigmoidDegree, j, &rows);
    const double bound = PieceRelativeBound(f, piece, c, w, kSigmoidDegree, /*positive_only=*/false, &worst_approx);
    rows[kRows - 1][j] = static_cast<float>(bound);
    worst_bound = std::max(worst_bound, bound);
  }
  const double lo = (kSigmoidFirstPiece - 0.5) / kSigmoidPerUnit;
  const double hi = (kSigmoidFirstPiece + kSigmoidPieces - 0.5) / kSigmoidPerUnit;
  fprintf(out,
          "// ---- sigmoid(a), a = -|x|, %g < a <= 0 (the pieces reach %g) ----\n"
          "// piece i = round(%d a), h = a - i/%d (exact), |h| <= 1/%d, table index i + %d;\n"
          "// sigmoid = S0 + S1 h + h^2 (S2 + ... + S%d h^%d), Chebyshev interpolants (MPFR);\n"
          "// S0 = S0Hi + S0Lo, S1 = S1Hi (12 bits) + S1Lo. Rows of kSigmoidCoef: S0Hi, S0Lo, S1Hi, S1Lo,\n"
          "// S2 .. S%d, then the piece's relative error bound of s + l (analysis times %g).\n"
          "// Worst approximation error %a (2^%.1f),\n// worst bound %a (2^%.1f).\n",
          lo, hi, kSigmoidPerUnit, kSigmoidPerUnit, 2 * kSigmoidPerUnit, -kSigmoidFirstPiece, kSigmoidDegree,
          kSigmoidDegree - 2, kSigmoidDegree, kSafety, worst_approx, std::log2(worst_approx), worst_bound,
          std::log2(worst_bound));
  fprintf(out, "constexpr int kSigmoidPieces = %d;\nconstexpr int kSigmoidFirstPiece = %d;\n"
               "constexpr int kSigmoidDegree = %d;\nconstexpr int kSigmoidRows = %d;\n",
          kSigmoidPieces, kSigmoidFirstPiece, kSigmoidDegree, kRows);
  fprintf(out, "constexpr float kSigmoidPerUnit = %d.0f;  // pieces per unit of a\n"
               "constexpr float kSigmoidWidth = %s;  // 1 / kSigmoidPerUnit\n"
               "constexpr float kSigmoidReach = %s;  // the first step's domain: |x| < kSigmoidReach\n",
          kSigmoidPerUnit, HexF(1.0f / kSigmoidPerUnit).c_str(), HexF(static_cast<float>(-lo)).c_str());
  EmitCoefTable("kSigmoidCoef", rows);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s OUTPUT_HEADER\n", argv[0]);
    return 2;
  }
  out = fopen(argv[1], "w");
  if (!out) {
    perror(argv[1]);
    return 1;
  }
  fprintf(out,
          "// GENERATED by tools/gen-math-tables/gen_math_fast_tables (MPFR %s). Do not edit: rerun\n"
          "//   build/.../gen_math_fast_tables simd/math_fast_tables.h\n"
          "// Constants, tables and error bounds of the float32 first steps (simd/math_fast-inl.h), as\n"
          "// exact hex-float literals. See docs/numerics-math.md.\n"
          "#ifndef LOCKSTEP_SIMD_MATH_FAST_TABLES_H_\n#define LOCKSTEP_SIMD_MATH_FAST_TABLES_H_\n\n"
          "namespace lockstep {\nnamespace simd {\nnamespace math_fast_tables {\n\n",
          mpfr_get_version());
  EmitExp();
  EmitErf();
  EmitGelu();
  EmitSigmoid();
  fprintf(out, "}  // namespace math_fast_tables\n}  // namespace simd\n}  // namespace lockstep\n\n"
               "#endif  // LOCKSTEP_SIMD_MATH_FAST_TABLES_H_\n");
  if (fclose(out) != 0) {
    perror(argv[1]);
    return 1;
  }
  return 0;
}
