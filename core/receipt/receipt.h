// Training receipts (docs/verifiable-training.md): JSON lines that bind a run's identity to every
// step it took.
//
//   {"lockstep_receipt":2,"contract":1,"task":"mnist","identity":{...},"initial_model":H,"state":S0}
//   {"checkpoint":0,"file":"run.receipt.0.state","sha256":F}
//   {"step":1,"batch":B1,"state":S1,"chain":H1}
//   ...
//   {"end":N,"chain":HN,"trained_model":M}
//
// h_0 = SHA-256 of the header line's bytes; h_k = SHA-256(h_{k-1} || S_k || B_k) (state_hash.h).
// A checkpoint line names a training state written beside the receipt after step k, and the
// SHA-256 of its file. Reading checks the whole chain: an altered line is refused by line number.
#ifndef LOCKSTEP_CORE_RECEIPT_RECEIPT_H_
#define LOCKSTEP_CORE_RECEIPT_RECEIPT_H_

#include <stdint.h>

#include <map>
#include <string>
#include <vector>

#include "core/receipt/state_hash.h"
#include "core/receipt/store.h"

namespace lockstep {
namespace receipt {

constexpr int kFormatVersion = 2;

struct StepEntry {  // the step is its position: Receipt::steps[k - 1] is step k
  Digest batch{}, state{}, chain{};
};

struct CheckpointEntry {
  int64_t step = 0;
  std::string file;    // as written: a name beside the receipt
  std::string sha256;  // of the file
};

struct Receipt {
  std::string path;  // where it was read from (for finding checkpoints, and in messages)
  int contract = 0;
  std::string task;  // "mnist"
  std::map<std::string, std::string> identity;
  std::string initial_model;
  Digest initial_state{}, initial_chain{};
  std::vector<StepEntry> steps;  // steps[k - 1]: step k
  std::vector<CheckpointEntry> checkpoints;
  bool ended = false;
  std::string trained_model;  // with ended

  // The state root after `step` (0: the initial state) and the chain link up to it.
  const Digest& StateAt(int64_t step) const { return step == 0 ? initial_state : steps[step - 1].state; }
  const Digest& ChainAt(int64_t step) const { return step == 0 ? initial_chain : steps[step - 1].chain; }
  int64_t last_step() const { return static_cast<int64_t>(steps.size()); }
  // A checkpoint's file as a path (beside the receipt).
  std::string CheckpointPath(const CheckpointEntry& c) const;
  // The latest checkpoint at or before `step`, or null.
  const CheckpointEntry* CheckpointAtOrBefore(int64_t step) const;
};

// Writes a receipt as the run goes; the file is replaced atomically by Flush and Finish, so a
// reader never sees half a line (a run stopped early leaves the receipt of its last flush).
class Writer {
 public:
  Writer(Store& store, const std::string& path, const std::string& task,
         const std::map<std::string, std::string>& identity, const std::string& initial_model,
         const Digest& initial_state);
  void Step(int64_t step, const Digest& batch, const Digest& state);
  // Records a training state written after `step` (its file must be beside the receipt).
  void Checkpoint(int64_t step, const std::string& file_path, const std::string& sha256);
  void Flush();
  void Finish(const std::string& trained_model);
  const std::string& path() const { return path_; }
  // The path of the training state kept after `step`: "<receipt>.<step>.state".
  std::string CheckpointFile(int64_t step) const;

 private:
  Store& store_;
  std::string path_, text_;
  Digest chain_{};
  int64_t last_step_ = 0;
};

// Parses and checks a receipt (the chain, the step numbering, the checkpoints' order); throws
// lockstep::Error (kind kFormat) naming `what`, the line and the fault.
Receipt ParseReceipt(const std::string& text, const std::string& what);
Receipt ReadReceipt(const std::string& path, const Store& store = FileStore());

}  // namespace receipt
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_RECEIPT_RECEIPT_H_
