#include "core/train/gpt.h"

#include <algorithm>
#include <optional>

#include "core/autograd.h"
#include "core/checkpoint.h"
#include "core/error.h"
#include "core/io/files.h"
#include "core/sha256.h"
#include "core/trace/trace.h"
#include "core/ops.h"
#include "simd/fp_mode.h"
#include "core/optim/optimizer.h"
#include "core/parallel/data_parallel.h"
#include "core/random.h"
#include "core/backend/host.h"

namespace lockstep {
namespace train {

const GptTrainConfig* GptPreset(const std::string& name) {
  static const GptTrainConfig small = [] {
    GptTrainConfig c;
    c.model.block_size = 64;
    c.model.n_layer = 4;
    c.model.n_head = 4;
    c.model.n_embd = 128;
    return c;
  }();
  static const GptTrainConfig tiny = [] {
    GptTrainConfig c;
    c.model.block_size = 16;
    c.model.n_layer = 2;
    c.model.n_head = 2;
    c.model.n_embd = 32;
    c.batch_size = 4;
    return c;
  }();
  if (name == "small") return &small;
  if (name == "tiny") return &tiny;
  return nullptr;
}

namespace {

// Entry k of `values` is valid on rank k % R: every entry, on every rank.
std::vector<float> GatherStrided(parallel::DataParallel& dp, const std::vector<float>& values) {
  const int64_t n = static_cast<int64_t>(values.size()), ranks = dp.size();
  std::vector<float> mine;
  for (int64_t k = dp.rank(); k < n; k += ranks) mine.push_back(values[static_cast<size_t>(k)]);
  std::vector<size_t> bytes;
  for (int64_t r = 0; r < ranks; ++r) bytes.push_back(static_cast<size_t>((n - r + ranks - 1) / ranks) * sizeof(float));
  std::vector<float> gathered(static_cast<size_t>(n));
  dp.AllGather(mine.data(), gathered.data(), bytes);
  std::vector<float> out(static_cast<size_t>(n));
  size_t at = 0;
  for (int64_t r = 0; r < ranks; ++r) {
    for (int64_t k = r; k < n; k += ranks) out[static_cast<size_t>(k)] = gathered[at++];
  }
  return out;
}

}  // namespace

GptLosses EstimateGptLoss(models::Gpt& model, const CharCorpus& corpus, int64_t batch, int64_t iters, uint64_t seed,
                          int64_t round) {
  const bool was_training = model.training();
  model.Eval();
  NoGradGuard no_grad;
  const trace::PhaseScope phase("eval");
  GptLosses out;
  // In a data-parallel run rank r computes batches r, r + R, ...; every rank gets every loss.
  parallel::DataParallel* dp = parallel::Current();
  const int64_t ranks = dp == nullptr ? 1 : dp->size(), rank = dp == nullptr ? 0 : dp->rank();
  for (const bool val : {false, true}) {
    std::vector<float> losses(static_cast<size_t>(iters), 0.0f);
    for (int64_t k = rank; k < iters; k += ranks) {
      Tensor x, y;
      TextBatch(val ? corpus.val : corpus.train, model.config().block_size, batch, seed, val ? "eval/val" : "eval/train",
                static_cast<uint64_t>(round * iters + k), &x, &y);
      losses[static_cast<size_t>(k)] = models::GptLoss(model(x), y).item();
    }
    if (ranks > 1) losses = GatherStrided(*dp, losses);
    float sum = 0.0f;  // in batch order
    for (const float loss : losses) sum += loss;
    (val ? out.val : out.train) = iters > 0 ? sum / static_cast<float>(iters) : 0.0f;
  }
  model.Train(was_training);
  return out;
}

GptTrainer::GptTrainer(const GptTrainConfig& config, const CharCorpus& corpus) : config_(config), corpus_(corpus) {
  const simd::ContractFloatingPointScope fp_mode;
  LOCKSTEP_REQUIRE(config.batch_size >= 1 && config.grad_accum >= 1 && config.steps >= 0,
                   "gpt: batch size and gradient accumulation must be >= 1 and steps >= 0");
  LOCKSTEP_REQUIRE(config.warmup_steps >= 0 && config.decay_steps > config.warmup_steps,
                   "gpt: decay_steps (" << config.decay_steps << ") must exceed warmup_steps (" << config.warmup_steps
                                        << ") >= 0");
  config_.model.vocab_size = corpus.vocab_size();
  LOCKSTEP_REQUIRE(static_cast<int64_t>(corpus.train.size()) > config_.model.block_size &&
                       static_cast<int64_t>(corpus.val.size()) > config_.model.block_size,
                   "gpt: the text is too short for a block of " << config_.model.block_size << " characters");
  result_.model = std::make_shared<models::Gpt>(config_.model, config_.seed);
  result_.initial_hash = ModelHash(*result_.model);
  std::vector<optim::ParamGroup> groups(2);
  groups[0].params = result_.model->DecayParameters();
  groups[0].weight_decay = config_.weight_decay;
  groups[1].params = result_.model->NoDecayParameters();
  optim::AdamOptions adam;
  adam.lr = config_.lr;
  adam.beta1 = config_.beta1;
  adam.beta2 = config_.beta2;
  adam.decoupled_weight_decay = true;
  optimizer_ = std::make_unique<optim::Adam>(groups, adam);
  params_ = result_.model->Parameters();

  Sha256 data;
  data.Update(corpus.vocab.data(), corpus.vocab.size());
  for (const std::vector<int64_t>* part : {&corpus.train, &corpus.val}) {
    const uint64_t n = part->size();
    data.UpdateValues(&n, 1);
    data.UpdateValues(part->data(), part->size());
  }
  const models::GptConfig& m = config_.model;
  identity_ = {{"model", "gpt " + std::to_string(m.vocab_size) + "/" + std::to_string(m.block_size) + "/" +
                             std::to_string(m.n_layer) + "/" + std::to_string(m.n_head) + "/" +
                             std::to_string(m.n_embd) + "/" + FloatBits(m.dropout)},
               {"seed", std::to_string(config_.seed)},
               {"batch_size", std::to_string(config_.batch_size) + "x" + std::to_string(config_.grad_accum)},
               {"steps", std::to_string(config_.steps)},
               {"lr", FloatBits(config_.lr) + "/" + FloatBits(config_.min_lr) + "/" + std::to_string(config_.warmup_steps) +
                          "/" + std::to_string(config_.decay_steps)},
               {"optimizer", FloatBits(config_.weight_decay) + "/" + FloatBits(config_.beta1) + "/" +
                                 FloatBits(config_.beta2) + "/" + FloatBits(config_.grad_clip)},
               {"estimates", std::to_string(config_.eval_interval) + "/" + std::to_string(config_.eval_iters)},
               {"data", data.HexDigest()}};
  LOCKSTEP_REQUIRE(config_.checkpoint_every >= 0, "gpt: checkpoint_every must be >= 0, got " << config_.checkpoint_every);
  LOCKSTEP_REQUIRE(config_.checkpoint_every == 0 || !config_.checkpoint_path.empty(),
                   "gpt: checkpoint_every needs a checkpoint path");
  LOCKSTEP_REQUIRE(parallel::Current() == nullptr || config_.trace.path.empty(),
                   "gpt: a trace records one process's ops; a data-parallel run cannot record one");
  parallel::OnWriter([&] {  // rank 0 writes every file of a data-parallel run
    if (config_.checkpoint_every > 0) RequireWritableFile(config_.checkpoint_path);
    if (!config_.save_path.empty()) RequireWritableFile(config_.save_path);
  });
}

std::vector<uint8_t> GptTrainer::StateBytes() {
  TrainingPosition position;
  position.batch = step_;
  position.rng_offsets = DropoutOffsets(*result_.model);
  position.run = identity_;
  position.counters["estimates"] = std::to_string(result_.estimates.size());
  return EncodeTrainingState(*result_.model, *optimizer_, position);
}

void GptTrainer::Resume(const std::vector<uint8_t>& state, const std::string& what) {
  RequireSameRun(PeekTrainingState(state, what), identity_, what);
  const TrainingPosition position = LoadTrainingStateFromBytes(state, what, *result_.model, *optimizer_);
  RestoreDropoutOffsets(*result_.model, position.rng_offsets, what);
  LOCKSTEP_REQUIRE_STATE(position.batch <= config_.steps && optimizer_->step_count() == position.batch,
                         what << ": the state is at step " << position.batch << " of a run of " << config_.steps);
  step_ = position.batch;
  auto estimates = position.counters.find("estimates");
  // The estimates already made are not stored, only their count: the next one uses the next round.
  const int64_t done = estimates == position.counters.end() ? 0 : std::stoll(estimates->second);
  result_.estimates.assign(static_cast<size_t>(done), GptLosses{});
  result_.losses.assign(static_cast<size_t>(step_), 0.0f);
}

float GptTrainer::Step() {
  const simd::ContractFloatingPointScope fp_mode;  // host loops too (loss sums, the schedule)
  LOCKSTEP_REQUIRE(!done(), "gpt: all " << config_.steps << " steps are done");
  models::Gpt& model = *result_.model;
  model.Train();
  trace::BeginStep(step_ + 1);
  lr_ = optim::CosineWithWarmup(config_.lr, config_.min_lr, step_, config_.warmup_steps, config_.decay_steps);
  optimizer_->set_lr(lr_);
  const float micro_scale = 1.0f / static_cast<float>(config_.grad_accum);
  float loss_sum = 0.0f;
  // In a data-parallel run every rank computes its share of every micro-batch (so the micro-batches
  // accumulate in order, as in one process) and the loss and gradients come out whole.
  parallel::DataParallel* dp = parallel::Current();
  step_inputs_.clear();
  step_labels_.clear();
  for (int64_t micro = 0; micro < config_.grad_accum; ++micro) {
    Tensor x, y;
    TextBatch(corpus_.train, config_.model.block_size, config_.batch_size, config_.seed, "batches",
              static_cast<uint64_t>(step_ * config_.grad_accum + micro), &x, &y);
    step_inputs_.push_back(x);
    step_labels_.push_back(y);
    std::optional<parallel::BatchScope> batch;
    if (dp != nullptr) {
      const parallel::Share share = dp->ShareOf(config_.batch_size);
      x = x.Slice(0, share.begin, share.end).Contiguous();
      y = y.Slice(0, share.begin, share.end).Contiguous();
      batch.emplace(*dp, config_.batch_size);
      batch->AddInput(x);
    }
    const Tensor loss = models::GptLoss(model(x), y);
    const float value = loss.item();
    LOCKSTEP_REQUIRE_STATE(config_.allow_nonfinite_loss || value - value == 0.0f,
                           "training stopped at step " << step_ + 1 << ": the loss is " << value
                                                       << "; the model holds non-finite values or the learning "
                                                          "rate is too high (the model is unchanged by this step; "
                                                          "allow non-finite losses to go on anyway)");
    MulScalar(loss, micro_scale).Backward();  // nanoGPT: loss / gradient_accumulation_steps
    loss_sum += value;
  }
  if (config_.grad_clip > 0.0f) optim::ClipGradNorm(params_, config_.grad_clip);
  optimizer_->Step();
  optimizer_->ZeroGrad();
  ++step_;
  result_.losses.push_back(loss_sum * micro_scale);
  const bool last = step_ == config_.steps;
  if (config_.eval_iters > 0 && (last || (config_.eval_interval > 0 && step_ % config_.eval_interval == 0))) {
    result_.estimates.push_back(EstimateGptLoss(model, corpus_, config_.batch_size, config_.eval_iters, config_.seed,
                                                static_cast<int64_t>(result_.estimates.size())));
  }
  if (dp != nullptr) dp->AfterStep(*result_.model, optimizer_.get(), step_);
  if (config_.checkpoint_every > 0 && step_ % config_.checkpoint_every == 0) {
    const std::vector<uint8_t> state = StateBytes();
    parallel::OnWriter([&] { WriteFileAtomic(config_.checkpoint_path, state); });
  }
  return result_.losses.back();
}

GptResult GptTrainer::Finish() {
  if (parallel::DataParallel* dp = parallel::Current()) dp->CheckReplicas(*result_.model, optimizer_.get(), step_);
  result_.trained_hash.clear();
  if (!config_.save_path.empty()) {
    parallel::OnWriter([&] { result_.trained_hash = SaveModel(config_.save_path, *result_.model); });
  }
  if (result_.trained_hash.empty()) result_.trained_hash = ModelHash(*result_.model);
  return result_;
}

GptResult RunGpt(const GptTrainConfig& config, const CharCorpus& corpus, const GptProgressFn& progress) {
  const simd::ContractFloatingPointScope fp_mode;
  GptTrainer trainer(config, corpus);
  if (!config.resume_path.empty()) {
    const auto read = [&] { return ResumeBytes(config.resume_state, config.resume_path); };
    trainer.Resume(parallel::Current() == nullptr ? read() : parallel::Current()->ReadOnWriter(read), config.resume_path);
  }
  models::Gpt& model = *trainer.result().model;
  std::unique_ptr<trace::Session> tracing;
  if (!config.trace.path.empty() || config.trace_in_memory) {
    tracing = std::make_unique<trace::Session>(config.trace, &model);
  }
  // Receipts (core/receipt/): rank 0 hashes each step's micro-batches and the state after it.
  std::unique_ptr<receipt::RunReceipt> run_receipt;
  if (parallel::IsWriter() && config.receipt.active()) {
    receipt::ReceiptOptions receipt_options = config.receipt;
    receipt_options.updater = &trainer.optimizer();  // a closed loop: only the optimizer writes the state
    run_receipt = std::make_unique<receipt::RunReceipt>(
        receipt_options, "gpt", trainer.identity(), trainer.result().initial_hash, trainer.steps_done(), config.steps,
        model, trainer.optimizer(), DropoutOffsets(model), [&](int64_t) { return trainer.StateBytes(); });
  }
  while (!trainer.done() && trainer.steps_done() != config.stop_after) {
    const float loss = trainer.Step();
    if (run_receipt) {
      const trace::PauseScope not_the_models_work;  // stacking the micro-batches is not traced
      run_receipt->AfterStep(trainer.steps_done(), model, trainer.optimizer(), DropoutOffsets(model),
                             Concat(trainer.step_inputs(), 0), Concat(trainer.step_labels(), 0));
    }
    if (progress) progress({trainer.steps_done(), config.steps, loss, trainer.lr(), &model});
  }
  GptResult result = trainer.Finish();
  if (run_receipt) run_receipt->Finish(result.trained_hash);
  if (tracing) {
    tracing->Finish();
    if (config.trace_in_memory) {
      result.trace = tracing->Bytes();
      result.trace_values = tracing->ValueBytes();
    }
  }
  return result;
}

std::vector<int64_t> SampleGpt(models::Gpt& model, const std::vector<int64_t>& prompt, const SampleOptions& options) {
  const simd::ContractFloatingPointScope fp_mode;
  LOCKSTEP_REQUIRE(!prompt.empty(), "sample: the prompt is empty");
  LOCKSTEP_REQUIRE(options.temperature > 0.0f && options.temperature - options.temperature == 0.0f,
                   "sample: temperature must be a finite number > 0, got " << options.temperature);
  LOCKSTEP_REQUIRE(options.top_k >= 0, "sample: top_k must be >= 0, got " << options.top_k);
  const int64_t vocab = model.config().vocab_size, block = model.config().block_size;
  const bool was_training = model.training();
  model.Eval();
  NoGradGuard no_grad;
  std::vector<int64_t> tokens = prompt;
  const std::vector<uint32_t> words =
      host::PhiloxWords(options.seed, StreamId("sample"), 0, static_cast<size_t>(options.max_new_tokens));
  const Tensor temperature = Tensor::Scalar(options.temperature);
  for (int64_t t = 0; t < options.max_new_tokens; ++t) {
    const int64_t start = std::max<int64_t>(0, static_cast<int64_t>(tokens.size()) - block);
    const std::vector<int64_t> context(tokens.begin() + start, tokens.end());
    trace::BeginStep(t + 1, "sample");
    const Tensor logits = model(Tensor::FromInt64({1, static_cast<int64_t>(context.size())}, context));
    Tensor last = Div(logits.Select(1, logits.size(1) - 1).Reshape({vocab}), temperature);
    // Non-finite logits have no distribution to draw from: refuse rather than emit token 0 forever.
    for (const float v : last.ToVector()) {
      LOCKSTEP_REQUIRE_STATE(v - v == 0.0f,
                             "sample: the logits for token " << t + 1 << " are not finite (" << v
                                                             << " after dividing by the temperature "
                                                             << options.temperature
                                                             << "): the checkpoint holds non-finite weights, or the "
                                                                "temperature is too small for these logits");
    }
    if (options.top_k > 0 && options.top_k < vocab) {
      std::vector<float> sorted = last.ToVector();
      std::sort(sorted.begin(), sorted.end(), [](float a, float b) { return a > b; });
      const Tensor kth = Tensor::Scalar(sorted[static_cast<size_t>(options.top_k - 1)]);
      last = MaskedFill(last, Greater(kth, last), -__builtin_inff());  // nanoGPT: logits < v[-1] -> -inf
    }
    const std::vector<float> probs = Softmax(last, 0).ToVector();
    const float u = static_cast<float>(words[static_cast<size_t>(t)] >> 8) * 0x1p-24f;
    float running = 0.0f;
    int64_t chosen = -1, last_possible = 0;
    for (int64_t i = 0; i < vocab; ++i) {
      if (probs[static_cast<size_t>(i)] > 0.0f) last_possible = i;
      running += probs[static_cast<size_t>(i)];
      if (chosen < 0 && u < running) chosen = i;
    }
    tokens.push_back(chosen >= 0 ? chosen : last_possible);  // rounding can leave the sum below u
  }
  model.Train(was_training);
  return std::vector<int64_t>(tokens.begin() + static_cast<std::ptrdiff_t>(prompt.size()), tokens.end());
}

}  // namespace train
}  // namespace lockstep
