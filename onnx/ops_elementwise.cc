// Elementwise operators: arithmetic, comparisons, logic, Where, and the activations, each as
// lockstep ops (float) or exact host integer arithmetic (integer shape computations).
#include <string>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "onnx/float64.h"
#include "onnx/op_helpers.h"
#include "onnx/op_registry.h"

namespace lockstep {
namespace onnx {

namespace {

using FloatFn = Tensor (*)(const Tensor&);

// A float-only unary operator.
OpSpec FloatUnary(const char* name, int64_t since, FloatFn fn) {
  return {name, since, [name, fn](const NodeView& node) -> Kernel {
            node.RequireInputs(1, 1);
            return [name, fn](const Values& in, RunContext&) -> Values {
              return {FloatValue(fn(FloatInput(Input(in, 0, name), name)))};
            };
          }};
}

// A unary operator whose attributes configure a float function of x.
OpSpec Activation(const char* name, int64_t since,
                  std::function<std::function<Tensor(const Tensor&)>(const NodeView&)> make) {
  return {name, since, [name, make](const NodeView& node) -> Kernel {
            node.RequireInputs(1, 1);
            auto fn = make(node);
            return [name, fn](const Values& in, RunContext&) -> Values {
              return {FloatValue(fn(FloatInput(Input(in, 0, name), name)))};
            };
          }};
}

Tensor Scalar(float v) { return Tensor::Scalar(v); }

// Opsets before 7 broadcast B only when `broadcast` is set, and with `axis` they align B's
// dimensions with A's starting there (B [C] against A [N, C, H, W] at axis 1 is [C, 1, 1]).
// Returns the axis to align at, or -1 for NumPy's trailing alignment.
int64_t LegacyAxis(const NodeView& node) {
  if (node.opset() >= 7 || node.Int("broadcast", 0) == 0 || !node.Has("axis")) return -1;
  return node.Int("axis", 0);
}

Value AlignLegacy(const Value& a, const Value& b, int64_t axis) {
  if (axis < 0) return b;
  const int64_t rank = static_cast<int64_t>(a.shape().size()), b_rank = static_cast<int64_t>(b.shape().size());
  const int64_t at = axis < 0 ? axis + rank : axis;
  LOCKSTEP_REQUIRE(at >= 0 && at + b_rank <= rank, "legacy broadcast: " << ShapeString(b.shape()) << " does not fit "
                                                                         << ShapeString(a.shape()) << " at axis " << axis);
  Shape shape = b.shape();
  shape.resize(static_cast<size_t>(rank - at), 1);
  return Value{b.tensor.Reshape(shape), b.elem};
}

// Arithmetic on two inputs: lockstep's float op, or the host's integer arithmetic.
OpSpec Arithmetic(const char* name, Tensor (*fn)(const Tensor&, const Tensor&), IntOp int_op, Float64Op float64_op) {
  return {name, 1, [name, fn, int_op, float64_op](const NodeView& node) -> Kernel {
            node.RequireInputs(2, 2);
            const int64_t legacy = LegacyAxis(node);
            return [name, fn, int_op, float64_op, legacy](const Values& in, RunContext&) -> Values {
              const Value& a = Input(in, 0, name);
              const Value b = AlignLegacy(a, Input(in, 1, name), legacy);
              RequireSameElem(a, b, name);
              if (a.is_int()) return {IntBinary(int_op, a, b, name)};
              if (a.is_float64()) return {Float64Binary(float64_op, a, b, name)};
              return {FloatValue(fn(FloatInput(a, name), FloatInput(b, name)))};
            };
          }};
}

// A comparison giving bool: float, integer, or (Equal) bool inputs.
OpSpec Comparison(const char* name, int64_t since, Tensor (*fn)(const Tensor&, const Tensor&), IntOp int_op) {
  return {name, since, [name, fn, int_op](const NodeView& node) -> Kernel {
            node.RequireInputs(2, 2);
            const int64_t legacy = LegacyAxis(node);
            return [name, fn, int_op, legacy](const Values& in, RunContext&) -> Values {
              const Value& a = Input(in, 0, name);
              const Value b = AlignLegacy(a, Input(in, 1, name), legacy);
              RequireSameElem(a, b, name);
              if (a.is_int()) return {IntBinary(int_op, a, b, name)};
              return {BoolValue(fn(a.tensor, b.tensor))};
            };
          }};
}

const Value& BoolInput(const Values& in, size_t i, const char* name) {
  const Value& v = Input(in, i, name);
  LOCKSTEP_REQUIRE(v.elem == Elem::kBool, name << ": expected bool inputs, got " << ElemName(v.elem));
  return v;
}

// Logic on bool values held as 0.0 / 1.0: And is a product, Or a maximum, Xor an inequality.
OpSpec Logic(const char* name, Tensor (*fn)(const Tensor&, const Tensor&)) {
  return {name, 1, [name, fn](const NodeView& node) -> Kernel {
            node.RequireInputs(2, 2);
            const int64_t legacy = LegacyAxis(node);
            return [name, fn, legacy](const Values& in, RunContext&) -> Values {
              const Value& a = BoolInput(in, 0, name);
              return {BoolValue(fn(a.tensor, AlignLegacy(a, BoolInput(in, 1, name), legacy).tensor))};
            };
          }};
}

// Variadic Max, Min, Sum, Mean: folded left to right (as ONNX's reference does).
OpSpec Variadic(const char* name, bool mean) {
  return {name, 1, [name, mean](const NodeView& node) -> Kernel {
            node.Require(node.inputs() >= 1, "expected at least one input");
            const std::string op = name;
            return [name, mean, op](const Values& in, RunContext&) -> Values {
              Value acc = Input(in, 0, name);
              for (size_t i = 1; i < in.size(); ++i) {
                const Value& b = Input(in, i, name);
                RequireSameElem(acc, b, name);
                if (acc.is_float64()) {
                  const Float64Op f = op == "Max" ? Float64Op::kMax : op == "Min" ? Float64Op::kMin : Float64Op::kAdd;
                  acc = Float64Binary(f, acc, b, name);
                } else if (acc.is_int()) {
                  const IntOp int_op = op == "Max" ? IntOp::kMax : op == "Min" ? IntOp::kMin : IntOp::kAdd;
                  LOCKSTEP_REQUIRE(!mean, "Mean: expected float inputs");
                  acc = IntBinary(int_op, acc, b, name);
                } else if (op == "Max" || op == "Min") {
                  RequireNoGrad({acc.tensor, b.tensor}, name);
                  acc = FloatValue(op == "Max" ? Maximum(acc.tensor, b.tensor) : Minimum(acc.tensor, b.tensor));
                } else {
                  acc = FloatValue(Add(FloatInput(acc, name), FloatInput(b, name)));
                }
              }
              if (mean && acc.is_float64()) {
                return {Float64Binary(Float64Op::kDiv, acc, Float64Tensor({}, {static_cast<double>(in.size())}), name)};
              }
              if (mean) acc = FloatValue(Div(FloatInput(acc, name), Scalar(static_cast<float>(in.size()))));
              return {acc};
            };
          }};
}

// Mod: integers by C's % (fmod = 1) or Python's (fmod = 0, the divisor's sign); floats only with
// fmod = 1 (as ONNX requires), by lockstep's exact fmod.
Kernel ModKernel(const NodeView& node) {
  node.RequireInputs(2, 2);
  const bool c_style = node.Int("fmod", 0) != 0;
  return [c_style](const Values& in, RunContext&) -> Values {
    const Value& a = Input(in, 0, "Mod");
    const Value& b = Input(in, 1, "Mod");
    RequireSameElem(a, b, "Mod");
    if (a.is_int()) return {IntBinary(c_style ? IntOp::kMod : IntOp::kFloorMod, a, b, "Mod")};
    LOCKSTEP_REQUIRE(c_style, "Mod: float inputs need fmod = 1 (ONNX defines no other float remainder)");
    if (a.is_float64()) return {Float64Binary(Float64Op::kFmod, a, b, "Mod")};
    return {FloatValue(Fmod(FloatInput(a, "Mod"), FloatInput(b, "Mod")))};
  };
}

// BitShift on unsigned integers: direction "LEFT" or "RIGHT"; bits shifted past the type's width
// are lost (the result wraps into the type).
Kernel BitShiftKernel(const NodeView& node) {
  node.RequireInputs(2, 2);
  const std::string direction = node.String("direction", "");
  node.Require(direction == "LEFT" || direction == "RIGHT", "direction must be LEFT or RIGHT, got '" + direction + "'");
  const IntOp op = direction == "LEFT" ? IntOp::kShl : IntOp::kShr;
  return [op](const Values& in, RunContext&) -> Values {
    const Value& a = Input(in, 0, "BitShift");
    const Value& b = Input(in, 1, "BitShift");
    RequireSameElem(a, b, "BitShift");
    LOCKSTEP_REQUIRE(a.is_int(), "BitShift: expected unsigned integers, got " << ElemName(a.elem));
    return {IntBinary(op, a, b, "BitShift")};
  };
}

// x < 0 (or <= 0) ? negative(x) : positive(x), differentiable through Where.
Tensor Piecewise(const Tensor& x, bool or_equal, const Tensor& negative, const Tensor& positive) {
  return Where(or_equal ? LessEqual(x, Scalar(0.0f)) : Less(x, Scalar(0.0f)), negative, positive);
}

// min(max(x, lo), hi) with NaN kept, differentiable in x.
Tensor ClipBetween(const Tensor& x, const Tensor& lo, const Tensor& hi) {
  // Bounds without a gradient of their own (constants, as exported models have them): one pass.
  // Trained bounds keep the selects, whose gradient reaches them.
  if (!(lo.defined() && lo.requires_grad()) && !(hi.defined() && hi.requires_grad())) {
    const float inf = __builtin_inff();
    return Clamp(x, lo.defined() ? lo.item() : -inf, hi.defined() ? hi.item() : inf);
  }
  Tensor y = x;
  if (lo.defined()) y = Where(Less(y, lo), lo, y);
  if (hi.defined()) y = Where(Greater(y, hi), hi, y);
  return y;
}

Kernel WhereKernel(const NodeView& node) {
  node.RequireInputs(3, 3);
  return [](const Values& in, RunContext&) -> Values {
    const Value& cond = BoolInput(in, 0, "Where");
    const Value& x = Input(in, 1, "Where");
    const Value& y = Input(in, 2, "Where");
    RequireSameElem(x, y, "Where");
    if (x.is_int()) return {IntWhere(cond, x, y)};
    return {Value{Where(cond.tensor, x.tensor, y.tensor), x.elem}};
  };
}

Kernel ClipKernel(const NodeView& node) {
  if (node.opset() < 11) {
    node.RequireInputs(1, 1);
    const float lo = node.Float("min", -__builtin_inff()), hi = node.Float("max", __builtin_inff());
    return [lo, hi](const Values& in, RunContext&) -> Values {
      return {FloatValue(ClipBetween(FloatInput(Input(in, 0, "Clip"), "Clip"), Scalar(lo), Scalar(hi)))};
    };
  }
  node.RequireInputs(1, 3);
  return [](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "Clip");
    const Value lo = in.size() > 1 ? in[1] : Value(), hi = in.size() > 2 ? in[2] : Value();
    for (const Value* bound : {&lo, &hi}) {
      LOCKSTEP_REQUIRE(!bound->defined() || (bound->elem == x.elem && bound->tensor.numel() == 1),
                       "Clip: min and max must be scalars of the input's type");
    }
    if (x.is_int()) {
      Value y = x;
      if (lo.defined()) y = IntBinary(IntOp::kMax, y, lo.tensor.dim() ? Value{lo.tensor.Reshape({}), lo.elem} : lo, "Clip");
      if (hi.defined()) y = IntBinary(IntOp::kMin, y, hi.tensor.dim() ? Value{hi.tensor.Reshape({}), hi.elem} : hi, "Clip");
      return {y};
    }
    const Tensor lo_t = lo.defined() ? lo.tensor.Reshape({}) : Tensor();
    const Tensor hi_t = hi.defined() ? hi.tensor.Reshape({}) : Tensor();
    return {FloatValue(ClipBetween(FloatInput(x, "Clip"), lo_t, hi_t))};
  };
}

Kernel NegKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  return [](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "Neg");
    if (x.is_int()) return {IntBinary(IntOp::kSub, IntTensor({}, {0}, x.elem), x, "Neg")};
    return {FloatValue(Neg(FloatInput(x, "Neg")))};
  };
}

