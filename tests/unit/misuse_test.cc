// The C++ front door misused: every mistake is a lockstep::Error with a kind and a message naming
// what was expected and what was given, never an abort, a crash or a silently wrong number; and
// afterwards the library still works and earlier results are unchanged.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/autograd.h"
#include "core/backend/device.h"
#include "core/checkpoint.h"
#include "core/data.h"
#include "core/error.h"
#include "core/models/gpt.h"
#include "core/models/lenet.h"
#include "core/nn/layers.h"
#include "core/ops.h"
#include "core/optim/optimizer.h"
#include "core/train/classifier_trainer.h"
#include "core/train/evaluate.h"
#include "core/train/gpt.h"
#include "simd/philox.h"
#include "simd/thread_pool.h"

namespace lockstep {
namespace {

// The kind and message of the Error that f throws (a failed check when it throws none).
struct Thrown {
  ErrorKind kind = ErrorKind::kInternal;
  std::string message;
};
Thrown ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.kind(), e.what()};
  }
  FAIL("no lockstep::Error was thrown");
  return {};
}
bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

Tensor Uniform(const Shape& shape, uint64_t stream) {
  std::vector<float> v(static_cast<size_t>(NumElements(shape)));
  simd::PhiloxUniform(7, stream, 0, v.data(), v.size());
  return Tensor::FromVector(shape, v);
}

Dataset SmallData(int64_t n) {
  std::vector<int64_t> labels(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) labels[static_cast<size_t>(i)] = i % 10;
  return Dataset(Uniform({n, 1, 28, 28}, 1), Tensor::FromInt64({n}, labels));
}

// A model whose hash every case below must leave alone.
const std::string& ReferenceHash() {
  static const std::string hash = ModelHash(*models::MakeLeNet5(2));
  return hash;
}

TEST_CASE("misuse of tensors: dtypes, undefined tensors, sizes, views, reductions, powers") {
  const std::string before = ReferenceHash();
  // Float labels (the data set of a user who forgot .To(kInt64)): an Error, not an abort.
  Thrown t = ErrorOf([] { Dataset(Uniform({4, 1, 28, 28}, 1), Tensor::FromVector({4}, {0, 1, 2, 3})); });
  CHECK(t.kind == ErrorKind::kArgument);
  CHECK_MESSAGE(Contains(t.message, "labels must be an integer tensor"), t.message);
  t = ErrorOf([] { Tensor::Zeros({2}, DType::kInt64).data_f32(); });
  CHECK_MESSAGE(Contains(t.message, "expected a float32 tensor, got int64 [2]"), t.message);
  t = ErrorOf([] { Tensor().shape(); });
  CHECK_MESSAGE(Contains(t.message, "undefined"), t.message);
  t = ErrorOf([] { Add(Tensor(), Tensor::Ones({2})); });
  CHECK_MESSAGE(Contains(t.message, "undefined"), t.message);
  // Sizes beyond the address space: refused by arithmetic, before any allocation.
  t = ErrorOf([] { Tensor::Zeros({int64_t{1} << 62}); });
  CHECK(t.kind == ErrorKind::kResource);
  CHECK_MESSAGE(Contains(t.message, "larger than this platform can address"), t.message);
  t = ErrorOf([] { Tensor::Zeros({int64_t{1} << 40, int64_t{1} << 40}); });
  CHECK_MESSAGE(Contains(t.message, "too many elements"), t.message);
  // view() after a transpose refuses (reshape copies), as in PyTorch.
  const Tensor m = Uniform({3, 4}, 2);
  t = ErrorOf([&] { m.Transpose(0, 1).View({12}); });
  CHECK_MESSAGE(Contains(t.message, "use reshape()"), t.message);
  CHECK(m.Transpose(0, 1).Reshape({12}).ToVector()[1] == m.ToVector()[4]);
  CHECK(m.View({2, 6}).ToVector() == m.ToVector());
  CHECK(m.Slice(0, 1, 3).View({8}).ToVector()[0] == m.ToVector()[4]);  // a row slice is viewable
  // max over an empty dimension has no answer (argmax refused already).
  t = ErrorOf([] { Max(Tensor::Zeros({2, 0}), 1); });
  CHECK_MESSAGE(Contains(t.message, "is empty"), t.message);
  // Powers: 0.5 is computed, exponents without a correctly rounded kernel are refused.
  const Tensor x = Tensor::FromVector({3}, {4.0f, 9.0f, -0.0f});
  const std::vector<float> roots = Pow(x, 0.5).ToVector();
  CHECK(roots[0] == 2.0f);
  CHECK(roots[1] == 3.0f);
  CHECK((roots[2] == 0.0f && !std::signbit(roots[2])));  // pow(-0, 0.5) = +0, unlike sqrt
  CHECK(Pow(x, 2).ToVector()[1] == 81.0f);
  t = ErrorOf([&] { Pow(x, 2.9); });
  CHECK_MESSAGE(Contains(t.message, "exponent 2.9 is not supported"), t.message);
  ErrorOf([&] { Pow(x, std::nan("")); });
  CHECK(ReferenceHash() == before);
}

