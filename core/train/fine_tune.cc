#include "core/train/fine_tune.h"

#include <algorithm>
#include <memory>

#include "core/checkpoint.h"
#include "core/error.h"
#include "core/io/files.h"
#include "core/ops.h"
#include "simd/fp_mode.h"

namespace lockstep {
namespace train {

float ClassifierStep(nn::Module& model, optim::Optimizer& optimizer, const Tensor& inputs, const Tensor& labels) {
  model.Train();
  optimizer.ZeroGrad();
  const Tensor loss = CrossEntropy(model(inputs), labels);
  const float value = loss.item();
  // value - value is 0 for a finite value, NaN otherwise (no libm in core: docs/numerics.md)
  LOCKSTEP_REQUIRE_STATE(value - value == 0.0f, "the loss is " << (value != value ? "nan" : "inf")
                                                   << ": the inputs or the model hold non-finite values, or the "
                                                      "learning rate is too high; the model and optimizer are "
                                                      "unchanged");
  loss.Backward();
  optimizer.Step();
  return value;
}

std::map<std::string, std::string> FineTuneIdentity(const FineTuneConfig& config, const optim::Optimizer& optimizer,
                                                    const Dataset& train_set) {
  std::map<std::string, std::string> identity = config.model_identity;
  identity["optimizer"] = optimizer.Describe();
  identity["batch_size"] = std::to_string(config.batch_size);
  identity["order"] = "file";
  identity["data"] = train_set.Fingerprint();
  return identity;
}

FineTuneResult RunFineTune(const FineTuneConfig& config, nn::Module& model, optim::Optimizer& optimizer,
                           const Dataset& train_set) {
  const simd::ContractFloatingPointScope fp_mode;  // the caller gets its own mode back
  LOCKSTEP_REQUIRE(config.epochs >= 1, "fine-tune: epochs must be >= 1, got " << config.epochs);
  LOCKSTEP_REQUIRE(config.batch_size >= 1, "fine-tune: the batch size must be >= 1, got " << config.batch_size);
  LOCKSTEP_REQUIRE(train_set.size() >= 1, "fine-tune: the training set is empty");
  optimizer.RequireParametersOf(model, "fine-tune");
  const int64_t size = train_set.size();
  const int64_t per_epoch = (size + config.batch_size - 1) / config.batch_size;
  int64_t total = per_epoch * config.epochs;
  if (config.max_steps >= 0 && config.max_steps < total) total = config.max_steps;
  const std::map<std::string, std::string> identity = FineTuneIdentity(config, optimizer, train_set);
  FineTuneResult result;
  if (!config.resume_path.empty() || !config.resume_state.empty()) {
    const std::string what = config.resume_path.empty() ? "the training state" : config.resume_path;
    const std::vector<uint8_t> bytes = ResumeBytes(config.resume_state, config.resume_path);
    RequireSameRun(PeekTrainingState(bytes, what), identity, what);
    const TrainingPosition at = LoadTrainingStateFromBytes(bytes, what, model, optimizer);
    RestoreDropoutOffsets(model, at.rng_offsets, what);
    LOCKSTEP_REQUIRE_STATE(at.batch < per_epoch, what << ": the state is at batch " << at.batch << " of an epoch of "
                                                      << per_epoch);
    result.steps = at.epoch * per_epoch + at.batch;
    LOCKSTEP_REQUIRE_STATE(result.steps <= total, what << " is at step " << result.steps << ", past this run's "
                                                       << total << " steps");
  }
  auto state_at = [&](int64_t step) {
    TrainingPosition at;
    at.epoch = step / per_epoch;
    at.batch = step % per_epoch;
    at.rng_offsets = DropoutOffsets(model);
    at.run = identity;
    return EncodeTrainingState(model, optimizer, at);
  };
  std::unique_ptr<receipt::RunReceipt> run_receipt;
  if (config.receipt.active()) {
    receipt::ReceiptOptions receipt_options = config.receipt;
    receipt_options.updater = &optimizer;  // a closed loop: only the optimizer writes the state
    run_receipt = std::make_unique<receipt::RunReceipt>(receipt_options, "fine-tune", identity, ModelHash(model),
                                                        result.steps, total, model, optimizer, DropoutOffsets(model),
                                                        state_at);
  }
  while (result.steps < total) {
    const int64_t start = (result.steps % per_epoch) * config.batch_size;
    const int64_t count = std::min(config.batch_size, size - start);
    const Tensor inputs = train_set.Inputs(start, count), labels = train_set.Labels(start, count);
    result.last_loss = ClassifierStep(model, optimizer, inputs, labels);
    ++result.steps;
    if (run_receipt) run_receipt->AfterStep(result.steps, model, optimizer, DropoutOffsets(model), inputs, labels);
    if (config.progress) config.progress(result.steps, total, result.last_loss);
  }
  result.trained_hash = ModelHash(model);
  if (run_receipt) run_receipt->Finish(result.trained_hash);
  return result;
}

}  // namespace train
}  // namespace lockstep
