// Elementwise float32 kernels: arithmetic, comparisons, selection, and the contract's special-value
// rules (every NaN stored is 0x7FC00000; max/min propagate NaN and order -0 < +0).
// Plain declarations; the per-target code is in elementwise-inl.h, dispatch in elementwise.cc.
#ifndef LOCKSTEP_SIMD_ELEMENTWISE_H_
#define LOCKSTEP_SIMD_ELEMENTWISE_H_

#include <stddef.h>

namespace lockstep {
namespace simd {

enum class BinaryOp {
  kAdd, kSub, kMul, kDiv, kMax, kMin,
  // Comparisons write 1.0f where true and 0.0f where false; any comparison with NaN is false
  // except kNe, which is true.
  kEq, kNe, kLt, kLe, kGt, kGe,
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
};

// out[i] = a[i] op b[i]. out may alias a or b.
void Binary(BinaryOp op, const float* a, const float* b, float* out, size_t n);
// out[i] = a[i] op s.
void BinaryScalarRight(BinaryOp op, const float* a, float s, float* out, size_t n);
// out[i] = s op b[i].
void BinaryScalarLeft(BinaryOp op, float s, const float* b, float* out, size_t n);
// out[i] = op(a[i]).
void Unary(UnaryOp op, const float* a, float* out, size_t n);
// out[i] = cond[i] != 0 ? a[i] : b[i] (a NaN condition counts as true, as in C).
void Select(const float* cond, const float* a, const float* b, float* out, size_t n);

const char* BinaryOpName(BinaryOp op);
const char* UnaryOpName(UnaryOp op);

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_ELEMENTWISE_H_
