#include "verify/replay.h"

#include <stdlib.h>
#include <string.h>

#include "core/checkpoint.h"
#include "core/contract.h"
#include "core/error.h"
#include "core/io/files.h"
#include "core/sha256.h"
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

Replay::Replay(const receipt::Receipt& r, const std::string& data_dir) : receipt_(r) {
  LOCKSTEP_REQUIRE(r.contract == kContractVersion, r.path << ": the receipt was written under contract version "
                                                          << r.contract << "; this lockstep computes version "
                                                          << kContractVersion);
  LOCKSTEP_REQUIRE(r.task == "mnist", r.path << ": task '" << r.task << "': this lockstep re-executes mnist runs");
  const train::MnistConfig config = ConfigOf(r);
  train_set_ = LoadIdxDataset(data_dir + "/train-images.idx", data_dir + "/train-labels.idx");
  train::NormalizeMnist(&train_set_);
  const std::string& want = IdentityValue(r, "data");
  const std::string got = train_set_.Fingerprint();
  LOCKSTEP_REQUIRE(got == want, "the training data in " << data_dir << " is not the receipt's (fingerprint " << got
                                                        << ", " << r.path << " records " << want << ")");
  steps_per_epoch_ = train_set_.size() / config.batch_size;
  LOCKSTEP_REQUIRE(steps_per_epoch_ >= 1, r.path << ": batch size " << config.batch_size << " exceeds the data");
}

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
  train::MnistConfig config = ConfigOf(receipt_);
  config.resume_path = state_path;
  // Enough epochs for `last` (-1: none, only the starting state is reported).
  config.max_steps = last < 0 ? 0 : last;
  config.epochs = last < 0 ? 1 : last / steps_per_epoch_ + 1;
  struct Stop {};
  config.receipt.step_digests = [&](int64_t step, const receipt::Digest& batch, const receipt::Digest& state) {
    if (!on_step({step, batch, state})) throw Stop{};
  };
  if (trace_step > 0) {
    config.trace_in_memory = true;
    config.trace.values_from = config.trace.values_to = trace_step;
    config.trace.source = "lockstep verify: re-execution of " + receipt_.path;
  }
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

std::string Replay::CheckpointFile(const receipt::CheckpointEntry& c) const {
  const std::string path = receipt_.CheckpointPath(c);
  const std::vector<uint8_t> bytes = ReadWholeFile(path, kMaxTrainingStateBytes);
  const std::string got = Sha256Hex(bytes.data(), bytes.size());
  LOCKSTEP_REQUIRE_STATE(got == c.sha256, "the checkpoint " << path << " does not match its receipt: its SHA-256 is "
                                                            << got << ", " << receipt_.path << " records " << c.sha256);
  return path;
}

}  // namespace verify
}  // namespace lockstep