Kernel AbsKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  return [](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "Abs");
    if (x.is_int()) {
      const Value negated = IntBinary(IntOp::kSub, IntTensor({}, {0}, x.elem), x, "Abs");
      return {IntBinary(IntOp::kMax, x, negated, "Abs")};
    }
    return {FloatValue(Abs(FloatInput(x, "Abs")))};
  };
}

Kernel NotKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  return [](const Values& in, RunContext&) -> Values {
    return {BoolValue(Sub(Scalar(1.0f), BoolInput(in, 0, "Not").tensor))};
  };
}

Kernel PReluKernel(const NodeView& node) {
  node.RequireInputs(2, 2);
  const bool channel_slope = node.opset() < 7;  // then a 1-D slope is per channel (axis 1)
  return [channel_slope](const Values& in, RunContext&) -> Values {
    const Tensor x = FloatInput(Input(in, 0, "PRelu"), "PRelu");
    Tensor slope = FloatInput(Input(in, 1, "PRelu"), "PRelu");
    if (channel_slope && slope.dim() == 1 && x.dim() > 2 && slope.size(0) == x.size(1)) {
      Shape shape(static_cast<size_t>(x.dim() - 1), 1);
      shape[0] = slope.size(0);
      slope = slope.Reshape(shape);
    }
    return {FloatValue(Piecewise(x, false, Mul(x, slope), x))};
  };
}

