// Elementwise kernel bodies (the semantics of simd/elementwise.h), one output element per call.
#ifndef LOCKSTEP_CUDA_KERNELS_ELEMENTWISE_H_
#define LOCKSTEP_CUDA_KERNELS_ELEMENTWISE_H_

#include "core/backend/kernel_table.h"
#include "cuda/kernels/portable.h"
#include "simd/exact_remainder.h"

namespace lockstep {
namespace cuda {

using backend::BinaryOp;
using backend::UnaryOp;

LS_HD float ApplyBinary(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::kAdd: return Canonical(a + b);
    case BinaryOp::kSub: return Canonical(a - b);
    case BinaryOp::kMul: return Canonical(a * b);
    case BinaryOp::kDiv: return Canonical(a / b);
    case BinaryOp::kMax: return MaxByContract(a, b);
    case BinaryOp::kMin: return MinByContract(a, b);
    case BinaryOp::kEq: return a == b ? 1.0f : 0.0f;
    case BinaryOp::kNe: return a == b ? 0.0f : 1.0f;  // true for NaN
    case BinaryOp::kLt: return a < b ? 1.0f : 0.0f;
    case BinaryOp::kLe: return a <= b ? 1.0f : 0.0f;
    case BinaryOp::kGt: return a > b ? 1.0f : 0.0f;
    case BinaryOp::kGe: return a >= b ? 1.0f : 0.0f;
    case BinaryOp::kFmod: return simd::ExactFmod(a, b);
    case BinaryOp::kRemainder: return simd::FloorRemainder(a, b);
  }
  return CanonicalNaN();
}

// simd/elementwise-inl.h's RoundToIntegralFn: trunc|x| by conversion, one added where the mode asks
// (0 floor, 1 ceil, 2 ties-to-even), x's sign copied back; |x| >= 2^23, infinities and NaN stay.
LS_HD float RoundToIntegral(float x, int mode) {
  const float a = BitCast<float>(BitCast<uint32_t>(x) & 0x7FFFFFFFu);
  if (!(a < 8388608.0f)) return Canonical(x);
  const int32_t ti = static_cast<int32_t>(a);
  const float t = static_cast<float>(ti), frac = a - t;
  const bool neg = x < 0.0f;
  const bool up = mode == 0 ? neg && frac > 0.0f
                : mode == 1 ? !neg && frac > 0.0f
                            : frac > 0.5f || (frac == 0.5f && (ti & 1) != 0);
  return CopySign(up ? t + 1.0f : t, x);
}

// simd/elementwise-inl.h's RoundFloat16Fn and RoundBFloat16Fn: the same bit and float operations.
LS_HD float RoundFloat16(float x) {
  x = Canonical(x);
  uint32_t u = BitCast<uint32_t>(x) & 0x7FFFFFFFu;
  const float a = BitCast<float>(u);
  u = (u + 0xFFFu + ((u >> 13) & 1u)) & ~0x1FFFu;
  float r = BitCast<float>(u);
  if (r > 65504.0f) r = BitCast<float>(0x7F800000u);
  if (a < 6.103515625e-05f) r = (a + 0.5f) - 0.5f;
  return CopySign(r, x);
}
LS_HD float RoundBFloat16(float x) {
  uint32_t u = BitCast<uint32_t>(Canonical(x));
  u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
  return BitCast<float>(u);
}

LS_HD float ApplyUnary(UnaryOp op, float a) {
  switch (op) {
    case UnaryOp::kNeg: return Canonical(BitCast<float>(BitCast<uint32_t>(a) ^ 0x80000000u));
    case UnaryOp::kAbs: return Canonical(BitCast<float>(BitCast<uint32_t>(a) & 0x7FFFFFFFu));
    case UnaryOp::kSqrt: return Canonical(SqrtF(a));
    case UnaryOp::kRelu: return Canonical(a > 0.0f || IsNaN(a) ? a : 0.0f);
    case UnaryOp::kCanonicalize: return Canonical(a);
    case UnaryOp::kReciprocal: return Canonical(1.0f / a);
    case UnaryOp::kSquare: return Canonical(a * a);
    case UnaryOp::kFloor: return RoundToIntegral(a, 0);
    case UnaryOp::kCeil: return RoundToIntegral(a, 1);
    case UnaryOp::kRoundEven: return RoundToIntegral(a, 2);
    case UnaryOp::kRoundFloat16: return RoundFloat16(a);
    case UnaryOp::kRoundBFloat16: return RoundBFloat16(a);
  }
  return CanonicalNaN();
}

struct BinaryBody {
  BinaryOp op;
  const float* a;
  const float* b;
  float* out;
  LS_HD void operator()(size_t i) const { out[i] = ApplyBinary(op, a[i], b[i]); }
};
struct BinaryScalarRightBody {
  BinaryOp op;
  const float* a;
  float s;
  float* out;
  LS_HD void operator()(size_t i) const { out[i] = ApplyBinary(op, a[i], s); }
};
struct BinaryScalarLeftBody {
  BinaryOp op;
  float s;
  const float* b;
  float* out;
  LS_HD void operator()(size_t i) const { out[i] = ApplyBinary(op, s, b[i]); }
};
struct UnaryBody {
  UnaryOp op;
  const float* a;
  float* out;
  LS_HD void operator()(size_t i) const { out[i] = ApplyUnary(op, a[i]); }
};
// Clip's and hardtanh's values and gradients per element, canonical (the clamp, hardtanh and
// batch normalisation bodies).
LS_HD float ClampValue(float v, float lo, float hi) {
  v = v < lo ? lo : v;
  return Canonical(v > hi ? hi : v);
}
LS_HD float ClampGradient(float x, float lo, float hi, float g) { return x < lo || x > hi ? 0.0f : Canonical(g); }
LS_HD float HardtanhValue(float v, float lo, float hi) { return Canonical(v >= hi ? hi : v <= lo ? lo : v); }
LS_HD float HardtanhGradient(float x, float lo, float hi, float g) { return x <= lo || x >= hi ? 0.0f : Canonical(g); }

// A NaN condition counts as true (NaN != 0).
struct ClampBody {
  const float* x;
  float lo, hi;
  float* out;
  LS_HD void operator()(size_t i) const { out[i] = ClampValue(x[i], lo, hi); }
};

// Clip's gradient: +0 where x lies outside [lo, hi] (NaN fails both comparisons), else g.
struct ClampBackwardBody {
  const float* x;
  float lo, hi;
  const float* g;
  float* out;
  LS_HD void operator()(size_t i) const { out[i] = ClampGradient(x[i], lo, hi, g[i]); }
};

// PyTorch's hardtanh (each mask tests x) and its gradient, 0 at and beyond the bounds.
struct HardtanhBody {
  const float* x;
  float lo, hi;
  float* out;
  LS_HD void operator()(size_t i) const { out[i] = HardtanhValue(x[i], lo, hi); }
};
struct HardtanhBackwardBody {
  const float* x;
  float lo, hi;
  const float* g;
  float* out;
  LS_HD void operator()(size_t i) const { out[i] = HardtanhGradient(x[i], lo, hi, g[i]); }
};

struct SelectBody {
  const float* cond;
  const float* a;
  const float* b;
  float* out;
  LS_HD void operator()(size_t i) const { out[i] = Canonical(cond[i] == 0.0f ? b[i] : a[i]); }
};

}  // namespace cuda
}  // namespace lockstep

#endif  // LOCKSTEP_CUDA_KERNELS_ELEMENTWISE_H_
