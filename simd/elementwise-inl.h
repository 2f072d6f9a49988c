// Per-target elementwise kernels (see elementwise.h for the semantics).
#if defined(LOCKSTEP_SIMD_ELEMENTWISE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_ELEMENTWISE_INL_H_
#undef LOCKSTEP_SIMD_ELEMENTWISE_INL_H_
#else
#define LOCKSTEP_SIMD_ELEMENTWISE_INL_H_
#endif

#include "hwy/highway.h"
#include "simd/contract-inl.h"
#include "simd/elementwise.h"
#include "simd/exact_remainder.h"
#include "simd/loops-inl.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D, class M>
HWY_INLINE hn::Vec<D> MaskToOneZero(D d, M m) {
  return hn::IfThenElseZero(m, hn::Set(d, 1.0f));
}

// One functor per operation; each returns contract-conforming lanes.
struct AddFn { template <class D, class V> HWY_INLINE V operator()(D d, V a, V b) const { return Canonicalize(d, hn::Add(a, b)); } };
struct SubFn { template <class D, class V> HWY_INLINE V operator()(D d, V a, V b) const { return Canonicalize(d, hn::Sub(a, b)); } };
struct MulFn { template <class D, class V> HWY_INLINE V operator()(D d, V a, V b) const { return Canonicalize(d, hn::Mul(a, b)); } };
struct DivFn { template <class D, class V> HWY_INLINE V operator()(D d, V a, V b) const { return Canonicalize(d, hn::Div(a, b)); } };
struct MaxFn { template <class D, class V> HWY_INLINE V operator()(D d, V a, V b) const { return MaxByContract(d, a, b); } };
struct MinFn { template <class D, class V> HWY_INLINE V operator()(D d, V a, V b) const { return MinByContract(d, a, b); } };
struct EqFn { template <class D, class V> HWY_INLINE V operator()(D d, V a, V b) const { return MaskToOneZero(d, hn::Eq(a, b)); } };
struct NeFn { template <class D, class V> HWY_INLINE V operator()(D d, V a, V b) const { return hn::Sub(hn::Set(d, 1.0f), MaskToOneZero(d, hn::Eq(a, b))); } };
struct LtFn { template <class D, class V> HWY_INLINE V operator()(D d, V a, V b) const { return MaskToOneZero(d, hn::Lt(a, b)); } };
struct LeFn { template <class D, class V> HWY_INLINE V operator()(D d, V a, V b) const { return MaskToOneZero(d, hn::Le(a, b)); } };
struct GtFn { template <class D, class V> HWY_INLINE V operator()(D d, V a, V b) const { return MaskToOneZero(d, hn::Gt(a, b)); } };
struct GeFn { template <class D, class V> HWY_INLINE V operator()(D d, V a, V b) const { return MaskToOneZero(d, hn::Ge(a, b)); } };

// The remainders lane by lane (simd/exact_remainder.h: integer arithmetic on the significands;
// vectors have no 64-bit integer division).
template <bool kFloorSign>
struct RemainderFn {
  template <class D, class V> HWY_INLINE V operator()(D d, V a, V b) const {
    HWY_ALIGN float xa[HWY_MAX_BYTES / sizeof(float)], xb[HWY_MAX_BYTES / sizeof(float)];
    hn::Store(a, d, xa);
    hn::Store(b, d, xb);
    for (size_t i = 0; i < hn::Lanes(d); ++i) xa[i] = kFloorSign ? FloorRemainder(xa[i], xb[i]) : ExactFmod(xa[i], xb[i]);
    return hn::Load(d, xa);
  }
};

