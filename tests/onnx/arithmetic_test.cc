// The importer's arithmetic beyond float32: float64 values (host binary64, one rounding per
// operation, casts rounded once), CumSum, Pow with a run-time exponent, and Einsum, whose float32
// path (lockstep's ops) is checked against a plain reference and against its own host path.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "onnx/float64.h"
#include "onnx/model.h"
#include "tests/onnx/model_builder.h"

namespace lockstep {
namespace {

using testing::Attr;
using testing::Bytes;
using testing::ModelBuilder;

constexpr int32_t kFloat = 1, kInt64 = 7, kFloat16 = 10, kDouble = 11, kBFloat16 = 16;

std::shared_ptr<onnx::OnnxModel> Load(const ModelBuilder& m) {
  const Bytes b = m.Build();
  return onnx::LoadOnnx(b.data(), b.size());
}

onnx::Value Doubles(const Shape& shape, const std::vector<double>& v) { return onnx::Float64Tensor(shape, v); }

// One node y = op(inputs...) over inputs of one type and shape.
std::shared_ptr<onnx::OnnxModel> Unary(const std::string& op, int32_t in_type, int32_t out_type,
                                       const std::vector<int64_t>& dims, const std::vector<Attr>& attrs = {}) {
  ModelBuilder m;
  m.Input("x", dims, in_type).Output("y", dims, out_type);
  m.Node(op, {"x"}, {"y"}, attrs);
  return Load(m);
}

std::shared_ptr<onnx::OnnxModel> Binary(const std::string& op, int32_t type, const std::vector<int64_t>& dims,
                                        const std::vector<Attr>& attrs = {}) {
  ModelBuilder m;
  m.Input("a", dims, type).Input("b", dims, type).Output("y", dims, type);
  m.Node(op, {"a", "b"}, {"y"}, attrs);
  return Load(m);
}

TEST_CASE("float64: casts round once, never through float32") {
  const double above_half16 = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);  // float32 would make it a tie
  const double above_half_bf16 = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  const std::vector<double> x = {above_half16,
                                 above_half_bf16,
                                 65520.0,
                                 65519.99,
                                 std::ldexp(1.0, -25),
                                 std::ldexp(1.0, -25) + std::ldexp(1.0, -40),
                                 -0.0,
                                 0.1};
  const Shape shape{static_cast<int64_t>(x.size())};
  const auto cast = [&](int32_t to) {
    auto model = Unary("Cast", kDouble, to, {shape[0]}, {Attr::Int("to", to)});
    return model->Run({Doubles(shape, x)})[0].tensor.ToVector();
  };
  const std::vector<float> h = cast(kFloat16);
  CHECK(h[0] == 1.0f + std::ldexp(1.0f, -10));  // up, though the float32 1 + 2^-11 is a tie to even (1)
  CHECK(std::isinf(h[2]));                      // 65520 rounds to 65536: past the largest float16
  CHECK(h[3] == 65504.0f);
  CHECK(h[4] == 0.0f);  // 2^-25 is the tie between 0 and the smallest subnormal: even
  CHECK(h[5] == std::ldexp(1.0f, -24));
  CHECK(std::signbit(h[6]));
  const std::vector<float> b = cast(kBFloat16);
  CHECK(b[1] == 1.0f + std::ldexp(1.0f, -7));
  const std::vector<float> f = cast(kFloat);
  CHECK(f[7] == 0.1f);
  CHECK(f[0] == static_cast<float>(above_half16));

