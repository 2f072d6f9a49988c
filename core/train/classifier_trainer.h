// One training step of a classifier, repeated: the batch of (epoch, index) from the deterministic
// loader, zero the gradients, cross-entropy of the logits against the labels, backward, optimizer
// step. The MNIST reference run, the npm package's fit() and the C ABI all step through this, so
// a browser and a server execute the same sequence of operations.
#ifndef LOCKSTEP_CORE_TRAIN_CLASSIFIER_TRAINER_H_
#define LOCKSTEP_CORE_TRAIN_CLASSIFIER_TRAINER_H_

#include <stdint.h>

#include <functional>
#include <utility>

#include "core/data.h"
#include "core/nn/module.h"
#include "core/optim/optimizer.h"

namespace lockstep {
namespace train {

class ClassifierTrainer {
 public:
  // Shuffles every epoch from the seed's "shuffle" stream and drops the last partial batch, as the
  // reference run does. The model, optimizer and data must outlive the trainer; the optimizer must
  // update exactly the model's parameters (else kState).
  ClassifierTrainer(nn::Module& model, optim::Optimizer& optimizer, const Dataset& data, int64_t batch_size,
                    uint64_t seed);

  // Trains on the next batch; returns the loss before the update. A loss that is NaN or infinite
  // stops training before the update (kState, naming the step), unless allowed: an all-NaN model
  // trained to the end is never the result the caller wanted.
  float Step();
  void set_allow_nonfinite_loss(bool allow) { allow_nonfinite_loss_ = allow; }
  // Shown every step's whole batch before it trains (receipts hash it); in a data-parallel run too,
  // where this rank computes only its share.
  void set_batch_observer(std::function<void(const Tensor& inputs, const Tensor& labels)> observer) {
    batch_observer_ = std::move(observer);
  }

  int64_t steps_done() const { return step_; }
  int64_t steps_per_epoch() const { return per_epoch_; }
  int64_t epoch() const { return step_ / per_epoch_; }
  // Continue from a saved position (LoadTrainingState).
  void Seek(int64_t epoch, int64_t batch) { step_ = epoch * per_epoch_ + batch; }

 private:
  nn::Module& model_;
  optim::Optimizer& optimizer_;
  DataLoader loader_;
  int64_t per_epoch_;
  int64_t batch_size_;
  int64_t step_ = 0;
  bool allow_nonfinite_loss_ = false;
  std::function<void(const Tensor&, const Tensor&)> batch_observer_;
};

}  // namespace train
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_TRAIN_CLASSIFIER_TRAINER_H_
