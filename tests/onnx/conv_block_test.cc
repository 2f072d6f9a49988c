// Inference's Conv -> BatchNormalization -> Relu/Clip/SiLU runs fused into one step (onnx/conv_block.h)
// give the bits of the same graph run node by node: the reference is the graph with every value
// between the nodes also an output, which keeps them apart. On special values, in evaluation
// and in training (where the block runs node by node and batch normalisation uses the batch).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/ops.h"
#include "onnx/model.h"
#include "tests/onnx/model_builder.h"
#include "tests/unit/float_bits.h"

namespace lockstep {
namespace {

using testing::Attr;
using testing::Bytes;
using testing::ModelBuilder;

// Weights and statistics without special values (a NaN weight would make every output NaN, which
// any wiring passes); the inputs have a few.
std::vector<float> Mixed(size_t n, uint32_t seed) { return testing::MixedValues(n, seed, 1u << 30); }
std::vector<float> Input(size_t n, uint32_t seed) {
  std::vector<float> v = testing::MixedValues(n, seed, 1u << 30);
  v[40] = __builtin_nanf("");  // sample 0, channel 0, row 4
  v[n - 1] = -__builtin_inff();
  v[n / 2] = -0.0f;
  return v;
}

// How many of y's elements are finite.
int64_t Finite(const Tensor& y) {
  int64_t finite = 0;
  for (int64_t i = 0; i < y.numel(); ++i) finite += y.data_f32()[i] - y.data_f32()[i] == 0.0f;
  return finite;
}

std::vector<float> Positive(size_t n, uint32_t seed) {
  std::vector<float> v = Mixed(n, seed);
  for (float& x : v) x = x < 0 ? -x : x;
  return v;
}

void BatchNorm(ModelBuilder& m, const std::string& name, int64_t c, uint32_t seed, const std::string& in,
               const std::string& out) {
  m.Initializer(testing::FloatTensor(name + ".weight", {c}, Mixed(static_cast<size_t>(c), seed)))
      .Initializer(testing::FloatTensor(name + ".bias", {c}, Mixed(static_cast<size_t>(c), seed + 1)))
      .Initializer(testing::FloatTensor(name + ".running_mean", {c}, Mixed(static_cast<size_t>(c), seed + 2)))
      .Initializer(testing::FloatTensor(name + ".running_var", {c}, Positive(static_cast<size_t>(c), seed + 3)));
  m.Node("BatchNormalization", {in, name + ".weight", name + ".bias", name + ".running_mean", name + ".running_var"},
         {out}, {Attr::Float("epsilon", 1e-3f)});
}

// x [N, 4, 9, 9] -> Conv 3x3 (bias) -> BN -> Relu -> a -> depthwise Conv 3x3 stride 2 -> BN ->
// Clip(0, 6) -> b -> Conv 1x1 -> Relu -> c -> Conv 1x1 (bias) -> BN -> SiLU (Mul(sigmoid, v)) -> d
// -> Conv 1x1 -> SiLU (Mul(v, sigmoid)) -> e -> Conv 1x1 (bias) -> BN -> y. `exposed`: the values
// between the nodes are outputs too, so that nothing fuses.
Bytes Network(bool exposed) {
  ModelBuilder m;
  m.opset = 17;
  m.Input("x", {-1, 4, 9, 9});
  m.Output("y", {-1, 6, 5, 5});
  if (exposed) {
    for (const char* name : {"c1", "n1", "a"}) m.Output(name, {-1, 8, 9, 9});
    for (const char* name : {"c2", "n2", "b"}) m.Output(name, {-1, 8, 5, 5});
    for (const char* name : {"c3", "c"}) m.Output(name, {-1, 12, 5, 5});
    for (const char* name : {"c4", "n4", "s4", "d", "c5", "s5", "e", "c6"}) m.Output(name, {-1, 6, 5, 5});
  }
  m.Initializer(testing::FloatTensor("w1", {8, 4, 3, 3}, Mixed(288, 1)))
      .Initializer(testing::FloatTensor("b1", {8}, Mixed(8, 2)))
      .Initializer(testing::FloatTensor("w2", {8, 1, 3, 3}, Mixed(72, 3)))
      .Initializer(testing::FloatTensor("w3", {12, 8, 1, 1}, Mixed(96, 4)))
      .Initializer(testing::FloatTensor("w4", {6, 12, 1, 1}, Mixed(72, 5)))
      .Initializer(testing::FloatTensor("b4", {6}, Mixed(6, 6)))
      .Initializer(testing::FloatTensor("w5", {6, 6, 1, 1}, Mixed(36, 7)))
      .Initializer(testing::FloatTensor("w6", {6, 6, 1, 1}, Mixed(36, 8)))
      .Initializer(testing::FloatTensor("b6", {6}, Mixed(6, 9)))
      .Initializer(testing::FloatTensor("lo", {}, {0.0f}))
      .Initializer(testing::FloatTensor("hi", {}, {6.0f}));
  m.Node("Conv", {"x", "w1", "b1"}, {"c1"}, {Attr::Ints("pads", {1, 1, 1, 1})});
  BatchNorm(m, "bn1", 8, 10, "c1", "n1");
  m.Node("Relu", {"n1"}, {"a"});
  m.Node("Conv", {"a", "w2"}, {"c2"},
         {Attr::Ints("pads", {1, 1, 1, 1}), Attr::Ints("strides", {2, 2}), Attr::Int("group", 8)});
  BatchNorm(m, "bn2", 8, 20, "c2", "n2");
  m.Node("Clip", {"n2", "lo", "hi"}, {"b"});
  m.Node("Conv", {"b", "w3"}, {"c3"});
  m.Node("Relu", {"c3"}, {"c"});
  m.Node("Conv", {"c", "w4", "b4"}, {"c4"});
  BatchNorm(m, "bn4", 6, 30, "c4", "n4");
  m.Node("Sigmoid", {"n4"}, {"s4"});
  m.Node("Mul", {"s4", "n4"}, {"d"});
  m.Node("Conv", {"d", "w5"}, {"c5"});
  m.Node("Sigmoid", {"c5"}, {"s5"});
  m.Node("Mul", {"c5", "s5"}, {"e"});
  m.Node("Conv", {"e", "w6", "b6"}, {"c6"});
  BatchNorm(m, "bn6", 6, 40, "c6", "y");
  return m.Build();
}

std::shared_ptr<onnx::OnnxModel> Load(const Bytes& b) { return onnx::LoadOnnx(b.data(), b.size()); }

size_t DifferingBits(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  size_t differ = 0;
  for (int64_t i = 0; i < a.numel(); ++i) differ += testing::Bits(a.data_f32()[i]) != testing::Bits(b.data_f32()[i]);
  return differ;
}

TEST_CASE("Conv -> BatchNormalization -> Relu/Clip/SiLU fused gives the bits of the nodes run one by one") {
  auto fused = Load(Network(false));
  auto apart = Load(Network(true));
  CHECK(fused->fused_blocks() == 6);
  CHECK(apart->fused_blocks() == 0);
  for (int64_t n : {1, 3}) {
    CAPTURE(n);
    const Tensor x = Tensor::FromVector({n, 4, 9, 9}, Input(static_cast<size_t>(n * 324), 40));
    const Tensor want = apart->Run({onnx::FloatValue(x)})[0].tensor;
    CHECK(Finite(want) > want.numel() / 2);  // most outputs carry the arithmetic's bits
    CHECK(Finite(want) < want.numel());      // and a special value reached some
    {
      const NoGradGuard inference;  // the fused path
      CHECK(DifferingBits(fused->Run({onnx::FloatValue(x)})[0].tensor, want) == 0);
    }
    // With gradients recorded (the parameters require them) the block runs its ops one by one.
    const Tensor y = fused->Run({onnx::FloatValue(x)})[0].tensor;
    CHECK(y.requires_grad());
    CHECK(DifferingBits(y, want) == 0);
  }
}

TEST_CASE("a fused block runs node by node while the module trains: batch statistics, the same bits and gradients") {
  auto fused = Load(Network(false));
  auto apart = Load(Network(true));
  fused->Train();
  apart->Train();
  std::vector<float> v(2 * 324);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i * 37 % 101) - 50) / 16.0f;
  const Tensor x = Tensor::FromVector({2, 4, 9, 9}, v);
  const Tensor y = fused->Run({onnx::FloatValue(x)})[0].tensor;
  const Tensor y_apart = apart->Run({onnx::FloatValue(x)})[0].tensor;
  CHECK(DifferingBits(y, y_apart) == 0);
  const nn::NamedTensors a = fused->NamedBuffers(), b = apart->NamedBuffers();
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CAPTURE(a[i].first);
    CHECK(DifferingBits(a[i].second, b[i].second) == 0);  // the running statistics moved alike
  }
  // The gradients: the Relu and Clip after the first two normalisations run inside them (core's
  // BatchNorm with an activation) in the fused graph, as separate nodes in the other.
  const Tensor g = Tensor::FromVector(y.shape(), Input(static_cast<size_t>(y.numel()), 41));
  Sum(Mul(y, g)).Backward();
  Sum(Mul(y_apart, g)).Backward();
  const nn::NamedTensors pa = fused->NamedParameters(), pb = apart->NamedParameters();
  REQUIRE(pa.size() == pb.size());
  REQUIRE(pa.size() >= 6);
  for (size_t i = 0; i < pa.size(); ++i) {
    CAPTURE(pa[i].first);
    REQUIRE(pa[i].second.grad().defined());
    CHECK(DifferingBits(pa[i].second.grad(), pb[i].second.grad()) == 0);
  }
}

}  // namespace
}  // namespace lockstep
