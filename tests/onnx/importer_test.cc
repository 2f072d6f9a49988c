// The ONNX importer on hand-built models: the wire reader, every kind of malformed file, refused
// operators, and an imported graph behaving as a lockstep module (the same bits as the same ops
// written by hand, parameters under their ONNX names, gradients, checkpoints, dropout streams).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/checkpoint.h"
#include "core/error.h"
#include "core/ops.h"
#include "onnx/model.h"
#include "onnx/proto.h"
#include "onnx/wire.h"
#include "tests/onnx/model_builder.h"

namespace lockstep {
namespace {

using onnx::LoadOnnx;
using testing::Attr;
using testing::Bytes;
using testing::ModelBuilder;

std::shared_ptr<onnx::OnnxModel> Load(const Bytes& b, const onnx::LoadOptions& o = {}) { return LoadOnnx(b.data(), b.size(), o); }

// The kind and message of the error loading b throws (kInternal and "" when it loads).
std::pair<ErrorKind, std::string> LoadError(const Bytes& b) {
  try {
    Load(b);
  } catch (const Error& e) {
    return {e.kind(), e.what()};
  }
  return {ErrorKind::kInternal, ""};
}

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// x [N, 4] -> Gemm(4 -> 3, transB) -> Relu -> Gemm(3 -> 2): PyTorch's export of a small MLP.
ModelBuilder Mlp() {
  ModelBuilder m;
  m.Input("x", {-1, 4}).Output("y", {-1, 2});
  std::vector<float> w1(12), b1{0.1f, -0.2f, 0.3f}, w2{0.5f, -0.25f, 1.0f, 0.75f, -1.5f, 0.125f}, b2{0.01f, 0.02f};
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = static_cast<float>(i % 5) * 0.25f - 0.5f;
  m.Initializer(testing::FloatTensor("fc1.weight", {3, 4}, w1))
      .Initializer(testing::FloatTensor("fc1.bias", {3}, b1))
      .Initializer(testing::FloatTensor("fc2.weight", {2, 3}, w2))
      .Initializer(testing::FloatTensor("fc2.bias", {2}, b2));
  m.Node("Gemm", {"x", "fc1.weight", "fc1.bias"}, {"h"}, {Attr::Int("transB", 1)})
      .Node("Relu", {"h"}, {"r"})
      .Node("Gemm", {"r", "fc2.weight", "fc2.bias"}, {"y"}, {Attr::Int("transB", 1)});
  return m;
}

TEST_CASE("the wire reader reads varints, fixed values and packed fields, and refuses malformed bytes") {
  Bytes b;
  testing::VarintField(&b, 1, 300);
  testing::VarintField(&b, 2, -2);  // sign-extended to ten bytes
  testing::FloatField(&b, 3, 1.5f);
  Bytes packed;
  testing::Varint(&packed, 1);
  testing::Varint(&packed, 1u << 20);
  testing::BytesField(&b, 4, packed);
  onnx::WireReader r(onnx::Bytes{b.data(), b.size()}, "test");
  onnx::Field f;
  REQUIRE(r.Next(&f));
  CHECK(onnx::AsInt64(f, "a") == 300);
  REQUIRE(r.Next(&f));
  CHECK(onnx::AsInt32(f, "b") == -2);
  REQUIRE(r.Next(&f));
  CHECK(onnx::AsFloat(f, "c") == 1.5f);
  CHECK_THROWS_AS(onnx::AsInt64(f, "c"), Error);  // a fixed32 read as a varint
  REQUIRE(r.Next(&f));
  std::vector<int64_t> values;
  onnx::AppendInt64s(f, "d", &values);
  CHECK(values == std::vector<int64_t>{1, 1 << 20});
  CHECK_FALSE(r.Next(&f));

  const std::vector<Bytes> broken = {
      {0x08},                                                        // a key without its varint
      {0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01},  // an 11-byte varint
      {0x12, 0x05, 'a'},                                             // 5 bytes declared, 1 present
      {0x12, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F},                           // 4 GiB declared
      {0x0B},                                                        // a group (wire type 3)
      {0x15, 0x00, 0x00},                                            // a truncated fixed32
      {0x00, 0x00},                                                  // field number 0
  };
  for (const Bytes& bad : broken) {
    onnx::WireReader reader(onnx::Bytes{bad.data(), bad.size()}, "broken");
    try {
      while (reader.Next(&f)) {
      }
      FAIL("no error for a malformed message");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::kFormat);
      CHECK(Contains(e.what(), "broken"));
    }
  }
}

TEST_CASE("every truncation of a valid model is an error of kind format, never a crash") {
  const Bytes full = Mlp().Build();
  CHECK_NOTHROW(Load(full));
  for (size_t n = 0; n < full.size(); ++n) {
    const Bytes cut(full.begin(), full.begin() + static_cast<long>(n));
    try {
      Load(cut);
    } catch (const Error& e) {
      CHECK_MESSAGE((e.kind() == ErrorKind::kFormat || e.kind() == ErrorKind::kUnavailable), "at " << n << ": " << e.what());
      continue;
    }
    // A cut at a field boundary can leave a smaller valid model; it must then run or refuse cleanly.
  }
}

TEST_CASE("malformed graphs are refused with the reason") {
  SUBCASE("a cycle") {
    ModelBuilder m;
    m.Input("x", {2}).Output("b", {2});
    m.Node("Add", {"x", "b"}, {"a"}).Node("Relu", {"a"}, {"b"});
    const auto [kind, message] = LoadError(m.Build());
    CHECK(kind == ErrorKind::kFormat);
    CHECK(Contains(message, "cycle"));
  }
  SUBCASE("an undefined input") {
    ModelBuilder m;
    m.Input("x", {2}).Output("y", {2});
    m.Node("Add", {"x", "nowhere"}, {"y"});
    const auto [kind, message] = LoadError(m.Build());
    CHECK(kind == ErrorKind::kFormat);
    CHECK(Contains(message, "'nowhere'"));
  }
  SUBCASE("a value produced twice") {
    ModelBuilder m;
    m.Input("x", {2}).Output("y", {2});
    m.Node("Relu", {"x"}, {"y"}).Node("Neg", {"x"}, {"y"});
    CHECK(LoadError(m.Build()).first == ErrorKind::kFormat);
  }
  SUBCASE("an initializer declaring more data than it holds") {
    ModelBuilder m;
    m.Input("x", {2}).Output("y", {2});
    m.Initializer(testing::FloatTensor("w", {1000000000, 1000000000}, {1.0f}));
    m.Node("Add", {"x", "w"}, {"y"});
    const auto [kind, message] = LoadError(m.Build());
    CHECK(kind == ErrorKind::kFormat);
    CHECK(Contains(message, "'w'"));
  }
  SUBCASE("an attribute of the wrong type") {
    ModelBuilder m;
    m.Input("x", {2, 3}).Output("y", {3, 2});
    m.Node("Transpose", {"x"}, {"y"}, {Attr::Float("perm", 1.0f)});
    const auto [kind, message] = LoadError(m.Build());
    CHECK(kind == ErrorKind::kFormat);
    CHECK(Contains(message, "'perm' should be INTS"));
  }
  SUBCASE("a shape contradiction found by the load-time run") {
    ModelBuilder m;
    m.Input("x", {2, 3}).Output("y", {2, 3});
    m.Initializer(testing::FloatTensor("b", {4}, {1, 2, 3, 4}));
    m.Node("Add", {"x", "b"}, {"y"}, {}, "bias_add");
    const auto [kind, message] = LoadError(m.Build());
    CHECK(kind == ErrorKind::kArgument);
    CHECK(Contains(message, "'bias_add' (Add, opset 13)"));
    CHECK(Contains(message, "do not broadcast"));
  }
  SUBCASE("a declared output shape the graph does not compute") {
    ModelBuilder m;
    m.Input("x", {2, 3}).Output("y", {3, 3});
    m.Node("Relu", {"x"}, {"y"});
    const auto [kind, message] = LoadError(m.Build());
    CHECK(kind == ErrorKind::kFormat);
    CHECK(Contains(message, "declared [3, 3], got [2, 3]"));
  }
  SUBCASE("not an ONNX file") {
    const Bytes text = {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'};
    CHECK(LoadError(text).first == ErrorKind::kFormat);
    CHECK(LoadError(Bytes{}).first == ErrorKind::kFormat);
  }
}

TEST_CASE("what lockstep does not compute is refused at load, naming the node, operator, opset and the list") {
  ModelBuilder m;
  m.Input("x", {2}).Output("y", {2});
  m.Node("StringNormalizer", {"x"}, {"y"}, {}, "the_normalizer");
  auto [kind, message] = LoadError(m.Build());
  CHECK(kind == ErrorKind::kUnavailable);
  CHECK(Contains(message, "node 'the_normalizer' (StringNormalizer, opset 13)"));
  CHECK(Contains(message, "Conv, "));  // the supported list

  ModelBuilder p;
  p.Input("x", {2}).Output("y", {2});
  p.Initializer(testing::FloatTensor("e", {}, {2.5f}));
  p.Node("Pow", {"x", "e"}, {"y"});
  std::tie(kind, message) = LoadError(p.Build());
  CHECK(kind == ErrorKind::kUnavailable);
  CHECK(Contains(message, "-4..4 and 0.5"));

  ModelBuilder e;  // external data: data_location = EXTERNAL
  Bytes t;
  testing::VarintField(&t, 2, 1);
  testing::StringField(&t, 8, "w");
  testing::VarintField(&t, 14, 1);
  e.Input("x", {1}).Output("y", {1}).Initializer(t).Node("Add", {"x", "w"}, {"y"});
  std::tie(kind, message) = LoadError(e.Build());
  CHECK(kind == ErrorKind::kUnavailable);
  CHECK(Contains(message, "external"));

  // An attribute lockstep does not read would be ignored: the node is refused, naming it and the
  // attributes lockstep reads.
  ModelBuilder a;
  a.Input("x", {2}).Output("y", {2}).Node("Relu", {"x"}, {"y"}, {Attr::Int("mystery", 1)}, "the_relu");
  std::tie(kind, message) = LoadError(a.Build());
  CHECK(kind == ErrorKind::kUnavailable);
  CHECK(Contains(message, "node 'the_relu' (Relu, opset 13): unsupported: attribute 'mystery', which lockstep does "
                          "not read for Relu (it reads none)"));
  ModelBuilder s;
  s.Input("x", {2, 2}).Output("y", {2, 2}).Node("Softmax", {"x"}, {"y"}, {Attr::Int("axes", 1)});
  CHECK(Contains(LoadError(s.Build()).second, "attribute 'axes', which lockstep does not read for Softmax (it reads axis)"));

  ModelBuilder o;
  o.opset = 99;
  o.Input("x", {1}).Output("y", {1}).Node("Relu", {"x"}, {"y"});
  CHECK(LoadError(o.Build()).first == ErrorKind::kUnavailable);
}

TEST_CASE("an imported MLP is a module: the bits of the same ops by hand, names, gradients, checkpoints") {
  auto model = Load(Mlp().Build());
  const nn::NamedTensors params = model->NamedParameters();
  REQUIRE(params.size() == 4);
  CHECK(params[0].first == "fc1.weight");
  CHECK(params[3].first == "fc2.bias");
  CHECK_FALSE(model->training());  // imported for inference; Train() to fine-tune

  std::vector<float> xs(5 * 4);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i) * 0.1f - 0.7f;
  const Tensor x = Tensor::FromVector({5, 4}, xs);
  const Tensor y = (*model)(x);
  const Tensor expected = Linear(Relu(Linear(x, params[0].second, params[1].second)), params[2].second, params[3].second);
  CHECK(y.ToVector() == expected.ToVector());

  // Gradients reach the parameters by name.
  model->Train();
  CrossEntropy(y, Tensor::FromInt64({5}, {0, 1, 1, 0, 1})).Backward();
  for (const auto& named : model->NamedParameters()) CHECK_MESSAGE(named.second.grad().defined(), named.first);

  // A checkpoint round trip restores the values exactly.
  const std::string hash = ModelHash(*model);
  const std::vector<uint8_t> saved = EncodeModel(*model);
  auto other = Load(Mlp().Build());
  params[0].second.data_f32()[0] = 42.0f;
  CHECK(ModelHash(*model) != hash);
  LoadModelFromBytes(saved, "saved", *model);
  CHECK(ModelHash(*model) == hash);
  CHECK(ModelHash(*other) == hash);

  // Inputs are checked against the declaration.
  CHECK_THROWS_AS((*model)(Tensor::Zeros({5, 3})), Error);
  CHECK_THROWS_AS(model->Run({}), Error);
}

TEST_CASE("constants fold at load; shapes computed at run time follow the input") {
  ModelBuilder m;
  m.Input("x", {-1, 2, 3}).Output("y", {-1, 6});
  m.Initializer(testing::Int64Tensor("zero", {1}, {0}));
  m.Node("Constant", {}, {"minus_one"}, {Attr::Tensor("value", testing::Int64Tensor("c", {1}, {-1}))});
  m.Node("Shape", {"x"}, {"s"});
  m.Node("Gather", {"s", "zero"}, {"batch"});
  m.Node("Concat", {"batch", "minus_one"}, {"target"}, {Attr::Int("axis", 0)});
  m.Node("Reshape", {"x", "target"}, {"y"});
  auto model = Load(m.Build());
  CHECK(model->folded_nodes() == 1);  // the Constant
  for (int64_t n : {1, 4}) {
    const Tensor y = (*model)(Tensor::Ones({n, 2, 3}));
    CHECK(y.shape() == Shape{n, 6});
  }
}

TEST_CASE("BatchNormalization: running statistics are buffers; dropout drops only while training") {
  ModelBuilder m;
  m.Input("x", {-1, 2}).Output("y", {-1, 2});
  m.Initializer(testing::FloatTensor("bn.weight", {2}, {1.0f, 2.0f}))
      .Initializer(testing::FloatTensor("bn.bias", {2}, {0.0f, 0.5f}))
      .Initializer(testing::FloatTensor("bn.running_mean", {2}, {0.25f, -0.25f}))
      .Initializer(testing::FloatTensor("bn.running_var", {2}, {1.0f, 4.0f}));
  m.Node("BatchNormalization", {"x", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"}, {"n"});
  m.Node("Dropout", {"n"}, {"y"}, {}, "drop");
  onnx::LoadOptions options;
  options.seed = 7;
  auto model = Load(m.Build(), options);
  CHECK(model->NamedParameters().size() == 2);
  const nn::NamedTensors buffers = model->NamedBuffers();
  REQUIRE(buffers.size() == 2);
  CHECK(buffers[0].first == "bn.running_mean");

  const Tensor x = Tensor::FromVector({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  const std::vector<float> eval_a = (*model)(x).ToVector(), eval_b = (*model)(x).ToVector();
  CHECK(eval_a == eval_b);
  model->Train();
  const std::vector<float> train_a = (*model)(x).ToVector(), train_b = (*model)(x).ToVector();
  CHECK(train_a != train_b);  // the dropout stream advances
  CHECK(buffers[0].second.ToVector() != std::vector<float>{0.25f, -0.25f});  // running mean updated
  CHECK(DropoutOffsets(*model).count("dropout@drop") == 1);
}

TEST_CASE("MatMul broadcasts batch dimensions and vectors as NumPy does") {
  ModelBuilder m;
  m.Input("a", {2, 1, 3, 4}).Input("b", {5, 4, 2}).Output("y", {2, 5, 3, 2});
  m.Node("MatMul", {"a", "b"}, {"y"});
  auto model = Load(m.Build());
  std::vector<float> av(24), bv(40);
  for (size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>(i % 7) - 3.0f;
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<float>(i % 5) * 0.5f;
  const Tensor a = Tensor::FromVector({2, 1, 3, 4}, av), b = Tensor::FromVector({5, 4, 2}, bv);
  const Tensor y = model->Run({onnx::FloatValue(a), onnx::FloatValue(b)})[0].tensor;
  REQUIRE(y.shape() == Shape{2, 5, 3, 2});
  // Element [1, 3, 2, 1] = a[1, 0, 2, :] . b[3, :, 1], summed in increasing k.
  float sum = -0.0f;
  for (int k = 0; k < 4; ++k) sum = sum + av[(1 * 3 + 2) * 4 + k] * bv[(3 * 4 + k) * 2 + 1];
  CHECK(y.ToVector()[((1 * 5 + 3) * 3 + 2) * 2 + 1] == sum);
}


TEST_CASE("float16 and bfloat16: each result rounded once to the type; inputs rounded as a cast would") {
  for (const int32_t type : {10, 16}) {  // FLOAT16, BFLOAT16
    INFO("type " << type);
    ModelBuilder m;
    m.Input("a", {3}, type).Input("b", {3}, type).Output("y", {3}, type);
    m.Node("Add", {"a", "b"}, {"s"});
    m.Node("Mul", {"s", "b"}, {"y"});
    auto model = Load(m.Build());
    // float32 inputs are rounded to the type first (1 + 2^-12 is not a float16 or a bfloat16).
    const Tensor a = Tensor::FromVector({3}, {1.0f + 1.0f / 4096, 1000.0f, -3.0f});
    const Tensor b = Tensor::FromVector({3}, {3.0f, 0.33333334f, 70000.0f});
    const auto round = [type](const Tensor& t) { return type == 10 ? RoundToFloat16(t) : RoundToBFloat16(t); };
    const std::vector<onnx::Value> y = model->Run({model->InputValue(0, a), model->InputValue(1, b)});
    CHECK(y[0].elem == (type == 10 ? onnx::Elem::kFloat16 : onnx::Elem::kBFloat16));
    const Tensor ra = round(a), rb = round(b);
    CHECK(y[0].tensor.ToVector() == round(Mul(round(Add(ra, rb)), rb)).ToVector());
    if (type == 10) CHECK(__builtin_isinf(y[0].tensor.ToVector()[2]));  // 70000 is past float16's 65504
  }
}

TEST_CASE("narrow integers wrap as C's fixed-width types; uint64 compares unsigned") {
  ModelBuilder m;
  m.Input("a", {3}, 2).Input("b", {3}, 2).Output("y", {3}, 2).Output("z", {3}, 2);  // UINT8
  m.Node("Add", {"a", "b"}, {"y"});
  m.Node("Sub", {"a", "b"}, {"z"});
  auto model = Load(m.Build());
  const std::vector<onnx::Value> out = model->Run({model->InputValue(0, Tensor::FromInt64({3}, {200, 7, 0})),
                                                   model->InputValue(1, Tensor::FromInt64({3}, {100, 9, 255}))});
  CHECK(out[0].tensor.ToInt64Vector() == std::vector<int64_t>{44, 16, 255});
  CHECK(out[1].tensor.ToInt64Vector() == std::vector<int64_t>{100, 254, 1});
  CHECK_THROWS_WITH_AS(model->InputValue(0, Tensor::FromInt64({3}, {256, 0, 0})), doctest::Contains("outside its range"),
                       Error);

  ModelBuilder u;
  u.Input("a", {2}, 13).Input("b", {2}, 13).Output("y", {2}, 13);  // UINT64
  u.Node("Max", {"a", "b"}, {"y"});
  auto umax = Load(u.Build());
  const std::vector<onnx::Value> big = umax->Run({umax->InputValue(0, Tensor::FromInt64({2}, {-1, 5})),
                                                  umax->InputValue(1, Tensor::FromInt64({2}, {3, 4}))});
  CHECK(big[0].tensor.ToInt64Vector() == std::vector<int64_t>{-1, 5});  // 2^64 - 1 is the larger
}

TEST_CASE("ScatterElements with add applies duplicate updates in index order, with gradients") {
  ModelBuilder m;
  m.Input("data", {4}).Input("updates", {3}).Output("y", {4});
  m.Initializer(testing::Int64Tensor("idx", {3}, {2, 0, 2}));
  m.Node("ScatterElements", {"data", "idx", "updates"}, {"y"}, {Attr::String("reduction", "add")});
  auto model = Load(m.Build());
  Tensor data = Tensor::FromVector({4}, {1.0f, -0.0f, 1e8f, 5.0f}).RequiresGrad();
  Tensor updates = Tensor::FromVector({3}, {1.0f, 2.0f, -1e8f}).RequiresGrad();
  const std::vector<onnx::Value> y = model->Run({onnx::FloatValue(data), onnx::FloatValue(updates)});
  const std::vector<float> v = y[0].tensor.ToVector();
  CHECK(v[0] == 3.0f);
  CHECK(std::signbit(v[1]));  // untouched: -0 stays -0
  CHECK(v[2] == 0.0f);        // (1e8 + 1) - 1e8 in that order: 1e8 + 1 rounds to 1e8
  CHECK(v[3] == 5.0f);
  Sum(Mul(y[0].tensor, Tensor::FromVector({4}, {1.0f, 2.0f, 3.0f, 4.0f}))).Backward();
  CHECK(data.grad().ToVector() == std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f});
  CHECK(updates.grad().ToVector() == std::vector<float>{3.0f, 1.0f, 3.0f});
}

}  // namespace
}  // namespace lockstep
