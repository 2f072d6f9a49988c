#include "core/train/fit_run.h"

#include "core/checkpoint.h"
#include "core/error.h"
#include "core/sha256.h"
#include "core/train/mnist.h"

namespace lockstep {
namespace train {

std::string ArchitectureOf(const nn::Module& model) {
  Sha256 h;
  for (const auto& [name, t] : model.StateDict()) {
    const std::string entry = name + ":" + DTypeName(t.dtype()) + ShapeString(t.shape()) + ";";
    h.Update(entry.data(), entry.size());
  }
  return h.HexDigest();
}

std::map<std::string, std::string> FitIdentity(const nn::Module& model, const optim::Optimizer& optimizer,
                                               uint64_t seed, int64_t batch_size, const Dataset& train_set) {
  return {{"model", "arch:" + ArchitectureOf(model)},
          {"optimizer", optimizer.Describe()},
          {"seed", std::to_string(seed)},
          {"batch_size", std::to_string(batch_size)},
          {"data", train_set.Fingerprint()}};
}

FitRun::FitRun(nn::Module& model, optim::Optimizer& optimizer, const Dataset& data, int64_t batch_size,
               uint64_t seed)
    : model_(model),
      optimizer_(optimizer),
      data_(data),
      trainer_(model, optimizer, data, batch_size, seed),
      seed_(seed),
      batch_size_(batch_size),
      identity_(FitIdentity(model, optimizer, seed, batch_size, data)) {}

FitRun::~FitRun() = default;

void FitRun::UseMnistIdentity(float lr) {
  MnistConfig c;
  c.seed = seed_;
  c.batch_size = batch_size_;
  c.lr = lr;
  identity_ = MnistRunIdentity(c, data_);
  task_ = "mnist";
}

float FitRun::Step() {
  const float loss = trainer_.Step();
  if (receipt_) {
    receipt_->AfterStep(trainer_.steps_done(), model_, optimizer_, DropoutOffsets(model_), batch_x_, batch_y_);
  }
  return loss;
}

std::vector<uint8_t> FitRun::StateBytes() const {
  TrainingPosition at;
  at.epoch = trainer_.steps_done() / trainer_.steps_per_epoch();
  at.batch = trainer_.steps_done() % trainer_.steps_per_epoch();
  at.rng_offsets = DropoutOffsets(model_);
  at.run = identity_;
  return EncodeTrainingState(model_, optimizer_, at);
}

void FitRun::Resume(const std::vector<uint8_t>& bytes, const std::string& what) {
  RequireSameRun(PeekTrainingState(bytes, what), identity_, what);
  const TrainingPosition at = LoadTrainingStateFromBytes(bytes, what, model_, optimizer_);
  RestoreDropoutOffsets(model_, at.rng_offsets, what);
  LOCKSTEP_REQUIRE_STATE(at.batch < trainer_.steps_per_epoch(),
                         what << ": the state is at batch " << at.batch << " of an epoch of "
                              << trainer_.steps_per_epoch());
  trainer_.Seek(at.epoch, at.batch);
}

void FitRun::StartReceipt(const receipt::ReceiptOptions& options, int64_t total_steps) {
  LOCKSTEP_REQUIRE(options.every >= 0, "fit: the receipt's steps between kept states must be >= 0, got "
                                           << options.every);
  trainer_.set_batch_observer([this](const Tensor& x, const Tensor& y) { batch_x_ = x, batch_y_ = y; });
  receipt_ = std::make_unique<receipt::RunReceipt>(options, task_, identity_, ModelHash(model_), trainer_.steps_done(),
                                                   total_steps, model_, optimizer_, DropoutOffsets(model_),
                                                   [this](int64_t) { return StateBytes(); });
}

void FitRun::FinishReceipt() {
  LOCKSTEP_REQUIRE_STATE(receipt_ != nullptr, "fit: no receipt was started");
  receipt_->Finish(ModelHash(model_));
  receipt_.reset();
  trainer_.set_batch_observer(nullptr);
}

}  // namespace train
}  // namespace lockstep
