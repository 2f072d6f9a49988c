#include "core/train/classifier_trainer.h"

#include "core/error.h"
#include "core/ops.h"

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
      per_epoch_(loader_.batches_per_epoch()) {}

float ClassifierTrainer::Step() {
  Tensor x, y;
  loader_.GetBatch(epoch(), step_ % per_epoch_, &x, &y);
  model_.Train();
  optimizer_.ZeroGrad();
  const Tensor loss = CrossEntropy(model_(x), y);
  loss.Backward();
  optimizer_.Step();
  ++step_;
  return loss.item();
}

}  // namespace train
}  // namespace lockstep
