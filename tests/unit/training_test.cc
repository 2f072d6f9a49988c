// The training core end to end: modules, initialisation, optimizers, checkpoints, the data loader,
// and resuming from a training checkpoint giving the uninterrupted run's hash.
#include <doctest/doctest.h>
#include <stdio.h>
#include <unistd.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "core/io/files.h"
#include "core/checkpoint.h"
#include "core/data.h"
#include "core/error.h"
#include "core/idx.h"
#include "core/models/lenet.h"
#include "core/optim/optimizer.h"
#include "core/safetensors.h"
#include "core/sha256.h"
#include "core/text.h"
#include "core/train/gpt.h"
#include "core/train/mnist.h"
#include "simd/philox.h"

namespace lockstep {
namespace {

std::string TempDir() {
  char pattern[] = "/tmp/lockstep-test-XXXXXX";
  const char* dir = mkdtemp(pattern);
  REQUIRE(dir != nullptr);
  return dir;
}

// A small synthetic MNIST-shaped data set: class k images are bright in row band k.
void WriteSyntheticMnist(const std::string& dir, int64_t train, int64_t test) {
  for (const auto& [name, count] : {std::make_pair(std::string("train"), train), std::make_pair(std::string("test"), test)}) {
    std::vector<float> images(static_cast<size_t>(count * 28 * 28)), labels(static_cast<size_t>(count));
    std::vector<float> noise(images.size());
    simd::PhiloxUniform(3, name == "train" ? 1 : 2, 0, noise.data(), noise.size());
    for (int64_t i = 0; i < count; ++i) {
      labels[i] = static_cast<float>(i % 10);
      for (int64_t p = 0; p < 28 * 28; ++p) {
        const int64_t row = p / 28;
        images[i * 784 + p] = 0.3f * noise[i * 784 + p] + ((row / 3) == (i % 10) ? 0.7f : 0.0f);
      }
    }
    const auto image_bytes = EncodeIdx(kIdxFloat32, {count, 28, 28}, images);
    const auto label_bytes = EncodeIdx(kIdxUint8, {count}, labels);
    WriteFileAtomic(dir + "/" + name + "-images.idx", image_bytes);
    WriteFileAtomic(dir + "/" + name + "-labels.idx", label_bytes);
  }
}

TEST_CASE("LeNet-5 has PyTorch's parameter names and default initialisation bounds") {
  auto model = models::MakeLeNet5(7);
  std::vector<std::string> names;
  for (const auto& [name, t] : model->StateDict()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"0.bias", "0.weight", "11.bias", "11.weight", "3.bias", "3.weight",
                                          "7.bias", "7.weight", "9.bias", "9.weight"});
  // Linear(400, 120): |w| <= 1 / sqrt(400) = 0.05.
  const std::vector<float> w = model->StateDict()[7].second.ToVector();
  float largest = 0;
  for (float v : w) largest = std::max(largest, std::fabs(v));
  CHECK(largest <= 0.05f);
  CHECK(largest > 0.045f);
  // The same seed gives the same model; another seed does not.
  CHECK(ModelHash(*models::MakeLeNet5(7)) == ModelHash(*model));
  CHECK(ModelHash(*models::MakeLeNet5(8)) != ModelHash(*model));
}

TEST_CASE("a saved model's file hash is the model hash, and loading restores it") {
  const std::string dir = TempDir();
  auto model = models::MakeLeNet5(1);
  const std::string hash = SaveModel(dir + "/m.safetensors", *model);
  CHECK(hash == ModelHash(*model));
  const std::vector<uint8_t> bytes = ReadWholeFile(dir + "/m.safetensors", 1 << 24);
  CHECK(Sha256Hex(bytes.data(), bytes.size()) == hash);
  auto other = models::MakeLeNet5(2);
  LoadModel(dir + "/m.safetensors", *other);
  CHECK(ModelHash(*other) == hash);
  // A truncated file is refused with a message naming it, and the model is left unchanged.
  WriteFileAtomic(dir + "/bad.safetensors", std::vector<uint8_t>(bytes.begin(), bytes.begin() + bytes.size() / 2));
  auto untouched = models::MakeLeNet5(3);
  const std::string before = ModelHash(*untouched);
  try {
    LoadModel(dir + "/bad.safetensors", *untouched);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("bad.safetensors") != std::string::npos);
  }
  CHECK(ModelHash(*untouched) == before);
  CHECK_THROWS_AS(LoadModel(dir + "/missing.safetensors", *untouched), Error);
}