  auto to_double = Unary("Cast", kInt64, kDouble, {2}, {Attr::Int("to", kDouble)});
  const onnx::Value d = to_double->Run({onnx::Int64Value(Tensor::FromInt64({2}, {(int64_t{1} << 53) + 1, -7}))})[0];
  CHECK(d.elem == onnx::Elem::kFloat64);
  CHECK(onnx::Float64Values(d) == std::vector<double>{9007199254740992.0, -7.0});  // 2^53 + 1: ties to even
  auto to_int = Unary("Cast", kDouble, kInt64, {4}, {Attr::Int("to", kInt64)});
  const std::vector<int64_t> i = to_int->Run({Doubles({4}, {-2.9, NAN, 1e300, -1e300})})[0].tensor.ToInt64Vector();
  CHECK(i == std::vector<int64_t>{-2, 0, INT64_MAX, INT64_MIN});
}

TEST_CASE("float64: arithmetic in binary64, the contract's NaN and signed zeros, exact fmod") {
  auto add = Binary("Add", kDouble, {1});
  CHECK(onnx::Float64Values(add->Run({Doubles({1}, {0.1}), Doubles({1}, {0.2})})[0])[0] == 0.1 + 0.2);
  auto max = Binary("Max", kDouble, {3}), min = Binary("Min", kDouble, {3});
  const onnx::Value a = Doubles({3}, {-0.0, NAN, 1.0}), b = Doubles({3}, {0.0, 2.0, -1.0});
  const std::vector<double> hi = onnx::Float64Values(max->Run({a, b})[0]),
                            lo = onnx::Float64Values(min->Run({a, b})[0]);
  CHECK((!std::signbit(hi[0]) && std::signbit(lo[0])));
  CHECK((std::isnan(hi[1]) && std::isnan(lo[1])));
  CHECK((hi[2] == 1.0 && lo[2] == -1.0));
  const std::vector<int64_t> nan_bits = max->Run({a, b})[0].tensor.ToInt64Vector();
  CHECK(static_cast<uint64_t>(nan_bits[1]) == 0x7FF8000000000000ull);

  const std::vector<double> x = {1e300, -7.5, 5e-324 * 7, 3.0, -0.0, 1.0, INFINITY, 2.5};
  const std::vector<double> y = {3.0, 2.0, 5e-324 * 2, 1e-300, 1.0, INFINITY, 1.0, 0.0};
  auto mod = Binary("Mod", kDouble, {8}, {Attr::Int("fmod", 1)});
  const std::vector<double> r = onnx::Float64Values(mod->Run({Doubles({8}, x), Doubles({8}, y)})[0]);
  for (size_t k = 0; k < x.size(); ++k) {
    INFO("fmod(" << x[k] << ", " << y[k] << ")");
    const double want = std::fmod(x[k], y[k]);  // exact in every libm: IEEE's remainder needs no rounding
    if (std::isnan(want)) {
      CHECK(std::isnan(r[k]));
    } else {
      CHECK(r[k] == want);
      CHECK(std::signbit(r[k]) == std::signbit(want));
    }
  }
}

TEST_CASE("float64: elements move as bits; what lockstep does not compute in float64 is refused") {
  ModelBuilder m;
  m.Input("a", {2, 2}, kDouble).Input("b", {2}, kDouble).Output("y", {6}, kDouble);
  m.Initializer(testing::Int64Tensor("shape", {1}, {4}));
  m.Node("Reshape", {"a", "shape"}, {"flat"});
  m.Node("Concat", {"flat", "b"}, {"y"}, {Attr::Int("axis", 0)});
  auto model = Load(m);
  const std::vector<double> v = {0.1, -0.0, NAN, 1e-310, 1.0 / 3, -2.0};
  const onnx::Value y = model->Run({Doubles({2, 2}, {v[0], v[1], v[2], v[3]}), Doubles({2}, {v[4], v[5]})})[0];
  const std::vector<double> got = onnx::Float64Values(y);
  CHECK(got[0] == 0.1);
  CHECK(std::signbit(got[1]));
  CHECK(std::isnan(got[2]));
  CHECK(got[3] == 1e-310);
  CHECK(got[4] == 1.0 / 3);

  auto exp = Unary("Exp", kDouble, kDouble, {1});
  CHECK_THROWS_WITH_AS(exp->Run({Doubles({1}, {1.0})}), doctest::Contains("unsupported: float64"), Error);
  try {
    exp->Run({Doubles({1}, {1.0})});
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kUnavailable);
  }
  // Callers' float32 tensors are widened exactly; float64 results reach them rounded once to float32.
  auto neg = Binary("Sub", kDouble, {1});
  const Tensor third = Tensor::FromVector({1}, {1.0f / 3});
  const Tensor diff = onnx::CallerTensor(
      neg->Run({neg->InputValue(0, third), neg->InputValue(1, Tensor::FromVector({1}, {1e-9f}))})[0]);
  CHECK(diff.dtype() == DType::kFloat32);
  CHECK(diff.ToVector()[0] == static_cast<float>(static_cast<double>(1.0f / 3) - static_cast<double>(1e-9f)));
}

