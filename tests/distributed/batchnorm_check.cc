// A network with BatchNorm (whose batch statistics are reductions over the batch in the forward
// pass) trained on MNIST for a few steps; prints the hash of its parameters and running statistics.
// Run alone and under `mpirun -np N`, it must print the same hash (tests/distributed/run.sh).
//
// usage: lockstep_batchnorm_check --data DIR [--steps N] [--batch B]
#include <stdio.h>
#include <stdlib.h>

#include <memory>
#include <string>

#include "core/checkpoint.h"
#include "core/data.h"
#include "core/nn/layers.h"
#include "core/optim/optimizer.h"
#include "core/train/classifier_trainer.h"
#include "core/train/mnist.h"
#include "examples/common/data_parallel_job.h"

namespace {

// Conv2d, BatchNorm2d, ReLU, Flatten, Linear, BatchNorm1d, ReLU, Linear.
std::shared_ptr<lockstep::nn::Sequential> BatchNormNet(uint64_t seed) {
  using namespace lockstep::nn;
  lockstep::Generator init(seed, "init");
  auto model = std::make_shared<Sequential>();
  model->Add(std::make_shared<Conv2d>(1, 6, 5, init, /*stride=*/2))
      .Add(std::make_shared<BatchNorm>(6, 4))
      .Add(std::make_shared<ReLU>())
      .Add(std::make_shared<Flatten>())
      .Add(std::make_shared<Linear>(6 * 12 * 12, 64, true, init))
      .Add(std::make_shared<BatchNorm>(64, 2))
      .Add(std::make_shared<ReLU>())
      .Add(std::make_shared<Linear>(64, 10, true, init));
  return model;
}

}  // namespace

int main(int argc, char** argv) {
  std::string data;
  long steps = 5, batch = 100;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--data") data = argv[i + 1];
    else if (flag == "--steps") steps = atol(argv[i + 1]);
    else if (flag == "--batch") batch = atol(argv[i + 1]);
    else {
      fprintf(stderr, "usage: lockstep_batchnorm_check --data DIR [--steps N] [--batch B]\n");
      return 2;
    }
  }
  std::unique_ptr<lockstep::examples::DataParallelJob> job;
  try {
    job = std::make_unique<lockstep::examples::DataParallelJob>(&argc, &argv);
    lockstep::Dataset train = lockstep::LoadIdxDataset(data + "/train-images.idx", data + "/train-labels.idx");
    lockstep::train::NormalizeMnist(&train);
    auto model = BatchNormNet(3);
    lockstep::optim::Adam optimizer(model->NamedParameters(), lockstep::optim::AdamOptions{});
    lockstep::train::ClassifierTrainer trainer(*model, optimizer, train, batch, 3);
    float loss = 0;
    for (long s = 0; s < steps; ++s) loss = trainer.Step();
    printf("loss %.9g\nhash %s\n", loss, lockstep::ModelHash(*model).c_str());
  } catch (const std::exception& e) {
    if (job) job->Fail(1, "lockstep_batchnorm_check", e.what());
    fprintf(stderr, "lockstep_batchnorm_check: %s\n", e.what());
    return 1;
  }
  return 0;
}
