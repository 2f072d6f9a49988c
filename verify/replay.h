// Re-executing the steps of a receipt (docs/verifiable-training.md): the receipt's identity gives
// the run's configuration, a training state gives where to start, and the trainer that wrote the
// receipt runs the steps again, reporting each step's digests.
#ifndef LOCKSTEP_VERIFY_REPLAY_H_
#define LOCKSTEP_VERIFY_REPLAY_H_

#include <stdint.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/data.h"
#include "core/nn/module.h"
#include "core/optim/optimizer.h"
#include "core/receipt/receipt.h"
#include "core/text.h"
#include "core/train/gpt.h"
#include "core/trace/trace.h"

namespace lockstep {
namespace verify {

// Where a fine-tuning run's model comes from (`lockstep train onnx`: the ONNX file): what it is,
// for the receipt's identity ("model": "onnx:<SHA-256>"), and a fresh one as the run started
// from, its random streams under the receipt's seed.
struct ModelSource {
  std::map<std::string, std::string> identity;
  std::function<std::shared_ptr<nn::Module>(uint64_t seed)> make;
};

// A fit() run's model and optimizer (core/train/fit_run.h), made by the caller as the run's were:
// the receipt's identity checks their architecture and description; re-execution loads the kept
// training states into them.
struct FitModel {
  nn::Module* model = nullptr;
  optim::Optimizer* optimizer = nullptr;
};

struct StepDigests {
  int64_t step = 0;
  receipt::Digest batch{}, state{};
};

// The run a receipt describes, with its data loaded (and checked against the receipt's).
class Replay {
 public:
  // Throws (kind kArgument) when the task or contract is not this lockstep's, or the data is not
  // the receipt's. `data` is the folder of the IDX files (mnist) or the text file (gpt); empty:
  // the task's default (.deps/data/mnist, .deps/data/fortunes/input.txt).
  // Training states are read from `store`.
  // A fine-tuning run's receipt needs its model too (null otherwise).
  Replay(const receipt::Receipt& receipt, const std::string& data,
         const receipt::Store& store = receipt::FileStore(), const ModelSource* model = nullptr);
  // A classifier run's receipt with its training set given (normalised as the run had it): an MNIST
  // run's, or a fit() run's with its model and optimizer (`fit`).
  Replay(const receipt::Receipt& receipt, const Dataset& train_set, const receipt::Store& store,
         const FitModel* fit = nullptr);
  ~Replay();

  // The step a training state file is at, after checking that its state is the one the receipt
  // records for that step (kind kState otherwise, saying so).
  int64_t CheckStart(const std::string& state_path) const;

  // Runs the steps after the state in state_path up to `last`, calling on_step for each (first
  // for the starting state). With trace_step > 0 the run is traced, values kept for that step, and
  // the trace's bytes returned in *trace / *values. Returns the trained model hash.
  std::string Run(const std::string& state_path, int64_t last, const std::function<bool(const StepDigests&)>& on_step,
                  int64_t trace_step = 0, std::vector<uint8_t>* trace = nullptr,
                  std::vector<uint8_t>* values = nullptr) const;


 private:
  void CheckData(const std::string& got, const std::string& source) const;
  const receipt::Receipt& receipt_;
  const receipt::Store& store_;
  Dataset train_set_;  // mnist, fine-tune, fit
  int64_t steps_per_epoch_ = 0;
  std::unique_ptr<CharCorpus> corpus_;  // gpt
  std::unique_ptr<train::GptTrainConfig> gpt_;
  const ModelSource* model_ = nullptr;  // fine-tune
  FitModel fit_;                        // fit
};

// A checkpoint of the receipt as a path, its file checked against the receipt's SHA-256 (kind kState).
std::string CheckedCheckpoint(const receipt::Receipt& receipt, const receipt::CheckpointEntry& c,
                              const receipt::Store& store = receipt::FileStore());

// "step 37: the state differs (receipt 1a2b..., re-executed 3c4d...)" or "" when they match.
std::string Compare(const receipt::Receipt& receipt, const StepDigests& got);

}  // namespace verify
}  // namespace lockstep

#endif  // LOCKSTEP_VERIFY_REPLAY_H_
