// Optimizers: SGD (momentum, Nesterov, weight decay), Adam and AdamW, over parameter groups with
// their own weight decay. Updates run the kernels of simd/optimizer.h; per-step scalars (bias
// corrections) are computed in float64 by fixed sequences of basic operations and rounded once.
#ifndef LOCKSTEP_CORE_OPTIM_OPTIMIZER_H_
#define LOCKSTEP_CORE_OPTIM_OPTIMIZER_H_

#include <stdint.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/nn/module.h"
#include "core/trace/trace.h"

namespace lockstep {
namespace optim {

struct ParamGroup {
  nn::NamedTensors params;
  float weight_decay = 0.0f;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // One update of every parameter that has a gradient (in an open trace, the gradients before it
  // and the parameters after it are recorded by name).
  void Step();
  void ZeroGrad();
  float lr() const { return lr_; }
  void set_lr(float lr) { lr_ = lr; }
  int64_t step_count() const { return step_; }
  // Optimizer state for checkpoints: "<kind>.<param name>" tensors plus the step count.
  virtual nn::NamedTensors State() const = 0;
  void LoadState(const nn::NamedTensors& state, int64_t step);
  void ValidateState(const nn::NamedTensors& state) const;
  // Throws (kind kState) unless this optimizer updates exactly the model's trainable parameters:
  // an optimizer made for another model would train nothing, silently.
  void RequireParametersOf(const nn::Module& model, const char* what) const;
  // What it is, for a run's identity (receipts): its kind and options, floats as their bits, the
  // learning rate it has now, and each parameter group's weight decay, size and the SHA-256 of its
  // parameters' names, e.g. "adam lr=0x3a83126f beta1=0x3f666666 ... groups=0x00000000/10/1a2b3c4d".
  std::string Describe() const;
  // Called at the start of each Step, before any parameter or state changes (empty: none): a
  // receipt's step hasher reads the state in place until then (core/receipt/step_hasher.h).
  void set_before_update(std::function<void()> observer) { before_update_ = std::move(observer); }

 protected:
  virtual std::string DescribeOptions() const = 0;
  Optimizer(std::vector<ParamGroup> groups, float lr);
  virtual void DoStep() = 0;
  std::vector<Tensor> AllParameters() const;
  std::vector<ParamGroup> groups_;
  float lr_;
  int64_t step_ = 0;

 private:
  std::function<void()> before_update_;
};

struct SgdOptions {
  float lr = 0.01f, momentum = 0.0f, dampening = 0.0f, weight_decay = 0.0f;
  bool nesterov = false;
};

class Sgd : public Optimizer {
 public:
  Sgd(std::vector<ParamGroup> groups, const SgdOptions& options);
  Sgd(const nn::NamedTensors& params, const SgdOptions& options);
  nn::NamedTensors State() const override;

 private:
  std::string DescribeOptions() const override;
  void DoStep() override;
  SgdOptions options_;
  std::vector<Tensor> momentum_;  // one per parameter, in group order
};

struct AdamOptions {
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.0f;
  bool decoupled_weight_decay = false;  // true: AdamW
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<ParamGroup> groups, const AdamOptions& options);
  Adam(const nn::NamedTensors& params, const AdamOptions& options);
  nn::NamedTensors State() const override;

 private:
  std::string DescribeOptions() const override;
  void DoStep() override;
  AdamOptions options_;
  std::vector<Tensor> exp_avg_, exp_avg_sq_;
};

// AdamW: Adam with decoupled weight decay, PyTorch's defaults (weight decay 0.01).
struct AdamWOptions {
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.01f;
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<ParamGroup> groups, const AdamWOptions& options);
  AdamW(const nn::NamedTensors& params, const AdamWOptions& options = AdamWOptions());
};

// Scales every gradient by max_norm / (norm + 1e-6) when the global norm exceeds max_norm.
// norm = sqrt(pairwise sum over parameters, in order, of each gradient's canonical sum of
// squares). Returns the norm before clipping.
float ClipGradNorm(const std::vector<Tensor>& params, float max_norm);

// Learning-rate schedules.
float StepLr(float base_lr, int64_t epoch, int64_t step_size, float gamma);
// nanoGPT's: linear warmup over warmup steps, then cosine decay to min_lr at decay_steps.
float CosineWithWarmup(float base_lr, float min_lr, int64_t step, int64_t warmup, int64_t decay_steps);

}  // namespace optim
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_OPTIM_OPTIMIZER_H_
