#include "verify/replay.h"

#include <stdlib.h>
#include <string.h>

#include "core/checkpoint.h"
#include "core/contract.h"
#include "core/error.h"
#include "core/io/files.h"
#include "core/sha256.h"
#include "core/optim/optimizer.h"
#include "core/train/fine_tune.h"
#include "core/train/fit_run.h"
#include "core/train/mnist.h"

namespace lockstep {
namespace verify {

namespace {

const std::string& IdentityValue(const receipt::Receipt& r, const char* key) {
  auto it = r.identity.find(key);
  LOCKSTEP_REQUIRE_FORMAT(it != r.identity.end(), r.path << ": the receipt's identity has no \"" << key << "\"");
  return it->second;
}

float FloatOfBits(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const unsigned long bits = strtoul(text.c_str(), &end, 16);
  LOCKSTEP_REQUIRE_FORMAT(text.size() == 10 && *end == '\0', what << ": expected a float's bits (0x........), got '"
                                                                  << text << "'");
  const uint32_t b = static_cast<uint32_t>(bits);
  float f;
  memcpy(&f, &b, 4);
  return f;
}

int64_t IntegerOf(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const long long v = strtoll(text.c_str(), &end, 10);
  LOCKSTEP_REQUIRE_FORMAT(!text.empty() && *end == '\0', what << ": expected an integer, got '" << text << "'");
  return v;
}

// The MNIST run's configuration from the receipt's identity (core/train/mnist.cc writes it).
train::MnistConfig ConfigOf(const receipt::Receipt& r) {
  train::MnistConfig c;
  c.seed = static_cast<uint64_t>(IntegerOf(IdentityValue(r, "seed"), r.path + ": seed"));
  c.batch_size = IntegerOf(IdentityValue(r, "batch_size"), r.path + ": batch_size");
  c.lr = FloatOfBits(IdentityValue(r, "lr"), r.path + ": lr");
  const std::string& schedule = IdentityValue(r, "lr_schedule");
  const size_t slash = schedule.find('/');
  LOCKSTEP_REQUIRE_FORMAT(slash != std::string::npos, r.path << ": lr_schedule: expected EPOCHS/GAMMA, got '"
                                                             << schedule << "'");
  c.lr_step_epochs = IntegerOf(schedule.substr(0, slash), r.path + ": lr_schedule");
  c.lr_gamma = FloatOfBits(schedule.substr(slash + 1), r.path + ": lr_schedule");
  LOCKSTEP_REQUIRE_FORMAT(IdentityValue(r, "model") == "lenet5",
                          r.path << ": model '" << IdentityValue(r, "model") << "': this lockstep re-executes lenet5");
  c.evaluate = false;
  return c;
}

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == separator) {
      parts.emplace_back();
    } else {
      parts.back().push_back(c);
    }
  }
  return parts;
}

std::vector<std::string> Fields(const receipt::Receipt& r, const char* key, char separator, size_t count) {
  const std::vector<std::string> parts = Split(IdentityValue(r, key), separator);
  LOCKSTEP_REQUIRE_FORMAT(parts.size() == count, r.path << ": the identity's " << key << " '" << IdentityValue(r, key)
                                                         << "' does not have " << count << " fields");
  return parts;
}

