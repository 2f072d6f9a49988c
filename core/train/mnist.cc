#include "core/train/mnist.h"

#include "core/autograd.h"
#include "core/checkpoint.h"
#include "core/data.h"
#include "core/error.h"
#include "simd/fp_mode.h"
#include "core/io/files.h"
#include "core/trace/trace.h"
#include "core/models/lenet.h"
#include "core/ops.h"
#include "core/optim/optimizer.h"
#include "core/parallel/data_parallel.h"
#include "core/train/classifier_trainer.h"
#include "core/train/evaluate.h"

namespace lockstep {
namespace train {

void NormalizeMnist(Dataset* data) { data->SetNormalization(-0.1307f, 1.0f / 0.3081f); }

std::map<std::string, std::string> ClassifierRunIdentity(const std::string& model, uint64_t seed, int64_t batch_size,
                                                         float lr, const Dataset& train_set) {
  return {{"model", model},
          {"seed", std::to_string(seed)},
          {"batch_size", std::to_string(batch_size)},
          {"lr", FloatBits(lr)},
          {"data", train_set.Fingerprint()}};
}

std::map<std::string, std::string> MnistRunIdentity(const MnistConfig& config, const Dataset& train_set) {
  std::map<std::string, std::string> identity =
      ClassifierRunIdentity("lenet5", config.seed, config.batch_size, config.lr, train_set);
  identity["lr_schedule"] = std::to_string(config.lr_step_epochs) + "/" + FloatBits(config.lr_gamma);
  return identity;
}

MnistResult RunMnist(const MnistConfig& config, const MnistProgressFn& progress) {
  const simd::ContractFloatingPointScope fp_mode;  // the caller gets its own mode back
  Dataset train_set = LoadIdxDataset(config.data_dir + "/train-images.idx", config.data_dir + "/train-labels.idx",
                                     config.cancelled);
  Dataset test_set = LoadIdxDataset(config.data_dir + "/test-images.idx", config.data_dir + "/test-labels.idx",
                                    config.cancelled);
  if (config.normalize) {
    NormalizeMnist(&train_set);
    NormalizeMnist(&test_set);
  }
  return RunMnistOn(config, train_set, test_set, progress);
}

MnistResult RunMnistOn(const MnistConfig& config, const Dataset& train_set, const Dataset& test_set,
                       const MnistProgressFn& progress) {
  const simd::ContractFloatingPointScope fp_mode;  // the caller gets its own mode back
  for (const Dataset* d : {&train_set, &test_set}) {
    LOCKSTEP_REQUIRE(d->example_shape() == Shape({1, 28, 28}),
                     "mnist: expected images of shape [N, 1, 28, 28], got " << ShapeString(d->BatchShape(d->size())));
  }
  LOCKSTEP_REQUIRE(config.checkpoint_every >= 0, "mnist: checkpoint_every must be >= 0, got " << config.checkpoint_every);
  LOCKSTEP_REQUIRE(config.checkpoint_every == 0 || !config.checkpoint_path.empty(),
                   "mnist: checkpoint_every needs a checkpoint path");
  // In a data-parallel run (core/parallel/data_parallel.h) rank 0 writes every file.
  parallel::DataParallel* dp = parallel::Current();
  LOCKSTEP_REQUIRE(dp == nullptr || (config.trace.path.empty() && !config.trace_in_memory),
                   "mnist: a trace records one process's ops; a data-parallel run cannot record one");
  parallel::OnWriter([&] {
    if (config.checkpoint_every > 0) RequireWritableFile(config.checkpoint_path);
    if (!config.save_path.empty()) RequireWritableFile(config.save_path);
  });
  auto model = models::MakeLeNet5(config.seed);
  MnistResult result;
  result.initial_hash = ModelHash(*model);
  optim::AdamOptions adam;
  adam.lr = config.lr;
  optim::Adam optimizer(model->NamedParameters(), adam);
  ClassifierTrainer trainer(*model, optimizer, train_set, config.batch_size, config.seed);
  trainer.set_allow_nonfinite_loss(config.allow_nonfinite_loss);
  // The run's identity (its data fingerprint hashes the whole training set): only for checkpoints.
  std::map<std::string, std::string> identity;
  const bool digests = parallel::IsWriter() && config.receipt.active();
  if (config.checkpoint_every > 0 || !config.resume_path.empty() || digests) {
    identity = MnistRunIdentity(config, train_set);
  }

  std::unique_ptr<trace::Session> tracing;
  if (!config.trace.path.empty() || config.trace_in_memory) tracing = std::make_unique<trace::Session>(config.trace, model.get());

  const int64_t per_epoch = trainer.steps_per_epoch();
  int64_t total = per_epoch * config.epochs;
  if (config.max_steps >= 0 && config.max_steps < total) total = config.max_steps;
  if (!config.resume_path.empty()) {
    const auto read = [&] { return ResumeBytes(config.resume_state, config.resume_path); };
    const std::vector<uint8_t> state = dp == nullptr ? read() : dp->ReadOnWriter(read);
    RequireSameRun(PeekTrainingState(state, config.resume_path), identity, config.resume_path);
    const TrainingPosition position = LoadTrainingStateFromBytes(state, config.resume_path, *model, optimizer);
    LOCKSTEP_REQUIRE_STATE(position.batch < per_epoch, config.resume_path << ": the state is at batch "
                                                                          << position.batch << " of an epoch of "
                                                                          << per_epoch);
    trainer.Seek(position.epoch, position.batch);
  }
  // Receipts (core/receipt/): the digests of every step's batch and of the state after it.
  Tensor batch_x, batch_y;
  std::unique_ptr<receipt::RunReceipt> run_receipt;
  if (digests) {
    trainer.set_batch_observer([&](const Tensor& x, const Tensor& y) { batch_x = x, batch_y = y; });
    receipt::ReceiptOptions receipt_options = config.receipt;
    receipt_options.updater = &optimizer;  // a closed loop: only the optimizer writes the state
    run_receipt = std::make_unique<receipt::RunReceipt>(
        receipt_options, "mnist", identity, result.initial_hash, trainer.steps_done(), total, *model, optimizer,
        DropoutOffsets(*model), [&](int64_t step) {
          TrainingPosition at;
          at.epoch = step / per_epoch;
          at.batch = step % per_epoch;
          at.run = identity;
          return EncodeTrainingState(*model, optimizer, at);
        });
  }
  while (trainer.steps_done() < total) {
    const int64_t epoch = trainer.epoch();
    if (config.lr_step_epochs > 0) optimizer.set_lr(optim::StepLr(config.lr, epoch, config.lr_step_epochs, config.lr_gamma));
    result.final_loss = trainer.Step();
    result.steps = trainer.steps_done();
    if (config.checkpoint_every > 0 && result.steps % config.checkpoint_every == 0) {
      TrainingPosition at;
      at.epoch = result.steps / per_epoch;
      at.batch = result.steps % per_epoch;
      at.run = identity;
      parallel::OnWriter([&] { SaveTrainingState(config.checkpoint_path, *model, optimizer, at); });
    }
    if (run_receipt) run_receipt->AfterStep(result.steps, *model, optimizer, DropoutOffsets(*model), batch_x, batch_y);
    if (progress) progress({result.steps, total, epoch, result.final_loss});
  }
  if (dp != nullptr) dp->CheckReplicas(*model, &optimizer, result.steps);
  if (!config.save_path.empty()) parallel::OnWriter([&] { result.trained_hash = SaveModel(config.save_path, *model); });
  if (result.trained_hash.empty()) result.trained_hash = ModelHash(*model);
  if (run_receipt) run_receipt->Finish(result.trained_hash);

  if (config.evaluate) {
    const EvalResult eval = Evaluate(*model, test_set, config.batch_size, config.max_test);
    result.logits_hash = eval.logits_hash;
    result.test_examples = eval.examples;
    result.test_accuracy = eval.accuracy;
  }
  if (tracing) {
    tracing->Finish();
    if (config.trace_in_memory) {
      result.trace = tracing->Bytes();
      result.trace_values = tracing->ValueBytes();
    }
  }
  return result;
}

}  // namespace train
}  // namespace lockstep
