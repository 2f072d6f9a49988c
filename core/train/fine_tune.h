// Fine-tuning a classifier in file order (`lockstep train onnx`, the C ABI's lockstep_fine_tune):
// every epoch walks the training set in order, batch by batch, the last batch of an epoch possibly
// smaller; each step is ClassifierStep. Training states and receipts carry the run's identity:
// the model's (what the caller says it is: an ONNX file's SHA-256, its seed), the optimizer's
// description, the batch size and the data's fingerprint.
#ifndef LOCKSTEP_CORE_TRAIN_FINE_TUNE_H_
#define LOCKSTEP_CORE_TRAIN_FINE_TUNE_H_

#include <stdint.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/data.h"
#include "core/nn/module.h"
#include "core/optim/optimizer.h"
#include "core/receipt/run_receipt.h"

namespace lockstep {
namespace train {

// One step: training mode, gradients zeroed, the cross-entropy of model(inputs)'s first output
// against the labels, backward, the optimizer's update. A NaN or infinite loss throws (kind
// kState) before the update: the model and optimizer are unchanged. Returns the loss.
float ClassifierStep(nn::Module& model, optim::Optimizer& optimizer, const Tensor& inputs, const Tensor& labels);

struct FineTuneConfig {
  int64_t epochs = 1;
  int64_t max_steps = -1;  // stop after this many steps; -1: every step of the epochs
  int64_t batch_size = 100;
  // What the model is, for the run's identity: {"model": "onnx:<SHA-256 of the file>", "seed": ...}.
  std::map<std::string, std::string> model_identity;
  // Continue a training state of the same run (its bytes, or read from resume_path).
  std::string resume_path;
  std::vector<uint8_t> resume_state;
  receipt::ReceiptOptions receipt;
  std::function<void(int64_t step, int64_t total_steps, float loss)> progress;
};

struct FineTuneResult {
  int64_t steps = 0;       // the run's steps at the end
  float last_loss = 0.0f;  // of the last step this call ran
  std::string trained_hash;
};

// The run's identity (training states and receipts carry it).
std::map<std::string, std::string> FineTuneIdentity(const FineTuneConfig& config, const optim::Optimizer& optimizer,
                                                    const Dataset& train_set);

FineTuneResult RunFineTune(const FineTuneConfig& config, nn::Module& model, optim::Optimizer& optimizer,
                           const Dataset& train_set);

}  // namespace train
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_TRAIN_FINE_TUNE_H_