// The GPT run's configuration from the receipt's identity (GptTrainer writes it).
train::GptTrainConfig GptConfigOf(const receipt::Receipt& r) {
  train::GptTrainConfig c;
  const std::string& model = IdentityValue(r, "model");
  LOCKSTEP_REQUIRE_FORMAT(model.compare(0, 4, "gpt ") == 0, r.path << ": model '" << model << "' is not a gpt");
  const std::vector<std::string> m = Split(model.substr(4), '/');
  LOCKSTEP_REQUIRE_FORMAT(m.size() == 6, r.path << ": model '" << model << "': expected gpt V/B/L/H/E/DROPOUT");
  const std::string what = r.path + ": model";
  c.model.vocab_size = IntegerOf(m[0], what);
  c.model.block_size = IntegerOf(m[1], what);
  c.model.n_layer = IntegerOf(m[2], what);
  c.model.n_head = IntegerOf(m[3], what);
  c.model.n_embd = IntegerOf(m[4], what);
  c.model.dropout = FloatOfBits(m[5], what);
  const std::vector<std::string> batch = Fields(r, "batch_size", 'x', 2);
  c.batch_size = IntegerOf(batch[0], r.path + ": batch_size");
  c.grad_accum = IntegerOf(batch[1], r.path + ": batch_size");
  c.steps = IntegerOf(IdentityValue(r, "steps"), r.path + ": steps");
  c.seed = static_cast<uint64_t>(IntegerOf(IdentityValue(r, "seed"), r.path + ": seed"));
  const std::vector<std::string> lr = Fields(r, "lr", '/', 4);
  c.lr = FloatOfBits(lr[0], r.path + ": lr");
  c.min_lr = FloatOfBits(lr[1], r.path + ": lr");
  c.warmup_steps = IntegerOf(lr[2], r.path + ": lr");
  c.decay_steps = IntegerOf(lr[3], r.path + ": lr");
  const std::vector<std::string> opt = Fields(r, "optimizer", '/', 4);
  c.weight_decay = FloatOfBits(opt[0], r.path + ": optimizer");
  c.beta1 = FloatOfBits(opt[1], r.path + ": optimizer");
  c.beta2 = FloatOfBits(opt[2], r.path + ": optimizer");
  c.grad_clip = FloatOfBits(opt[3], r.path + ": optimizer");
  const std::vector<std::string> estimates = Fields(r, "estimates", '/', 2);
  c.eval_interval = IntegerOf(estimates[0], r.path + ": estimates");
  c.eval_iters = IntegerOf(estimates[1], r.path + ": estimates");
  return c;
}

// The optimizer a fine-tuning run describes in its identity (Optimizer::Describe), over `model`'s
// parameters: Adam or SGD with one parameter group; its own description must be the receipt's.
std::unique_ptr<optim::Optimizer> OptimizerOf(const receipt::Receipt& r, nn::Module& model) {
  const std::string& described = IdentityValue(r, "optimizer");
  std::map<std::string, std::string> fields;
  const std::vector<std::string> words = Split(described, ' ');
  for (size_t i = 1; i < words.size(); ++i) {
    const size_t eq = words[i].find('=');
    if (eq != std::string::npos) fields[words[i].substr(0, eq)] = words[i].substr(eq + 1);
  }
  auto field = [&](const char* key) {
    auto it = fields.find(key);
    LOCKSTEP_REQUIRE_FORMAT(it != fields.end(), r.path << ": the optimizer '" << described << "' has no " << key);
    return it->second;
  };
  const std::vector<std::string> groups = Split(field("groups"), ',');
  LOCKSTEP_REQUIRE(groups.size() == 1, r.path << ": the optimizer '" << described
                                              << "' has several parameter groups: this lockstep rebuilds one");
  const float weight_decay = FloatOfBits(Split(groups[0], '/')[0], r.path + ": optimizer");
  const float lr = FloatOfBits(field("lr"), r.path + ": optimizer");
  std::unique_ptr<optim::Optimizer> optimizer;
  if (words[0] == "adam") {
    optim::AdamOptions o;
    o.lr = lr;
    o.beta1 = FloatOfBits(field("beta1"), r.path + ": optimizer");
    o.beta2 = FloatOfBits(field("beta2"), r.path + ": optimizer");
    o.eps = FloatOfBits(field("eps"), r.path + ": optimizer");
    o.weight_decay = weight_decay;
    o.decoupled_weight_decay = field("decoupled") == "1";
    optimizer = std::make_unique<optim::Adam>(model.NamedParameters(), o);
  } else if (words[0] == "sgd") {
    optim::SgdOptions o;
    o.lr = lr;
    o.momentum = FloatOfBits(field("momentum"), r.path + ": optimizer");
    o.dampening = FloatOfBits(field("dampening"), r.path + ": optimizer");
    o.nesterov = field("nesterov") == "1";
    o.weight_decay = weight_decay;
    optimizer = std::make_unique<optim::Sgd>(model.NamedParameters(), o);
  }
  LOCKSTEP_REQUIRE(optimizer != nullptr && optimizer->Describe() == described,
                   r.path << ": the optimizer '" << described << "' is not one this lockstep rebuilds over the model "
                                                                  "given");
  return optimizer;
}

}  // namespace