struct NegFn { template <class D, class V> HWY_INLINE V operator()(D d, V a) const { return Canonicalize(d, hn::Neg(a)); } };
struct AbsFn { template <class D, class V> HWY_INLINE V operator()(D d, V a) const { return Canonicalize(d, hn::Abs(a)); } };
struct SqrtFn { template <class D, class V> HWY_INLINE V operator()(D d, V a) const { return Canonicalize(d, hn::Sqrt(a)); } };
struct ReluFn {
  template <class D, class V> HWY_INLINE V operator()(D d, V a) const {
    return Canonicalize(d, hn::IfThenElse(hn::Or(hn::Gt(a, hn::Zero(d)), IsNaNMask(d, a)), a, hn::Zero(d)));
  }
};
struct CanonicalizeFn { template <class D, class V> HWY_INLINE V operator()(D d, V a) const { return Canonicalize(d, a); } };
struct ReciprocalFn { template <class D, class V> HWY_INLINE V operator()(D d, V a) const { return Canonicalize(d, hn::Div(hn::Set(d, 1.0f), a)); } };
struct SquareFn { template <class D, class V> HWY_INLINE V operator()(D d, V a) const { return Canonicalize(d, hn::Mul(a, a)); } };

// Rounding to an integer with integer operations only (not Highway's Floor/Ceil/Round, whose
// emulations differ by target): for |x| < 2^23, t = trunc|x| by conversion, then one added where
// the rounding mode asks (exact), the sign of x copied back. kMode: 0 floor, 1 ceil, 2 ties-to-even.
template <int kMode>
struct RoundToIntegralFn {
  template <class D, class V> HWY_INLINE V operator()(D d, V x) const {
    const hn::RebindToSigned<D> di;
    const V a = hn::Abs(x);
    const auto small = hn::Lt(a, hn::Set(d, 8388608.0f));  // 2^23: every float above is an integer
    const auto ti = hn::ConvertTo(di, hn::IfThenElseZero(small, a));
    const V t = hn::ConvertTo(d, ti);
    const V frac = hn::Sub(hn::IfThenElseZero(small, a), t);  // exact
    const auto neg = hn::Lt(x, hn::Zero(d));
    hn::Mask<D> up;
    if (kMode == 0) up = hn::And(neg, hn::Gt(frac, hn::Zero(d)));
    if (kMode == 1) up = hn::AndNot(neg, hn::Gt(frac, hn::Zero(d)));
    if (kMode == 2) {
      const auto odd = hn::RebindMask(d, hn::Ne(hn::And(ti, hn::Set(di, 1)), hn::Zero(di)));
      const V half = hn::Set(d, 0.5f);
      up = hn::Or(hn::Gt(frac, half), hn::And(hn::Eq(frac, half), odd));
    }
    const V mag = hn::IfThenElse(up, hn::Add(t, hn::Set(d, 1.0f)), t);
    return Canonicalize(d, hn::IfThenElse(small, hn::CopySignToAbs(mag, x), x));
  }
};

// Rounding to float16 with integer and float operations (not Highway's F16 demotion, whose
// emulation differs by target): at or above float16's smallest normal 2^-14 the significand is
// rounded to 10 bits by adding 0xFFF plus the kept last bit to the bits and clearing the 13 below;
// past 65504 the result is infinite; below 2^-14 (float16's subnormals, spaced 2^-24) one float
// addition of 0.5 and its subtraction round to a multiple of 2^-24, ties to even. NaN made
// canonical first (a payload could carry into the exponent).
struct RoundFloat16Fn {
  template <class D, class V> HWY_INLINE V operator()(D d, V x) const {
    const hn::RebindToUnsigned<D> du;
    x = Canonicalize(d, x);
    const V a = hn::Abs(x);
    auto u = hn::BitCast(du, a);
    const auto kept_lsb = hn::And(hn::ShiftRight<13>(u), hn::Set(du, 1u));
    u = hn::And(hn::Add(u, hn::Add(hn::Set(du, 0xFFFu), kept_lsb)), hn::Set(du, ~0x1FFFu));
    V normal = hn::BitCast(d, u);
    normal = hn::IfThenElse(hn::Gt(normal, hn::Set(d, 65504.0f)), hn::Inf(d), normal);
    const V half = hn::Set(d, 0.5f);
    const V subnormal = hn::Sub(hn::Add(a, half), half);
    const V r = hn::IfThenElse(hn::Lt(a, hn::Set(d, 6.103515625e-05f)), subnormal, normal);
    return hn::CopySignToAbs(r, x);
  }
};