TEST_CASE("Adam and SGD follow their written update order") {
  Tensor p = Tensor::FromVector({2}, {1.0f, -2.0f}).RequiresGrad();
  p.SetGrad(Tensor::FromVector({2}, {0.5f, 0.25f}));
  optim::AdamOptions o;
  o.lr = 0.1f;
  optim::Adam adam({{"p", p}}, o);
  adam.Step();
  // Step 1: m = 0.1 g, v = 0.001 g^2, step_size = lr / 0.1, denom = sqrt(v) / sqrt(0.001) + eps:
  // the update is lr * g / (|g| + eps) = 0.1 * sign(g) up to rounding.
  CHECK(p.ToVector()[0] == doctest::Approx(0.9f).epsilon(1e-6));
  CHECK(p.ToVector()[1] == doctest::Approx(-2.1f).epsilon(1e-6));
  Tensor q = Tensor::FromVector({1}, {1.0f}).RequiresGrad();
  q.SetGrad(Tensor::FromVector({1}, {2.0f}));
  optim::SgdOptions s;
  s.lr = 0.5f;
  s.momentum = 0.9f;
  optim::Sgd sgd({{"q", q}}, s);
  sgd.Step();  // buf = g = 2; q = 1 - 0.5 * 2 = 0
  CHECK(q.ToVector()[0] == 0.0f);
  sgd.Step();  // buf = 0.9 * 2 + 2 = 3.8; q = 0 - 1.9
  CHECK(q.ToVector()[0] == -1.9f);
}

TEST_CASE("gradient clipping scales to the maximum norm") {
  Tensor a = Tensor::FromVector({2}, {0, 0}).RequiresGrad(), b = Tensor::FromVector({1}, {0}).RequiresGrad();
  a.SetGrad(Tensor::FromVector({2}, {3, 0}));
  b.SetGrad(Tensor::FromVector({1}, {4}));
  CHECK(optim::ClipGradNorm({a, b}, 1.0f) == 5.0f);
  CHECK(a.grad().ToVector()[0] == doctest::Approx(0.6f));
  CHECK(b.grad().ToVector()[0] == doctest::Approx(0.8f));
}

TEST_CASE("learning-rate schedules") {
  CHECK(optim::StepLr(0.1f, 5, 2, 0.5f) == 0.025f);
  CHECK(optim::CosineWithWarmup(1.0f, 0.1f, 0, 10, 100) == doctest::Approx(1.0f / 11));
  CHECK(optim::CosineWithWarmup(1.0f, 0.1f, 10, 10, 100) == doctest::Approx(1.0f));
  CHECK(optim::CosineWithWarmup(1.0f, 0.1f, 55, 10, 100) == doctest::Approx(0.55f));
  CHECK(optim::CosineWithWarmup(1.0f, 0.1f, 200, 10, 100) == 0.1f);
}

TEST_CASE("epoch permutations are permutations that depend only on seed and epoch") {
  const std::vector<int64_t> a = EpochPermutation(5, 1000, 0), b = EpochPermutation(5, 1000, 0);
  CHECK(a == b);
  CHECK(std::set<int64_t>(a.begin(), a.end()).size() == 1000);
  CHECK(EpochPermutation(5, 1000, 1) != a);
  CHECK(EpochPermutation(6, 1000, 0) != a);
}