Kernel GeluKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  const std::string approximate = node.String("approximate", "none");
  node.Require(approximate == "none" || approximate == "tanh", "approximate must be 'none' or 'tanh', got '" + approximate + "'");
  const bool tanh_form = approximate == "tanh";
  return [tanh_form](const Values& in, RunContext&) -> Values {
    const Tensor x = FloatInput(Input(in, 0, "Gelu"), "Gelu");
    return {FloatValue(tanh_form ? GeluTanh(x) : GeluErf(x))};
  };
}

Kernel SignKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  return [](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "Sign");
    if (x.is_int()) {
      const Value zero = IntTensor({}, {0}, x.elem);
      return {IntBinary(IntOp::kSub, CastValue(IntBinary(IntOp::kGt, x, zero, "Sign"), x.elem),
                        CastValue(IntBinary(IntOp::kLt, x, zero, "Sign"), x.elem), "Sign")};
    }
    const Tensor v = FloatInput(x, "Sign"), zero = Scalar(0.0f);
    // 1, -1 or 0 (+0 for both zeros); NaN stays NaN.
    return {FloatValue(Where(NotEqual(v, v), v, Sub(Greater(v, zero), Less(v, zero))))};
  };
}

Kernel IsInfKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  const bool negative = node.Int("detect_negative", 1) != 0, positive = node.Int("detect_positive", 1) != 0;
  return [negative, positive](const Values& in, RunContext&) -> Values {
    const Tensor x = FloatInput(Input(in, 0, "IsInf"), "IsInf");
    Tensor out = Tensor::Zeros(x.shape());
    if (positive) out = Maximum(out, Equal(x, Scalar(__builtin_inff())));
    if (negative) out = Maximum(out, Equal(x, Scalar(-__builtin_inff())));
    return {BoolValue(out)};
  };
}

}  // namespace

