// The receipt side of a training loop (docs/verifiable-training.md), shared by the trainers: the
// step hasher, the writer and the training states kept beside the receipt; or, for verification,
// only the digests of each step handed to a callback.
#ifndef LOCKSTEP_CORE_RECEIPT_RUN_RECEIPT_H_
#define LOCKSTEP_CORE_RECEIPT_RUN_RECEIPT_H_

#include <stdint.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/nn/module.h"
#include "core/optim/optimizer.h"
#include "core/receipt/receipt.h"
#include "core/receipt/step_hasher.h"
#include "core/receipt/store.h"

namespace lockstep {
namespace receipt {

// What a trainer's config carries for receipts.
struct ReceiptOptions {
  // The receipt, with a training state kept beside it at the start, every `every` steps (0: about
  // ten over the run) and at the end. Empty: none. A receipt covers a run from its first step.
  std::string path;
  int64_t every = 0;
  // Called with each step's digests (verification), first with the starting state (batch zeros).
  std::function<void(int64_t step, const Digest& batch, const Digest& state)> step_digests;
  // Where the receipt and its states go (null: the file system).
  Store* store = nullptr;
  // Hash each step on a thread of its own (where the build has threads), overlapping the next step.
  bool background = true;
  // The run's optimizer, set by a training loop in which nothing but its updates writes the
  // parameters and its state between steps (no caller's code runs there): they are then read in
  // place until its next update instead of copied (StepHasher's `updater`). Null: copied.
  optim::Optimizer* updater = nullptr;
  bool active() const { return !path.empty() || step_digests; }
};

class RunReceipt {
 public:
  // The state the run starts from (after `start_step` steps): its training-state file's bytes come
  // from state_bytes(step) when a state is kept. Writes nothing but on the data-parallel writer.
  RunReceipt(const ReceiptOptions& options, const std::string& task, const std::map<std::string, std::string>& identity,
             const std::string& initial_model, int64_t start_step, int64_t total_steps, const nn::Module& model,
             const optim::Optimizer& optimizer, const std::map<std::string, uint64_t>& rng_offsets,
             std::function<std::vector<uint8_t>(int64_t step)> state_bytes);
  ~RunReceipt();

  // After step `step` trained on (inputs, labels): hashes it, and keeps the state when due.
  void AfterStep(int64_t step, const nn::Module& model, const optim::Optimizer& optimizer,
                 const std::map<std::string, uint64_t>& rng_offsets, const Tensor& inputs, const Tensor& labels);
  // Every step reported; the receipt's end line.
  void Finish(const std::string& trained_model);

 private:
  void Keep(int64_t step);
  Store& store() { return options_.store != nullptr ? *options_.store : FileStore(); }
  ReceiptOptions options_;
  int64_t every_, total_;
  std::function<std::vector<uint8_t>(int64_t)> state_bytes_;
  std::unique_ptr<Writer> writer_;
  std::unique_ptr<StepHasher> hasher_;
};

}  // namespace receipt
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_RECEIPT_RUN_RECEIPT_H_