// Rounding to bfloat16 (float32's upper 16 bits): 0x7FFF plus the kept last bit added to the bits,
// the low 16 cleared; a carry into the exponent gives the next binade or infinity. NaN canonical
// first.
struct RoundBFloat16Fn {
  template <class D, class V> HWY_INLINE V operator()(D d, V x) const {
    const hn::RebindToUnsigned<D> du;
    auto u = hn::BitCast(du, Canonicalize(d, x));
    const auto kept_lsb = hn::And(hn::ShiftRight<16>(u), hn::Set(du, 1u));
    u = hn::And(hn::Add(u, hn::Add(hn::Set(du, 0x7FFFu), kept_lsb)), hn::Set(du, 0xFFFF0000u));
    return hn::BitCast(d, u);
  }
};

struct SelectFn {
  template <class D, class V> HWY_INLINE V operator()(D d, V c, V a, V b) const {
    const auto is_false = hn::Eq(c, hn::Zero(d));  // NaN != 0, so a NaN condition is true
    return Canonicalize(d, hn::IfThenElse(is_false, b, a));
  }
};

// Clip by two compare-and-selects, in ONNX's order (the lower bound first).
struct ClampFn {
  float lo, hi;
  template <class D, class V> HWY_INLINE V operator()(D d, V x) const {
    const V vlo = hn::Set(d, lo), vhi = hn::Set(d, hi);
    const V y = hn::IfThenElse(hn::Lt(x, vlo), vlo, x);
    return Canonicalize(d, hn::IfThenElse(hn::Gt(y, vhi), vhi, y));
  }
};

// Clip's gradient: +0 where x lies outside [lo, hi] (either comparison; NaN fails both), else g.
struct ClampBackwardFn {
  float lo, hi;
  template <class D, class V> HWY_INLINE V operator()(D d, V x, V g) const {
    const auto outside = hn::Or(hn::Lt(x, hn::Set(d, lo)), hn::Gt(x, hn::Set(d, hi)));
    return Canonicalize(d, hn::IfThenZeroElse(outside, g));
  }
};

// PyTorch's hardtanh, lo <= hi: x >= hi ? hi : x <= lo ? lo : x (the bits of its two masked fills,
// each mask testing x), and its gradient, +0 where x <= lo or x >= hi (NaN fails both), else g.
struct HardtanhFn {
  float lo, hi;
  template <class D, class V> HWY_INLINE V operator()(D d, V x) const {
    const V vlo = hn::Set(d, lo), vhi = hn::Set(d, hi);
    const V y = hn::IfThenElse(hn::Le(x, vlo), vlo, x);
    return Canonicalize(d, hn::IfThenElse(hn::Ge(x, vhi), vhi, y));
  }
};
struct HardtanhBackwardFn {
  float lo, hi;
  template <class D, class V> HWY_INLINE V operator()(D d, V x, V g) const {
    const auto outside = hn::Or(hn::Le(x, hn::Set(d, lo)), hn::Ge(x, hn::Set(d, hi)));
    return Canonicalize(d, hn::IfThenZeroElse(outside, g));
  }
};

// SiLU's gradient at x with s = sigmoid(x): g * s + ((g * x) * (-s + 1)) * s, each operation
// rounded, canonical (simd/silu_backward.h; batch normalisation's sums use it too).
struct SiluGradientFn {
  template <class D, class V> HWY_INLINE V operator()(D d, V x, V s, V g) const {
    const V sigmoid_part = hn::Mul(hn::Mul(hn::Mul(g, x), hn::Add(hn::Neg(s), hn::Set(d, 1.0f))), s);
    return Canonicalize(d, hn::Add(hn::Mul(g, s), sigmoid_part));
  }
};
HWY_INLINE float SiluGradientScalar(float x, float s, float g) {
  return CanonicalScalar(g * s + ((g * x) * (-s + 1.0f)) * s);
}

// Binds one operand to a broadcast scalar.
template <class Fn>
struct ScalarRight {
  Fn fn; float s;
  template <class D, class V> HWY_INLINE V operator()(D d, V a) const { return fn(d, a, hn::Set(d, s)); }
};
template <class Fn>
struct ScalarLeft {
  Fn fn; float s;
  template <class D, class V> HWY_INLINE V operator()(D d, V b) const { return fn(d, hn::Set(d, s), b); }
};