void AddElementwiseOps(std::vector<OpSpec>* t) {
  t->push_back(Arithmetic("Add", Add, IntOp::kAdd, Float64Op::kAdd).Reads({"axis", "broadcast"}));
  t->push_back(Arithmetic("Sub", Sub, IntOp::kSub, Float64Op::kSub).Reads({"axis", "broadcast"}));
  t->push_back(Arithmetic("Mul", Mul, IntOp::kMul, Float64Op::kMul).Reads({"axis", "broadcast"}));
  t->push_back(Arithmetic("Div", Div, IntOp::kDiv, Float64Op::kDiv).Reads({"axis", "broadcast"}));
  t->push_back(OpSpec{"Mod", 10, ModKernel}.Reads({"fmod"}));
  t->push_back(OpSpec{"BitShift", 11, BitShiftKernel}.Reads({"direction"}));
  t->push_back(Comparison("Equal", 1, Equal, IntOp::kEq).Reads({"axis", "broadcast"}));
  t->push_back(Comparison("Greater", 1, Greater, IntOp::kGt).Reads({"axis", "broadcast"}));
  t->push_back(Comparison("Less", 1, Less, IntOp::kLt).Reads({"axis", "broadcast"}));
  t->push_back(Comparison("GreaterOrEqual", 12, GreaterEqual, IntOp::kGe).Reads({"axis", "broadcast"}));
  t->push_back(Comparison("LessOrEqual", 12, LessEqual, IntOp::kLe).Reads({"axis", "broadcast"}));
  t->push_back(Logic("And", Mul).Reads({"axis", "broadcast"}));
  t->push_back(Logic("Or", Maximum).Reads({"axis", "broadcast"}));
  t->push_back(Logic("Xor", NotEqual).Reads({"axis", "broadcast"}));
  t->push_back({"Not", 1, NotKernel});
  t->push_back({"Where", 9, WhereKernel});
  t->push_back(OpSpec{"Clip", 1, ClipKernel, {1, 2}}.Reads({"max", "min"}));
  t->push_back(Variadic("Max", false).Scope("no gradient"));
  t->push_back(Variadic("Min", false).Scope("no gradient"));
  t->push_back(Variadic("Sum", false));
  t->push_back(Variadic("Mean", true));
  t->push_back({"Neg", 1, NegKernel});
  t->push_back({"Abs", 1, AbsKernel});
  t->push_back(FloatUnary("Relu", 1, Relu));
  t->push_back(FloatUnary("Exp", 1, Exp));
  t->push_back(FloatUnary("Log", 1, Log));
  t->push_back(FloatUnary("Sqrt", 1, Sqrt));
  t->push_back(FloatUnary("Tanh", 1, Tanh));
  t->push_back(FloatUnary("Sigmoid", 1, Sigmoid));
  t->push_back(FloatUnary("Erf", 9, Erf));
  t->push_back(FloatUnary("Floor", 6, Floor));
  t->push_back(FloatUnary("Ceil", 6, Ceil));
  t->push_back(FloatUnary("Round", 11, Round));
  t->push_back(FloatUnary("Sin", 7, Sin));
  t->push_back(FloatUnary("Cos", 7, Cos));
  t->push_back(FloatUnary("Tan", 7, Tan));
  t->push_back(FloatUnary("Asin", 7, Asin));
  t->push_back(FloatUnary("Acos", 7, Acos));
  t->push_back(FloatUnary("Atan", 7, Atan));
  t->push_back(FloatUnary("Sinh", 9, Sinh));
  t->push_back(FloatUnary("Cosh", 9, Cosh));
  t->push_back(FloatUnary("Asinh", 9, Asinh));
  t->push_back(FloatUnary("Acosh", 9, Acosh));
  t->push_back(FloatUnary("Atanh", 9, Atanh));
  t->push_back(FloatUnary("Reciprocal", 1, [](const Tensor& x) { return Div(Scalar(1.0f), x); }));
  t->push_back(FloatUnary("Softsign", 1, [](const Tensor& x) { return Div(x, AddScalar(Abs(x), 1.0f)); }));
  t->push_back({"PRelu", 1, PReluKernel});
  t->push_back({"Sign", 9, SignKernel});
  t->push_back(OpSpec{"IsInf", 10, IsInfKernel}.Reads({"detect_negative", "detect_positive"}));
  t->push_back({"IsNaN", 9, [](const NodeView& node) -> Kernel {
                  node.RequireInputs(1, 1);
                  return [](const Values& in, RunContext&) -> Values {
                    const Tensor x = FloatInput(Input(in, 0, "IsNaN"), "IsNaN");
                    return {BoolValue(NotEqual(x, x))};
                  };
                }});
  // ONNX's definition, log(exp(x) + 1), as written (it overflows to inf where exp does).
  t->push_back(FloatUnary("Softplus", 1, [](const Tensor& x) { return Log(AddScalar(Exp(x), 1.0f)); }));
  t->push_back(OpSpec{"Gelu", 20, GeluKernel}
                   .Reads({"approximate"})
                   .Scope("opset 20's operator; older exports' Erf pattern runs as written"));
  t->push_back(Activation("LeakyRelu", 1, [](const NodeView& n) -> std::function<Tensor(const Tensor&)> {
    const float alpha = n.Float("alpha", 0.01f);
    return [alpha](const Tensor& x) { return Piecewise(x, false, MulScalar(x, alpha), x); };
  }).Reads({"alpha"}));
  t->push_back(Activation("Elu", 1, [](const NodeView& n) -> std::function<Tensor(const Tensor&)> {
    const float alpha = n.Float("alpha", 1.0f);
    return [alpha](const Tensor& x) { return Piecewise(x, false, MulScalar(AddScalar(Exp(x), -1.0f), alpha), x); };
  }).Reads({"alpha"}));
  t->push_back(Activation("Selu", 1, [](const NodeView& n) -> std::function<Tensor(const Tensor&)> {
    const float alpha = n.Float("alpha", 1.67326319217681884765625f);
    const float gamma = n.Float("gamma", 1.05070102214813232421875f);
    return [alpha, gamma](const Tensor& x) {
      return Piecewise(x, true, MulScalar(AddScalar(MulScalar(Exp(x), alpha), -alpha), gamma), MulScalar(x, gamma));
    };
  }).Reads({"alpha", "gamma"}));
  t->push_back(Activation("Celu", 12, [](const NodeView& n) -> std::function<Tensor(const Tensor&)> {
    const float alpha = n.Float("alpha", 1.0f);
    return [alpha](const Tensor& x) {
      return Piecewise(x, false, MulScalar(AddScalar(Exp(Div(x, Scalar(alpha))), -1.0f), alpha), x);
    };
  }).Reads({"alpha"}));
  t->push_back(Activation("HardSigmoid", 1, [](const NodeView& n) -> std::function<Tensor(const Tensor&)> {
    const float alpha = n.Float("alpha", 0.2f), beta = n.Float("beta", 0.5f);
    return [alpha, beta](const Tensor& x) {
      return ClipBetween(AddScalar(MulScalar(x, alpha), beta), Scalar(0.0f), Scalar(1.0f));
    };
  }).Reads({"alpha", "beta"}));
  t->push_back(Activation("HardSwish", 14, [](const NodeView&) -> std::function<Tensor(const Tensor&)> {
    return [](const Tensor& x) {
      return Mul(x, ClipBetween(AddScalar(MulScalar(x, 1.0f / 6.0f), 0.5f), Scalar(0.0f), Scalar(1.0f)));
    };
  }));
  t->push_back(Activation("ThresholdedRelu", 10, [](const NodeView& n) -> std::function<Tensor(const Tensor&)> {
    const float alpha = n.Float("alpha", 1.0f);
    return [alpha](const Tensor& x) { return Where(Greater(x, Scalar(alpha)), x, Scalar(0.0f)); };
  }).Reads({"alpha"}));
  t->push_back(Activation("Shrink", 9, [](const NodeView& n) -> std::function<Tensor(const Tensor&)> {
    const float lambd = n.Float("lambd", 0.5f), bias = n.Float("bias", 0.0f);
    return [lambd, bias](const Tensor& x) {
      const Tensor zero = Tensor::Zeros(x.shape());
      return Where(Less(x, Scalar(-lambd)), AddScalar(x, bias), Where(Greater(x, Scalar(lambd)), AddScalar(x, -bias), zero));
    };
  }).Reads({"bias", "lambd"}));
}

}  // namespace onnx
}  // namespace lockstep
