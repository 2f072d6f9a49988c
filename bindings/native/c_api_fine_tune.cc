// The C ABI: fine-tuning in file order (core/train/fine_tune.h), for `lockstep train onnx` and C
// callers, with training states and receipts.
#include <string.h>

#include <string>

#include "bindings/native/c_api_internal.h"
#include "bindings/native/models.h"
#include "core/train/fine_tune.h"

using lockstep::capi::Boundary;
using lockstep::capi::Fail;
using lockstep::capi::RequireNonNull;

extern "C" {

lockstep_status lockstep_fine_tune_options_default(lockstep_fine_tune_options* out) {
  return Boundary(__func__, [&] {
    RequireNonNull(out, "out");
    *out = lockstep_fine_tune_options{sizeof(lockstep_fine_tune_options), 1, -1, 100, nullptr, nullptr, 0};
  });
}

lockstep_status lockstep_fine_tune(lockstep_model* model, lockstep_optimizer* optimizer, const lockstep_dataset* dataset,
                                   const lockstep_fine_tune_options* options,
                                   void (*progress)(int64_t step, int64_t total_steps, float loss, void* user), void* user,
                                   lockstep_fine_tune_result* out) {
  return Boundary(__func__, [&] {
    RequireNonNull(model, "model");
    RequireNonNull(optimizer, "optimizer");
    RequireNonNull(dataset, "dataset");
    RequireNonNull(out, "out");
    if (optimizer->module != model->module) Fail(LOCKSTEP_ERROR_STATE, "the optimizer was created for another model");
    lockstep_fine_tune_options o;
    lockstep_fine_tune_options_default(&o);
    if (options != nullptr) {
      lockstep::capi::RequireStructSize(options->struct_size, sizeof(lockstep_fine_tune_options),
                                        "lockstep_fine_tune_options");
      o = *options;
    }
    if (o.epochs < 1) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "epochs must be >= 1, got " + std::to_string(o.epochs));
    if (o.max_steps < -1) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "max_steps must be >= 0 or -1, got " + std::to_string(o.max_steps));
    if (o.batch_size < 1) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "batch_size must be >= 1, got " + std::to_string(o.batch_size));
    if (o.receipt_every < 0) {
      Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "receipt_every must be >= 0, got " + std::to_string(o.receipt_every));
    }
    lockstep::capi::RequireInputShape(model->arch, dataset->data.BatchShape(1));
    lockstep::train::FineTuneConfig c;
    c.epochs = o.epochs;
    c.max_steps = o.max_steps;
    c.batch_size = o.batch_size;
    c.model_identity = model->identity;
    if (o.resume_path != nullptr) c.resume_path = o.resume_path;
    if (o.receipt_path != nullptr) c.receipt.path = o.receipt_path;
    c.receipt.every = o.receipt_every;
    if (progress != nullptr) {
      c.progress = [&](int64_t step, int64_t total, float loss) { progress(step, total, loss, user); };
    }
    const lockstep::train::FineTuneResult r = lockstep::train::RunFineTune(c, *model->module, *optimizer->optimizer,
                                                                           dataset->data);
    out->steps = r.steps;
    out->last_loss = r.last_loss;
    strncpy(out->trained_hash, r.trained_hash.c_str(), LOCKSTEP_HASH_SIZE - 1);
    out->trained_hash[LOCKSTEP_HASH_SIZE - 1] = '\0';
  });
}

}  // extern "C"
