// The C ABI: models (LeNet-5 and a small MLP), checkpoints, the Adam optimizer and training steps.
#include <string.h>

#include <cmath>
#include <string>
#include <vector>

#include "bindings/native/c_api_internal.h"
#include "bindings/native/models.h"
#include "core/autograd.h"
#include "core/checkpoint.h"
#include "core/sha256.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/train/fine_tune.h"

using lockstep::capi::Boundary;
using lockstep::capi::Fail;
using lockstep::capi::RequireNonNull;

namespace {

lockstep_model* NewModel(const char* arch, uint64_t seed) {
  RequireNonNull(arch, "arch");
  const char* canonical = nullptr;
  auto module = lockstep::capi::MakeModel(arch, seed, &canonical);
  if (!module) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, std::string("unknown arch '") + arch + "', expected lenet5 or mlp");
  return new lockstep_model{canonical, module, {{"model", canonical}, {"seed", std::to_string(seed)}}};
}

}  // namespace

extern "C" {

lockstep_status lockstep_model_create(const char* arch, uint64_t seed, lockstep_model** out) {
  return Boundary(__func__, [&] {
    RequireNonNull(out, "out");
    *out = NewModel(arch, seed);
  });
}

lockstep_status lockstep_model_load(const char* arch, const char* path, lockstep_model** out) {
  return Boundary(__func__, [&] {
    RequireNonNull(path, "path");
    RequireNonNull(out, "out");
    lockstep::capi::RequireReadable(path);
    std::vector<const char*> candidates;
    if (arch == nullptr || strcmp(arch, "auto") == 0) {
      candidates = {"lenet5", "mlp"};
    } else {
      candidates = {arch};
    }
    std::string reasons, first_reason;
    for (const char* candidate : candidates) {
      std::unique_ptr<lockstep_model> model(NewModel(candidate, 0));
      try {
        lockstep::LoadModel(path, *model->module);
        *out = model.release();
        return;
      } catch (const lockstep::Error& e) {
        if (candidates.size() == 1) throw;
        if (first_reason.empty()) first_reason = e.what();
        if (first_reason == e.what() && !reasons.empty()) continue;  // not a checkpoint at all: say it once
        reasons += std::string(reasons.empty() ? "" : "; ") + candidate + ": " + e.what();
      }
    }
    Fail(LOCKSTEP_ERROR_FORMAT, std::string("'") + path + "' matches no known architecture (" + reasons + ")");
  });
}

lockstep_status lockstep_model_free(lockstep_model* model) {
  delete model;  // never fails, and leaves lockstep_last_error() as it was
  return LOCKSTEP_OK;
}

lockstep_status lockstep_model_arch(const lockstep_model* model, const char** out) {
  return Boundary(__func__, [&] {
    RequireNonNull(model, "model");
    RequireNonNull(out, "out");
    *out = model->arch;
  });
}

lockstep_status lockstep_model_forward(lockstep_model* model, const lockstep_tensor* input, lockstep_tensor** out) {
  return Boundary(__func__, [&] {
    RequireNonNull(model, "model");
    RequireNonNull(input, "input");
    RequireNonNull(out, "out");
    lockstep::capi::RequireInputShape(model->arch, input->tensor.shape());
    lockstep::NoGradGuard no_grad;
    model->module->Eval();
    lockstep::Tensor logits = (*model->module)(input->tensor);
    model->module->Train();
    *out = new lockstep_tensor{logits};
  });
}

lockstep_status lockstep_model_save(const lockstep_model* model, const char* path, char hash_out[LOCKSTEP_HASH_SIZE]) {
  return Boundary(__func__, [&] {
    RequireNonNull(model, "model");
    RequireNonNull(path, "path");
    const std::string hash = lockstep::SaveModel(path, *model->module);
    if (hash_out != nullptr) lockstep::capi::CopyHash(hash, hash_out);
  });
}

lockstep_status lockstep_canonicalize(const char* in_path, const char* out_path, char hash_out[LOCKSTEP_HASH_SIZE]) {
  return Boundary(__func__, [&] {
    RequireNonNull(in_path, "in_path");
    RequireNonNull(out_path, "out_path");
    lockstep::RequireWritableFile(out_path);
    const std::vector<uint8_t> canonical =
        lockstep::CanonicalizeCheckpoint(lockstep::ReadWholeFile(in_path, lockstep::kMaxCheckpointBytes), in_path);
    lockstep::WriteFileAtomic(out_path, canonical);
    if (hash_out != nullptr) lockstep::capi::CopyHash(lockstep::Sha256Hex(canonical.data(), canonical.size()), hash_out);
  });
}

lockstep_status lockstep_model_hash(const lockstep_model* model, char out[LOCKSTEP_HASH_SIZE]) {
  return Boundary(__func__, [&] {
    RequireNonNull(model, "model");
    RequireNonNull(out, "out");
    lockstep::capi::CopyHash(lockstep::ModelHash(*model->module), out);
  });
}

lockstep_status lockstep_adam_options_default(lockstep_adam_options* out) {
  return Boundary(__func__, [&] {
    RequireNonNull(out, "out");
    const lockstep::optim::AdamOptions d;
    *out = lockstep_adam_options{d.lr, d.beta1, d.beta2, d.eps, d.weight_decay, d.decoupled_weight_decay ? 1 : 0};
  });
}

lockstep_status lockstep_adam_create(lockstep_model* model, const lockstep_adam_options* options,
                                     lockstep_optimizer** out) {
  return Boundary(__func__, [&] {
    RequireNonNull(model, "model");
    RequireNonNull(out, "out");
    lockstep::optim::AdamOptions o;
    if (options != nullptr) {
      const auto bad = [](float v, float lo, float hi) { return !std::isfinite(v) || v < lo || v > hi; };
      if (bad(options->lr, 0.0f, 1e3f) || options->lr == 0.0f) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "lr must be finite and > 0");
      if (bad(options->beta1, 0.0f, 0.9999999f) || bad(options->beta2, 0.0f, 0.9999999f)) {
        Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "beta1 and beta2 must be in [0, 1)");
      }
      if (bad(options->eps, 0.0f, 1.0f) || bad(options->weight_decay, 0.0f, 1e3f)) {
        Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "eps and weight_decay must be finite and >= 0");
      }
      o.lr = options->lr;
      o.beta1 = options->beta1;
      o.beta2 = options->beta2;
      o.eps = options->eps;
      o.weight_decay = options->weight_decay;
      o.decoupled_weight_decay = options->decoupled_weight_decay != 0;
    }
    auto optimizer = std::make_unique<lockstep::optim::Adam>(model->module->NamedParameters(), o);
    *out = new lockstep_optimizer{model->module, std::move(optimizer)};
  });
}