std::string Compare(const receipt::Receipt& r, const StepDigests& got) {
  if (got.step < 1 || got.step > r.last_step()) return "";
  const receipt::StepEntry& want = r.steps[got.step - 1];
  if (want.batch != got.batch) {
    return "step " + std::to_string(got.step) + ": the batch differs (receipt " + receipt::Hex(want.batch) +
           ", re-executed " + receipt::Hex(got.batch) + ")";
  }
  if (want.state != got.state) {
    return "step " + std::to_string(got.step) + ": the state after it differs (receipt " + receipt::Hex(want.state) +
           ", re-executed " + receipt::Hex(got.state) + ")";
  }
  return "";
}

namespace {

void RequireReplayable(const receipt::Receipt& r) {
  LOCKSTEP_REQUIRE(r.contract == kContractVersion, r.path << ": the receipt was written under contract version "
                                                          << r.contract << "; this lockstep computes version "
                                                          << kContractVersion);
  LOCKSTEP_REQUIRE(r.task == "mnist" || r.task == "gpt" || r.task == "fine-tune" || r.task == "fit",
                   r.path << ": task '" << r.task << "': this lockstep re-executes mnist, gpt, fine-tune and fit runs");
}

}  // namespace

Replay::Replay(const receipt::Receipt& r, const Dataset& train_set, const receipt::Store& store, const FitModel* fit)
    : receipt_(r), store_(store), train_set_(train_set) {
  RequireReplayable(r);
  if (r.task == "fit") {
    LOCKSTEP_REQUIRE(fit != nullptr && fit->model != nullptr && fit->optimizer != nullptr,
                     r.path << ": a fit() run's receipt is re-executed on a model and optimizer made as the run's "
                               "were: give them");
    fit_ = *fit;
    const std::map<std::string, std::string> got =
        train::FitIdentity(*fit_.model, *fit_.optimizer, 0, 1, train_set_);
    for (const char* key : {"model", "optimizer"}) {
      LOCKSTEP_REQUIRE(got.at(key) == IdentityValue(r, key),
                       "the " << key << " given is not the receipt's: it is " << got.at(key) << ", " << r.path
                              << " records " << IdentityValue(r, key));
    }
    CheckData(got.at("data"), "the given training set");
    const int64_t batch_size = IntegerOf(IdentityValue(r, "batch_size"), r.path + ": batch_size");
    LOCKSTEP_REQUIRE(batch_size >= 1 && batch_size <= train_set_.size(),
                     r.path << ": batch size " << batch_size << " does not fit the data");
    return;
  }
  LOCKSTEP_REQUIRE(r.task == "mnist", r.path << ": task '" << r.task << "' is not re-executed on a data set given in "
                                                                          "memory");
  const train::MnistConfig config = ConfigOf(r);
  steps_per_epoch_ = train_set_.size() / config.batch_size;
  CheckData(train_set_.Fingerprint(), "the given training set");
  LOCKSTEP_REQUIRE(steps_per_epoch_ >= 1, r.path << ": batch size " << config.batch_size << " exceeds the data");
}

void Replay::CheckData(const std::string& got, const std::string& source) const {
  const std::string& want = IdentityValue(receipt_, "data");
  LOCKSTEP_REQUIRE(got == want, "the training data in " << source << " is not the receipt's (fingerprint " << got
                                                        << ", " << receipt_.path << " records " << want << ")");
}

