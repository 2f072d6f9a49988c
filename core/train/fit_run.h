// A fit() run: Python's and the npm package's fit() over any classifier, one step at a time (the
// caller's loop owns progress, yielding and cancellation), with what identifies the run in its
// training states and receipts. verify/ replays a fit() receipt through the same class, given a
// model and optimizer made as the run's were.
#ifndef LOCKSTEP_CORE_TRAIN_FIT_RUN_H_
#define LOCKSTEP_CORE_TRAIN_FIT_RUN_H_

#include <stdint.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/data.h"
#include "core/nn/module.h"
#include "core/optim/optimizer.h"
#include "core/receipt/run_receipt.h"
#include "core/train/classifier_trainer.h"

namespace lockstep {
namespace train {

// A model's architecture as the SHA-256 of its state dict's names, dtypes and shapes: what a model
// written in Python or JavaScript (no registered name) can be recognised by.
std::string ArchitectureOf(const nn::Module& model);

// A fit() run's identity: {"model": "arch:<ArchitectureOf>", "optimizer": its Describe(), "seed",
// "batch_size", "data": the training set's fingerprint}.
std::map<std::string, std::string> FitIdentity(const nn::Module& model, const optim::Optimizer& optimizer,
                                               uint64_t seed, int64_t batch_size, const Dataset& train_set);

class FitRun {
 public:
  // The model, optimizer and data must outlive the run (ClassifierTrainer).
  FitRun(nn::Module& model, optim::Optimizer& optimizer, const Dataset& data, int64_t batch_size, uint64_t seed);
  ~FitRun();

  // The run is the MNIST reference run (LeNet-5 and Adam at lr, made by the caller): its training
  // states and receipts are then `lockstep train mnist`'s (task "mnist").
  void UseMnistIdentity(float lr);

  // Trains on the next batch (ClassifierTrainer::Step), then hashes it into the receipt.
  float Step();
  int64_t steps_done() const { return trainer_.steps_done(); }
  int64_t steps_per_epoch() const { return trainer_.steps_per_epoch(); }
  void set_allow_nonfinite_loss(bool allow) { trainer_.set_allow_nonfinite_loss(allow); }

  // The full training state now (model, optimizer, position, dropout offsets, identity).
  std::vector<uint8_t> StateBytes() const;
  // Continues from StateBytes() of the same run (kind kState otherwise); `what` names the bytes.
  void Resume(const std::vector<uint8_t>& bytes, const std::string& what);

  // Records a receipt of the run from here (its first step) to step total_steps (receipt::RunReceipt),
  // or, with options.step_digests, reports each step's digests (verification).
  void StartReceipt(const receipt::ReceiptOptions& options, int64_t total_steps);
  // The receipt's end line.
  void FinishReceipt();

  const std::string& task() const { return task_; }
  const std::map<std::string, std::string>& identity() const { return identity_; }

 private:
  nn::Module& model_;
  optim::Optimizer& optimizer_;
  const Dataset& data_;
  ClassifierTrainer trainer_;
  uint64_t seed_;
  int64_t batch_size_;
  std::string task_ = "fit";
  std::map<std::string, std::string> identity_;
  std::unique_ptr<receipt::RunReceipt> receipt_;
  Tensor batch_x_, batch_y_;
};

}  // namespace train
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_TRAIN_FIT_RUN_H_
