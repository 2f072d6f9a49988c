#include "core/train/classifier_trainer.h"

#include <optional>

#include "core/error.h"
#include "core/ops.h"
#include "core/parallel/data_parallel.h"
#include "core/trace/trace.h"

namespace lockstep {
namespace train {

namespace {

const Dataset& RequireBatchable(const Dataset& data, int64_t batch_size) {
  LOCKSTEP_REQUIRE(batch_size >= 1, "training: batch size must be >= 1, got " << batch_size);
  LOCKSTEP_REQUIRE(data.size() >= batch_size, "training: the data set (" << data.size()
                                                  << " examples) is smaller than one batch (" << batch_size << ")");
  return data;
}

}  // namespace

ClassifierTrainer::ClassifierTrainer(nn::Module& model, optim::Optimizer& optimizer, const Dataset& data,
                                     int64_t batch_size, uint64_t seed)
    : model_(model),
      optimizer_(optimizer),
      loader_(RequireBatchable(data, batch_size), batch_size, /*shuffle=*/true, /*drop_last=*/true, seed),
      per_epoch_(loader_.batches_per_epoch()),
      batch_size_(batch_size) {
  optimizer.RequireParametersOf(model, "training");
}

float ClassifierTrainer::Step() {
  Tensor x, y;
  trace::BeginStep(step_ + 1);
  // In a data-parallel run this rank computes its share of the batch; the loss and the gradients
  // come out as one process computes them over the whole batch (core/parallel/data_parallel.h).
  parallel::DataParallel* dp = parallel::Current();
  std::optional<parallel::BatchScope> batch;
  if (dp != nullptr) {
    const parallel::Share share = dp->ShareOf(batch_size_);
    loader_.GetBatchRows(epoch(), step_ % per_epoch_, share.begin, share.count(), &x, &y);
    if (batch_observer_) {
      Tensor whole_x, whole_y;
      loader_.GetBatch(epoch(), step_ % per_epoch_, &whole_x, &whole_y);
      batch_observer_(whole_x, whole_y);
    }
    batch.emplace(*dp, batch_size_);
  } else {
    loader_.GetBatch(epoch(), step_ % per_epoch_, &x, &y);
    if (batch_observer_) batch_observer_(x, y);
  }
  model_.Train();
  optimizer_.ZeroGrad();
  const Tensor loss = CrossEntropy(model_(x), y);
  const float value = loss.item();
  LOCKSTEP_REQUIRE_STATE(allow_nonfinite_loss_ || value - value == 0.0f,
                         "training stopped at step " << step_ + 1 << " (epoch " << epoch() << ", batch "
                                                     << step_ % per_epoch_ << "): the loss is " << value
                                                     << "; the data or the model holds non-finite values, or the "
                                                        "learning rate is too high (the model is unchanged by "
                                                        "this step; allow non-finite losses to go on anyway)");
  loss.Backward();
  batch.reset();
  optimizer_.Step();
  ++step_;
  if (dp != nullptr) dp->AfterStep(model_, &optimizer_, step_);
  return value;
}

}  // namespace train
}  // namespace lockstep
