// Sequences and optionals in imported graphs: built, edited, read and taken apart with gradients
// flowing through; sequences where tensors belong, positions out of range and callers' tensor
// interfaces refused with messages that say which.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "onnx/model.h"
#include "tests/onnx/model_builder.h"

namespace lockstep {
namespace {

using testing::Attr;
using testing::Bytes;
using testing::ModelBuilder;

std::shared_ptr<onnx::OnnxModel> Load(const ModelBuilder& m) {
  const Bytes b = m.Build();
  return onnx::LoadOnnx(b.data(), b.size());
}

TEST_CASE("sequences: construct, insert, erase, length, concatenate and stack, with gradients") {
  ModelBuilder m;
  m.opset = 13;
  m.Input("a", {2, 3}).Input("b", {2, 3}).Output("y", {4, 3}).Output("n", {}, 7).Output("stacked", {2, 2, 3});
  m.Initializer(testing::Int64Tensor("front", {}, {0}));
  m.Initializer(testing::Int64Tensor("last", {}, {-1}));
  m.Node("SequenceConstruct", {"a", "b"}, {"s"});
  m.Node("SequenceInsert", {"s", "a", "front"}, {"s2"});  // [a, a, b]
  m.Node("SequenceErase", {"s2", "last"}, {"s3"});        // [a, a]
  m.Node("SequenceLength", {"s3"}, {"n"});
  m.Node("ConcatFromSequence", {"s3"}, {"y"}, {Attr::Int("axis", 0)});
  m.Node("ConcatFromSequence", {"s"}, {"stacked"}, {Attr::Int("axis", 0), Attr::Int("new_axis", 1)});
  auto model = Load(m);
  Tensor a = Tensor::FromVector({2, 3}, {1, 2, 3, 4, 5, 6}).RequiresGrad();
  const Tensor b = Tensor::FromVector({2, 3}, {7, 8, 9, 10, 11, 12});
  const std::vector<onnx::Value> out = model->Run({onnx::FloatValue(a), onnx::FloatValue(b)});
  CHECK(out[0].tensor.ToVector() == std::vector<float>{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6});
  CHECK(out[1].tensor.ToInt64Vector() == std::vector<int64_t>{2});
  CHECK(out[2].tensor.ToVector() == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  std::vector<float> w(12);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i);
  Sum(Mul(out[0].tensor, Tensor::FromVector({4, 3}, w))).Backward();
  // a appears twice in y: its gradient is the two weight blocks added.
  CHECK(a.grad().ToVector() == std::vector<float>{6, 8, 10, 12, 14, 16});
}

TEST_CASE("SplitToSequence: by lengths, by one length, into squeezed slices; SequenceAt counts from the end") {
  ModelBuilder m;
  m.opset = 13;
  m.Input("x", {5, 2}).Output("last", {1, 2}).Output("second", {2}).Output("n", {}, 7);
  m.Initializer(testing::Int64Tensor("two", {}, {2}));
  m.Initializer(testing::Int64Tensor("minus_one", {}, {-1}));
  m.Initializer(testing::Int64Tensor("one", {}, {1}));
  m.Node("SplitToSequence", {"x", "two"}, {"pairs"});  // lengths 2, 2, 1
  m.Node("SequenceAt", {"pairs", "minus_one"}, {"last"});
  m.Node("SplitToSequence", {"x"}, {"rows"}, {Attr::Int("keepdims", 0)});
  m.Node("SequenceAt", {"rows", "one"}, {"second"});
  m.Node("SequenceLength", {"pairs"}, {"n"});
  auto model = Load(m);
  const Tensor x = Tensor::FromVector({5, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  const std::vector<onnx::Value> out = model->Run({onnx::FloatValue(x)});
  CHECK(out[0].tensor.ToVector() == std::vector<float>{8, 9});
  CHECK(out[1].shape() == Shape{2});
  CHECK(out[1].tensor.ToVector() == std::vector<float>{2, 3});
  CHECK(out[2].tensor.ToInt64Vector() == std::vector<int64_t>{3});
}

TEST_CASE("sequences are refused where tensors belong, and out-of-range positions name the range") {
  ModelBuilder wrong;
  wrong.opset = 13;
  wrong.Input("a", {2}).Output("y", {2});
  wrong.Node("SequenceConstruct", {"a"}, {"s"});
  wrong.Node("Relu", {"s"}, {"y"});
  // Found at load, by the run on zeros that a graph of fixed-shape float inputs gets.
  CHECK_THROWS_WITH_AS(Load(wrong), doctest::Contains("Relu: input 0 is a sequence of float; Relu takes tensors"), Error);

  ModelBuilder at;
  at.opset = 13;
  at.Input("a", {2}).Input("i", {}, 7).Output("y", {2});
  at.Node("SequenceConstruct", {"a", "a"}, {"s"});
  at.Node("SequenceAt", {"s", "i"}, {"y"});
  auto pick = Load(at);
  CHECK_THROWS_WITH_AS(pick->Run({onnx::FloatValue(Tensor::Zeros({2})), onnx::Int64Value(Tensor::FromInt64({}, {2}))}),
                       doctest::Contains("position 2 is outside [-2, 1] for a sequence of 2"), Error);

  // Sequence inputs and outputs: C++'s Run takes and gives them; the tensor interfaces refuse them.
  ModelBuilder io;
  io.opset = 13;
  io.SequenceInput("s").SequenceOutput("t");
  io.Node("Identity", {"s"}, {"t"});
  auto identity = Load(io);
  CHECK(identity->inputs()[0].kind == onnx::TypeKind::kSequence);
  const onnx::Value s = onnx::SequenceValue({onnx::FloatValue(Tensor::Zeros({3}))}, onnx::Elem::kFloat);
  const onnx::Value t = identity->Run({s})[0];
  CHECK((t.is_sequence() && t.items->size() == 1));
  CHECK_THROWS_WITH_AS(identity->InputValue(0, Tensor::Zeros({3})), doctest::Contains("'s' is a sequence of float"),
                       Error);
  CHECK_THROWS_WITH_AS(onnx::CallerTensor(t), doctest::Contains("an output is a sequence of float"), Error);
  CHECK_THROWS_WITH_AS(identity->Run({onnx::FloatValue(Tensor::Zeros({3}))}),
                       doctest::Contains("'s' is declared sequence of float, got float"), Error);
}

}  // namespace
}  // namespace lockstep
