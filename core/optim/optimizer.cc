#include "core/optim/optimizer.h"

#include <stdio.h>
#include <string.h>

#include <map>

#include "core/error.h"
#include "core/sha256.h"
#include "core/ops_internal.h"
#include "core/backend/host.h"
#include "simd/fp_mode.h"

namespace lockstep {
namespace optim {

namespace {

std::string Bits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  char text[11];
  snprintf(text, sizeof text, "0x%08x", bits);
  return text;
}

// base^exponent in float64 by repeated squaring: a fixed sequence of multiplications.
double IntPow(double base, int64_t exponent) {
  double result = 1.0;
  while (exponent > 0) {
    if (exponent & 1) result = result * base;
    base = base * base;
    exponent >>= 1;
  }
  return result;
}

std::vector<ParamGroup> OneGroup(const nn::NamedTensors& params, float weight_decay) {
  return {ParamGroup{params, weight_decay}};
}

// Zeros shaped like every parameter, in group order.
std::vector<Tensor> ZerosLike(const std::vector<ParamGroup>& groups) {
  std::vector<Tensor> out;
  for (const ParamGroup& g : groups) {
    for (const auto& [name, p] : g.params) out.push_back(Tensor::Zeros(p.shape()));
  }
  return out;
}


void RequireFinite(float v, bool positive_or_zero, const char* what) {
  LOCKSTEP_REQUIRE(v == v && v - v == 0.0f && (!positive_or_zero || v >= 0.0f),
                   what << " must be " << (positive_or_zero ? "a finite number >= 0" : "finite") << ", got " << v);
}

AdamOptions ToAdamOptions(const AdamWOptions& o) {
  AdamOptions a;
  a.lr = o.lr;
  a.beta1 = o.beta1;
  a.beta2 = o.beta2;
  a.eps = o.eps;
  a.weight_decay = o.weight_decay;
  a.decoupled_weight_decay = true;
  return a;
}

}  // namespace

Optimizer::Optimizer(std::vector<ParamGroup> groups, float lr) : groups_(std::move(groups)), lr_(lr) {
  RequireFinite(lr, true, "optimizer: lr");
  for (const ParamGroup& g : groups_) RequireFinite(g.weight_decay, true, "optimizer: weight_decay");
  for (const ParamGroup& g : groups_) {
    for (const auto& [name, p] : g.params) {
      LOCKSTEP_REQUIRE(p.dtype() == DType::kFloat32 && p.is_contiguous() && p.requires_grad(),
                       "optimizer: parameter '" << name << "' must be a contiguous float32 tensor that requires grad");
    }
  }
}

void Optimizer::RequireParametersOf(const nn::Module& model, const char* what) const {
  size_t count = 0;
  for (const ParamGroup& g : groups_) count += g.params.size();
  size_t trainable = 0;
  for (const auto& [name, p] : model.NamedParameters()) {
    if (!p.requires_grad()) continue;
    ++trainable;
    bool found = false;
    for (const ParamGroup& g : groups_) {
      for (const auto& [own_name, own] : g.params) found = found || own.same(p);
    }
    LOCKSTEP_REQUIRE_STATE(found, what << ": the optimizer does not update the model's parameter '" << name
                                       << "': it was created for another model (create it from this model's "
                                          "parameters)");
  }
  LOCKSTEP_REQUIRE_STATE(count == trainable, what << ": the optimizer updates " << count
                                                  << " parameters, the model has " << trainable
                                                  << " trainable ones: it was created for another model");
}

std::vector<Tensor> Optimizer::AllParameters() const {
  std::vector<Tensor> out;
  for (const ParamGroup& g : groups_) {
    for (const auto& [name, p] : g.params) out.push_back(p);
  }
  return out;
}

void Optimizer::Step() {
  if (before_update_) before_update_();
  const simd::ContractFloatingPointScope fp_mode;
  if (!trace::Active()) {
    DoStep();
    return;
  }
  const std::vector<Tensor> params = AllParameters();
  trace::RecordParameters("grad", params, /*gradients=*/true);
  DoStep();
  trace::RecordParameters("update", params, /*gradients=*/false);
}

void Optimizer::ZeroGrad() {
  for (ParamGroup& g : groups_) {
    for (auto& [name, p] : g.params) p.ZeroGrad();
  }
}

void Optimizer::ValidateState(const nn::NamedTensors& state) const {
  std::map<std::string, Tensor> given(state.begin(), state.end());
  for (const auto& [name, t] : State()) {
    auto it = given.find(name);
    LOCKSTEP_REQUIRE_FORMAT(it != given.end(), "optimizer state: missing tensor '" << name << "'");
    LOCKSTEP_REQUIRE_FORMAT(it->second.shape() == t.shape(), "optimizer state: '" << name << "' has shape "
                                                                            << ShapeString(it->second.shape())
                                                                            << ", expected " << ShapeString(t.shape()));
  }
  LOCKSTEP_REQUIRE_FORMAT(given.size() == State().size(), "optimizer state: " << given.size() << " tensors, expected "
                                                                         << State().size());
}

void Optimizer::LoadState(const nn::NamedTensors& state, int64_t step) {
  ValidateState(state);
  std::map<std::string, Tensor> given(state.begin(), state.end());
  for (const auto& [name, t] : State()) t.CopyFrom(given[name]);
  step_ = step;
}

Sgd::Sgd(std::vector<ParamGroup> groups, const SgdOptions& options)
    : Optimizer(std::move(groups), options.lr), options_(options), momentum_(ZerosLike(groups_)) {
  RequireFinite(options.momentum, true, "SGD: momentum");
  RequireFinite(options.dampening, false, "SGD: dampening");
  RequireFinite(options.weight_decay, true, "SGD: weight_decay");
  LOCKSTEP_REQUIRE(!options.nesterov || (options.momentum > 0.0f && options.dampening == 0.0f),
                   "SGD: Nesterov momentum needs momentum > 0 and dampening 0");
}

Sgd::Sgd(const nn::NamedTensors& params, const SgdOptions& options)
    : Sgd(OneGroup(params, options.weight_decay), options) {}

void Sgd::DoStep() {
  size_t k = 0;
  for (ParamGroup& group : groups_) {
    for (auto& [name, p] : group.params) {
      Tensor& buf = momentum_[k++];
      if (!p.grad().defined()) continue;
      const Tensor grad = p.grad().Contiguous();
      const backend::SgdCall call{p.data_f32(), grad.data_f32(), buf.data_f32(), static_cast<size_t>(p.numel()),
                                  lr_, options_.momentum, options_.dampening, group.weight_decay,
                                  options_.nesterov, step_ == 0};
      Kernels().SgdUpdate(&call);
    }
  }
  ++step_;
}

nn::NamedTensors Sgd::State() const {
  nn::NamedTensors out;
  size_t k = 0;
  for (const ParamGroup& g : groups_) {
    for (const auto& [name, p] : g.params) out.emplace_back("momentum_buffer." + name, momentum_[k++]);
  }
  return out;
}

Adam::Adam(std::vector<ParamGroup> groups, const AdamOptions& options)
    : Optimizer(std::move(groups), options.lr), options_(options), exp_avg_(ZerosLike(groups_)),
      exp_avg_sq_(ZerosLike(groups_)) {
  LOCKSTEP_REQUIRE(options.beta1 >= 0.0f && options.beta1 < 1.0f && options.beta2 >= 0.0f && options.beta2 < 1.0f,
                   "Adam: betas must be in [0, 1), got " << options.beta1 << ", " << options.beta2);
  RequireFinite(options.eps, true, "Adam: eps");
  RequireFinite(options.weight_decay, true, "Adam: weight_decay");
}

AdamW::AdamW(std::vector<ParamGroup> groups, const AdamWOptions& options)
    : Adam(std::move(groups), ToAdamOptions(options)) {}

AdamW::AdamW(const nn::NamedTensors& params, const AdamWOptions& options)
    : Adam(OneGroup(params, options.weight_decay), ToAdamOptions(options)) {}

Adam::Adam(const nn::NamedTensors& params, const AdamOptions& options)
    : Adam(OneGroup(params, options.weight_decay), options) {}

void Adam::DoStep() {
  ++step_;
  const double bias_correction1 = 1.0 - IntPow(options_.beta1, step_);
  const double bias_correction2 = 1.0 - IntPow(options_.beta2, step_);
  const float step_size = static_cast<float>(static_cast<double>(lr_) / bias_correction1);
  const float sqrt_bias_correction2 = static_cast<float>(__builtin_sqrt(bias_correction2));
  size_t k = 0;
  for (ParamGroup& group : groups_) {
    for (auto& [name, p] : group.params) {
      Tensor& m = exp_avg_[k];
      Tensor& v = exp_avg_sq_[k++];
      if (!p.grad().defined()) continue;
      const Tensor grad = p.grad().Contiguous();
      const backend::AdamCall call{p.data_f32(), grad.data_f32(), m.data_f32(), v.data_f32(),
                                   static_cast<size_t>(p.numel()), lr_, options_.beta1, options_.beta2,
                                   options_.eps, group.weight_decay, options_.decoupled_weight_decay, step_size,
                                   sqrt_bias_correction2};
      Kernels().AdamUpdate(&call);
    }
  }
}

nn::NamedTensors Adam::State() const {
  nn::NamedTensors out;
  size_t k = 0;
  for (const ParamGroup& g : groups_) {
    for (const auto& [name, p] : g.params) {
      out.emplace_back("exp_avg." + name, exp_avg_[k]);
      out.emplace_back("exp_avg_sq." + name, exp_avg_sq_[k++]);
    }
  }
  return out;
}

float ClipGradNorm(const std::vector<Tensor>& params, float max_norm) {
  const simd::ContractFloatingPointScope fp_mode;
  int64_t count = 0;
  for (const Tensor& p : params) count += p.grad().defined() ? 1 : 0;
  if (count == 0) return 0.0f;
  // Per parameter the canonical sum of squares, then the pairwise tree over parameters.
  const Kernels kernels;
  Tensor sums = Tensor::Empty({count});
  int64_t i = 0;
  for (const Tensor& p : params) {
    if (!p.grad().defined()) continue;
    const Tensor g = p.grad().Contiguous();
    Tensor squares = Tensor::Empty(g.shape());
    const size_t n = static_cast<size_t>(g.numel());
    kernels.Unary(backend::UnaryOp::kSquare, g.data_f32(), squares.data_f32(), n);
    kernels.SumAxis(squares.data_f32(), 1, n, 1, sums.data_f32() + i++);
  }
  CombinePairwise(sums.data_f32(), count, 1);
  const float norm = __builtin_sqrtf(sums.Slice(0, 0, 1).item());
  const float coefficient = max_norm / (norm + 1e-6f);
  if (coefficient < 1.0f) {
    for (const Tensor& p : params) {
      if (!p.grad().defined()) continue;
      Tensor g = p.grad().Contiguous();
      kernels.BinaryScalarRight(backend::BinaryOp::kMul, g.data_f32(), coefficient, g.data_f32(), static_cast<size_t>(g.numel()));
      const_cast<Tensor&>(p).SetGrad(g);
    }
  }
  return norm;
}

float StepLr(float base_lr, int64_t epoch, int64_t step_size, float gamma) {
  const simd::ContractFloatingPointScope fp_mode;  // gamma^k can be subnormal
  LOCKSTEP_REQUIRE(step_size > 0, "StepLr: step_size must be positive, got " << step_size);
  return static_cast<float>(base_lr * IntPow(gamma, epoch / step_size));
}

float CosineWithWarmup(float base_lr, float min_lr, int64_t step, int64_t warmup, int64_t decay_steps) {
  const simd::ContractFloatingPointScope fp_mode;
  LOCKSTEP_REQUIRE(warmup >= 0 && decay_steps > warmup, "CosineWithWarmup: decay_steps (" << decay_steps
                                                            << ") must exceed warmup_steps (" << warmup << ") >= 0");
  if (step < warmup) return static_cast<float>(static_cast<double>(base_lr) * static_cast<double>(step + 1) / static_cast<double>(warmup + 1));
  if (step > decay_steps) return min_lr;
  const double ratio = static_cast<double>(step - warmup) / static_cast<double>(decay_steps - warmup);
  const double coefficient = 0.5 * (1.0 + host::CosPi(ratio));
  return static_cast<float>(min_lr + coefficient * (static_cast<double>(base_lr) - min_lr));
}

}  // namespace optim
}  // namespace lockstep

namespace lockstep {
namespace optim {

std::string Optimizer::Describe() const {
  std::string out = DescribeOptions() + " lr=" + Bits(lr_) + " groups=";
  for (size_t i = 0; i < groups_.size(); ++i) {
    Sha256 names;
    for (const auto& [name, t] : groups_[i].params) names.Update(name.data(), name.size() + 1);  // with its NUL
    out += (i > 0 ? "," : "") + Bits(groups_[i].weight_decay) + "/" + std::to_string(groups_[i].params.size()) + "/" +
           names.HexDigest().substr(0, 16);
  }
  return out;
}

std::string Sgd::DescribeOptions() const {
  return "sgd momentum=" + Bits(options_.momentum) + " dampening=" + Bits(options_.dampening) +
         " nesterov=" + (options_.nesterov ? "1" : "0");
}

std::string Adam::DescribeOptions() const {
  return "adam beta1=" + Bits(options_.beta1) + " beta2=" + Bits(options_.beta2) + " eps=" + Bits(options_.eps) +
         " decoupled=" + (options_.decoupled_weight_decay ? "1" : "0");
}

}  // namespace optim
}  // namespace lockstep