// Calls visit(functor) with the functor for op; one switch per call, never per element.
template <class Visit>
HWY_INLINE void WithBinaryFn(BinaryOp op, const Visit& visit) {
  switch (op) {
    case BinaryOp::kAdd: return visit(AddFn());
    case BinaryOp::kSub: return visit(SubFn());
    case BinaryOp::kMul: return visit(MulFn());
    case BinaryOp::kDiv: return visit(DivFn());
    case BinaryOp::kMax: return visit(MaxFn());
    case BinaryOp::kMin: return visit(MinFn());
    case BinaryOp::kEq: return visit(EqFn());
    case BinaryOp::kNe: return visit(NeFn());
    case BinaryOp::kLt: return visit(LtFn());
    case BinaryOp::kLe: return visit(LeFn());
    case BinaryOp::kGt: return visit(GtFn());
    case BinaryOp::kGe: return visit(GeFn());
    case BinaryOp::kFmod: return visit(RemainderFn<false>());
    case BinaryOp::kRemainder: return visit(RemainderFn<true>());
  }
}

template <class Visit>
HWY_INLINE void WithUnaryFn(UnaryOp op, const Visit& visit) {
  switch (op) {
    case UnaryOp::kNeg: return visit(NegFn());
    case UnaryOp::kAbs: return visit(AbsFn());
    case UnaryOp::kSqrt: return visit(SqrtFn());
    case UnaryOp::kRelu: return visit(ReluFn());
    case UnaryOp::kCanonicalize: return visit(CanonicalizeFn());
    case UnaryOp::kReciprocal: return visit(ReciprocalFn());
    case UnaryOp::kSquare: return visit(SquareFn());
    case UnaryOp::kFloor: return visit(RoundToIntegralFn<0>());
    case UnaryOp::kCeil: return visit(RoundToIntegralFn<1>());
    case UnaryOp::kRoundEven: return visit(RoundToIntegralFn<2>());
    case UnaryOp::kRoundFloat16: return visit(RoundFloat16Fn());
    case UnaryOp::kRoundBFloat16: return visit(RoundBFloat16Fn());
  }
}

HWY_INLINE void BinaryArraysImpl(BinaryOp op, const float* a, const float* b, float* out, size_t n) {
  const hn::ScalableTag<float> d;
  WithBinaryFn(op, [&](auto fn) HWY_ATTR { MapBinary(d, a, b, out, n, fn); });
}

HWY_INLINE void BinaryScalarRightImpl(BinaryOp op, const float* a, float s, float* out, size_t n) {
  const hn::ScalableTag<float> d;
  WithBinaryFn(op, [&](auto fn) HWY_ATTR {
    MapUnary(d, a, out, n, ScalarRight<decltype(fn)>{fn, s});
  });
}

HWY_INLINE void BinaryScalarLeftImpl(BinaryOp op, float s, const float* b, float* out, size_t n) {
  const hn::ScalableTag<float> d;
  WithBinaryFn(op, [&](auto fn) HWY_ATTR {
    MapUnary(d, b, out, n, ScalarLeft<decltype(fn)>{fn, s});
  });
}

HWY_INLINE void UnaryImpl(UnaryOp op, const float* a, float* out, size_t n) {
  const hn::ScalableTag<float> d;
  WithUnaryFn(op, [&](auto fn) HWY_ATTR { MapUnary(d, a, out, n, fn); });
}

HWY_INLINE void ClampImpl(const float* x, float lo, float hi, float* out, size_t n) {
  const hn::ScalableTag<float> d;
  MapUnary(d, x, out, n, ClampFn{lo, hi});
}