TEST_CASE("CumSum: running sums in order, exclusive and reverse, with gradients; integers and float64 on the host") {
  ModelBuilder m;
  m.Input("x", {2, 3}).Output("y", {2, 3});
  m.Initializer(testing::Int64Tensor("axis", {}, {-1}));
  m.Node("CumSum", {"x", "axis"}, {"y"});
  auto inclusive = Load(m);
  Tensor x = Tensor::FromVector({2, 3}, {-0.0f, 1e8f, 1.0f, 1.0f, 2.0f, 3.0f}).RequiresGrad();
  const Tensor y = inclusive->Run({onnx::FloatValue(x)})[0].tensor;
  const std::vector<float> v = y.ToVector();
  CHECK(std::signbit(v[0]));  // the first sum is the element itself, not 0 + it
  CHECK(v[1] == 1e8f);
  CHECK(v[2] == 1e8f);  // 1e8 + 1 rounds to 1e8
  CHECK(std::vector<float>(v.begin() + 3, v.end()) == std::vector<float>{1.0f, 3.0f, 6.0f});
  Sum(Mul(y, Tensor::FromVector({2, 3}, {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}))).Backward();
  CHECK(x.grad().ToVector() == std::vector<float>{6.0f, 5.0f, 3.0f, 15.0f, 11.0f, 6.0f});

  ModelBuilder r;
  r.Input("x", {4}, kInt64).Output("y", {4}, kInt64);
  r.Initializer(testing::Int64Tensor("axis", {}, {0}));
  r.Node("CumSum", {"x", "axis"}, {"y"}, {Attr::Int("exclusive", 1), Attr::Int("reverse", 1)});
  auto reverse = Load(r);
  CHECK(reverse->Run({onnx::Int64Value(Tensor::FromInt64({4}, {1, 2, 3, INT64_MAX}))})[0].tensor.ToInt64Vector() ==
        std::vector<int64_t>{INT64_MIN + 4, INT64_MIN + 2, INT64_MAX, 0});  // wrapped past 2^63 - 1

  ModelBuilder d;
  d.Input("x", {3}, kDouble).Output("y", {3}, kDouble);
  d.Initializer(testing::Int64Tensor("axis", {}, {0}));
  d.Node("CumSum", {"x", "axis"}, {"y"}, {Attr::Int("exclusive", 1)});
  auto doubles = Load(d);
  CHECK(onnx::Float64Values(doubles->Run({Doubles({3}, {0.1, 0.2, 0.3})})[0]) ==
        std::vector<double>{0.0, 0.1, 0.1 + 0.2});
}

TEST_CASE("Pow with a run-time exponent: proven exponents per element, exact integer powers, clear refusals") {
  auto pow = Binary("Pow", kFloat, {4});
  Tensor base = Tensor::FromVector({4}, {1.5f, 3.0f, 2.0f, -0.7f}).RequiresGrad();
  const Tensor e = Tensor::FromVector({4}, {2.0f, -1.0f, 0.5f, 3.0f});
  const Tensor y = pow->Run({onnx::FloatValue(base), onnx::FloatValue(e)})[0].tensor;
  const Tensor x = base.Detach();
  CHECK(y.ToVector() == std::vector<float>{PowScalar(x, 2).ToVector()[0], PowScalar(x, -1).ToVector()[1],
                                           Pow(x, 0.5).ToVector()[2], PowScalar(x, 3).ToVector()[3]});
  Sum(y).Backward();
  CHECK(base.grad().ToVector()[0] == 3.0f);  // d(x^2)/dx at 1.5
  CHECK_THROWS_WITH_AS(
      pow->Run({onnx::FloatValue(x), onnx::FloatValue(Tensor::FromVector({4}, {2.0f, 2.0f, 2.0f, 1.7f}))}),
      doctest::Contains("exponent 1.7"), Error);

  auto ipow = Binary("Pow", kInt64, {4});
  const std::vector<int64_t> p = ipow->Run({onnx::Int64Value(Tensor::FromInt64({4}, {3, 2, -1, 7})),
                                            onnx::Int64Value(Tensor::FromInt64({4}, {40, -1, -3, 0}))})[0]
                                     .tensor.ToInt64Vector();
  uint64_t three_40 = 1;
  for (int k = 0; k < 40; ++k) three_40 *= 3;  // 3^40 modulo 2^64
  CHECK(p == std::vector<int64_t>{static_cast<int64_t>(three_40), 0, -1, 1});
  CHECK_THROWS_WITH_AS(ipow->Run({onnx::Int64Value(Tensor::FromInt64({4}, {0, 1, 1, 1})),
                                  onnx::Int64Value(Tensor::FromInt64({4}, {-1, 1, 1, 1}))}),
                       doctest::Contains("division by zero"), Error);
}

