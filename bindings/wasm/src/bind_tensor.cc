// Tensors for JavaScript: creation from typed arrays, reading back, autograd, and the operators.
// The JavaScript layer (js/tensor.js) gives these their PyTorch-like names and argument forms.
#include <emscripten/bind.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings/wasm/src/js_boundary.h"
#include "core/autograd.h"
#include "core/error.h"
#include "core/nn/init.h"
#include "core/ops.h"
#include "core/random.h"
#include "core/tensor.h"

namespace lockstep {
namespace wasm {
namespace {

using emscripten::val;

int64_t CountOf(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Values from a typed array or an array of numbers; `count` must match the shape.
std::vector<double> NumbersFromJs(const val& data, int64_t count, const char* what) {
  const std::string type = data.typeOf().as<std::string>();
  LOCKSTEP_REQUIRE(type == "object" && !data.isNull() && data["length"].typeOf().as<std::string>() == "number",
                   what << ": expected a typed array or an array of numbers, got " << type);
  const int64_t length = static_cast<int64_t>(data["length"].as<double>());
  LOCKSTEP_REQUIRE(length == count, what << ": the shape holds " << count << " elements but the data has " << length);
  return emscripten::convertJSArrayToNumberVector<double>(data);
}

Tensor FromFloats(const val& data, const val& shape_js) {
  return JsBoundary([&] {
    const std::vector<int64_t> shape = ShapeFromJs(shape_js, "tensor");
    const std::vector<double> numbers = NumbersFromJs(data, CountOf(shape), "tensor");
    // float64 -> float32 rounds to nearest even, as Float32Array does.
    return Tensor::FromVector(shape, std::vector<float>(numbers.begin(), numbers.end()));
  });
}

Tensor FromIntegers(const val& data, const val& shape_js) {
  return JsBoundary([&] {
    const std::vector<int64_t> shape = ShapeFromJs(shape_js, "integer tensor");
    const std::vector<double> numbers = NumbersFromJs(data, CountOf(shape), "integer tensor");
    std::vector<int64_t> values;
    values.reserve(numbers.size());
    for (size_t i = 0; i < numbers.size(); ++i) {
      const double v = numbers[i];
      LOCKSTEP_REQUIRE(v == static_cast<double>(static_cast<int64_t>(v)) && v > -9007199254740992.0 &&
                           v < 9007199254740992.0,
                       "integer tensor: element " << i << " is not an integer: " << v);
      values.push_back(static_cast<int64_t>(v));
    }
    return Tensor::FromInt64(shape, values);
  });
}

Tensor Zeros(const val& shape) { return JsBoundary([&] { return Tensor::Zeros(ShapeFromJs(shape, "zeros")); }); }
Tensor Ones(const val& shape) { return JsBoundary([&] { return Tensor::Ones(ShapeFromJs(shape, "ones")); }); }
Tensor Full(const val& shape, double value) {
  return JsBoundary([&] { return Tensor::Full(ShapeFromJs(shape, "full"), static_cast<float>(value)); });
}
Tensor Randn(const val& shape, Generator& gen) {
  return JsBoundary([&] {
    Tensor t = Tensor::Zeros(ShapeFromJs(shape, "randn"));
    nn::NormalInit(t, 0.0f, 1.0f, gen);
    return t;
  });
}
Tensor Rand(const val& shape, Generator& gen) {
  return JsBoundary([&] {
    Tensor t = Tensor::Zeros(ShapeFromJs(shape, "rand"));
    nn::UniformInit(t, 0.0f, 1.0f, gen);
    return t;
  });
}

val ShapeOf(const Tensor& t) {
  val out = val::array();
  for (int64_t d : t.shape()) out.call<void>("push", static_cast<double>(d));
  return out;
}
std::string DTypeOf(const Tensor& t) {  // PyTorch's names
  switch (t.dtype()) {
    case DType::kFloat32: return "float32";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
  }
  return "unknown";
}
double Numel(const Tensor& t) { return static_cast<double>(t.numel()); }

// A fresh Float32Array (float tensors) or Int32Array (integer tensors), owned by JavaScript.
val DataOf(const Tensor& t) {
  return JsBoundary([&] {
    if (t.dtype() == DType::kFloat32) {
      const std::vector<float> v = t.ToVector();
      return val::global("Float32Array").new_(emscripten::typed_memory_view(v.size(), v.data()));
    }
    const std::vector<int64_t> v64 = t.ToInt64Vector();
    std::vector<int32_t> v(v64.size());
    for (size_t i = 0; i < v.size(); ++i) {
      LOCKSTEP_REQUIRE(v64[i] >= INT32_MIN && v64[i] <= INT32_MAX, "data: element " << i << " exceeds int32");
      v[i] = static_cast<int32_t>(v64[i]);
    }
    return val::global("Int32Array").new_(emscripten::typed_memory_view(v.size(), v.data()));
  });
}
double Item(const Tensor& t) { return JsBoundary([&] { return static_cast<double>(t.item()); }); }
std::string ToString(const Tensor& t) { return JsBoundary([&] { return t.ToString(); }); }

bool RequiresGrad(const Tensor& t) { return t.requires_grad(); }
void SetRequiresGrad(Tensor& t, bool on) { JsBoundary([&] { t.RequiresGrad(on); }); }
val GradOf(const Tensor& t) {
  const Tensor g = t.grad();
  return g.defined() ? val(g) : val::null();
}
void ZeroGrad(Tensor& t) { t.ZeroGrad(); }
void Backward(const Tensor& t, bool retain_graph) { JsBoundary([&] { t.Backward(Tensor(), retain_graph); }); }
Tensor Detach(const Tensor& t) { return JsBoundary([&] { return t.Detach(); }); }
Tensor Clone(const Tensor& t) { return JsBoundary([&] { return t.Clone(); }); }
void CopyFrom(const Tensor& t, const Tensor& src) { JsBoundary([&] { t.CopyFrom(src); }); }

template <Tensor (*Op)(const Tensor&)>
Tensor Unary(const Tensor& a) {
  return JsBoundary([&] { return Op(a); });
}
template <Tensor (*Op)(const Tensor&, const Tensor&)>
Tensor Binary(const Tensor& a, const Tensor& b) {
  return JsBoundary([&] { return Op(a, b); });
}
Tensor AddScalarJs(const Tensor& a, double s) { return JsBoundary([&] { return AddScalar(a, FiniteFromJs(s, "add")); }); }
Tensor MulScalarJs(const Tensor& a, double s) { return JsBoundary([&] { return MulScalar(a, FiniteFromJs(s, "mul")); }); }
Tensor PowJs(const Tensor& a, double exponent) { return JsBoundary([&] { return Pow(a, exponent); }); }
Tensor SumAll(const Tensor& a) { return JsBoundary([&] { return Sum(a); }); }
Tensor SumDim(const Tensor& a, int dim, bool keep) { return JsBoundary([&] { return Sum(a, dim, keep); }); }
Tensor MeanAll(const Tensor& a) { return JsBoundary([&] { return Mean(a); }); }
Tensor MeanDim(const Tensor& a, int dim, bool keep) { return JsBoundary([&] { return Mean(a, dim, keep); }); }
Tensor MaxDim(const Tensor& a, int dim, bool keep) { return JsBoundary([&] { return Max(a, dim, keep); }); }
Tensor ArgmaxDim(const Tensor& a, int dim, bool keep) { return JsBoundary([&] { return Argmax(a, dim, keep); }); }
Tensor SoftmaxDim(const Tensor& a, int dim) { return JsBoundary([&] { return Softmax(a, dim); }); }
Tensor LogSoftmaxDim(const Tensor& a, int dim) { return JsBoundary([&] { return LogSoftmax(a, dim); }); }
Tensor ReshapeJs(const Tensor& a, const val& shape) {
  return JsBoundary([&] {
    // One dimension may be -1 (inferred), as in PyTorch.
    std::vector<int64_t> dims;
    int64_t known = 1, inferred = -1;
    LOCKSTEP_REQUIRE(val::global("Array").call<bool>("isArray", shape), "reshape: expected an array of dimensions");
    for (size_t i = 0; i < shape["length"].as<size_t>(); ++i) {
      const double d = shape[i].as<double>();
      if (d == -1 && inferred < 0) {
        inferred = static_cast<int64_t>(i);
        dims.push_back(1);
        continue;
      }
      LOCKSTEP_REQUIRE(d >= 0 && d == static_cast<double>(static_cast<int64_t>(d)),
                       "reshape: dimension " << i << " must be an integer >= 0 or one -1, got " << d);
      dims.push_back(static_cast<int64_t>(d));
      known *= dims.back();
    }
    if (inferred >= 0) {
      LOCKSTEP_REQUIRE(known > 0 && a.numel() % known == 0,
                       "reshape: cannot infer a dimension of " << ShapeString(a.shape()) << " into that shape");
      dims[static_cast<size_t>(inferred)] = a.numel() / known;
    }
    return a.Reshape(dims);
  });
}
Tensor TransposeJs(const Tensor& a, int d0, int d1) { return JsBoundary([&] { return a.Transpose(d0, d1); }); }
Tensor PermuteJs(const Tensor& a, const val& dims) {
  return JsBoundary([&] {
    std::vector<int64_t> d;
    for (double v : emscripten::convertJSArrayToNumberVector<double>(dims)) d.push_back(static_cast<int64_t>(v));
    return a.Permute(d);
  });
}
Tensor FlattenJs(const Tensor& a, int start, int end) { return JsBoundary([&] { return a.Flatten(start, end); }); }
Tensor SqueezeJs(const Tensor& a, int dim) { return JsBoundary([&] { return a.Squeeze(dim); }); }
Tensor UnsqueezeJs(const Tensor& a, int dim) { return JsBoundary([&] { return a.Unsqueeze(dim); }); }
Tensor SliceJs(const Tensor& a, int dim, double start, double end, int step) {
  return JsBoundary([&] { return a.Slice(dim, static_cast<int64_t>(start), static_cast<int64_t>(end), step); });
}
Tensor ContiguousJs(const Tensor& a) { return JsBoundary([&] { return a.Contiguous(); }); }
Tensor ViewJs(const Tensor& a, const val& shape) {
  return JsBoundary([&] {
    std::vector<int64_t> dims;
    for (double d : emscripten::convertJSArrayToNumberVector<double>(shape)) {
      LOCKSTEP_REQUIRE(d >= -1 && d <= 9007199254740991.0 && d == static_cast<double>(static_cast<int64_t>(d)),
                       "view: dimensions must be integers >= 0 (one may be -1), got " << d);
      dims.push_back(static_cast<int64_t>(d));
    }
    return a.View(dims);
  });
}

Tensor CrossEntropyJs(const Tensor& logits, const Tensor& target, double label_smoothing, double ignore_index) {
  return JsBoundary([&] {
    return CrossEntropy(logits, target, Reduction::kMean, static_cast<int64_t>(ignore_index),
                        FiniteFromJs(label_smoothing, "crossEntropy labelSmoothing"));
  });
}
Tensor MseLossJs(const Tensor& input, const Tensor& target) { return JsBoundary([&] { return MseLoss(input, target); }); }
Tensor NllLossJs(const Tensor& log_probs, const Tensor& target) {
  return JsBoundary([&] { return NllLoss(log_probs, target); });
}

// no_grad as a stack: JavaScript enters and leaves it around a callback (with try/finally).
std::vector<std::unique_ptr<NoGradGuard>>& NoGradStack() {
  static std::vector<std::unique_ptr<NoGradGuard>> stack;
  return stack;
}
void EnterNoGrad() { NoGradStack().push_back(std::make_unique<NoGradGuard>()); }
void LeaveNoGrad() {
  if (!NoGradStack().empty()) NoGradStack().pop_back();
}
bool IsGradEnabled() { return GradEnabled(); }

Generator MakeGenerator(double seed, const std::string& name) {
  return JsBoundary([&] { return Generator(SeedFromJs(seed, "generator seed"), name); });
}

}  // namespace

EMSCRIPTEN_BINDINGS(lockstep_tensor) {
  using emscripten::class_;
  using emscripten::function;
  class_<Generator>("Generator")
      .class_function("create", &MakeGenerator)
      .function("offset", emscripten::optional_override([](const Generator& g) { return static_cast<double>(g.offset); }));
  class_<Tensor>("Tensor")
      .class_function("fromFloats", &FromFloats)
      .class_function("fromIntegers", &FromIntegers)
      .class_function("zeros", &Zeros)
      .class_function("ones", &Ones)
      .class_function("full", &Full)
      .class_function("randn", &Randn)
      .class_function("rand", &Rand)
      .function("shape", &ShapeOf)
      .function("dtype", &DTypeOf)
      .function("numel", &Numel)
      .function("data", &DataOf)
      .function("item", &Item)
      .function("toString", &ToString)
      .function("requiresGrad", &RequiresGrad)
      .function("setRequiresGrad", &SetRequiresGrad)
      .function("grad", &GradOf)
      .function("zeroGrad", &ZeroGrad)
      .function("backward", &Backward)
      .function("detach", &Detach)
      .function("clone", &Clone)
      .function("copyFrom", &CopyFrom)
      .function("add", &Binary<Add>)
      .function("sub", &Binary<Sub>)
      .function("mul", &Binary<Mul>)
      .function("div", &Binary<Div>)
      .function("fmod", &Binary<Fmod>)
      .function("remainder", &Binary<Remainder>)
      .function("maximum", &Binary<Maximum>)
      .function("minimum", &Binary<Minimum>)
      .function("matmul", &Binary<Matmul>)
      .function("addScalar", &AddScalarJs)
      .function("mulScalar", &MulScalarJs)
      .function("pow", &PowJs)
      .function("neg", &Unary<Neg>)
      .function("relu", &Unary<Relu>)
      .function("gelu", &Unary<GeluErf>)
      .function("geluTanh", &Unary<GeluTanh>)
      .function("tanh", &Unary<Tanh>)
      .function("floor", &Unary<Floor>)
      .function("ceil", &Unary<Ceil>)
      .function("round", &Unary<Round>)
      .function("sin", &Unary<Sin>)
      .function("cos", &Unary<Cos>)
      .function("tan", &Unary<Tan>)
      .function("asin", &Unary<Asin>)
      .function("acos", &Unary<Acos>)
      .function("atan", &Unary<Atan>)
      .function("sinh", &Unary<Sinh>)
      .function("cosh", &Unary<Cosh>)
      .function("asinh", &Unary<Asinh>)
      .function("acosh", &Unary<Acosh>)
      .function("atanh", &Unary<Atanh>)
      .function("sigmoid", &Unary<Sigmoid>)
      .function("exp", &Unary<Exp>)
      .function("log", &Unary<Log>)
      .function("sqrt", &Unary<Sqrt>)
      .function("sumAll", &SumAll)
      .function("sumDim", &SumDim)
      .function("meanAll", &MeanAll)
      .function("meanDim", &MeanDim)
      .function("maxDim", &MaxDim)
      .function("argmaxDim", &ArgmaxDim)
      .function("softmax", &SoftmaxDim)
      .function("logSoftmax", &LogSoftmaxDim)
      .function("reshape", &ReshapeJs)
      .function("transpose", &TransposeJs)
      .function("permute", &PermuteJs)
      .function("flatten", &FlattenJs)
      .function("squeeze", &SqueezeJs)
      .function("unsqueeze", &UnsqueezeJs)
      .function("slice", &SliceJs)
      .function("contiguous", &ContiguousJs)
      .function("view", &ViewJs);
  function("crossEntropy", &CrossEntropyJs);
  function("mseLoss", &MseLossJs);
  function("nllLoss", &NllLossJs);
  function("enterNoGrad", &EnterNoGrad);
  function("leaveNoGrad", &LeaveNoGrad);
  function("isGradEnabled", &IsGradEnabled);
}

}  // namespace wasm
}  // namespace lockstep
