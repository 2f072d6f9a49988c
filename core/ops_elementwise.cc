// Elementwise ops with broadcasting. Forward only; gradients are in backward_rules.cc.
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/trace/trace.h"
#include "core/ops_internal.h"
#include "core/backend/host.h"

namespace lockstep {

Tensor ContiguousData(const Tensor& t, const char* op) {
  LOCKSTEP_REQUIRE(t.defined(), op << ": a tensor argument is undefined");
  LOCKSTEP_REQUIRE(t.device() == CurrentDevice(),
                   op << ": the tensor is on " << t.device().ToString() << " but the current device is "
                      << CurrentDevice().ToString() << ": move it with ToDevice or change the device");
  LOCKSTEP_REQUIRE(t.dtype() == DType::kFloat32,
                   op << ": expected a float32 tensor, got " << DTypeName(t.dtype()) << " of shape "
                      << ShapeString(t.shape()));
  if (t.is_contiguous()) return t;
  NoGradGuard no_grad;
  return t.Clone();
}

namespace {

// Describes operand x (shape s, broadcast to out) as x[(i / div) % mod] when it can: over out's
// dimensions of size > 1 (aligned right), x must match out on one contiguous run of them and be 1
// on the others. False otherwise (e.g. [3, 1, 5] against [3, 4, 5]).
bool AsBroadcastOperand(const Tensor& x, const Shape& out, backend::BroadcastOperand* operand) {
  const Shape& s = x.shape();
  const size_t rank = out.size(), lead = rank - s.size();
  bool started = false, ended = false;
  size_t mod = 1, div = 1;
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;  // size-1 output dimensions change no index
    const int64_t size = d < lead ? 1 : s[d - lead];
    if (size == out[d]) {
      if (ended) return false;  // a second run
      started = true;
      mod *= static_cast<size_t>(out[d]);
    } else if (size == 1) {
      if (started) {
        ended = true;
        div *= static_cast<size_t>(out[d]);
      }
    } else {
      return false;
    }
  }
  *operand = backend::BroadcastOperand{x.data_f32(), div, mod};
  return true;
}

Tensor BinaryForward(backend::BinaryOp op, const Tensor& a_in, const Tensor& b_in, const char* name) {
  const Tensor a = ContiguousData(a_in, name), b = ContiguousData(b_in, name);
  const Shape out_shape = BroadcastShapes(a.shape(), b.shape(), name);
  Tensor out = Tensor::Empty(out_shape);
  const size_t n = static_cast<size_t>(out.numel());
  const size_t na = static_cast<size_t>(a.numel()), nb = static_cast<size_t>(b.numel());
  if (n == 0) return out;
  backend::BroadcastOperand oa, ob;
  if (na == n && nb == n) {
    Kernels().Binary(op, a.data_f32(), b.data_f32(), out.data_f32(), n);
  } else if (AsBroadcastOperand(a, out_shape, &oa) && AsBroadcastOperand(b, out_shape, &ob)) {
    Kernels().BinaryBroadcast(op, oa, ob, out.data_f32(), n);
  } else {
    NoGradGuard no_grad;
    const Tensor ea = a.Expand(out_shape).Clone(), eb = b.Expand(out_shape).Clone();
    Kernels().Binary(op, ea.data_f32(), eb.data_f32(), out.data_f32(), n);
  }
  return out;
}

Tensor Binary(backend::BinaryOp op, OpKind kind, const Tensor& a, const Tensor& b, const char* name) {
  Tensor out = BinaryForward(op, a, b, name);
  if (NeedsGrad({a, b})) {
    Node& node = RecordNode(out, kind, {a, b});
    if (kind == OpKind::kDiv) node.saved = {out.Detach()};
  }
  return out;
}

Tensor MathForward(backend::MathFn fn, const Tensor& a, const char* name) {
  const Tensor x = ContiguousData(a, name);
  Tensor out = Tensor::Empty(x.shape());
  Kernels().Math(fn, x.data_f32(), out.data_f32(), static_cast<size_t>(x.numel()));
  return out;
}

// Records a unary op whose rule needs the input (saved as inputs[0]) and the output.
Tensor Unary(Tensor out, OpKind kind, const Tensor& a) {
  if (NeedsGrad({a})) {
    Node& node = RecordNode(out, kind, {a});
    node.saved = {out.Detach()};
  }
  return out;
}

Tensor UnaryKernel(backend::UnaryOp op, const Tensor& a, const char* name) {
  const Tensor x = ContiguousData(a, name);
  Tensor out = Tensor::Empty(x.shape());
  Kernels().Unary(op, x.data_f32(), out.data_f32(), static_cast<size_t>(x.numel()));
  return out;
}

}  // namespace