// ---- Einsum ----

// A plain reference for equations of letters with an explicit output: every assignment of the
// labels, the product of the operands added into its output element (in double).
std::vector<double> ReferenceEinsum(const std::string& inputs, const std::string& output,
                                    const std::vector<std::vector<double>>& data, const std::vector<Shape>& shapes) {
  std::vector<std::string> terms(1);
  for (char c : inputs) {
    if (c == ',') {
      terms.emplace_back();
    } else {
      terms.back().push_back(c);
    }
  }
  std::map<char, int64_t> size;
  for (size_t i = 0; i < terms.size(); ++i) {
    for (size_t d = 0; d < terms[i].size(); ++d) size[terms[i][d]] = shapes[i][d];
  }
  std::vector<char> labels;
  for (const auto& [c, n] : size) labels.push_back(c);
  int64_t out_count = 1;
  for (char c : output) out_count *= size[c];
  std::vector<double> out(static_cast<size_t>(out_count), 0.0);
  std::map<char, int64_t> at;
  for (char c : labels) at[c] = 0;
  while (true) {
    double product = 1.0;
    for (size_t i = 0; i < terms.size(); ++i) {
      int64_t offset = 0;
      for (size_t d = 0; d < terms[i].size(); ++d) offset = offset * shapes[i][d] + at[terms[i][d]];
      product *= data[i][static_cast<size_t>(offset)];
    }
    int64_t o = 0;
    for (char c : output) o = o * size[c] + at[c];
    out[static_cast<size_t>(o)] += product;
    size_t k = labels.size();
    while (k > 0 && ++at[labels[k - 1]] == size[labels[k - 1]]) at[labels[--k]] = 0;
    if (k == 0) break;
  }
  return out;
}

std::shared_ptr<onnx::OnnxModel> EinsumModel(const std::string& equation, const std::vector<Shape>& shapes,
                                             int32_t type, size_t output_rank) {
  ModelBuilder m;
  m.opset = 12;
  std::vector<std::string> names;
  for (size_t i = 0; i < shapes.size(); ++i) {
    names.push_back("x" + std::to_string(i));
    m.Input(names.back(), std::vector<int64_t>(shapes[i].begin(), shapes[i].end()), type);
  }
  m.Output("y", std::vector<int64_t>(output_rank, -1), type);
  m.Node("Einsum", names, {"y"}, {Attr::String("equation", equation)});
  const Bytes b = m.Build();
  return onnx::LoadOnnx(b.data(), b.size());
}