// Batch normalisation's forward activations (NormActivation) on canonical values: none, or the
// functions of the Relu and Clip passes (SiLU runs over the stored values after them); the scalar
// form for the tables' tails.
struct NoActivationFn {
  template <class D, class V> HWY_INLINE V operator()(D, V v) const { return v; }
};
template <class Visit>
HWY_INLINE void WithNormActivation(const NormActivation& a, const Visit& visit) {
  switch (a.kind) {
    case NormActivation::kRelu: return visit(ReluFn());
    case NormActivation::kClamp: return visit(ClampFn{a.lo, a.hi});
    case NormActivation::kHardtanh: return visit(HardtanhFn{a.lo, a.hi});
    default: return visit(NoActivationFn());
  }
}
HWY_INLINE float ActivateScalar(const NormActivation& a, float v) {
  if (a.kind == NormActivation::kRelu) return v > 0.0f || v != v ? CanonicalScalar(v) : 0.0f;
  if (a.kind == NormActivation::kHardtanh) return CanonicalScalar(v >= a.hi ? a.hi : v <= a.lo ? a.lo : v);
  if (a.kind != NormActivation::kClamp) return v;
  v = v < a.lo ? a.lo : v;
  return CanonicalScalar(v > a.hi ? a.hi : v);
}

// Batch normalisation over one run of a channel: the steps of the scalar passes it replaces (each
// rounded and canonical as theirs), in one pass over memory. Forward: xhat = (x - mean) * rstd,
// out = activation(xhat * weight + bias).
template <class Activation>
HWY_INLINE void NormalizeRunWith(const float* x, float mean, float rstd, float weight, float bias, float* xhat,
                                 float* out, size_t n, const Activation& activation) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto vm = hn::Set(d, mean), vr = hn::Set(d, rstd), vw = hn::Set(d, weight), vb = hn::Set(d, bias);
  // Canonical where stored only: a NaN stays a NaN through subtraction, multiplication and
  // addition, and Canonicalize maps every NaN to the same bits, so the stored lanes equal those of
  // canonicalizing after each step (the steps' canonicalizations had made this loop's chain three
  // times as long).
  auto step = [&](const float* from, float* h_to, float* to) HWY_ATTR {
    const auto h = hn::Mul(hn::Sub(hn::LoadU(d, from), vm), vr);
    if (h_to != nullptr) hn::StoreU(Canonicalize(d, h), d, h_to);
    hn::StoreU(activation(d, Canonicalize(d, hn::Add(hn::Mul(h, vw), vb))), d, to);
  };
  size_t i = 0;
  if (xhat != nullptr) {
    for (; i + N <= n; i += N) step(x + i, xhat + i, out + i);
  } else {
    for (; i + N <= n; i += N) step(x + i, nullptr, out + i);
  }
  if (i == n) return;
  HWY_ALIGN float in_buf[hn::MaxLanes(d)] = {}, h_buf[hn::MaxLanes(d)], out_buf[hn::MaxLanes(d)];
  memcpy(in_buf, x + i, (n - i) * sizeof(float));
  step(in_buf, h_buf, out_buf);
  if (xhat != nullptr) memcpy(xhat + i, h_buf, (n - i) * sizeof(float));
  memcpy(out + i, out_buf, (n - i) * sizeof(float));
}
HWY_INLINE void NormalizeRunImpl(const float* x, float mean, float rstd, float weight, float bias, float* xhat,
                                 float* out, size_t n, const NormActivation& a) {
  WithNormActivation(a, [&](const auto& fn) HWY_ATTR { NormalizeRunWith(x, mean, rstd, weight, bias, xhat, out, n, fn); });
}

// Backward: dx = ((g - mean_g) - xhat * mean_g_xhat) * rstd.
HWY_INLINE void NormalizeRunBackwardImpl(const float* g, const float* xhat, float mean_g, float mean_g_xhat, float rstd,
                                         float* dx, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto vm = hn::Set(d, mean_g), vp = hn::Set(d, mean_g_xhat), vr = hn::Set(d, rstd);
  auto step = [&](const float* g_at, const float* h_at, float* to) HWY_ATTR {
    const auto centred = SubFn()(d, hn::LoadU(d, g_at), vm);
    const auto projected = MulFn()(d, hn::LoadU(d, h_at), vp);
    hn::StoreU(MulFn()(d, SubFn()(d, centred, projected), vr), d, to);
  };
  size_t i = 0;
  for (; i + N <= n; i += N) step(g + i, xhat + i, dx + i);
  if (i == n) return;
  HWY_ALIGN float g_buf[hn::MaxLanes(d)] = {}, h_buf[hn::MaxLanes(d)] = {}, out_buf[hn::MaxLanes(d)];
  memcpy(g_buf, g + i, (n - i) * sizeof(float));
  memcpy(h_buf, xhat + i, (n - i) * sizeof(float));
  step(g_buf, h_buf, out_buf);
  memcpy(dx + i, out_buf, (n - i) * sizeof(float));
}

