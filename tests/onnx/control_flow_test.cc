// If, Loop and Scan in imported graphs: subgraphs reading the enclosing graph's values, gradients
// through the branch taken and every iteration, scan outputs stacked in order, and the limits
// (nesting depth, names nothing defines) refused with messages that say which.
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

constexpr int32_t kInt64 = 7, kBool = 9;

std::shared_ptr<onnx::OnnxModel> Load(const ModelBuilder& m) {
  const Bytes b = m.Build();
  return onnx::LoadOnnx(b.data(), b.size());
}

std::string LoadError(const ModelBuilder& m) {
  try {
    Load(m);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("If runs the branch its condition picks, on the enclosing graph's values, with gradients") {
  ModelBuilder then_branch, else_branch, m;
  then_branch.Output("t", {3}).Node("Mul", {"x", "x"}, {"t"});  // reads x from the enclosing graph
  else_branch.Output("e", {3}).Node("Neg", {"x"}, {"e"});
  m.Input("x", {3}).Input("c", {}, kBool).Output("y", {3});
  m.Node("If", {"c"}, {"y"}, {Attr::Graph("then_branch", then_branch.graph), Attr::Graph("else_branch", else_branch.graph)});
  auto model = Load(m);
  Tensor x = Tensor::FromVector({3}, {1.5f, -2.0f, 3.0f}).RequiresGrad();
  const Tensor yes = Tensor::Scalar(1.0f), no = Tensor::Scalar(0.0f);
  const Tensor squared = model->Run({onnx::FloatValue(x), onnx::BoolValue(yes)})[0].tensor;
  CHECK(squared.ToVector() == std::vector<float>{2.25f, 4.0f, 9.0f});
  Sum(squared).Backward();
  CHECK(x.grad().ToVector() == std::vector<float>{3.0f, -4.0f, 6.0f});
  CHECK(model->Run({onnx::FloatValue(x.Detach()), onnx::BoolValue(no)})[0].tensor.ToVector() ==
        std::vector<float>{-1.5f, 2.0f, -3.0f});
}

TEST_CASE("Loop carries values through its iterations and stacks its scan outputs in order") {
  // s starts at a; each of the 4 iterations adds b (from the enclosing graph) and emits the sum.
  ModelBuilder body, m;
  body.Input("i", {}, kInt64).Input("cond_in", {}, kBool).Input("s", {2});
  body.Output("cond_out", {}, kBool).Output("s_out", {2}).Output("emitted", {2});
  body.Node("Identity", {"cond_in"}, {"cond_out"});
  body.Node("Add", {"s", "b"}, {"s_out"});
  body.Node("Identity", {"s_out"}, {"emitted"});
  m.Input("a", {2}).Input("b", {2}).Output("final", {2}).Output("all", {4, 2});
  m.Initializer(testing::Int64Tensor("trips", {}, {4}));
  m.Node("Loop", {"trips", "", "a"}, {"final", "all"}, {Attr::Graph("body", body.graph)});
  auto model = Load(m);
  Tensor a = Tensor::FromVector({2}, {1.0f, 0.5f}).RequiresGrad();
  Tensor b = Tensor::FromVector({2}, {0.25f, 2.0f}).RequiresGrad();
  const std::vector<onnx::Value> out = model->Run({onnx::FloatValue(a), onnx::FloatValue(b)});
  CHECK(out[0].tensor.ToVector() == std::vector<float>{2.0f, 8.5f});
  CHECK(out[1].shape() == Shape{4, 2});
  CHECK(out[1].tensor.ToVector() == std::vector<float>{1.25f, 2.5f, 1.5f, 4.5f, 1.75f, 6.5f, 2.0f, 8.5f});
  Sum(out[0].tensor).Backward();
  CHECK(a.grad().ToVector() == std::vector<float>{1.0f, 1.0f});
  CHECK(b.grad().ToVector() == std::vector<float>{4.0f, 4.0f});  // b is added in every iteration
}

TEST_CASE("Scan slices its inputs along their axes and accumulates state (forward and reversed)") {
  ModelBuilder body;
  body.Input("sum_in", {2}).Input("row", {2}).Output("sum_out", {2}).Output("partial", {2});
  body.Node("Add", {"sum_in", "row"}, {"sum_out"});
  body.Node("Identity", {"sum_out"}, {"partial"});
  for (const int64_t direction : {0, 1}) {
    INFO("direction " << direction);
    ModelBuilder m;
    m.Input("init", {2}).Input("x", {3, 2}).Output("sum", {2}).Output("partials", {3, 2});
    m.Node("Scan", {"init", "x"}, {"sum", "partials"},
           {Attr::Graph("body", body.graph), Attr::Int("num_scan_inputs", 1),
            Attr::Ints("scan_input_directions", {direction})});
    auto model = Load(m);
    const std::vector<onnx::Value> out = model->Run({onnx::FloatValue(Tensor::Zeros({2})),
                                                     onnx::FloatValue(Tensor::FromVector({3, 2}, {1, 2, 3, 4, 5, 6}))});
    CHECK(out[0].tensor.ToVector() == std::vector<float>{9.0f, 12.0f});
    CHECK(out[1].tensor.ToVector() == (direction == 0 ? std::vector<float>{1, 2, 4, 6, 9, 12}
                                                      : std::vector<float>{5, 6, 8, 10, 9, 12}));
  }
}

TEST_CASE("subgraphs: nesting beyond 8 is refused by the decoder; a name nothing defines is refused at load") {
  // If nodes nested 9 deep, the innermost branch an Identity of x.
  ModelBuilder inner;
  inner.Output("r", {1}).Node("Identity", {"x"}, {"r"});
  Bytes graph = inner.graph;
  for (int depth = 0; depth < 9; ++depth) {
    ModelBuilder level;
    level.Output("r", {1}).Node("If", {"c"}, {"r"}, {Attr::Graph("then_branch", graph), Attr::Graph("else_branch", graph)});
    graph = level.graph;
  }
  ModelBuilder deep;
  deep.Input("x", {1}).Input("c", {}, kBool);
  deep.graph.insert(deep.graph.end(), graph.begin(), graph.end());  // the outermost If node and its output
  CHECK(LoadError(deep).find("graphs nested more than 8 deep") != std::string::npos);

  ModelBuilder branch, m;
  branch.Output("t", {1}).Node("Identity", {"nowhere"}, {"t"});
  m.Input("c", {}, kBool).Output("y", {1});
  m.Node("If", {"c"}, {"y"}, {Attr::Graph("then_branch", branch.graph), Attr::Graph("else_branch", branch.graph)});
  CHECK(LoadError(m).find("reads 'nowhere', which no input, initializer or node defines") != std::string::npos);
}

}  // namespace
}  // namespace lockstep