Replay::Replay(const receipt::Receipt& r, const std::string& data, const receipt::Store& store,
               const ModelSource* model)
    : receipt_(r), store_(store), model_(model) {
  RequireReplayable(r);
  LOCKSTEP_REQUIRE(r.task != "fit", r.path << ": a fit() run's receipt is re-executed where fit() runs (Python's or "
                                              "the npm package's verify_run/verifyRun, given the model, optimizer "
                                              "and data set)");
  if (r.task == "fine-tune") {
    LOCKSTEP_REQUIRE(model != nullptr && model->make, r.path << ": a fine-tuning run's receipt is re-executed from the "
                                                                 "model it started from: give it (verify-run --model "
                                                                 "FILE.onnx)");
    for (const auto& [key, value] : model->identity) {
      LOCKSTEP_REQUIRE(IdentityValue(r, key.c_str()) == value,
                       "the model given is not the receipt's: its " << key << " is " << value << ", " << r.path
                                                                    << " records " << IdentityValue(r, key.c_str()));
    }
    // The data as the run had it: MNIST's normalisation or none, whichever the fingerprint records.
    const std::string source = data.empty() ? ".deps/data/mnist" : data;
    train_set_ = LoadIdxDataset(source + "/train-images.idx", source + "/train-labels.idx");
    if (train_set_.Fingerprint() != IdentityValue(r, "data")) train::NormalizeMnist(&train_set_);
    CheckData(train_set_.Fingerprint(), source);
    return;
  }
  const std::string& want = IdentityValue(r, "data");
  std::string got;
  const std::string source = !data.empty() ? data : r.task == "gpt" ? ".deps/data/fortunes/input.txt" : ".deps/data/mnist";
  if (r.task == "gpt") {
    gpt_ = std::make_unique<train::GptTrainConfig>(GptConfigOf(r));
    corpus_ = std::make_unique<CharCorpus>(MakeCharCorpus(ReadTextFile(source)));
    LOCKSTEP_REQUIRE(corpus_->vocab_size() == gpt_->model.vocab_size,
                     "the text " << source << " is not the receipt's (" << corpus_->vocab_size() << " distinct characters, "
                                 << r.path << " records " << gpt_->model.vocab_size << ")");
    const train::GptTrainer probe(*gpt_, *corpus_);  // its identity, data fingerprint included
    got = probe.identity().at("data");
    LOCKSTEP_REQUIRE_FORMAT(probe.identity() == r.identity || got != want,
                            r.path << ": the identity does not describe a run this lockstep makes");
  } else {
    const train::MnistConfig config = ConfigOf(r);
    train_set_ = LoadIdxDataset(source + "/train-images.idx", source + "/train-labels.idx");
    train::NormalizeMnist(&train_set_);
    got = train_set_.Fingerprint();
    steps_per_epoch_ = train_set_.size() / config.batch_size;
    LOCKSTEP_REQUIRE(steps_per_epoch_ >= 1, r.path << ": batch size " << config.batch_size << " exceeds the data");
  }
  CheckData(got, source);
}

Replay::~Replay() = default;

int64_t Replay::CheckStart(const std::string& state_path) const {
  int64_t start = -1;
  receipt::Digest state{};
  Run(state_path, -1, [&](const StepDigests& d) {
    start = d.step;
    state = d.state;
    return false;
  });
  LOCKSTEP_REQUIRE_STATE(start <= receipt_.last_step(), state_path << " is at step " << start << "; "
                                                                   << receipt_.path << " ends at step "
                                                                   << receipt_.last_step());
  LOCKSTEP_REQUIRE_STATE(state == receipt_.StateAt(start),
                         "the checkpoint " << state_path << " does not match its receipt: its state at step " << start
                                           << " is " << receipt::Hex(state) << ", " << receipt_.path << " records "
                                           << receipt::Hex(receipt_.StateAt(start)));
  return start;
}