TEST_CASE("Einsum: float32 by lockstep's ops equals a plain reference; integers and float64 on the host agree") {
  struct Case {
    std::string equation, inputs, output;  // the equation, and its letters-only form for the reference
    std::vector<Shape> shapes;
  };
  const std::vector<Case> cases = {
      {"ij,jk->ik", "ij,jk", "ik", {{3, 4}, {4, 5}}},
      {"ij,jk", "ij,jk", "ik", {{3, 4}, {4, 5}}},  // implicit output
      {"bij, bjk -> bik", "bij,bjk", "bik", {{2, 3, 4}, {2, 4, 3}}},
      {"ii->i", "ii", "i", {{4, 4}}},
      {"ii", "ii", "", {{4, 4}}},
      {"...ii->...i", "aii", "ai", {{3, 4, 4}}},
      {"ij->", "ij", "", {{3, 5}}},
      {"ij->ji", "ij", "ji", {{3, 5}}},
      {"i,i", "i,i", "", {{6}, {6}}},
      {"ij,ij->ij", "ij,ij", "ij", {{3, 4}, {3, 4}}},
      {"ijk,ikl,il->jl", "ijk,ikl,il", "jl", {{2, 3, 4}, {2, 4, 5}, {2, 5}}},
      {"bii,bj->bij", "bii,bj", "bij", {{2, 3, 3}, {2, 4}}},
  };
  for (const Case& c : cases) {
    INFO(c.equation);
    std::vector<std::vector<double>> data;
    std::vector<onnx::Value> floats, ints, doubles;
    for (size_t i = 0; i < c.shapes.size(); ++i) {
      std::vector<double> d;
      std::vector<float> f;
      std::vector<int64_t> n;
      for (int64_t k = 0; k < NumElements(c.shapes[i]); ++k) {
        const int64_t v = (k * 5 + static_cast<int64_t>(i) * 3) % 7 - 3;  // small integers: every sum is exact
        d.push_back(static_cast<double>(v));
        f.push_back(static_cast<float>(v));
        n.push_back(v);
      }
      data.push_back(d);
      floats.push_back(onnx::FloatValue(Tensor::FromVector(c.shapes[i], f)));
      ints.push_back(onnx::Int64Value(Tensor::FromInt64(c.shapes[i], n)));
      doubles.push_back(Doubles(c.shapes[i], d));
    }
    const std::vector<double> want = ReferenceEinsum(c.inputs, c.output, data, c.shapes);
    const std::vector<float> got =
        EinsumModel(c.equation, c.shapes, kFloat, c.output.size())->Run(floats)[0].tensor.ToVector();
    CHECK(std::vector<double>(got.begin(), got.end()) == want);
    const std::vector<int64_t> got_int =
        EinsumModel(c.equation, c.shapes, kInt64, c.output.size())->Run(ints)[0].tensor.ToInt64Vector();
    CHECK(std::vector<double>(got_int.begin(), got_int.end()) == want);
    CHECK(onnx::Float64Values(EinsumModel(c.equation, c.shapes, kDouble, c.output.size())->Run(doubles)[0]) == want);
  }
}

TEST_CASE("Einsum: ellipses broadcast, gradients flow, bad equations are refused") {
  // [2, 1, 3, 4] x [5, 4, 2] -> [2, 5, 3, 2], as MatMul broadcasts.
  auto model = EinsumModel("...ij,...jk->...ik", {{2, 1, 3, 4}, {5, 4, 2}}, kFloat, 4);
  std::vector<float> av(24), bv(40);
  for (size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>(i % 7) - 3.0f;
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<float>(i % 5) * 0.5f;
  Tensor a = Tensor::FromVector({2, 1, 3, 4}, av).RequiresGrad();
  const Tensor b = Tensor::FromVector({5, 4, 2}, bv);
  const Tensor y = model->Run({onnx::FloatValue(a), onnx::FloatValue(b)})[0].tensor;
  REQUIRE(y.shape() == Shape{2, 5, 3, 2});
  float sum = 0.0f;
  for (int k = 0; k < 4; ++k) sum += av[(1 * 3 + 2) * 4 + k] * bv[(3 * 4 + k) * 2 + 1];
  CHECK(y.ToVector()[((1 * 5 + 3) * 3 + 2) * 2 + 1] == sum);
  Sum(y).Backward();
  // d/da[n, 0, i, j] = sum over the 5 broadcast rows and k of b[., j, k].
  float g = 0.0f;
  for (int r = 0; r < 5; ++r) g += bv[(r * 4 + 1) * 2 + 0] + bv[(r * 4 + 1) * 2 + 1];
  CHECK(a.grad().ToVector()[1] == doctest::Approx(g));

  const auto load_error = [](const std::string& equation, size_t inputs) {
    ModelBuilder m;
    m.opset = 12;
    std::vector<std::string> names;
    for (size_t i = 0; i < inputs; ++i) {
      names.push_back("x" + std::to_string(i));
      m.Input(names.back(), {2, 2});
    }
    m.Output("y", {-1});
    m.Node("Einsum", names, {"y"}, {Attr::String("equation", equation)});
    try {
      Load(m);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(load_error("ij,jk->ik", 1).find("names 2 operands, the node has 1") != std::string::npos);
  CHECK(load_error("i1->i", 1).find("is not a letter") != std::string::npos);
  CHECK(load_error("ij->ii", 1).find("output label repeated") != std::string::npos);
  CHECK(load_error("ij->k", 1).find("'k' is in no input") != std::string::npos);
  CHECK(load_error("ijk->i", 1).find("rank 2, its term names 3") != std::string::npos);
}

}  // namespace
}  // namespace lockstep
