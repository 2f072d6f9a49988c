// The MNIST reference run: LeNet-5, Adam (lr 1e-3), batch 100, cross-entropy, a fixed seed. It
// reports what RepDL's example prints: the hash of the initial model, the loss as it trains, the
// hash of the trained model, the test accuracy and the hash of the test logits.
#ifndef LOCKSTEP_CORE_TRAIN_MNIST_H_
#define LOCKSTEP_CORE_TRAIN_MNIST_H_

#include <stdint.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/data.h"
#include "core/receipt/run_receipt.h"
#include "core/trace/trace.h"

namespace lockstep {
namespace train {

struct MnistConfig {
  std::string data_dir;          // holds train-images.idx, train-labels.idx, test-*.idx
  // The reference run: 20 epochs under seed 2 reach 0.9725 test accuracy (the 8,000-image subset
  // holds LeNet-5 near 97%; seed 1 gives 0.9685 after 20 epochs, PyTorch itself 0.964-0.971).
  int64_t epochs = 20;
  uint64_t seed = 2;
  int64_t batch_size = 100;
  float lr = 1e-3f;
  int64_t lr_step_epochs = 0;    // StepLR: multiply lr by lr_gamma every this many epochs (0: off)
  float lr_gamma = 0.1f;
  bool normalize = true;         // x = (x - 0.1307f) * (1.0f / 0.3081f) in float32 (NormalizeMnist)
  int64_t max_steps = -1;        // stop early (the shortened run of check-matrix); -1: all epochs
  int64_t max_test = -1;         // evaluate on the first N test images; -1: all
  std::string save_path;         // trained model checkpoint (optional)
  // Full training state (model, Adam moments, position, the run's identity) written atomically to
  // checkpoint_path after every checkpoint_every steps (0: never); resume_path continues such a
  // state, after checking it belongs to the same run (seed, data, model, batch size, lr).
  int64_t checkpoint_every = 0;
  std::string checkpoint_path;
  std::string resume_path;
  std::vector<uint8_t> resume_state;  // the state's bytes, when given: resume_path then only names it
  bool allow_nonfinite_loss = false;  // true: train on through NaN or infinite losses
  CancelFn cancelled;                 // asked while the data loads (Ctrl-C); optional
  // An op-level trace of the run (docs/diagnostics.md) when trace.path is set (or, with
  // trace_in_memory, into MnistResult::trace).
  trace::Options trace;
  bool trace_in_memory = false;
  // A training receipt, or the digests of each step for verification (core/receipt/run_receipt.h).
  receipt::ReceiptOptions receipt;
  bool evaluate = true;  // false: no evaluation on the test set (test_accuracy 0, logits_hash empty)
};

struct MnistProgress {
  int64_t step, total_steps, epoch;
  float loss;
};

struct MnistResult {
  std::string initial_hash, trained_hash, logits_hash;
  double test_accuracy = 0;
  int64_t steps = 0, test_examples = 0;
  float final_loss = 0;
  std::vector<uint8_t> trace, trace_values;  // with trace_in_memory
};

using MnistProgressFn = std::function<void(const MnistProgress&)>;

// Runs training and evaluation on the files in config.data_dir; progress(p) is called after every
// step.
MnistResult RunMnist(const MnistConfig& config, const MnistProgressFn& progress);

// The same run on data sets already in memory (config.data_dir and config.normalize are ignored:
// normalise with NormalizeMnist first, as RunMnist does).
MnistResult RunMnistOn(const MnistConfig& config, const Dataset& train_set, const Dataset& test_set,
                       const MnistProgressFn& progress);

// What identifies a classifier training run in its training states: a resume must match it.
std::map<std::string, std::string> ClassifierRunIdentity(const std::string& model, uint64_t seed, int64_t batch_size,
                                                         float lr, const Dataset& train_set);
// The reference run's (RunMnistOn's): its training states and receipts carry it.
std::map<std::string, std::string> MnistRunIdentity(const MnistConfig& config, const Dataset& train_set);

// MNIST's usual normalisation, applied to every batch the data set makes: x = (x + (-0.1307)) *
// (1 / 0.3081), both constants float32 (the division 1 / 0.3081 rounded once, to float32).
void NormalizeMnist(Dataset* data);

}  // namespace train
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_TRAIN_MNIST_H_
