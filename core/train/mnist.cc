#include "core/train/mnist.h"

#include "core/autograd.h"
#include "core/checkpoint.h"
#include "core/data.h"
#include "core/error.h"
#include "core/fp_environment.h"
#include "core/models/lenet.h"
#include "core/ops.h"
#include "core/optim/optimizer.h"
#include "core/sha256.h"

namespace lockstep {
namespace train {

MnistResult RunMnist(const MnistConfig& config, const std::function<void(const MnistProgress&)>& progress) {
  RequireContractFloatingPoint();
  Dataset train_set = LoadIdxDataset(config.data_dir + "/train-images.idx", config.data_dir + "/train-labels.idx");
  Dataset test_set = LoadIdxDataset(config.data_dir + "/test-images.idx", config.data_dir + "/test-labels.idx");
  if (config.normalize) {
    for (Dataset* d : {&train_set, &test_set}) {
      NoGradGuard no_grad;
      d->inputs = MulScalar(AddScalar(d->inputs, -0.1307f), 1.0f / 0.3081f);
    }
  }
  LOCKSTEP_REQUIRE(train_set.inputs.size(2) == 28 && train_set.inputs.size(3) == 28,
                   "mnist: expected 28x28 images, got " << ShapeString(train_set.inputs.shape()));

  auto model = models::MakeLeNet5(config.seed);
  MnistResult result;
  result.initial_hash = ModelHash(*model);
  optim::AdamOptions adam;
  adam.lr = config.lr;
  optim::Adam optimizer(model->NamedParameters(), adam);
  DataLoader loader(train_set, config.batch_size, /*shuffle=*/true, /*drop_last=*/true, config.seed);

  const int64_t per_epoch = loader.batches_per_epoch();
  int64_t total = per_epoch * config.epochs;
  if (config.max_steps >= 0 && config.max_steps < total) total = config.max_steps;
  TrainingPosition position;
  if (!config.resume_path.empty()) position = LoadTrainingState(config.resume_path, *model, optimizer);

  model->Train();
  for (int64_t step = position.epoch * per_epoch + position.batch; step < total; ++step) {
    const int64_t epoch = step / per_epoch, batch = step % per_epoch;
    Tensor x, y;
    loader.GetBatch(epoch, batch, &x, &y);
    if (config.lr_step_epochs > 0) optimizer.set_lr(optim::StepLr(config.lr, epoch, config.lr_step_epochs, config.lr_gamma));
    optimizer.ZeroGrad();
    const Tensor loss = CrossEntropy((*model)(x), y);
    loss.Backward();
    optimizer.Step();
    result.final_loss = loss.item();
    result.steps = step + 1;
    if (progress) progress({step + 1, total, epoch, result.final_loss});
    if (step + 1 == config.save_state_at_step && !config.state_path.empty()) {
      TrainingPosition at;
      at.epoch = (step + 1) / per_epoch;
      at.batch = (step + 1) % per_epoch;
      SaveTrainingState(config.state_path, *model, optimizer, at);
    }
  }
  result.trained_hash = config.save_path.empty() ? ModelHash(*model) : SaveModel(config.save_path, *model);

  // Evaluation: logits of the test set in order, hashed as little-endian float32.
  model->Eval();
  NoGradGuard no_grad;
  DataLoader test_loader(test_set, config.batch_size, /*shuffle=*/false, /*drop_last=*/false, config.seed);
  int64_t limit = test_set.size();
  if (config.max_test >= 0 && config.max_test < limit) limit = config.max_test;
  Sha256 logits_hash;
  int64_t correct = 0, seen = 0;
  for (int64_t b = 0; b < test_loader.batches_per_epoch() && seen < limit; ++b) {
    Tensor x, y;
    test_loader.GetBatch(0, b, &x, &y);
    if (seen + x.size(0) > limit) {
      x = x.Slice(0, 0, limit - seen).Contiguous();
      y = y.Slice(0, 0, limit - seen).Contiguous();
    }
    const Tensor logits = (*model)(x);
    logits_hash.Update(logits.data_f32(), static_cast<size_t>(logits.numel()) * sizeof(float));
    const std::vector<int64_t> predicted = Argmax(logits, 1).ToInt64Vector(), labels = y.ToInt64Vector();
    for (size_t i = 0; i < labels.size(); ++i) correct += predicted[i] == labels[i];
    seen += x.size(0);
  }
  result.logits_hash = logits_hash.HexDigest();
  result.test_examples = seen;
  result.test_accuracy = seen ? static_cast<double>(correct) / static_cast<double>(seen) : 0.0;
  return result;
}

}  // namespace train
}  // namespace lockstep
