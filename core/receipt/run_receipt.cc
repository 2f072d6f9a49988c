#include "core/receipt/run_receipt.h"

#include <algorithm>

#include "core/error.h"
#include "core/sha256.h"

namespace lockstep {
namespace receipt {

RunReceipt::RunReceipt(const ReceiptOptions& options, const std::string& task,
                       const std::map<std::string, std::string>& identity, const std::string& initial_model,
                       int64_t start_step, int64_t total_steps, const nn::Module& model,
                       const optim::Optimizer& optimizer, const std::map<std::string, uint64_t>& rng_offsets,
                       std::function<std::vector<uint8_t>(int64_t)> state_bytes)
    : options_(options),
      every_(options.every > 0 ? options.every : std::max<int64_t>(1, (total_steps + 9) / 10)),
      total_(total_steps),
      state_bytes_(std::move(state_bytes)) {
  LOCKSTEP_REQUIRE(options.every >= 0, task << ": the receipt's interval must be >= 0, got " << options.every);
  LOCKSTEP_REQUIRE(options.path.empty() || start_step == 0,
                   task << ": a receipt covers a run from its first step: it cannot be written by a resumed run "
                           "(verify the resumed part with verify-run instead)");
  const Digest initial = StateRoot(model, optimizer, rng_offsets);
  if (options_.step_digests) options_.step_digests(start_step, Digest{}, initial);
  if (!options_.path.empty()) {
    writer_ = std::make_unique<Writer>(store(), options_.path, task, identity, initial_model, initial);
    Keep(0);
  }
  hasher_ = std::make_unique<StepHasher>([this](int64_t step, const Digest& batch, const Digest& state) {
    if (options_.step_digests) options_.step_digests(step, batch, state);
    if (writer_) writer_->Step(step, batch, state);
  }, options_.background, options_.updater);
}

RunReceipt::~RunReceipt() = default;

void RunReceipt::Keep(int64_t step) {
  const std::vector<uint8_t> bytes = state_bytes_(step);
  const std::string file = writer_->CheckpointFile(step);
  store().Write(file, bytes);
  writer_->Checkpoint(step, file, Sha256Hex(bytes.data(), bytes.size()));
  writer_->Flush();
}

void RunReceipt::AfterStep(int64_t step, const nn::Module& model, const optim::Optimizer& optimizer,
                           const std::map<std::string, uint64_t>& rng_offsets, const Tensor& inputs,
                           const Tensor& labels) {
  hasher_->Submit(step, model, optimizer, rng_offsets, inputs, labels);
  if (writer_ && (step % every_ == 0 || step == total_)) {
    hasher_->Drain();
    Keep(step);
  }
}

void RunReceipt::Finish(const std::string& trained_model) {
  hasher_->Drain();
  if (writer_) writer_->Finish(trained_model);
}

}  // namespace receipt
}  // namespace lockstep
