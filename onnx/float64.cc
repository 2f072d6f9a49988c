#include "onnx/float64.h"

#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <utility>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "onnx/op_helpers.h"
#include "onnx/sequences.h"

namespace lockstep {
namespace onnx {

namespace {

constexpr uint64_t kNaNBits = 0x7FF8000000000000ull;

uint64_t BitsOf(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}

double DoubleOf(uint64_t u) {
  double d;
  memcpy(&d, &u, 8);
  return d;
}

// 2^e for e in [-1074, 1023], built from its bits (exact).
double PowerOfTwo(int e) {
  if (e >= -1022) return DoubleOf(static_cast<uint64_t>(e + 1023) << 52);
  return DoubleOf(uint64_t{1} << (e + 1074));
}

std::vector<double> Broadcast(const Value& v, const Shape& shape) {
  NoGradGuard no_grad;
  const std::vector<int64_t> bits = v.tensor.Expand(shape).Contiguous().ToInt64Vector();
  std::vector<double> out(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) out[i] = DoubleOf(static_cast<uint64_t>(bits[i]));
  return out;
}

// x - n * y for n = trunc(x / y), exactly (the result is representable, so no rounding): the
// remainder of the integer significands by repeated doubling, as simd/exact_remainder.h does for
// float32.
double ExactFmod64(double x, double y) {
  const uint64_t ux = BitsOf(x), ax = ux & 0x7FFFFFFFFFFFFFFFull, ay = BitsOf(y) & 0x7FFFFFFFFFFFFFFFull;
  if (ax >= 0x7FF0000000000000ull || ay > 0x7FF0000000000000ull || ay == 0) return DoubleOf(kNaNBits);
  if (ay == 0x7FF0000000000000ull || ax < ay) return x;
  // |x| = mx * 2^(ex - 1075) and |y| = my * 2^(ey - 1075) with raw significands; ex >= ey.
  int ex = static_cast<int>(ax >> 52), ey = static_cast<int>(ay >> 52);
  uint64_t mx = ax & 0xFFFFFFFFFFFFFull, my = ay & 0xFFFFFFFFFFFFFull;
  if (ex == 0) {
    ex = 1;
  } else {
    mx |= uint64_t{1} << 52;
  }
  if (ey == 0) {
    ey = 1;
  } else {
    my |= uint64_t{1} << 52;
  }
  // r < my < 2^53, so r << 10 stays within 64 bits.
  uint64_t r = mx % my;
  for (int d = ex - ey; d > 0;) {
    const int step = d < 10 ? d : 10;
    r = (r << step) % my;
    d -= step;
  }
  // r * 2^(ey - 1075): r < 2^53 is exact as a double, and the product is the exact remainder.
  const double magnitude = static_cast<double>(r) * PowerOfTwo(ey - 1075);
  return DoubleOf(BitsOf(magnitude) | (ux & 0x8000000000000000ull));
}

double Apply(Float64Op op, double a, double b) {
  switch (op) {
    case Float64Op::kAdd:
      return a + b;
    case Float64Op::kSub:
      return a - b;
    case Float64Op::kMul:
      return a * b;
    case Float64Op::kDiv:
      return a / b;
    case Float64Op::kMax:
    case Float64Op::kMin: {
      if (a != a || b != b) return DoubleOf(kNaNBits);
      if (a == b) {  // -0 and +0: the sign decides
        const bool a_negative = BitsOf(a) >> 63;
        return (op == Float64Op::kMax) == a_negative ? b : a;
      }
      return (op == Float64Op::kMax) == (a > b) ? a : b;
    }
    case Float64Op::kFmod:
      return ExactFmod64(a, b);
  }
  return 0.0;
}

// d rounded to nearest even with `digits` significand bits (the leading one included), normal
// exponents down to `min_exponent` (below it, subnormal steps of 2^(min_exponent - digits + 1)),
// and overflow to infinity past `max_finite`: one rounding, by scaling to an integer exactly and
// rounding that with the 2^52 addition (exact for |s| < 2^52).
double RoundToFormat(double d, int digits, int min_exponent, double max_finite) {
  const uint64_t u = BitsOf(d);
  if ((u & 0x7FF0000000000000ull) == 0x7FF0000000000000ull) return d;
  if (d == 0.0) return d;
  const int biased = static_cast<int>((u >> 52) & 0x7FF);
  const int exponent = biased == 0 ? -1023 : biased - 1023;  // double subnormals are far below any format
  const int quantum = std::max(exponent, min_exponent) - (digits - 1);
  const double magnitude = d < 0 ? -d : d;
  double s = magnitude * PowerOfTwo(-quantum);  // < 2^(digits + 1), exact: a power-of-two scaling
  s = (s + 4503599627370496.0) - 4503599627370496.0;
  double rounded = s * PowerOfTwo(quantum);
  if (rounded > max_finite) rounded = DoubleOf(0x7FF0000000000000ull);
  return d < 0 ? -rounded : rounded;
}

int64_t TruncateToInt64(double d) {
  if (d != d) return 0;
  if (d >= 9223372036854775808.0) return INT64_MAX;
  if (d < -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(d);
}

}  // namespace

std::vector<double> Float64Values(const Value& v) {
  LOCKSTEP_REQUIRE(v.elem == Elem::kFloat64, "expected a float64 value, got " << ElemName(v.elem));
  return Broadcast(v, v.shape());
}

Value Float64Tensor(const Shape& shape, const std::vector<double>& values) {
  std::vector<int64_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    bits[i] = static_cast<int64_t>(values[i] != values[i] ? kNaNBits : BitsOf(values[i]));
  }
  return Value{Tensor::FromInt64(shape, bits), Elem::kFloat64};
}

Value Float64Binary(Float64Op op, const Value& a, const Value& b, const char* name) {
  LOCKSTEP_REQUIRE(a.elem == Elem::kFloat64 && b.elem == Elem::kFloat64,
                   name << ": expected two float64 inputs, got " << ElemName(a.elem) << " and " << ElemName(b.elem));
  const Shape shape = BroadcastShapes(a.shape(), b.shape(), name);
  const std::vector<double> x = Broadcast(a, shape), y = Broadcast(b, shape);
  std::vector<double> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = Apply(op, x[i], y[i]);
  return Float64Tensor(shape, out);
}

Value Float64CumSum(const Value& x, int64_t axis, bool exclusive, bool reverse) {
  const Shape& shape = x.shape();
  const std::vector<double> v = Float64Values(x);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t n = shape.empty() ? 1 : shape[axis];
  std::vector<double> out(v.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double sum = 0.0;  // an exclusive sum's first output; then the first element itself, not 0 + it
      for (int64_t step = 0; step < n; ++step) {
        const int64_t k = reverse ? n - 1 - step : step;
        const size_t at = static_cast<size_t>((o * n + k) * inner + i);
        if (exclusive) out[at] = sum;
        sum = step == 0 ? v[at] : sum + v[at];
        if (!exclusive) out[at] = sum;
      }
    }
  }
  return Float64Tensor(shape, out);
}

Value CastToFloat64(const Value& v) {
  if (v.elem == Elem::kFloat64) return v;
  std::vector<double> out;
  if (v.is_float() || v.elem == Elem::kBool) {
    NoGradGuard no_grad;
    for (float f : v.tensor.Contiguous().ToVector()) out.push_back(f);
  } else {
    for (int64_t i : IntValues(v)) {
      out.push_back(v.elem == Elem::kUInt64 ? static_cast<double>(static_cast<uint64_t>(i)) : static_cast<double>(i));
    }
  }
  return Float64Tensor(v.shape(), out);
}

Value CastFromFloat64(const Value& v, Elem to) {
  if (to == Elem::kFloat64) return v;
  const std::vector<double> x = Float64Values(v);
  if (IsFloatElem(to)) {
    std::vector<float> out(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const double d = to == Elem::kFloat16    ? RoundToFormat(x[i], 11, -14, 65504.0)
                       : to == Elem::kBFloat16 ? RoundToFormat(x[i], 8, -126, 3.3895313892515355e38)
                                               : x[i];
      out[i] = static_cast<float>(d);  // exact for the narrow types; rounded once for float32
    }
    return Value{Tensor::FromVector(v.shape(), out), to};
  }
  std::vector<int64_t> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = to == Elem::kBool ? (x[i] != 0.0) : TruncateToInt64(x[i]);
  return IntTensor(v.shape(), out, to);
}

namespace {

// Operators that compute float64 themselves (they call the functions above).
bool ComputesFloat64(const std::string& op) {
  static const char* const kOps[] = {"Add", "Sub",  "Mul",      "Div",     "Max",    "Min",    "Sum",   "Mean",
                                     "Mod", "Cast", "CastLike", "EyeLike", "CumSum", "Einsum", "Shape", "Size"};
  return std::any_of(std::begin(kOps), std::end(kOps), [&](const char* o) { return op == o; });
}

// Operators that only move elements, with the inputs that carry them (-1: every input).
int MovedInput(const std::string& op) {
  static const std::pair<const char*, int> kOps[] = {
      {"Identity", 0}, {"Reshape", 0}, {"Flatten", 0}, {"Squeeze", 0}, {"Unsqueeze", 0}, {"Transpose", 0},
      {"Expand", 0},   {"Tile", 0},    {"Slice", 0},   {"Split", 0},   {"Gather", 0},    {"Concat", -1}};
  for (const auto& [name, input] : kOps) {
    if (op == name) return input;
  }
  return -2;
}

}  // namespace

Kernel HandlingFloat64(const std::string& op_type, Kernel kernel) {
  if (ComputesFloat64(op_type) || (IsSequenceOperator(op_type) && op_type != "Identity")) return kernel;
  const int moved = MovedInput(op_type);
  return [op_type, moved, kernel = std::move(kernel)](const Values& in, RunContext& context) -> Values {
    bool any = false;
    for (const Value& v : in) any = any || (v.defined() && v.elem == Elem::kFloat64);
    if (!any) return kernel(in, context);
    LOCKSTEP_REQUIRE_KIND(
        ErrorKind::kUnavailable, moved != -2,
        op_type << ": unsupported: float64 inputs; lockstep computes float64 in Add, Sub, Mul, Div, "
                   "Max, Min, Sum, Mean, Mod, CumSum, Einsum, the casts and the operators that move elements");
    // The bits move as int64 values; every moved input must be float64 for the output to be.
    Values bits = in;
    for (size_t i = 0; i < bits.size(); ++i) {
      if (!bits[i].defined() || (moved >= 0 && static_cast<int>(i) != moved)) continue;
      LOCKSTEP_REQUIRE(bits[i].elem == Elem::kFloat64,
                       op_type << ": inputs of different types (float64 and " << ElemName(bits[i].elem) << ")");
      bits[i].elem = Elem::kInt64;
    }
    Values out = kernel(bits, context);
    for (Value& v : out) {
      if (v.defined() && v.elem == Elem::kInt64) v.elem = Elem::kFloat64;
    }
    return out;
  };
}

}  // namespace onnx
}  // namespace lockstep
