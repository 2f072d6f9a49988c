// Training receipts (core/receipt/): the state tree, the chain, the file format and its refusals,
// and the threaded step hasher giving the digests computed in place.
#include <doctest/doctest.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/models/lenet.h"
#include "core/nn/layers.h"
#include "core/nn/init.h"
#include "core/ops.h"
#include "core/optim/optimizer.h"
#include "core/random.h"
#include "core/receipt/receipt.h"
#include "core/receipt/state_hash.h"
#include "core/receipt/step_hasher.h"
#include "simd/thread_pool.h"

namespace lockstep {
namespace receipt {
namespace {

Digest D(uint8_t fill) {
  Digest d;
  d.fill(fill);
  return d;
}

std::string ErrorOf(const std::string& text) {
  try {
    ParseReceipt(text, "r");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("the state tree: leaves bind name, type, shape and bytes; the root does not depend on order") {
  const Tensor a = Tensor::FromVector({2, 2}, {1, 2, 3, 4});
  const Digest leaf = TensorLeaf("w", a);
  CHECK(leaf == TensorLeaf("w", Tensor::FromVector({2, 2}, {1, 2, 3, 4})));
  CHECK(leaf != TensorLeaf("v", a));                                     // the name
  CHECK(leaf != TensorLeaf("w", Tensor::FromVector({4}, {1, 2, 3, 4})));  // the shape
  CHECK(leaf != TensorLeaf("w", Tensor::FromVector({2, 2}, {1, 2, 3, -4})));
  CHECK(leaf != TensorLeaf("w", Tensor::FromInt64({2, 2}, {1, 2, 3, 4})));  // the type
  CHECK(IntegerLeaf("n", 1) != IntegerLeaf("n", 2));
  const std::vector<std::pair<std::string, Digest>> leaves = {{"a", D(1)}, {"b", D(2)}, {"c", D(3)}};
  CHECK(MerkleRoot(leaves) == MerkleRoot({{"c", D(3)}, {"a", D(1)}, {"b", D(2)}}));
  CHECK(MerkleRoot(leaves) != MerkleRoot({{"a", D(1)}, {"b", D(2)}, {"c", D(4)}}));
  CHECK(MerkleRoot({{"a", D(1)}}) == D(1));  // one leaf is its own root
  // Three leaves: (a, b) hashed, c moves up; the root is node(node(a, b), c).
  auto node = [](const Digest& l, const Digest& r) {
    uint8_t bytes[65] = {1};
    std::copy(l.begin(), l.end(), bytes + 1);
    std::copy(r.begin(), r.end(), bytes + 33);
    return Sha256Digest(bytes, sizeof bytes);
  };
  CHECK(MerkleRoot(leaves) == node(node(D(1), D(2)), D(3)));
  CHECK_THROWS_AS(MerkleRoot({{"a", D(1)}, {"a", D(2)}}), Error);
  Digest parsed;
  CHECK(ParseHex(Hex(leaf), &parsed));
  CHECK(parsed == leaf);
  CHECK_FALSE(ParseHex("12", &parsed));
  CHECK_FALSE(ParseHex(std::string(64, 'g'), &parsed));
}

TEST_CASE("a receipt is written, read back whole, and refused when altered") {
  char dir[] = "/tmp/lockstep-receipt-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string path = std::string(dir) + "/run.receipt";
  auto write = [&](Store& store) {
    Writer w(store, path, "mnist", {{"seed", "2"}, {"model", "lenet5"}}, "abc", D(9));
    w.Checkpoint(0, w.CheckpointFile(0), "f0");
    for (int64_t k = 1; k <= 5; ++k) w.Step(k, D(static_cast<uint8_t>(k)), D(static_cast<uint8_t>(100 + k)));
    w.Checkpoint(5, w.CheckpointFile(5), "f5");
    w.Finish("trained");
    CHECK_THROWS_AS(w.Step(7, D(0), D(0)), Error);  // steps follow one another
  };
  write(FileStore());
  const Receipt r = ReadReceipt(path);
  CHECK(r.task == "mnist");
  CHECK(r.identity.at("seed") == "2");
  CHECK(r.last_step() == 5);
  CHECK(r.ended);
  CHECK(r.trained_model == "trained");
  CHECK(r.StateAt(0) == D(9));
  CHECK(r.StateAt(3) == D(103));
  Digest chain = r.initial_chain;
  for (int64_t k = 1; k <= 5; ++k) chain = ChainLink(chain, D(static_cast<uint8_t>(100 + k)), D(static_cast<uint8_t>(k)));
  CHECK(r.ChainAt(5) == chain);
  REQUIRE(r.checkpoints.size() == 2);
  CHECK(r.CheckpointAtOrBefore(4)->step == 0);
  CHECK(r.CheckpointAtOrBefore(5)->step == 5);
  CHECK(r.CheckpointPath(r.checkpoints[1]) == path + ".5.state");

  FILE* f = fopen(path.c_str(), "rb");
  std::string text(4096, '\0');
  text.resize(fread(&text[0], 1, text.size(), f));
  fclose(f);
  CHECK(ErrorOf(text).empty());
  // In memory (the npm package): the same bytes, read back the same way; a missing name is an I/O error.
  MemoryStore memory;
  write(memory);
  CHECK(std::string(memory.files.at(path).begin(), memory.files.at(path).end()) == text);
  CHECK(ReadReceipt(path, memory).ChainAt(5) == chain);
  try {
    ReadReceipt(path + ".other", memory);
    CHECK(false);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kIo);
  }
  // Any altered digit of a step is a broken chain, named by its line.
  const size_t state = text.find("\"state\":\"", text.find("{\"step\":3,")) + 9;
  std::string altered = text;
  altered[state] = altered[state] == '0' ? '1' : '0';
  CHECK(ErrorOf(altered).find("line 5: the chain hash of step 3 does not follow") != std::string::npos);
  // The header is chained too: another seed breaks step 1's link.
  std::string header = text;
  header.replace(header.find("\"2\""), 3, "\"3\"");
  CHECK(ErrorOf(header).find("step 1 does not follow") != std::string::npos);
  CHECK(ErrorOf(text.substr(0, text.size() - 5)).find("truncated") != std::string::npos);
  CHECK(ErrorOf("hello\n").find("not a lockstep receipt") != std::string::npos);
  CHECK(ErrorOf("").find("not a lockstep receipt") != std::string::npos);
  std::string version = text;
  const std::string version_field = "{\"lockstep_receipt\":" + std::to_string(kFormatVersion) + ",";
  version.replace(version.find(version_field), version_field.size(), "{\"lockstep_receipt\":7,");
  CHECK(ErrorOf(version).find("format version 7") != std::string::npos);
  std::string skipped = text;
  skipped.replace(skipped.find("{\"step\":3,"), 10, "{\"step\":4,");
  CHECK(ErrorOf(skipped).find("step 4 follows step 2") != std::string::npos);
  std::string escape = text;
  escape.replace(escape.find("run.receipt.5.state"), 19, "../../etc/passwd.st");
  CHECK(ErrorOf(escape).find("a name beside the receipt") != std::string::npos);
  std::string end = text;
  end.replace(end.find("{\"end\":5"), 8, "{\"end\":4");
  CHECK(ErrorOf(end).find("the end line says 4 steps") != std::string::npos);
  for (const char* name : {"/run.receipt", "/run.receipt.0.state", "/run.receipt.5.state"}) remove((dir + std::string(name)).c_str());
  rmdir(dir);
}

// A model whose forward pass writes state of its own (batch normalisation's running statistics).
std::shared_ptr<nn::Module> WithBatchNorm(uint64_t seed) {
  Generator g(seed, "receipt-test");
  auto model = std::make_shared<nn::Sequential>();
  model->Add(std::make_shared<nn::Flatten>());
  model->Add(std::make_shared<nn::Linear>(784, 16, true, g));
  model->Add(std::make_shared<nn::BatchNorm>(16, 2));
  model->Add(std::make_shared<nn::ReLU>());
  model->Add(std::make_shared<nn::Linear>(16, 10, true, g));
  return model;
}

// With a core to spare the hasher has a thread of its own; with the pool on every core, the pool's
// workers hash between kernels (simd::IdleWork): the same digests either way. Given the optimizer
// (a closed loop), it reads the parameters and Adam's moments in place until the next update, and
// copies what is not hashed by then; the buffers, rewritten by the forward pass, it copies at once.
TEST_CASE("the step hasher gives, in step order, the digests computed in place") {
  const size_t restore = simd::DefaultThreadCount();
  const unsigned cores = std::thread::hardware_concurrency();
  for (size_t threads : {size_t{1}, size_t{cores < 2 ? 2 : cores}}) {
    for (bool given_updater : {false, true}) {
      for (bool batch_norm : {false, true}) {
        CAPTURE(threads);
        CAPTURE(given_updater);
        CAPTURE(batch_norm);
        simd::SetDefaultThreadCount(threads);
        std::shared_ptr<nn::Module> model = batch_norm ? WithBatchNorm(5) : models::MakeLeNet5(5);
        optim::Adam adam(model->NamedParameters(), optim::AdamOptions{});
        Generator g(3, "receipt-test");
        std::vector<std::pair<int64_t, Digest>> threaded, in_place;
        {
          StepHasher hasher([&](int64_t step, const Digest& batch, const Digest& state) {
            threaded.emplace_back(step, ChainLink(D(0), state, batch));
          }, /*background=*/true, given_updater ? &adam : nullptr);
          for (int64_t step = 1; step <= 6; ++step) {
            Tensor x = Tensor::Zeros({4, 1, 28, 28});
            nn::NormalInit(x, 0.0f, 1.0f, g);
            const Tensor y = Tensor::FromInt64({4}, {1, 2, 3, step % 10});
            adam.ZeroGrad();
            CrossEntropy((*model)(x), y).Backward();
            adam.Step();
            hasher.Submit(step, *model, adam, {{"dropout@x", static_cast<uint64_t>(step)}}, x, y);
            in_place.emplace_back(step, ChainLink(D(0), StateRoot(*model, adam, {{"dropout@x", static_cast<uint64_t>(step)}}),
                                                  BatchDigest(x, y)));
          }
          hasher.Drain();
        }
        REQUIRE(threaded.size() == in_place.size());
        for (size_t i = 0; i < threaded.size(); ++i) {
          CHECK(threaded[i].first == static_cast<int64_t>(i) + 1);
          CHECK(threaded[i].second == in_place[i].second);
        }
        CHECK(in_place[0].second != in_place[1].second);
      }
    }
  }
  simd::SetDefaultThreadCount(restore);
}

// A module whose state gains a tensor when asked: what a closed training loop must not do.
struct Growing : nn::Module {
  Growing() { RegisterParameter("w", Tensor::Zeros({2})); }
  void Grow() { RegisterBuffer("extra", Tensor::Zeros({1})); }
  Tensor Forward(const Tensor& x) override { return x; }
  std::string Name() const override { return "Growing"; }
};

// Given the optimizer, the hasher keeps the state's list of tensors between steps and checks it
// now and then: a loop that changed the tensors anyway is stopped, not hashed stale for long.
TEST_CASE("a closed loop whose state's tensors change is stopped by the step hasher") {
  for (bool given_updater : {false, true}) {
    CAPTURE(given_updater);
    Growing model;
    optim::Adam adam(model.NamedParameters(), optim::AdamOptions{});
    int64_t reported = 0;
    StepHasher hasher([&](int64_t, const Digest&, const Digest&) { ++reported; }, /*background=*/true,
                      given_updater ? &adam : nullptr);
    const Tensor x = Tensor::Zeros({1}), y = Tensor::FromInt64({1}, {0});
    hasher.Submit(1, model, adam, {}, x, y);
    model.Grow();
    bool stopped = false;
    for (int64_t step = 2; step <= 200 && !stopped; ++step) {
      try {
        hasher.Submit(step, model, adam, {}, x, y);
      } catch (const Error& e) {
        stopped = true;
        CHECK(std::string(e.what()).find("changed within a closed training loop") != std::string::npos);
      }
    }
    CHECK(stopped == given_updater);  // an open loop's state is taken anew each step
    if (!given_updater) {
      hasher.Drain();
      CHECK(reported == 200);
    }
  }
}

}  // namespace
}  // namespace receipt
}  // namespace lockstep