// NormalizeRunImpl and NormalizeRunBackwardImpl with per-element parameters (NormalizeTabled).
template <class Activation>
HWY_INLINE void NormalizeTabledWith(const float* x, const float* mean, const float* rstd, const float* weight,
                                    const float* bias, float* xhat, float* out, size_t n, const NormActivation& a,
                                    const Activation& activation) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  auto step = [&](size_t at, const float* from, float* h_to, float* to) HWY_ATTR {
    const auto h = hn::Mul(hn::Sub(hn::LoadU(d, from), hn::LoadU(d, mean + at)), hn::LoadU(d, rstd + at));
    if (h_to != nullptr) hn::StoreU(Canonicalize(d, h), d, h_to);
    const auto w = weight != nullptr ? hn::LoadU(d, weight + at) : hn::Set(d, 1.0f);
    const auto b = bias != nullptr ? hn::LoadU(d, bias + at) : hn::Zero(d);
    hn::StoreU(activation(d, Canonicalize(d, hn::Add(hn::Mul(h, w), b))), d, to);
  };
  size_t i = 0;
  for (; i + N <= n; i += N) step(i, x + i, xhat != nullptr ? xhat + i : nullptr, out + i);
  for (; i < n; ++i) {  // the same operations one lane at a time
    const float h = (x[i] - mean[i]) * rstd[i];
    if (xhat != nullptr) xhat[i] = CanonicalScalar(h);
    out[i] = ActivateScalar(a, CanonicalScalar(h * (weight != nullptr ? weight[i] : 1.0f) + (bias != nullptr ? bias[i] : 0.0f)));
  }
}
HWY_INLINE void NormalizeTabledImpl(const float* x, const float* mean, const float* rstd, const float* weight,
                                    const float* bias, float* xhat, float* out, size_t n, const NormActivation& a) {
  WithNormActivation(a, [&](const auto& fn) HWY_ATTR { NormalizeTabledWith(x, mean, rstd, weight, bias, xhat, out, n, a, fn); });
}

HWY_INLINE void NormalizeBackwardTabledImpl(const float* g, const float* xhat, const float* mean_g,
                                            const float* mean_g_xhat, const float* rstd, float* dx, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto centred = SubFn()(d, hn::LoadU(d, g + i), hn::LoadU(d, mean_g + i));
    const auto projected = MulFn()(d, hn::LoadU(d, xhat + i), hn::LoadU(d, mean_g_xhat + i));
    hn::StoreU(MulFn()(d, SubFn()(d, centred, projected), hn::LoadU(d, rstd + i)), d, dx + i);
  }
  for (; i < n; ++i) dx[i] = CanonicalScalar((CanonicalScalar(g[i] - mean_g[i]) - CanonicalScalar(xhat[i] * mean_g_xhat[i])) * rstd[i]);
}

HWY_INLINE void ClampBackwardImpl(const float* x, float lo, float hi, const float* g, float* out, size_t n) {
  const hn::ScalableTag<float> d;
  MapBinary(d, x, g, out, n, ClampBackwardFn{lo, hi});
}

HWY_INLINE void HardtanhImpl(const float* x, float lo, float hi, float* out, size_t n) {
  const hn::ScalableTag<float> d;
  MapUnary(d, x, out, n, HardtanhFn{lo, hi});
}

HWY_INLINE void HardtanhBackwardImpl(const float* x, float lo, float hi, const float* g, float* out, size_t n) {
  const hn::ScalableTag<float> d;
  MapBinary(d, x, g, out, n, HardtanhBackwardFn{lo, hi});
}

HWY_INLINE void SelectImpl(const float* cond, const float* a, const float* b, float* out, size_t n) {
  const hn::ScalableTag<float> d;
  MapTernary(d, cond, a, b, out, n, SelectFn());
}

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#endif  // toggle guard
