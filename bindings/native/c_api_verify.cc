// The C ABI: receipts verified by re-execution and disputes between two receipts (verify/), for
// `lockstep verify-run`, `lockstep dispute` and C callers.
#include <memory>
#include <string>
#include <vector>

#include "bindings/native/c_api_internal.h"
#include "core/sha256.h"
#include "onnx/model.h"
#include "verify/dispute.h"
#include "verify/verify_run.h"

using lockstep::capi::Boundary;
using lockstep::capi::Fail;
using lockstep::capi::RequireNonNull;

extern "C" {

lockstep_status lockstep_verify_options_default(lockstep_verify_options* out) {
  return Boundary(__func__, [&] {
    RequireNonNull(out, "out");
    *out = lockstep_verify_options{sizeof(lockstep_verify_options), nullptr, 0, 0, 0, 0, nullptr, nullptr};
  });
}

lockstep_status lockstep_verify_run(const char* receipt, const lockstep_verify_options* options,
                                    void (*write)(const char* line, void* user), void* user, int64_t* first_mismatch) {
  return Boundary(__func__, [&] {
    RequireNonNull(receipt, "receipt");
    RequireNonNull(first_mismatch, "first_mismatch");
    lockstep_verify_options o;
    lockstep_verify_options_default(&o);
    if (options != nullptr) {
      lockstep::capi::RequireStructSize(options->struct_size, sizeof(lockstep_verify_options), "lockstep_verify_options");
      o = *options;
    }
    lockstep::verify::VerifyOptions v;
    v.receipt_path = receipt;
    if (o.checkpoint_path != nullptr) v.checkpoint_path = o.checkpoint_path;
    v.first = o.first_step;
    v.last = o.last_step;
    v.sample = o.sample;
    v.seed = o.sample_seed;
    if (o.data != nullptr) v.data = o.data;
    // A fine-tuning run's model: the ONNX file, what lockstep_model_load_onnx makes of it.
    lockstep::verify::ModelSource model;
    if (o.model != nullptr) {
      auto bytes = std::make_shared<const std::vector<uint8_t>>(
          lockstep::ReadWholeFile(o.model, lockstep::onnx::kMaxOnnxBytes));
      model.identity["model"] = "onnx:" + lockstep::Sha256Hex(bytes->data(), bytes->size());
      model.make = [bytes](uint64_t seed) -> std::shared_ptr<lockstep::nn::Module> {
        lockstep::onnx::LoadOptions options;
        options.seed = seed;
        return lockstep::onnx::LoadOnnx(bytes->data(), bytes->size(), options);
      };
      v.model = &model;
    }
    if (write != nullptr) v.print = [&](const std::string& line) { write(line.c_str(), user); };
    *first_mismatch = lockstep::verify::VerifyRun(v).first_mismatch;
  });
}

lockstep_status lockstep_dispute_options_default(lockstep_dispute_options* out) {
  return Boundary(__func__, [&] {
    RequireNonNull(out, "out");
    *out = lockstep_dispute_options{sizeof(lockstep_dispute_options), nullptr, nullptr, nullptr, nullptr, nullptr};
  });
}

lockstep_status lockstep_dispute(const char* a, const char* b, const lockstep_dispute_options* options,
                                 void (*write)(const char* line, void* user), void* user, int64_t* step,
                                 char* supported) {
  return Boundary(__func__, [&] {
    RequireNonNull(a, "a");
    RequireNonNull(b, "b");
    RequireNonNull(step, "step");
    RequireNonNull(supported, "supported");
    lockstep_dispute_options o;
    lockstep_dispute_options_default(&o);
    if (options != nullptr) {
      lockstep::capi::RequireStructSize(options->struct_size, sizeof(lockstep_dispute_options), "lockstep_dispute_options");
      o = *options;
    }
    lockstep::verify::DisputeOptions d;
    d.a_path = a;
    d.b_path = b;
    if (o.a_trace != nullptr) d.a_trace = o.a_trace;
    if (o.b_trace != nullptr) d.b_trace = o.b_trace;
    if (o.a_values != nullptr) d.a_values = o.a_values;
    if (o.b_values != nullptr) d.b_values = o.b_values;
    if (o.data != nullptr) d.data = o.data;
    if (write != nullptr) d.print = [&](const std::string& line) { write(line.c_str(), user); };
    const lockstep::verify::DisputeResult r = lockstep::verify::Dispute(d);
    *step = r.agree ? 0 : r.step;
    *supported = r.supported;
  });
}

}  // extern "C"
