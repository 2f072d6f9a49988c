// Pow. Float bases are raised only to the exponents whose powers lockstep computes correctly rounded
// and proves on every float32 input (the integers -4..4 and 0.5, docs/numerics-math.md), whether
// the exponent is a constant or arrives at run time (then each element's exponent is checked, and
// the powers it names are selected by Where, so the base's gradient flows). Integer bases are
// raised exactly, by repeated squaring wrapped into their type, to integer exponents (of an
// integer type, or float values that are integers).
#include <stdint.h>

#include <set>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "onnx/op_helpers.h"
#include "onnx/op_registry.h"

namespace lockstep {
namespace onnx {

namespace {

bool ProvenExponent(double e) { return e == 0.5 || (e >= -4 && e <= 4 && e == static_cast<int>(e)); }

const char kProvenExponents[] = "lockstep computes correctly rounded powers for the exponents -4..4 and 0.5";

// The exponent's elements as doubles (exact: float32 values, or integers below 2^53 in magnitude).
std::vector<double> ExponentValues(const Value& e) {
  NoGradGuard no_grad;
  std::vector<double> out;
  if (e.is_int()) {
    for (int64_t v : IntValues(e)) {
      LOCKSTEP_REQUIRE_KIND(ErrorKind::kUnavailable, v > -(int64_t{1} << 53) && v < (int64_t{1} << 53),
                            "Pow: unsupported: exponent " << v << " (beyond 2^53 in magnitude)");
      out.push_back(e.elem == Elem::kUInt64 && v < 0 ? 1e300 : static_cast<double>(v));
    }
    return out;
  }
  for (float v : FloatInput(e, "Pow").Contiguous().ToVector()) out.push_back(v);
  return out;
}

// b^n wrapped modulo 2^64 (then into the base's type); n >= 0.
uint64_t WrappedPower(uint64_t b, uint64_t n) {
  uint64_t result = 1;
  while (n != 0) {
    if (n & 1) result *= b;
    b *= b;
    n >>= 1;
  }
  return result;
}

Value IntegerPower(const Value& x, const Value& e) {
  const Shape shape = BroadcastShapes(x.shape(), e.shape(), "Pow");
  NoGradGuard no_grad;
  const std::vector<int64_t> base = x.tensor.Expand(shape).Contiguous().ToInt64Vector();
  const std::vector<double> exponent = ExponentValues(Value{e.tensor.Expand(shape).Contiguous(), e.elem});
  std::vector<int64_t> out(base.size());
  for (size_t i = 0; i < base.size(); ++i) {
    const double n = exponent[i];
    LOCKSTEP_REQUIRE_KIND(ErrorKind::kUnavailable,
                          n == static_cast<double>(static_cast<int64_t>(n)) && n < 9.2e18 && n > -9.2e18,
                          "Pow: unsupported: an integer base raised to exponent "
                              << n << "; lockstep raises integers to integer exponents, exactly");
    const int64_t k = static_cast<int64_t>(n), b = base[i];
    if (k >= 0) {
      out[i] = static_cast<int64_t>(WrappedPower(static_cast<uint64_t>(b), static_cast<uint64_t>(k)));
    } else {  // 1 / b^|k| truncated toward zero
      LOCKSTEP_REQUIRE(b != 0, "Pow: 0 raised to the negative exponent " << k << " (a division by zero)");
      out[i] = b == 1 ? 1 : b == -1 ? ((k & 1) ? -1 : 1) : 0;
    }
  }
  return IntTensor(shape, out, x.elem);
}

// x raised elementwise to exponents that were each checked to be proven: one correctly rounded
// power per distinct exponent, chosen by Where.
Tensor FloatPower(const Tensor& x, const Value& e) {
  const std::vector<double> exponents = ExponentValues(e);
  std::set<double> distinct;
  for (double v : exponents) {
    LOCKSTEP_REQUIRE_KIND(ErrorKind::kUnavailable, ProvenExponent(v),
                          "Pow: unsupported: exponent " << v << " at run time; " << kProvenExponents);
    distinct.insert(v);
  }
  const Shape shape = BroadcastShapes(x.shape(), e.shape(), "Pow");
  if (distinct.empty()) return Tensor::Zeros(shape);
  RequireNoGrad({e.tensor}, "Pow's exponent");
  const Tensor exponent = e.is_int() ? CastValue(e, Elem::kFloat).tensor.Detach() : e.tensor.Detach();
  Tensor out;
  for (double v : distinct) {
    const Tensor power = Pow(x, v).Expand(shape);
    out =
        out.defined() ? Where(Equal(exponent, Tensor::Scalar(static_cast<float>(v))).Expand(shape), power, out) : power;
  }
  return out.Contiguous();
}

Kernel PowKernel(const NodeView& node) {
  node.RequireInputs(2, 2);
  const Value* constant = node.Constant(1);
  if (constant != nullptr && constant->is_float()) {
    const std::vector<float> values = constant->tensor.ToVector();
    for (float v : values) {
      if (!ProvenExponent(v)) node.Unsupported("exponent " + std::to_string(v) + "; " + kProvenExponents);
    }
  }
  return [](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "Pow");
    const Value& e = Input(in, 1, "Pow");
    LOCKSTEP_REQUIRE(e.is_int() || e.is_float(), "Pow: expected a numeric exponent, got " << ElemName(e.elem));
    if (x.is_int()) return {IntegerPower(x, e)};
    return {FloatValue(FloatPower(FloatInput(x, "Pow"), e))};
  };
}

}  // namespace

void AddPowerOps(std::vector<OpSpec>* t) {
  t->push_back(OpSpec{"Pow", 1, PowKernel, {1}}.Scope(
      "float bases: exponents -4..4 and 0.5 (constant or checked at run time); integer bases: integer exponents"));
}

}  // namespace onnx
}  // namespace lockstep