TEST_CASE("misuse of autograd: a second backward through a freed graph is refused, retain_graph allows it") {
  Tensor w = Uniform({3}, 3);
  w.RequiresGrad();
  const Tensor loss = Sum(Mul(w, w));
  loss.Backward();
  const std::vector<float> first = w.grad().ToVector();
  const Thrown t = ErrorOf([&] { loss.Backward(); });
  CHECK(t.kind == ErrorKind::kState);
  CHECK_MESSAGE(Contains(t.message, "second time"), t.message);
  CHECK(w.grad().ToVector() == first);  // nothing accumulated by the refused pass
  w.ZeroGrad();
  const Tensor again = Sum(Mul(w, w));
  again.Backward(Tensor(), /*retain_graph=*/true);
  again.Backward();
  const std::vector<float> twice = w.grad().ToVector();
  for (size_t i = 0; i < twice.size(); ++i) CHECK(twice[i] == 2.0f * first[i]);
}

TEST_CASE("misuse of training: another model's optimizer, bad options, labels, NaN losses, empty sets") {
  const std::string before = ReferenceHash();
  auto model = models::MakeLeNet5(3);
  auto other = models::MakeLeNet5(4);
  const Dataset data = SmallData(20);
  optim::Adam wrong(other->NamedParameters(), optim::AdamOptions{});
  Thrown t = ErrorOf([&] { train::ClassifierTrainer(*model, wrong, data, 10, 1); });
  CHECK(t.kind == ErrorKind::kState);
  CHECK_MESSAGE(Contains(t.message, "created for another model"), t.message);
  optim::SgdOptions sgd;
  sgd.momentum = -1;
  CHECK(Contains(ErrorOf([&] { optim::Sgd(model->NamedParameters(), sgd); }).message, "momentum"));
  sgd.momentum = 0;
  sgd.weight_decay = -5;
  CHECK(Contains(ErrorOf([&] { optim::Sgd(model->NamedParameters(), sgd); }).message, "weight_decay"));
  optim::AdamWOptions adamw;
  adamw.lr = std::nanf("");
  CHECK(Contains(ErrorOf([&] { optim::AdamW(model->NamedParameters(), adamw); }).message, "lr"));

  // Evaluation: a label the model cannot predict, and nothing to evaluate, are errors.
  const Dataset bad_labels(Uniform({3, 1, 28, 28}, 5), Tensor::FromInt64({3}, {1, 200, 3}));
  t = ErrorOf([&] { train::Evaluate(*model, bad_labels, 100); });
  CHECK_MESSAGE(Contains(t.message, "label of example 1 is 200, outside the model's 10 classes"), t.message);
  const Dataset empty(Tensor::Zeros({0, 1, 28, 28}), Tensor::Zeros({0}, DType::kInt64));
  CHECK(Contains(ErrorOf([&] { train::Evaluate(*model, empty, 100); }).message, "empty"));

  // NaN data: training stops before the update, the model unchanged; allowed, it goes on.
  std::vector<float> pixels(20 * 784, 0.5f);
  pixels[100] = std::nanf("");
  std::vector<int64_t> labels(20, 3);
  const Dataset nan_data(Tensor::FromVector({20, 1, 28, 28}, pixels), Tensor::FromInt64({20}, labels));
  optim::Adam adam(model->NamedParameters(), optim::AdamOptions{});
  train::ClassifierTrainer trainer(*model, adam, nan_data, 20, 1);
  const std::string untouched = ModelHash(*model);
  t = ErrorOf([&] { trainer.Step(); });
  CHECK(t.kind == ErrorKind::kState);
  CHECK_MESSAGE(Contains(t.message, "training stopped at step 1"), t.message);
  CHECK(ModelHash(*model) == untouched);
  trainer.set_allow_nonfinite_loss(true);
  CHECK(std::isnan(trainer.Step()));
  CHECK(ReferenceHash() == before);
}

