// Data-parallel training (core/parallel) with ranks as threads (LocalGroup): every batch-dimension
// reduction, and whole training runs, give the single process's bits for every number of ranks,
// including shares that split a batch group between ranks.
#include <doctest/doctest.h>
#include <string.h>

#include <string>
#include <vector>

#include "core/checkpoint.h"
#include "core/data.h"
#include "core/error.h"
#include "core/models/lenet.h"
#include "core/nn/layers.h"
#include "core/ops.h"
#include "core/ops_internal.h"
#include "core/optim/optimizer.h"
#include "core/parallel/batch_reduce.h"
#include "core/parallel/data_parallel.h"
#include "core/parallel/local_group.h"
#include "core/parallel/pairwise_tree.h"
#include "core/text.h"
#include "core/train/classifier_trainer.h"
#include "core/train/gpt.h"
#include "core/train/mnist.h"
#include "simd/philox.h"

namespace lockstep {
namespace {

std::vector<float> Uniform(uint64_t stream, size_t n) {
  std::vector<float> v(n);
  simd::PhiloxUniform(11, stream, 0, v.data(), n);
  for (float& x : v) x = x * 2.0f - 1.0f;
  return v;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    uint32_t x, y;
    memcpy(&x, &a[i], 4);
    memcpy(&y, &b[i], 4);
    if (x != y) return false;
  }
  return true;
}

TEST_CASE("the pairwise tree finished from any rank's subtrees is the single-process tree") {
  for (int64_t groups = 1; groups <= 37; ++groups) {
    const int64_t inner = 3;
    const std::vector<float> partials = Uniform(static_cast<uint64_t>(groups), static_cast<size_t>(groups * inner));
    std::vector<float> whole = partials;
    CombinePairwise(whole.data(), groups, inner);
    whole.resize(static_cast<size_t>(inner));
    // Every way of cutting the groups into up to three contiguous ranges.
    for (int64_t a = 0; a <= groups; ++a) {
      for (int64_t b = a; b <= groups; ++b) {
        std::vector<parallel::GroupRange> nodes;
        std::vector<float> values;
        for (const auto& [first, end] : {std::make_pair(int64_t{0}, a), std::make_pair(a, b), std::make_pair(b, groups)}) {
          for (const parallel::GroupRange& node : parallel::CoverNodes(groups, first, end)) {
            std::vector<float> sub(partials.begin() + node.first * inner, partials.begin() + node.end * inner);
            CombinePairwise(sub.data(), node.end - node.first, inner);
            values.insert(values.end(), sub.begin(), sub.begin() + inner);
            nodes.push_back(node);
          }
        }
        int64_t root = 0;
        const std::vector<parallel::TreeStep> steps = parallel::CompletionSteps(groups, nodes, &root);
        values.resize(static_cast<size_t>((static_cast<int64_t>(nodes.size()) + static_cast<int64_t>(steps.size())) * inner));
        for (const parallel::TreeStep& s : steps) {
          for (int64_t i = 0; i < inner; ++i) values[s.out * inner + i] = values[s.left * inner + i] + values[s.right * inner + i];
        }
        const std::vector<float> got(values.begin() + root * inner, values.begin() + (root + 1) * inner);
        REQUIRE_MESSAGE(SameBits(got, whole), "groups " << groups << ", cuts " << a << " and " << b);
      }
    }
  }
  // Aligned halves are one subtree each: a rank holding groups 0-7 of 16 sends one sum.
  CHECK(parallel::CoverNodes(16, 0, 8).size() == 1);
  CHECK(parallel::CoverNodes(16, 8, 16).size() == 1);
  CHECK(parallel::CoverNodes(4, 3, 4).size() == 1);
}

TEST_CASE("batch shares: group boundaries when there are enough groups, every rank at least one sample") {
  CHECK(parallel::ShareBoundaries(100, 1) == std::vector<int64_t>{0, 100});
  CHECK(parallel::ShareBoundaries(100, 2) == std::vector<int64_t>{0, 64, 100});
  CHECK(parallel::ShareBoundaries(100, 3) == std::vector<int64_t>{0, 32, 64, 100});
  CHECK(parallel::ShareBoundaries(100, 4) == std::vector<int64_t>{0, 32, 64, 96, 100});
  CHECK(parallel::ShareBoundaries(4, 4) == std::vector<int64_t>{0, 1, 2, 3, 4});
  CHECK(parallel::ShareBoundaries(16, 2) == std::vector<int64_t>{0, 8, 16});
  CHECK_THROWS_AS(parallel::ShareBoundaries(3, 4), Error);
}

#ifndef __EMSCRIPTEN__  // ranks are threads

// The reductions of a batch of `samples` samples with `per_sample` rows each, on `ranks` ranks.
void CheckReductions(int ranks, int64_t samples, int64_t per_sample) {
  const int64_t rows = samples * per_sample, inner = 5, m = 3, n = 4;
  const std::vector<float> x = Uniform(1, static_cast<size_t>(rows * inner));
  const std::vector<float> a = Uniform(2, static_cast<size_t>(rows * m)), b = Uniform(3, static_cast<size_t>(rows * n));
  const int64_t group_rows = kBatchGroup * per_sample;
  const std::vector<float> sum = BatchGroupedSumRows(Tensor::FromVector({rows, inner}, x), group_rows).ToVector();
  std::vector<float> gemm(static_cast<size_t>(m * n));
  backend::GemmCall args;  // C [m, n] = A^T B over the rows; A stored [rows, m], B [rows, n]
  args.trans_a = 1;
  args.m = static_cast<size_t>(m); args.n = static_cast<size_t>(n); args.k = static_cast<size_t>(rows);
  args.a = a.data(); args.lda = static_cast<size_t>(m);
  args.b = b.data(); args.ldb = static_cast<size_t>(n);
  args.c = gemm.data(); args.ldc = static_cast<size_t>(n);
  GemmBatchGrouped(args, group_rows);
  std::vector<std::vector<float>> sums(static_cast<size_t>(ranks)), gemms(static_cast<size_t>(ranks));
  std::vector<std::vector<int64_t>> gathered(static_cast<size_t>(ranks));
  parallel::LocalGroup::Run(ranks, [&](int rank, parallel::Communicator& comm) {
    parallel::DataParallel dp(comm);
    const parallel::Share share = dp.ShareOf(samples);
    parallel::BatchScope batch(dp, samples);
    const int64_t first = share.begin * per_sample, count = share.count() * per_sample;
    const std::vector<float> mine(x.begin() + first * inner, x.begin() + (first + count) * inner);
    sums[static_cast<size_t>(rank)] = BatchGroupedSumRows(Tensor::FromVector({count, inner}, mine), group_rows).ToVector();
    // The same product with A stored [m, rows] (column slices) and B [n, rows] (transposed).
    std::vector<float> at(static_cast<size_t>(m * count)), bt(static_cast<size_t>(n * count));
    for (int64_t k = 0; k < count; ++k) {
      for (int64_t i = 0; i < m; ++i) at[i * count + k] = a[(first + k) * m + i];
      for (int64_t j = 0; j < n; ++j) bt[j * count + k] = b[(first + k) * n + j];
    }
    std::vector<float> c(static_cast<size_t>(m * n));
    backend::GemmCall g;
    g.trans_b = 1;
    g.m = args.m; g.n = args.n; g.k = static_cast<size_t>(count);
    g.a = at.data(); g.lda = static_cast<size_t>(count);
    g.b = bt.data(); g.ldb = static_cast<size_t>(count);
    g.c = c.data(); g.ldc = args.n;
    GemmBatchGrouped(g, group_rows);
    gemms[static_cast<size_t>(rank)] = c;
    std::vector<int64_t> ids(static_cast<size_t>(count));
    for (int64_t k = 0; k < count; ++k) ids[static_cast<size_t>(k)] = first + k;
    gathered[static_cast<size_t>(rank)] =
        parallel::GatherRowsOverRanks(*parallel::CurrentBatch(), Tensor::FromInt64({count}, ids)).ToInt64Vector();
  });
  for (int r = 0; r < ranks; ++r) {
    INFO(ranks << " ranks, " << samples << " samples of " << per_sample << " rows, rank " << r);
    CHECK(SameBits(sums[static_cast<size_t>(r)], sum));
    CHECK(SameBits(gemms[static_cast<size_t>(r)], gemm));
    REQUIRE(gathered[static_cast<size_t>(r)].size() == static_cast<size_t>(rows));
    for (int64_t k = 0; k < rows; ++k) CHECK(gathered[static_cast<size_t>(r)][static_cast<size_t>(k)] == k);
  }
}

TEST_CASE("batch reductions over 1-5 ranks give the single-process bits, split groups included") {
  for (int ranks = 1; ranks <= 5; ++ranks) {
    for (const int64_t samples : {5, 31, 40, 100, 200}) {
      for (const int64_t per_sample : {1, 3, 16}) CheckReductions(ranks, samples, per_sample);
    }
  }
}

TEST_CASE("a large result is finished in slices by each rank, with the same bits") {
  const int64_t samples = 128, inner = 40000;  // 160 KB per partial: finished in slices
  const std::vector<float> x = Uniform(4, static_cast<size_t>(samples * inner));
  const std::vector<float> sum = BatchGroupedSumRows(Tensor::FromVector({samples, inner}, x), kBatchGroup).ToVector();
  for (const int ranks : {3, 4}) {
    std::vector<std::vector<float>> got(static_cast<size_t>(ranks));
    std::vector<uint64_t> sent(static_cast<size_t>(ranks));
    parallel::LocalGroup::Run(ranks, [&](int rank, parallel::Communicator& comm) {
      parallel::DataParallel dp(comm);
      const parallel::Share share = dp.ShareOf(samples);
      parallel::BatchScope batch(dp, samples);
      const std::vector<float> mine(x.begin() + share.begin * inner, x.begin() + share.end * inner);
      got[static_cast<size_t>(rank)] = BatchGroupedSumRows(Tensor::FromVector({share.count(), inner}, mine), kBatchGroup).ToVector();
      sent[static_cast<size_t>(rank)] = dp.bytes_sent();
    });
    for (int r = 0; r < ranks; ++r) CHECK(SameBits(got[static_cast<size_t>(r)], sum));
    // What a ring all-reduce of the result sends per rank: 2 (R - 1) / R of it.
    const uint64_t ring = 2 * static_cast<uint64_t>(ranks - 1) * inner * 4 / static_cast<uint64_t>(ranks);
    for (int r = 0; r < ranks; ++r) CHECK(sent[static_cast<size_t>(r)] <= ring + 64);
  }
}

// Whole training runs: natively on x86-64 only (the emulated platforms' unit runs stay short; the
// reductions above, which they do run, are what a run is made of).
#if defined(__x86_64__)

// A small MNIST-shaped data set (class k bright in a row band) in memory.
Dataset SyntheticImages(int64_t count, uint64_t stream) {
  std::vector<float> images = Uniform(stream, static_cast<size_t>(count * 784));
  std::vector<int64_t> labels(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    labels[static_cast<size_t>(i)] = i % 10;
    for (int64_t p = 0; p < 784; ++p) images[i * 784 + p] = 0.3f * images[i * 784 + p] + ((p / 84) == i % 10 ? 0.7f : 0.0f);
  }
  return Dataset(Tensor::FromVector({count, 1, 28, 28}, images), Tensor::FromInt64({count}, labels));
}

TEST_CASE("LeNet-5 trained on 1-4 ranks ends on the single-process hashes") {
  const Dataset train = SyntheticImages(400, 21), test = SyntheticImages(120, 22);
  train::MnistConfig config;
  config.max_steps = 3;
  const train::MnistResult one = train::RunMnistOn(config, train, test, {});
  for (int ranks = 1; ranks <= 4; ++ranks) {
    std::vector<train::MnistResult> results(static_cast<size_t>(ranks));
    parallel::LocalGroup::Run(ranks, [&](int rank, parallel::Communicator& comm) {
      parallel::DataParallel dp(comm);
      results[static_cast<size_t>(rank)] = train::RunMnistOn(config, train, test, {});
    });
    for (int r = 0; r < ranks; ++r) {
      INFO(ranks << " ranks, rank " << r);
      CHECK(results[static_cast<size_t>(r)].trained_hash == one.trained_hash);
      CHECK(results[static_cast<size_t>(r)].logits_hash == one.logits_hash);
      CHECK(results[static_cast<size_t>(r)].final_loss == one.final_loss);
    }
  }
}

// Conv2d, BatchNorm2d, ReLU, Flatten, Linear, BatchNorm1d, ReLU, Linear: the batch statistics are
// reductions over the batch in the forward pass.
std::shared_ptr<nn::Sequential> BatchNormNet(uint64_t seed) {
  Generator init(seed, "init");
  auto model = std::make_shared<nn::Sequential>();
  model->Add(std::make_shared<nn::Conv2d>(1, 4, 5, init, /*stride=*/3))
      .Add(std::make_shared<nn::BatchNorm>(4, 4))
      .Add(std::make_shared<nn::ReLU>())
      .Add(std::make_shared<nn::Flatten>())
      .Add(std::make_shared<nn::Linear>(4 * 8 * 8, 32, true, init))
      .Add(std::make_shared<nn::BatchNorm>(32, 2))
      .Add(std::make_shared<nn::ReLU>())
      .Add(std::make_shared<nn::Linear>(32, 10, true, init));
  return model;
}

std::string TrainBatchNormNet(int64_t batch_size, int64_t steps) {
  const Dataset train = SyntheticImages(200, 23);
  auto model = BatchNormNet(5);
  optim::Adam optimizer(model->NamedParameters(), optim::AdamOptions{});
  train::ClassifierTrainer trainer(*model, optimizer, train, batch_size, 5);
  for (int64_t s = 0; s < steps; ++s) trainer.Step();
  return ModelHash(*model);  // parameters and running statistics
}

TEST_CASE("a BatchNorm network trained on 1-3 ranks ends on the single-process hash (statistics and all)") {
  for (const int64_t batch_size : {100, 40}) {  // 40 on 3 ranks: 13/13/14 samples, split groups
    const std::string one = TrainBatchNormNet(batch_size, 3);
    for (int ranks = 1; ranks <= 3; ++ranks) {
      std::vector<std::string> hashes(static_cast<size_t>(ranks));
      parallel::LocalGroup::Run(ranks, [&](int rank, parallel::Communicator& comm) {
        parallel::DataParallel dp(comm);
        hashes[static_cast<size_t>(rank)] = TrainBatchNormNet(batch_size, 3);
      });
      for (int r = 0; r < ranks; ++r) CHECK_MESSAGE(hashes[static_cast<size_t>(r)] == one, "batch " << batch_size << ", " << ranks << " ranks");
    }
  }
}

TEST_CASE("the GPT (embeddings, dropout, accumulation, estimates) on 1, 2, 3 and 4 ranks gives one process's losses and hash") {
  std::string text;
  for (int i = 0; i < 60; ++i) text += "the quick brown fox jumps over the lazy dog; pack my box with five dozen jugs.\n";
  const CharCorpus corpus = MakeCharCorpus(text);
  train::GptTrainConfig config = *train::GptPreset("tiny");
  config.steps = 3;
  config.eval_iters = 3;
  const train::GptResult one = train::RunGpt(config, corpus, {});
  for (int ranks = 1; ranks <= 4; ++ranks) {
    std::vector<train::GptResult> results(static_cast<size_t>(ranks));
    parallel::LocalGroup::Run(ranks, [&](int rank, parallel::Communicator& comm) {
      parallel::DataParallel dp(comm);
      results[static_cast<size_t>(rank)] = train::RunGpt(config, corpus, {});
    });
    for (int r = 0; r < ranks; ++r) {
      INFO(ranks << " ranks, rank " << r);
      const train::GptResult& got = results[static_cast<size_t>(r)];
      CHECK(got.trained_hash == one.trained_hash);
      CHECK(SameBits(got.losses, one.losses));
      REQUIRE(got.estimates.size() == one.estimates.size());
      CHECK(got.estimates.back().train == one.estimates.back().train);
      CHECK(got.estimates.back().val == one.estimates.back().val);
    }
  }
}

#endif  // __x86_64__

TEST_CASE("diverged replicas are named; a failure on rank 0 reaches every rank") {
  const int ranks = 3;
  std::vector<std::string> errors(static_cast<size_t>(ranks));
  try {
    parallel::LocalGroup::Run(ranks, [&](int rank, parallel::Communicator& comm) {
      parallel::DataParallel dp(comm);
      auto model = models::MakeLeNet5(1);
      dp.CheckReplicas(*model, nullptr, 7);  // equal: no error
      if (rank == 2) model->NamedParameters()[3].second.data_f32()[5] += 1.0f;
      dp.CheckReplicas(*model, nullptr, 8);
    });
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kInternal);
    CHECK(std::string(e.what()).find("after step 8 rank 2 of 3") != std::string::npos);
    CHECK(std::string(e.what()).find("'3.bias'") != std::string::npos);
  }
  parallel::LocalGroup::Run(ranks, [&](int rank, parallel::Communicator& comm) {
    parallel::DataParallel dp(comm);
    try {
      dp.OnWriter([] { throw Error("disk full", ErrorKind::kIo); });
    } catch (const Error& e) {
      errors[static_cast<size_t>(rank)] = std::string(ErrorKindName(e.kind())) + ": " + e.what();
    }
    const std::vector<uint8_t> bytes = dp.ReadOnWriter([&] { return std::vector<uint8_t>{1, 2, static_cast<uint8_t>(rank + 3)}; });
    CHECK(bytes == std::vector<uint8_t>{1, 2, 3});
  });
  CHECK(errors[0] == "io: disk full");
  CHECK(errors[1] == "io: rank 0 failed: disk full");
  CHECK(errors[2] == "io: rank 0 failed: disk full");
}

TEST_CASE("a sum over a whole data-parallel batch is refused, not silently wrong") {
  parallel::LocalGroup::Run(2, [&](int, parallel::Communicator& comm) {
    parallel::DataParallel dp(comm);
    const parallel::Share share = dp.ShareOf(10);
    parallel::BatchScope batch(dp, 10);
    Tensor x = Tensor::Ones({share.count(), 3}).RequiresGrad();
    CHECK_THROWS_WITH_AS(Mean(x), doctest::Contains("not batch-grouped"), Error);
    CHECK_THROWS_WITH_AS(MseLoss(x, Tensor::Zeros({share.count(), 3})), doctest::Contains("not batch-grouped"), Error);
    CHECK_THROWS_WITH_AS(CrossEntropy(x, Tensor::FromInt64({share.count()}, std::vector<int64_t>(5, 1)), Reduction::kMean,
                                      -100, 0.1f),
                         doctest::Contains("label smoothing"), Error);
  });
}

#endif  // __EMSCRIPTEN__

}  // namespace
}  // namespace lockstep