Tensor Add(const Tensor& a, const Tensor& b) { return trace::Op("add", [&] { return Binary(backend::BinaryOp::kAdd, OpKind::kAdd, a, b, "add"); }); }
Tensor Sub(const Tensor& a, const Tensor& b) { return trace::Op("sub", [&] { return Binary(backend::BinaryOp::kSub, OpKind::kSub, a, b, "sub"); }); }
Tensor Mul(const Tensor& a, const Tensor& b) { return trace::Op("mul", [&] { return Binary(backend::BinaryOp::kMul, OpKind::kMul, a, b, "mul"); }); }
Tensor Div(const Tensor& a, const Tensor& b) { return trace::Op("div", [&] { return Binary(backend::BinaryOp::kDiv, OpKind::kDiv, a, b, "div"); }); }

Tensor Fmod(const Tensor& a, const Tensor& b) { return trace::Op("fmod", [&] { return Binary(backend::BinaryOp::kFmod, OpKind::kFmod, a, b, "fmod"); }); }
Tensor Remainder(const Tensor& a, const Tensor& b) { return trace::Op("remainder", [&] { return Binary(backend::BinaryOp::kRemainder, OpKind::kRemainder, a, b, "remainder"); }); }

Tensor Maximum(const Tensor& a, const Tensor& b) { return trace::Op("maximum", [&] { return BinaryForward(backend::BinaryOp::kMax, a, b, "maximum"); }); }
Tensor Minimum(const Tensor& a, const Tensor& b) { return trace::Op("minimum", [&] { return BinaryForward(backend::BinaryOp::kMin, a, b, "minimum"); }); }
Tensor Equal(const Tensor& a, const Tensor& b) { return trace::Op("eq", [&] { return BinaryForward(backend::BinaryOp::kEq, a, b, "equal"); }); }
Tensor Greater(const Tensor& a, const Tensor& b) { return trace::Op("gt", [&] { return BinaryForward(backend::BinaryOp::kGt, a, b, "greater"); }); }
Tensor NotEqual(const Tensor& a, const Tensor& b) { return trace::Op("ne", [&] { return BinaryForward(backend::BinaryOp::kNe, a, b, "not_equal"); }); }
Tensor GreaterEqual(const Tensor& a, const Tensor& b) { return trace::Op("ge", [&] { return BinaryForward(backend::BinaryOp::kGe, a, b, "greater_equal"); }); }
Tensor Less(const Tensor& a, const Tensor& b) { return trace::Op("lt", [&] { return BinaryForward(backend::BinaryOp::kLt, a, b, "less"); }); }
Tensor LessEqual(const Tensor& a, const Tensor& b) { return trace::Op("le", [&] { return BinaryForward(backend::BinaryOp::kLe, a, b, "less_equal"); }); }

Tensor AddScalar(const Tensor& a, float s) {
  return trace::Op("add", [&]() -> Tensor {
    const Tensor x = ContiguousData(a, "add_scalar");
    Tensor out = Tensor::Empty(x.shape());
    Kernels().BinaryScalarRight(backend::BinaryOp::kAdd, x.data_f32(), s, out.data_f32(), static_cast<size_t>(x.numel()));
    if (NeedsGrad({a})) RecordNode(out, OpKind::kAddScalar, {a});
    return out;
  });
}

Tensor MulScalar(const Tensor& a, float s) {
  return trace::Op("mul", [&]() -> Tensor {
    const Tensor x = ContiguousData(a, "mul_scalar");
    Tensor out = Tensor::Empty(x.shape());
    Kernels().BinaryScalarRight(backend::BinaryOp::kMul, x.data_f32(), s, out.data_f32(), static_cast<size_t>(x.numel()));
    if (NeedsGrad({a})) RecordNode(out, OpKind::kMulScalar, {a}).floats = {s};
    return out;
  });
}

