// `lockstep verify-run`: re-executes steps of a receipt from a training state and checks each
// against the receipt's chain (docs/verifiable-training.md).
#ifndef LOCKSTEP_VERIFY_VERIFY_RUN_H_
#define LOCKSTEP_VERIFY_VERIFY_RUN_H_

#include <stdint.h>

#include <functional>
#include <string>
#include <vector>

#include "core/data.h"
#include "core/receipt/store.h"
#include "verify/replay.h"

namespace lockstep {
namespace verify {

struct VerifyOptions {
  std::string receipt_path;
  // The training state to start from; empty: the receipt's own checkpoints (beside it).
  std::string checkpoint_path;
  // Steps [first, last] (0, 0: every step after the starting state); or, with sample > 0, that
  // many steps drawn from the whole run by `seed`, each re-executed from the nearest checkpoint.
  int64_t first = 0, last = 0;
  int64_t sample = 0;
  uint64_t seed = 0;
  std::string data;  // the training data (Replay); empty: the task's default
  // Where the receipt and its states are read (null: the file system), and a classifier run's
  // training set given in memory (null: read from `data`): the npm package, which has no files, and
  // fit() runs.
  const receipt::Store* store = nullptr;
  const Dataset* train_set = nullptr;
  // A fit() run's model and optimizer (replay.h), with train_set; null for the other tasks.
  const FitModel* fit = nullptr;
  // A fine-tuning run's model (replay.h); null for the other tasks.
  const ModelSource* model = nullptr;
  std::function<void(const std::string& line)> print;  // the report, a line at a time
  std::function<void(int64_t step, bool matches)> checked;  // each checked step's verdict
};

struct VerifyResult {
  int64_t checked = 0;         // steps compared with the receipt
  int64_t executed = 0;        // steps re-executed (checked ones and those on the way to them)
  int64_t first_mismatch = 0;  // 0: every checked step matched
  std::string mismatch;        // what differed at first_mismatch
};

// Throws lockstep::Error for a receipt or checkpoint that cannot be used (a tampered chain, a
// checkpoint that does not match its receipt, data that is not the receipt's).
VerifyResult VerifyRun(const VerifyOptions& options);

// The steps a sample checks: `count` distinct steps of 1..steps, from SHA-256 of the seed (the
// same on every platform), in increasing order.
std::vector<int64_t> SampleSteps(int64_t steps, int64_t count, uint64_t seed);

}  // namespace verify
}  // namespace lockstep

#endif  // LOCKSTEP_VERIFY_VERIFY_RUN_H_