std::string Replay::Run(const std::string& state_path, int64_t last,
                        const std::function<bool(const StepDigests&)>& on_step, int64_t trace_step,
                        std::vector<uint8_t>* trace, std::vector<uint8_t>* values) const {
  struct Stop {};
  auto digests = [&](int64_t step, const receipt::Digest& batch, const receipt::Digest& state) {
    if (!on_step({step, batch, state})) throw Stop{};
  };
  trace::Options trace_options;
  if (trace_step > 0) {
    trace_options.values_from = trace_options.values_to = trace_step;
    trace_options.source = "lockstep verify: re-execution of " + receipt_.path;
  }
  if (receipt_.task == "fit") {
    LOCKSTEP_REQUIRE(trace_step <= 0, receipt_.path << ": tracing a fit() run's re-execution is not supported yet");
    train::FitRun run(*fit_.model, *fit_.optimizer, train_set_,
                      IntegerOf(IdentityValue(receipt_, "batch_size"), receipt_.path + ": batch_size"),
                      static_cast<uint64_t>(IntegerOf(IdentityValue(receipt_, "seed"), receipt_.path + ": seed")));
    run.Resume(store_.Read(state_path, kMaxTrainingStateBytes), state_path);
    receipt::ReceiptOptions options;
    options.step_digests = digests;
    options.background = false;  // each step's digests reported before the next step runs
    try {
      run.StartReceipt(options, receipt_.last_step());
      while (run.steps_done() < last) run.Step();
    } catch (const Stop&) {
      return "";
    }
    // A stretch that stops before the last step has no trained model to compare.
    return last == receipt_.last_step() ? ModelHash(*fit_.model) : "";
  }
  if (receipt_.task == "fine-tune") {
    const std::shared_ptr<nn::Module> model =
        model_->make(static_cast<uint64_t>(IntegerOf(IdentityValue(receipt_, "seed"), receipt_.path + ": seed")));
    const std::unique_ptr<optim::Optimizer> optimizer = OptimizerOf(receipt_, *model);
    train::FineTuneConfig config;
    config.batch_size = IntegerOf(IdentityValue(receipt_, "batch_size"), receipt_.path + ": batch_size");
    config.model_identity = model_->identity;
    config.model_identity["seed"] = IdentityValue(receipt_, "seed");
    const int64_t per_epoch = (train_set_.size() + config.batch_size - 1) / config.batch_size;
    // Enough epochs for `last`; -1: only the starting state is reported (then the run stops), from
    // whatever step the state is at.
    config.max_steps = last;
    config.epochs = last < 0 ? receipt_.last_step() / per_epoch + 1 : last / per_epoch + 1;
    config.resume_path = state_path;
    config.resume_state = store_.Read(state_path, kMaxTrainingStateBytes);
    config.receipt.step_digests = digests;
    LOCKSTEP_REQUIRE(trace_step <= 0, receipt_.path << ": tracing a fine-tuning run's re-execution is not supported yet");
    try {
      return train::RunFineTune(config, *model, *optimizer, train_set_).trained_hash;
    } catch (const Stop&) {
      return "";
    }
  }
  if (gpt_) {
    train::GptTrainConfig config = *gpt_;
    config.resume_path = state_path;
    config.resume_state = store_.Read(state_path, kMaxTrainingStateBytes);
    config.stop_after = last;
    config.receipt.step_digests = digests;
    config.trace = trace_options;
    config.trace_in_memory = trace_step > 0;
    train::GptResult result;
    try {
      result = train::RunGpt(config, *corpus_, nullptr);
    } catch (const Stop&) {
      return "";
    }
    if (trace != nullptr) *trace = result.trace;
    if (values != nullptr) *values = result.trace_values;
    // A run stopped before its last step has no trained model to compare.
    return last == config.steps ? result.trained_hash : "";
  }
  train::MnistConfig config = ConfigOf(receipt_);
  config.resume_path = state_path;
  config.resume_state = store_.Read(state_path, kMaxTrainingStateBytes);
  // Enough epochs for `last` (-1: none, only the starting state is reported).
  config.max_steps = last < 0 ? 0 : last;
  config.epochs = last < 0 ? 1 : last / steps_per_epoch_ + 1;
  config.receipt.step_digests = digests;
  config.trace = trace_options;
  config.trace_in_memory = trace_step > 0;
  train::MnistResult result;
  try {
    result = train::RunMnistOn(config, train_set_, train_set_, nullptr);
  } catch (const Stop&) {
    return "";
  }
  if (trace != nullptr) *trace = result.trace;
  if (values != nullptr) *values = result.trace_values;
  return result.trained_hash;
}

std::string CheckedCheckpoint(const receipt::Receipt& receipt_, const receipt::CheckpointEntry& c,
                              const receipt::Store& store) {
  const std::string path = receipt_.CheckpointPath(c);
  const std::vector<uint8_t> bytes = store.Read(path, kMaxTrainingStateBytes);
  const std::string got = Sha256Hex(bytes.data(), bytes.size());
  LOCKSTEP_REQUIRE_STATE(got == c.sha256, "the checkpoint " << path << " does not match its receipt: its SHA-256 is "
                                                            << got << ", " << receipt_.path << " records " << c.sha256);
  return path;
}

}  // namespace verify
}  // namespace lockstep