Tensor PowScalar(const Tensor& a, int exponent) {
  return trace::Op("pow", [&]() -> Tensor {
    LOCKSTEP_REQUIRE(exponent >= host::PowIntProvenMin() && exponent <= host::PowIntProvenMax(),
                     "pow: exponent " << exponent << " is outside the supported range ["
                                      << host::PowIntProvenMin() << ", " << host::PowIntProvenMax() << "]");
    const Tensor x = ContiguousData(a, "pow");
    Tensor out = Tensor::Empty(x.shape());
    Kernels().PowInt(x.data_f32(), exponent, out.data_f32(), static_cast<size_t>(x.numel()));
    if (NeedsGrad({a})) RecordNode(out, OpKind::kPowScalar, {a}).ints = {exponent};
    return out;
  });
}

Tensor Pow(const Tensor& a, double exponent) {
  return trace::Op("pow", [&]() -> Tensor {
    if (exponent == 0.5) {
      const float inf = __builtin_inff();
      // sqrt(-0) is -0 where pow gives +0: adding +0 maps -0 to +0 and changes nothing else.
      return MaskedFill(AddScalar(Sqrt(a), 0.0f), Equal(a, Tensor::Scalar(-inf)), inf);
    }
    LOCKSTEP_REQUIRE(exponent >= host::PowIntProvenMin() && exponent <= host::PowIntProvenMax() &&
                         exponent == static_cast<double>(static_cast<int>(exponent)),
                     "pow: exponent " << exponent << " is not supported: lockstep computes correctly rounded powers for "
                                      << "the integer exponents " << host::PowIntProvenMin() << " to "
                                      << host::PowIntProvenMax() << " and for 0.5 (use exp(y * log(x)) for others)");
    return PowScalar(a, static_cast<int>(exponent));
  });
}

Tensor Neg(const Tensor& a) {
  return trace::Op("neg", [&]() -> Tensor {
    Tensor out = UnaryKernel(backend::UnaryOp::kNeg, a, "neg");
    if (NeedsGrad({a})) RecordNode(out, OpKind::kNeg, {a});
    return out;
  });
}