lockstep_status lockstep_adamw_create(lockstep_model* model, const lockstep_adam_options* options,
                                      lockstep_optimizer** out) {
  lockstep_adam_options o;
  lockstep_adam_options_default(&o);
  o.weight_decay = 0.01f;  // PyTorch's AdamW default
  if (options != nullptr) o = *options;
  o.decoupled_weight_decay = 1;
  return lockstep_adam_create(model, &o, out);
}

lockstep_status lockstep_sgd_options_default(lockstep_sgd_options* out) {
  return Boundary(__func__, [&] {
    RequireNonNull(out, "out");
    const lockstep::optim::SgdOptions d;
    *out = lockstep_sgd_options{d.lr, d.momentum, d.dampening, d.weight_decay, d.nesterov ? 1 : 0};
  });
}

lockstep_status lockstep_sgd_create(lockstep_model* model, const lockstep_sgd_options* options,
                                    lockstep_optimizer** out) {
  return Boundary(__func__, [&] {
    RequireNonNull(model, "model");
    RequireNonNull(out, "out");
    lockstep::optim::SgdOptions o;
    if (options != nullptr) {
      o.lr = options->lr;
      o.momentum = options->momentum;
      o.dampening = options->dampening;
      o.weight_decay = options->weight_decay;
      o.nesterov = options->nesterov != 0;
    }
    auto optimizer = std::make_unique<lockstep::optim::Sgd>(model->module->NamedParameters(), o);  // validates
    *out = new lockstep_optimizer{model->module, std::move(optimizer)};
  });
}

lockstep_status lockstep_optimizer_free(lockstep_optimizer* optimizer) {
  delete optimizer;  // never fails, and leaves lockstep_last_error() as it was
  return LOCKSTEP_OK;
}

lockstep_status lockstep_train_step(lockstep_model* model, lockstep_optimizer* optimizer, const lockstep_tensor* inputs,
                                    const int64_t* labels, int64_t label_count, float* loss_out) {
  return Boundary(__func__, [&] {
    RequireNonNull(model, "model");
    RequireNonNull(optimizer, "optimizer");
    RequireNonNull(inputs, "inputs");
    RequireNonNull(labels, "labels");
    if (optimizer->module != model->module) Fail(LOCKSTEP_ERROR_STATE, "the optimizer was created for another model");
    const lockstep::Shape& shape = inputs->tensor.shape();
    lockstep::capi::RequireInputShape(model->arch, shape);
    if (label_count != shape[0]) {
      Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "label_count is " + std::to_string(label_count) +
                                                ", inputs hold " + std::to_string(shape[0]) + " examples");
    }
    // Built-in models have 10 classes; an imported one's cross-entropy checks against its logits.
    const int64_t classes = strcmp(model->arch, "onnx") == 0 ? INT64_MAX : lockstep::capi::kNumClasses;
    for (int64_t i = 0; i < label_count; ++i) {
      if (labels[i] < 0 || labels[i] >= classes) {
        Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "labels[" + std::to_string(i) + "] is " + std::to_string(labels[i]) +
                                                  (classes == INT64_MAX ? std::string(", expected >= 0")
                                                                        : ", expected 0.." + std::to_string(classes - 1)));
      }
    }
    const lockstep::Tensor y = lockstep::Tensor::FromInt64({label_count}, std::vector<int64_t>(labels, labels + label_count));
    const float value = lockstep::train::ClassifierStep(*model->module, *optimizer->optimizer, inputs->tensor, y);
    if (loss_out != nullptr) *loss_out = value;
  });
}

}  // extern "C"
