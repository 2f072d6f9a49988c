#include "core/train/mnist.h"

#include "core/autograd.h"
#include "core/checkpoint.h"
#include "core/data.h"
#include "core/error.h"
#include "core/fp_environment.h"
#include "core/models/lenet.h"
#include "core/ops.h"
#include "core/optim/optimizer.h"
#include "core/train/classifier_trainer.h"
#include "core/train/evaluate.h"

namespace lockstep {
namespace train {

void NormalizeMnist(Dataset* data) { data->SetNormalization(-0.1307f, 1.0f / 0.3081f); }

MnistResult RunMnist(const MnistConfig& config, const MnistProgressFn& progress) {
  RequireContractFloatingPoint();
  Dataset train_set = LoadIdxDataset(config.data_dir + "/train-images.idx", config.data_dir + "/train-labels.idx");
  Dataset test_set = LoadIdxDataset(config.data_dir + "/test-images.idx", config.data_dir + "/test-labels.idx");
  if (config.normalize) {
    NormalizeMnist(&train_set);
    NormalizeMnist(&test_set);
  }
  return RunMnistOn(config, train_set, test_set, progress);
}

MnistResult RunMnistOn(const MnistConfig& config, const Dataset& train_set, const Dataset& test_set,
                       const MnistProgressFn& progress) {
  RequireContractFloatingPoint();
  for (const Dataset* d : {&train_set, &test_set}) {
    LOCKSTEP_REQUIRE(d->example_shape() == Shape({1, 28, 28}),
                     "mnist: expected images of shape [N, 1, 28, 28], got " << ShapeString(d->BatchShape(d->size())));
  }
  auto model = models::MakeLeNet5(config.seed);
  MnistResult result;
  result.initial_hash = ModelHash(*model);
  optim::AdamOptions adam;
  adam.lr = config.lr;
  optim::Adam optimizer(model->NamedParameters(), adam);
  ClassifierTrainer trainer(*model, optimizer, train_set, config.batch_size, config.seed);

  const int64_t per_epoch = trainer.steps_per_epoch();
  int64_t total = per_epoch * config.epochs;
  if (config.max_steps >= 0 && config.max_steps < total) total = config.max_steps;
  if (!config.resume_path.empty()) {
    const TrainingPosition position = LoadTrainingState(config.resume_path, *model, optimizer);
    trainer.Seek(position.epoch, position.batch);
  }
  while (trainer.steps_done() < total) {
    const int64_t epoch = trainer.epoch();
    if (config.lr_step_epochs > 0) optimizer.set_lr(optim::StepLr(config.lr, epoch, config.lr_step_epochs, config.lr_gamma));
    result.final_loss = trainer.Step();
    result.steps = trainer.steps_done();
    if (progress) progress({result.steps, total, epoch, result.final_loss});
    if (result.steps == config.save_state_at_step && !config.state_path.empty()) {
      TrainingPosition at;
      at.epoch = result.steps / per_epoch;
      at.batch = result.steps % per_epoch;
      SaveTrainingState(config.state_path, *model, optimizer, at);
    }
  }
  result.trained_hash = config.save_path.empty() ? ModelHash(*model) : SaveModel(config.save_path, *model);

  const EvalResult eval = Evaluate(*model, test_set, config.batch_size, config.max_test);
  result.logits_hash = eval.logits_hash;
  result.test_examples = eval.examples;
  result.test_accuracy = eval.accuracy;
  return result;
}

}  // namespace train
}  // namespace lockstep