Tensor Relu(const Tensor& a) { return trace::Op("relu", [&] { return Unary(UnaryKernel(backend::UnaryOp::kRelu, a, "relu"), OpKind::kRelu, a); }); }
Tensor Sqrt(const Tensor& a) { return trace::Op("sqrt", [&] { return Unary(UnaryKernel(backend::UnaryOp::kSqrt, a, "sqrt"), OpKind::kSqrt, a); }); }
Tensor GeluErf(const Tensor& a) { return trace::Op("gelu", [&] { return Unary(MathForward(backend::MathFn::kGeluErf, a, "gelu"), OpKind::kGeluErf, a); }); }
Tensor GeluTanh(const Tensor& a) { return trace::Op("gelu", [&] { return Unary(MathForward(backend::MathFn::kGeluTanh, a, "gelu"), OpKind::kGeluTanh, a); }); }
Tensor Tanh(const Tensor& a) { return trace::Op("tanh", [&] { return Unary(MathForward(backend::MathFn::kTanh, a, "tanh"), OpKind::kTanh, a); }); }
Tensor Sigmoid(const Tensor& a) { return trace::Op("sigmoid", [&] { return Unary(MathForward(backend::MathFn::kSigmoid, a, "sigmoid"), OpKind::kSigmoid, a); }); }
// x * sigmoid(x) as one op: the forward pass's bits are Mul(x, Sigmoid(x))'s, and its gradient
// one kernel (silu_backward) with the bits of those two ops' rules and their sum.
Tensor Silu(const Tensor& a) {
  return trace::Op("silu", [&] {
    const Tensor x = ContiguousData(a, "silu");
    const Tensor s = MathForward(backend::MathFn::kSigmoid, x, "silu");
    Tensor out = Tensor::Empty(x.shape());
    Kernels().Binary(backend::BinaryOp::kMul, x.data_f32(), s.data_f32(), out.data_f32(),
                     static_cast<size_t>(x.numel()));
    if (NeedsGrad({a})) {
      Node& node = RecordNode(out, OpKind::kSilu, {a});
      node.saved = {s};
    }
    return out;
  });
}
Tensor Exp(const Tensor& a) { return trace::Op("exp", [&] { return Unary(MathForward(backend::MathFn::kExp, a, "exp"), OpKind::kExp, a); }); }
Tensor Log(const Tensor& a) { return trace::Op("log", [&] { return Unary(MathForward(backend::MathFn::kLog, a, "log"), OpKind::kLog, a); }); }
Tensor Floor(const Tensor& a) { return trace::Op("floor", [&] { return UnaryKernel(backend::UnaryOp::kFloor, a, "floor"); }); }
Tensor Ceil(const Tensor& a) { return trace::Op("ceil", [&] { return UnaryKernel(backend::UnaryOp::kCeil, a, "ceil"); }); }
Tensor Round(const Tensor& a) { return trace::Op("round", [&] { return UnaryKernel(backend::UnaryOp::kRoundEven, a, "round"); }); }
Tensor RoundToFloat16(const Tensor& a) {
  return trace::Op("round_float16", [&]() -> Tensor {
    Tensor out = UnaryKernel(backend::UnaryOp::kRoundFloat16, a, "round_float16");
    if (NeedsGrad({a})) RecordNode(out, OpKind::kRoundFloat16, {a});
    return out;
  });
}
Tensor RoundToBFloat16(const Tensor& a) {
  return trace::Op("round_bfloat16", [&]() -> Tensor {
    Tensor out = UnaryKernel(backend::UnaryOp::kRoundBFloat16, a, "round_bfloat16");
    if (NeedsGrad({a})) RecordNode(out, OpKind::kRoundBFloat16, {a});
    return out;
  });
}
Tensor Abs(const Tensor& a) { return trace::Op("abs", [&] { return Unary(UnaryKernel(backend::UnaryOp::kAbs, a, "abs"), OpKind::kAbs, a); }); }
Tensor Erf(const Tensor& a) { return trace::Op("erf", [&] { return Unary(MathForward(backend::MathFn::kErf, a, "erf"), OpKind::kErf, a); }); }
Tensor Rsqrt(const Tensor& a) { return trace::Op("rsqrt", [&] { return Unary(MathForward(backend::MathFn::kRsqrt, a, "rsqrt"), OpKind::kRsqrt, a); }); }