TEST_CASE("resuming from a training checkpoint gives the uninterrupted run's hash") {
  const std::string dir = TempDir();
  WriteSyntheticMnist(dir, 400, 100);
  train::MnistConfig config;
  config.data_dir = dir;
  config.epochs = 2;  // 8 steps of batch 100
  config.seed = 11;
  float first_loss = 0;
  const train::MnistResult whole = train::RunMnist(config, [&](const train::MnistProgress& p) {
    if (p.step == 1) first_loss = p.loss;
  });
  CHECK(whole.steps == 8);

  // Checkpoints every 2 steps; a run stopped after step 5 left the state of step 4.
  train::MnistConfig first = config;
  first.max_steps = 5;
  first.checkpoint_every = 2;
  first.checkpoint_path = dir + "/state.safetensors";
  train::RunMnist(first, nullptr);
  train::MnistConfig resumed = config;
  resumed.resume_path = dir + "/state.safetensors";
  int64_t first_step = -1;
  const train::MnistResult rest = train::RunMnist(resumed, [&](const train::MnistProgress& p) {
    if (first_step < 0) first_step = p.step;
  });
  CHECK(first_step == 5);
  CHECK(rest.trained_hash == whole.trained_hash);
  CHECK(rest.logits_hash == whole.logits_hash);
  CHECK(whole.final_loss < first_loss);  // it learns

  // Another seed, another batch size or other data cannot resume it.
  train::MnistConfig other_seed = resumed;
  other_seed.seed = 12;
  CHECK_THROWS_WITH_AS(train::RunMnist(other_seed, nullptr), doctest::Contains("its seed is 11, this run's is 12"),
                       Error);
  train::MnistConfig other_batch = resumed;
  other_batch.batch_size = 50;
  CHECK_THROWS_WITH_AS(train::RunMnist(other_batch, nullptr), doctest::Contains("batch_size"), Error);
  const std::string other_dir = TempDir();
  WriteSyntheticMnist(other_dir, 300, 100);
  train::MnistConfig other_data = resumed;
  other_data.data_dir = other_dir;
  CHECK_THROWS_WITH_AS(train::RunMnist(other_data, nullptr), doctest::Contains("its data is"), Error);
  // A model checkpoint is not a training state.
  train::MnistConfig from_model = config;
  from_model.save_path = dir + "/model.safetensors";
  from_model.max_steps = 1;
  train::RunMnist(from_model, nullptr);
  train::MnistConfig wrong_file = config;
  wrong_file.resume_path = dir + "/model.safetensors";
  CHECK_THROWS_WITH_AS(train::RunMnist(wrong_file, nullptr), doctest::Contains("not a lockstep training state"), Error);
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

TEST_CASE("a GPT run checkpointed and resumed ends on the uninterrupted hash, dropout included") {
  const std::string dir = TempDir();
  std::string text;
  for (int i = 0; i < 400; ++i) text += "the quick brown fox " + std::to_string(i % 7) + "\n";
  const CharCorpus corpus = MakeCharCorpus(text);
  train::GptTrainConfig config = *train::GptPreset("tiny");
  config.steps = 6;
  config.eval_iters = 2;
  config.eval_interval = 2;
  const train::GptResult whole = train::RunGpt(config, corpus, nullptr);

  train::GptTrainConfig first = config;
  first.checkpoint_every = 3;
  first.checkpoint_path = dir + "/gpt.state";
  {
    train::GptTrainer trainer(first, corpus);
    for (int s = 0; s < 4; ++s) trainer.Step();  // interrupted after step 4: the state holds step 3
  }
  train::GptTrainConfig resumed = config;
  resumed.resume_path = dir + "/gpt.state";
  const train::GptResult rest = train::RunGpt(resumed, corpus, nullptr);
  CHECK(rest.trained_hash == whole.trained_hash);
  CHECK(rest.losses.back() == whole.losses.back());
  CHECK(rest.estimates.back().val == whole.estimates.back().val);

  train::GptTrainConfig other_seed = resumed;
  other_seed.seed = 2;
  CHECK_THROWS_WITH_AS(train::RunGpt(other_seed, corpus, nullptr), doctest::Contains("its seed is 1"), Error);
  train::GptTrainConfig other_steps = resumed;
  other_steps.steps = 8;
  CHECK_THROWS_WITH_AS(train::RunGpt(other_steps, corpus, nullptr), doctest::Contains("its steps is 6"), Error);
}

}  // namespace
}  // namespace lockstep