TEST_CASE("misuse of sampling: non-finite logits are refused instead of emitting token 0 forever") {
  train::GptTrainConfig config = *train::GptPreset("tiny");
  config.model.vocab_size = 5;
  models::Gpt gpt(config.model, 1);
  train::SampleOptions options;
  options.max_new_tokens = 3;
  options.temperature = 1e-40f;
  const Thrown t = ErrorOf([&] { train::SampleGpt(gpt, {1, 2}, options); });
  CHECK(t.kind == ErrorKind::kState);
  CHECK_MESSAGE(Contains(t.message, "not finite"), t.message);
  options.temperature = 1.0f;
  CHECK(train::SampleGpt(gpt, {1, 2}, options).size() == 3);
}

TEST_CASE("two dropout layers need their own streams: shared generators draw the same masks") {
  const Tensor x = Tensor::Ones({1000});
  nn::Dropout a(0.5f, Generator(1, "dropout/0")), b(0.5f, Generator(1, "dropout/1"));
  CHECK(a(x).ToVector() != b(x).ToVector());
  nn::Dropout c(0.5f, Generator(1, "dropout/0"));
  nn::Dropout d(0.5f, Generator(1, "dropout/0"));
  CHECK(c(x).ToVector() == d(x).ToVector());  // what the JavaScript default used to do
}

#if !defined(__EMSCRIPTEN__)
// The hash of a LeNet-5 (seed 5) after `steps` Adam steps on SmallData.
std::string TrainedHash(int steps) {
  auto model = models::MakeLeNet5(5);
  const Dataset data = SmallData(40);
  optim::Adam adam(model->NamedParameters(), optim::AdamOptions{});
  train::ClassifierTrainer trainer(*model, adam, data, 20, 9);
  for (int s = 0; s < steps; ++s) trainer.Step();
  return ModelHash(*model);
}

TEST_CASE("the thread count changes from another thread while three threads train: same hashes, no hang") {
  const std::string want = TrainedHash(6);
  std::atomic<bool> done{false};
  std::thread changer([&] {
    size_t n = 1;
    while (!done.load()) {
      simd::SetDefaultThreadCount(n);
      n = n % 4 + 1;
      std::this_thread::yield();
    }
  });
  std::vector<std::string> got(3);
  std::vector<std::thread> trainers;
  for (size_t i = 0; i < got.size(); ++i) trainers.emplace_back([&, i] { got[i] = TrainedHash(6); });
  for (std::thread& t : trainers) t.join();
  done = true;
  changer.join();
  simd::SetDefaultThreadCount(2);
  for (const std::string& h : got) CHECK(h == want);
}

TEST_CASE("the current device belongs to each thread") {
  CHECK(CurrentDevice() == Device::Cpu());
  std::thread other([] {
    // A failed switch leaves this thread on the CPU; the main thread is never touched either way.
    try {
      SetCurrentDevice(Device::Cuda(7));
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::kUnavailable);
    }
    CHECK(CurrentDevice() == Device::Cpu());
  });
  other.join();
  CHECK(CurrentDevice() == Device::Cpu());
}
#endif

}  // namespace
}  // namespace lockstep