// The correctly rounded functions whose backward rules need only the input and the output.
#define LOCKSTEP_MATH_OP(Name, name)                                                                      \
  Tensor Name(const Tensor& a) {                                                                        \
    return trace::Op(#name, [&] { return Unary(MathForward(backend::MathFn::k##Name, a, #name), OpKind::k##Name, a); }); \
  }
LOCKSTEP_MATH_OP(Sin, sin)
LOCKSTEP_MATH_OP(Cos, cos)
LOCKSTEP_MATH_OP(Tan, tan)
LOCKSTEP_MATH_OP(Asin, asin)
LOCKSTEP_MATH_OP(Acos, acos)
LOCKSTEP_MATH_OP(Atan, atan)
LOCKSTEP_MATH_OP(Sinh, sinh)
LOCKSTEP_MATH_OP(Cosh, cosh)
LOCKSTEP_MATH_OP(Asinh, asinh)
LOCKSTEP_MATH_OP(Acosh, acosh)
LOCKSTEP_MATH_OP(Atanh, atanh)
#undef LOCKSTEP_MATH_OP

Tensor Where(const Tensor& cond_in, const Tensor& a_in, const Tensor& b_in) {
  return trace::Op("where", [&]() -> Tensor {
    const Tensor a = ContiguousData(a_in, "where"), b = ContiguousData(b_in, "where");
    const Shape shape = BroadcastShapes(BroadcastShapes(cond_in.shape(), a.shape(), "where"), b.shape(), "where");
    Tensor cond, ea, eb;
    {
      NoGradGuard no_grad;
      cond = ContiguousData(cond_in.To(DType::kFloat32).Expand(shape).Contiguous(), "where");
      ea = a.Expand(shape).Contiguous();
      eb = b.Expand(shape).Contiguous();
    }
    Tensor out = Tensor::Empty(shape);
    Kernels().Select(cond.data_f32(), ea.data_f32(), eb.data_f32(), out.data_f32(), static_cast<size_t>(out.numel()));
    if (NeedsGrad({a_in, b_in})) RecordNode(out, OpKind::kWhere, {a_in, b_in}).saved = {cond};
    return out;
  });
}

Tensor Clamp(const Tensor& x_in, float lo, float hi) {
  return trace::Op("clip", [&]() -> Tensor {
    const Tensor x = ContiguousData(x_in, "clip");
    Tensor out = Tensor::Empty(x.shape());
    Kernels().Clamp(x.data_f32(), lo, hi, out.data_f32(), static_cast<size_t>(x.numel()));
    if (NeedsGrad({x_in})) RecordNode(out, OpKind::kClamp, {x_in}).floats = {lo, hi};
    return out;
  });
}

Tensor Hardtanh(const Tensor& x_in, float min_val, float max_val) {
  return trace::Op("hardtanh", [&]() -> Tensor {
    // min_val > max_val is refused, as PyTorch refuses it; a NaN bound too (no order to keep).
    LOCKSTEP_REQUIRE(min_val <= max_val, "hardtanh: min_val " << min_val << " is above max_val " << max_val);
    const Tensor x = ContiguousData(x_in, "hardtanh");
    Tensor out = Tensor::Empty(x.shape());
    Kernels().Hardtanh(x.data_f32(), min_val, max_val, out.data_f32(), static_cast<size_t>(x.numel()));
    if (NeedsGrad({x_in})) RecordNode(out, OpKind::kHardtanh, {x_in}).floats = {min_val, max_val};
    return out;
  });
}

Tensor Relu6(const Tensor& x) { return Hardtanh(x, 0.0f, 6.0f); }

int64_t MaskPeriod(const Shape& x, const Shape& mask) {
  const size_t lead = x.size() - mask.size();  // the mask broadcasts to x: it has no more dimensions
  size_t first = 0;                            // the mask's first dimension that is not 1
  while (first < mask.size() && mask[first] == 1) ++first;
  int64_t period = 1;
  for (size_t d = first; d < mask.size(); ++d) {
    if (mask[d] != x[lead + d]) return NumElements(x);  // broadcasts inside: expand it
    period *= mask[d];
  }
  // A short period would mean many small kernel calls: expand it.
  constexpr int64_t kShortestPeriod = 1024;
  return period < kShortestPeriod ? NumElements(x) : period;
}

void SelectRepeated(const float* cond, const float* a, const float* b, float* out, size_t n, size_t period) {
  const Kernels k;
  for (size_t at = 0; at < n; at += period) k.Select(cond, a, b + at, out + at, period);
}

Tensor MaskedFill(const Tensor& x_in, const Tensor& mask_in, float value) {
  return trace::Op("masked_fill", [&]() -> Tensor {
    const Tensor x = ContiguousData(x_in, "masked_fill");
    LOCKSTEP_REQUIRE(BroadcastShapes(x.shape(), mask_in.shape(), "masked_fill") == x.shape(),
                     "masked_fill: mask of shape " << ShapeString(mask_in.shape())
                                                   << " does not broadcast to " << ShapeString(x.shape()));
    // A mask that repeats over leading dimensions (attention's causal [T, T] over [B, heads, T, T])
    // is kept as one period, not expanded.
    const int64_t period = MaskPeriod(x.shape(), mask_in.shape());
    Tensor mask;
    {
      NoGradGuard no_grad;
      const Tensor m = mask_in.To(DType::kFloat32);
      mask = ContiguousData(period == x.numel() ? m.Expand(x.shape()).Contiguous() : m.Contiguous(), "masked_fill");
    }
    Tensor fill = Tensor::Full({period}, value), out = Tensor::Empty(x.shape());
    SelectRepeated(mask.data_f32(), fill.data_f32(), x.data_f32(), out.data_f32(), static_cast<size_t>(x.numel()),
                   static_cast<size_t>(period));
    if (NeedsGrad({x_in})) {
      Node& node = RecordNode(out, OpKind::kMaskedFill, {x_in});
      node.saved = {mask};
    }
    return out;
  });
}

}  // namespace lockstep
