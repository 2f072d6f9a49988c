// Training and sampling a character-level GPT as nanoGPT does: AdamW with weight decay on 2-D
// tensors only, gradient clipping, linear warmup then cosine decay, gradient accumulation,
// train/validation loss estimates; sampling with temperature and top-k from a Philox stream.
#ifndef LOCKSTEP_CORE_TRAIN_GPT_H_
#define LOCKSTEP_CORE_TRAIN_GPT_H_

#include <stdint.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/models/gpt.h"
#include "core/optim/optimizer.h"
#include "core/receipt/run_receipt.h"
#include "core/text.h"
#include "core/trace/trace.h"

namespace lockstep {
namespace train {

struct GptTrainConfig {
  models::GptConfig model;           // vocab_size is set from the corpus
  int64_t batch_size = 16;
  int64_t grad_accum = 2;            // micro-batches per optimizer step
  int64_t steps = 50;
  float lr = 1e-3f, min_lr = 1e-4f;
  int64_t warmup_steps = 10, decay_steps = 500;
  float weight_decay = 0.1f, beta1 = 0.9f, beta2 = 0.99f;
  float grad_clip = 1.0f;            // 0: off
  int64_t eval_interval = 0;         // estimate losses every this many steps (0: only at the end)
  int64_t eval_iters = 10;           // batches per split in an estimate (0: no estimates)
  uint64_t seed = 1;
  std::string save_path;             // trained model checkpoint (optional)
  bool allow_nonfinite_loss = false;  // true: train on through NaN or infinite losses
  // Full training state written atomically to checkpoint_path after every checkpoint_every steps
  // (0: never); resume_path continues one, after checking it belongs to the same run.
  int64_t checkpoint_every = 0;
  std::string checkpoint_path;
  std::string resume_path;
  std::vector<uint8_t> resume_state;  // the state's bytes, when given: resume_path then only names it
  trace::Options trace;  // an op-level trace of RunGpt when trace.path is set
  bool trace_in_memory = false;  // ... or kept in GptResult::trace (trace.path empty)
  // A training receipt, or each step's digests for verification (core/receipt/run_receipt.h).
  receipt::ReceiptOptions receipt;
  int64_t stop_after = -1;  // RunGpt stops after this step (a verifier's re-execution); -1: at `steps`
};

// The configurations the examples, the CLI and check-matrix name: "small" (4 layers, 4 heads,
// 128 channels, block 64: the example) and "tiny" (2 layers, 2 heads, 32 channels, block 16: for
// emulated platforms). Null for other names.
const GptTrainConfig* GptPreset(const std::string& name);

struct GptProgress {
  int64_t step, total_steps;
  float loss, lr;
  const models::Gpt* model;  // after this step's update (valid during the callback)
};

struct GptLosses {
  float train = 0, val = 0;
};

struct GptResult {
  std::string initial_hash, trained_hash;
  std::vector<float> losses;          // per step: the mean of its micro-batch losses
  std::vector<GptLosses> estimates;   // one per evaluation, the last at the end
  std::shared_ptr<models::Gpt> model;
  std::vector<uint8_t> trace, trace_values;  // with trace_in_memory
};

using GptProgressFn = std::function<void(const GptProgress&)>;

// The training loop one step at a time (RunGpt, the C ABI and the npm package drive it). The
// corpus must outlive the trainer.
class GptTrainer {
 public:
  GptTrainer(const GptTrainConfig& config, const CharCorpus& corpus);
  // One optimizer step (with its micro-batches, clipping and estimate when due); returns its loss.
  float Step();
  bool done() const { return step_ >= config_.steps; }
  int64_t steps_done() const { return step_; }
  float lr() const { return lr_; }
  // The result so far; trained_hash is computed (and the checkpoint saved) by Finish().
  GptResult& result() { return result_; }
  GptResult Finish();

  // The full training state (model, AdamW moments, step, dropout offsets, the run's identity),
  // and its restoration: the identity must match this trainer's (seed, data, configuration).
  std::vector<uint8_t> StateBytes();
  void Resume(const std::vector<uint8_t>& state, const std::string& what);
  const std::map<std::string, std::string>& identity() const { return identity_; }
  const optim::Optimizer& optimizer() const { return *optimizer_; }
  optim::Optimizer& optimizer() { return *optimizer_; }
  // The last step's micro-batches, whole (before a data-parallel rank takes its share), stacked:
  // what a receipt hashes as the step's batch.
  const std::vector<Tensor>& step_inputs() const { return step_inputs_; }
  const std::vector<Tensor>& step_labels() const { return step_labels_; }

 private:
  GptTrainConfig config_;
  const CharCorpus& corpus_;
  GptResult result_;
  std::unique_ptr<optim::Adam> optimizer_;
  std::vector<Tensor> params_;
  int64_t step_ = 0;
  float lr_ = 0;
  std::map<std::string, std::string> identity_;
  std::vector<Tensor> step_inputs_, step_labels_;
};

GptResult RunGpt(const GptTrainConfig& config, const CharCorpus& corpus, const GptProgressFn& progress);

// Mean loss over `iters` batches per split, in evaluation mode, from the streams "eval/train" and
// "eval/val" at batch indices [round * iters, (round + 1) * iters).
GptLosses EstimateGptLoss(models::Gpt& model, const CharCorpus& corpus, int64_t batch, int64_t iters, uint64_t seed,
                          int64_t round);

struct SampleOptions {
  int64_t max_new_tokens = 200;
  float temperature = 0.8f;  // > 0
  int64_t top_k = 20;        // 0: all tokens
  uint64_t seed = 1;
};

// Continues `prompt` (token ids, at least one) by max_new_tokens tokens. For each token: logits of
// the last position (context cropped to the block size) divided by the temperature, all but the
// top_k largest set to -inf, the contract's softmax, then the first token whose running sum of
// probabilities (in token order) exceeds u = (word >> 8) * 2^-24, word i of the stream "sample".
std::vector<int64_t> SampleGpt(models::Gpt& model, const std::vector<int64_t>& prompt, const SampleOptions& options);

}  // namespace train
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_TRAIN_GPT_H_
