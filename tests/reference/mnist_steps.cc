// lockstep_mnist_steps: the first 20 steps of the MNIST reference run (core/train/mnist.cc), with
// everything PyTorch needs to replay them (tests/reference/torch_mnist_steps.py).
//
//   lockstep_mnist_steps [--data DIR] [--steps N] OUT_DIR
//
// LeNet-5 (models::MakeLeNet5, seed 1), Adam (lr 1e-3, defaults otherwise), cross-entropy (mean),
// the training loader of RunMnist (batch 100, shuffle on, drop_last, seed 1), inputs normalised
// as (x - 0.1307) * (1 / 0.3081) in float32. Writes to OUT_DIR (canonical safetensors files,
// PyTorch state-dict names):
//   initial.safetensors  the model before training
//   after20.safetensors  the model after the last step (after<N> with --steps N)
//   steps.safetensors    per step s = 01..N: "x.s" [100,1,28,28] the normalised batch, "y.s" [100]
//                        the labels, "params.s/NAME" the parameters after step s; "grad.01/NAME"
//                        the gradients of step 1 (same parameters and data in both libraries:
//                        the purest comparison of the backward pass); "loss" [N] each step's loss
//                        (before its update) and "indices" [N, 100] the data-set rows of each batch.
// The default data folder is .deps/data/mnist (train-images.idx, train-labels.idx).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <memory>
#include <string>
#include <vector>

#include "core/io/files.h"
#include "core/autograd.h"
#include "core/checkpoint.h"
#include "core/data.h"
#include "core/error.h"
#include "core/fp_environment.h"
#include "core/models/lenet.h"
#include "core/ops.h"
#include "core/optim/optimizer.h"
#include "core/safetensors.h"
#include "core/trace/trace.h"
#include "tests/reference/tensor_record.h"

namespace {

using namespace lockstep;

int Run(const std::string& data_dir, int64_t steps, const std::string& out_dir, const trace::Options& trace_options) {
  RequireContractFloatingPoint();
  const uint64_t seed = 1;
  const int64_t batch_size = 100;
  Dataset train_set = LoadIdxDataset(data_dir + "/train-images.idx", data_dir + "/train-labels.idx");
  train_set.SetNormalization(-0.1307f, 1.0f / 0.3081f);  // exactly as RunMnist normalises
  auto model = models::MakeLeNet5(seed);
  const std::string initial_hash = SaveModel(out_dir + "/initial.safetensors", *model);
  optim::AdamOptions adam;
  adam.lr = 1e-3f;
  optim::Adam optimizer(model->NamedParameters(), adam);
  DataLoader loader(train_set, batch_size, /*shuffle=*/true, /*drop_last=*/true, seed);
  LOCKSTEP_REQUIRE(steps <= loader.batches_per_epoch(),
                   "mnist_steps: " << steps << " steps need more than one epoch of " << loader.batches_per_epoch());
  const std::vector<int64_t> order = EpochPermutation(seed, train_set.size(), 0);

  SafetensorsFile file;
  file.metadata["what"] = "lockstep_mnist_steps";
  std::vector<float> losses;
  std::vector<int64_t> indices;
  model->Train();
  // An op-level trace of the steps (docs/diagnostics.md), to diff against tools/torch_trace.
  std::unique_ptr<trace::Session> tracing;
  if (!trace_options.path.empty()) {
    trace::Options options = trace_options;
    options.source = "lockstep_mnist_steps " + std::to_string(steps) + " steps";
    tracing = std::make_unique<trace::Session>(options, model.get());
  }
  for (int64_t step = 0; step < steps; ++step) {
    Tensor x, y;
    loader.GetBatch(0, step, &x, &y);
    trace::BeginStep(step + 1);
    const std::string s = TwoDigits(step + 1);
    file.tensors.push_back(Record("x." + s, x));
    file.tensors.push_back(Record("y." + s, y));
    indices.insert(indices.end(), order.begin() + step * batch_size, order.begin() + (step + 1) * batch_size);
    optimizer.ZeroGrad();
    const Tensor loss = CrossEntropy((*model)(x), y);
    loss.Backward();
    if (step == 0) {
      for (const auto& [name, p] : model->NamedParameters()) file.tensors.push_back(Record("grad.01/" + name, p.grad()));
    }
    optimizer.Step();
    losses.push_back(loss.item());
    for (const auto& [name, p] : model->NamedParameters()) file.tensors.push_back(Record("params." + s + "/" + name, p));
    printf("step %2lld  loss %.9g\n", static_cast<long long>(step + 1), static_cast<double>(losses.back()));
  }
  file.tensors.push_back(Record("loss", Tensor::FromVector({steps}, losses)));
  file.tensors.push_back(Record("indices", Tensor::FromInt64({steps, batch_size}, indices)));
  if (tracing) tracing->Finish();
  WriteFileAtomic(out_dir + "/steps.safetensors", EncodeSafetensors(file));
  const std::string final_hash = SaveModel(out_dir + "/after" + std::to_string(steps) + ".safetensors", *model);
  printf("initial %s\nafter%lld %s\n", initial_hash.c_str(), static_cast<long long>(steps), final_hash.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string data_dir = ".deps/data/mnist", out_dir;
  trace::Options trace_options;
  int64_t steps = 20;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--data") == 0 && i + 1 < argc) {
      data_dir = argv[++i];
    } else if (strcmp(argv[i], "--trace") == 0 && i + 1 < argc) {
      trace_options.path = argv[++i];
    } else if (strcmp(argv[i], "--trace-values") == 0 && i + 1 < argc) {
      trace_options.values_path = argv[++i];
    } else if (strcmp(argv[i], "--trace-steps") == 0 && i + 1 < argc) {
      // A-B or N
      const std::string range = argv[++i];
      const size_t dash = range.find('-');
      trace_options.values_from = atoll(range.substr(0, dash).c_str());
      trace_options.values_to = atoll(dash == std::string::npos ? range.c_str() : range.substr(dash + 1).c_str());
    } else if (strcmp(argv[i], "--trace-match") == 0 && i + 1 < argc) {
      trace_options.values_pattern = argv[++i];
    } else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
      steps = atoll(argv[++i]);
    } else if (out_dir.empty() && argv[i][0] != '-') {
      out_dir = argv[i];
    } else {
      out_dir.clear();
      break;
    }
  }
  if (out_dir.empty() || steps < 1) {
    fprintf(stderr, "usage: lockstep_mnist_steps [--data DIR] [--steps N] [--trace FILE [--trace-values FILE\n"
                    "                            --trace-steps A-B --trace-match TEXT]] OUT_DIR\n");
    return 2;
  }
  try {
    return Run(data_dir, steps, out_dir, trace_options);
  } catch (const std::exception& e) {
    fprintf(stderr, "lockstep_mnist_steps: %s\n", e.what());
    return 1;
  }
}
