// Elementwise float32 kernels: arithmetic, comparisons, selection, and the contract's special-value
// rules (every NaN stored is 0x7FC00000; max/min propagate NaN and order -0 < +0).
// Plain declarations; the per-target code is in elementwise-inl.h, dispatch in elementwise.cc.
#ifndef LOCKSTEP_SIMD_ELEMENTWISE_H_
#define LOCKSTEP_SIMD_ELEMENTWISE_H_

#include <stddef.h>
#include <stdint.h>

namespace lockstep {
namespace simd {

enum class BinaryOp {
  kAdd, kSub, kMul, kDiv, kMax, kMin,
  // Comparisons write 1.0f where true and 0.0f where false; any comparison with NaN is false
  // except kNe, which is true.
  kEq, kNe, kLt, kLe, kGt, kGe,
  // Remainders (simd/exact_remainder.h): kFmod, exact, has a's sign (C's fmod, torch.fmod, ONNX
  // Mod with fmod = 1); kRemainder has b's sign (Python's %, torch.remainder): fmod(a, b), plus b
  // (one rounded addition) where that is nonzero and its sign differs from b's. fmod(x, 0) and
  // fmod(inf, y) are NaN; fmod(x, inf) = x.
  kFmod, kRemainder,
};

enum class UnaryOp {
  kNeg,           // sign flipped: -(+0) = -0
  kAbs,           // sign cleared
  kSqrt,          // IEEE square root; sqrt(-0) = -0, sqrt(x < 0) = NaN
  kRelu,          // x > 0 ? x : +0; NaN stays NaN
  kCanonicalize,  // copies, replacing every NaN by 0x7FC00000
  kReciprocal,    // 1 / x, one IEEE division
  kSquare,        // x * x
  // Rounding to an integer (IEEE roundToIntegral): exact; the result keeps x's sign (floor(-0.5)
  // = -1, ceil(-0.5) = -0, round(0.5) = +0); integers (|x| >= 2^23), infinities stay; NaN -> NaN.
  kFloor,         // toward -inf
  kCeil,          // toward +inf
  kRoundEven,     // to nearest, ties to even (ONNX Round, torch.round)
  // Rounding to a narrower floating-point type, to nearest, ties to even, the result kept in a float
  // (exact both ways): the contract's float16 and bfloat16 tensors. Past the type's largest finite
  // value a result is an infinity (float16: 65504; bfloat16: float32's own); subnormals of the
  // narrow type are kept; NaN -> NaN.
  kRoundFloat16,
  kRoundBFloat16,
};

// out[i] = a[i] op b[i]. out may alias a or b.
void Binary(BinaryOp op, const float* a, const float* b, float* out, size_t n);
// out[i] = a[i] op s.
void BinaryScalarRight(BinaryOp op, const float* a, float s, float* out, size_t n);
// out[i] = s op b[i].
void BinaryScalarLeft(BinaryOp op, float s, const float* b, float* out, size_t n);
// Runs of `run` elements, each with one value: out[i] = a[i] op v (or v op a[i] when values_left)
// for v = values[(i / run) % mod]; the bits of a BinaryScalarRight (Left) call per run. n is a
// multiple of run.
void BinaryScalarRuns(BinaryOp op, const float* a, const float* values, size_t mod, size_t run, bool values_left,
                      float* out, size_t n);
// out[i] = op(a[i]).
void Unary(UnaryOp op, const float* a, float* out, size_t n);
// out[i] = cond[i] != 0 ? a[i] : b[i] (a NaN condition counts as true, as in C).
void Select(const float* cond, const float* a, const float* b, float* out, size_t n);
// y = x[i] < lo ? lo : x[i]; out[i] = y > hi ? hi : y (ONNX's Clip, PyTorch's clamp: NaN kept,
// -0 kept at a bound of +0). out may alias x.
void Clamp(const float* x, float lo, float hi, float* out, size_t n);
// Clamp's gradient: out[i] = x[i] < lo || x[i] > hi ? +0 : g[i], canonical (a NaN x passes g[i]).
// out may alias g.
void ClampBackward(const float* x, float lo, float hi, const float* g, float* out, size_t n);
// PyTorch's hardtanh (lo <= hi): out[i] = x[i] >= hi ? hi : x[i] <= lo ? lo : x[i], canonical (NaN
// kept; -0 becomes lo at a bound of +0). out may alias x.
void Hardtanh(const float* x, float lo, float hi, float* out, size_t n);
// Its gradient: out[i] = x[i] <= lo || x[i] >= hi ? +0 : g[i], canonical. out may alias g.
void HardtanhBackward(const float* x, float lo, float hi, const float* g, float* out, size_t n);

// The activation that batch normalisation's forward pass applies to out as it stores it (a Relu,
// Clip or SiLU that alone reads its output): kRelu out > 0 or NaN ? out : +0, as Unary's kRelu;
// kClamp as Clamp; kHardtanh as Hardtanh; kSilu by SiluInPlace (simd/silu_forward.h) over the
// stored run, which the normalisation's own passes leave as it is. The same bits as that op's pass
// after it; xhat stays the normalised value. (The values are core/backend/kernel_table.h's
// kConvRelu ... kConvHardtanh.)
struct NormActivation {
  enum Kind : int32_t { kNone = 0, kRelu = 1, kClamp = 2, kSilu = 3, kHardtanh = 4 } kind = kNone;
  float lo = 0.0f, hi = 0.0f;  // kClamp's and kHardtanh's bounds
};

// Batch normalisation over one run of a channel (core/backend/cpu_channel_norm.cc), single-threaded:
// xhat = (x - mean) * rstd, out = activation(xhat * weight + bias); backward dx = ((g - mean_g) -
// xhat * mean_g_xhat) * rstd. Each step rounded and canonical: the bits of one BinaryScalarRight or
// Binary pass per step, in one pass over memory.
void NormalizeRun(const float* x, float mean, float rstd, float weight, float bias, float* xhat, float* out, size_t n,
                  const NormActivation& activation = {});
void NormalizeRunBackward(const float* g, const float* xhat, float mean_g, float mean_g_xhat, float rstd, float* dx,
                          size_t n);
// The same arithmetic over whole samples of small planes, single-threaded: element i takes its
// parameters from element i of per-element tables (each channel's values repeated over its plane),
// so that planes narrower than a vector run at full width instead of a call each. Any argument of
// the forward pass but x and out may be null where NormalizeRun's would be (weight 1, bias 0, xhat
// not stored).
void NormalizeTabled(const float* x, const float* mean, const float* rstd, const float* weight, const float* bias,
                     float* xhat, float* out, size_t n, const NormActivation& activation = {});
void NormalizeBackwardTabled(const float* g, const float* xhat, const float* mean_g, const float* mean_g_xhat,
                             const float* rstd, float* dx, size_t n);

const char* BinaryOpName(BinaryOp op);
const char* UnaryOpName(UnaryOp op);

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_ELEMENTWISE_H_
