// Shared by the C ABI's implementation files: the handle structs and the error boundary that turns
// every C++ exception into a lockstep_status plus a thread-local message.
#ifndef LOCKSTEP_BINDINGS_NATIVE_C_API_INTERNAL_H_
#define LOCKSTEP_BINDINGS_NATIVE_C_API_INTERNAL_H_

#include <map>
#include <memory>
#include <string>

#include "core/data.h"
#include "core/error.h"
#include "core/io/files.h"
#include "core/nn/module.h"
#include "core/optim/optimizer.h"
#include "core/tensor.h"
#include "core/trace/trace.h"
#include "lockstep/lockstep.h"
#include "simd/fp_mode.h"

struct lockstep_tensor {
  lockstep::Tensor tensor;
};
struct lockstep_model {
  const char* arch;  // static: "lenet5" or "mlp"
  std::shared_ptr<lockstep::nn::Module> module;
  // What the model is, for a run's identity (lockstep_fine_tune): an imported model's
  // {"model": "onnx:<SHA-256 of its bytes>", "seed": ...}.
  std::map<std::string, std::string> identity;
};
struct lockstep_optimizer {
  std::shared_ptr<lockstep::nn::Module> module;  // the model it was created for
  std::unique_ptr<lockstep::optim::Optimizer> optimizer;
};
struct lockstep_dataset {
  lockstep::Dataset data;
};

namespace lockstep {
namespace capi {

// Thrown inside the boundary to return a specific status.
struct ApiError {
  lockstep_status status;
  std::string message;
};
[[noreturn]] void Fail(lockstep_status status, const std::string& message);

// Fails with LOCKSTEP_ERROR_INVALID_ARGUMENT "<what> is NULL" when p is null.
inline void RequireNonNull(const void* p, const char* what) {
  if (p == nullptr) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, std::string(what) + " is NULL");
}
// Fails naming the file when it cannot be opened for reading or is not a regular file (a FIFO
// or device is refused without blocking on it).
void RequireReadable(const std::string& path);
// A config's receipt fields (receipt_path, receipt_every) against its resume_path: fails with
// LOCKSTEP_ERROR_INVALID_ARGUMENT on an empty path, a negative interval or a resumed run.
void CheckReceiptFields(const char* receipt_path, int64_t receipt_every, const char* resume_path);

// Fails with LOCKSTEP_ERROR_INVALID_ARGUMENT unless a config struct's struct_size is this
// library's size of it (a caller built against another lockstep.h).
void RequireStructSize(uint32_t given, size_t expected, const char* type);

void ClearError();
lockstep_status SetError(lockstep_status status, const std::string& message);

// The status a core error's kind maps to (docs/errors.md).
lockstep_status StatusOf(lockstep::ErrorKind kind);

// Runs body, mapping exceptions: ApiError keeps its status; lockstep::Error maps by its kind;
// std::bad_alloc is LOCKSTEP_ERROR_RESOURCE; anything else is LOCKSTEP_ERROR_INTERNAL. Messages are
// prefixed with the function's name. The body computes in the contract's floating-point mode
// (simd/fp_mode.h), and the caller gets its own mode back.
template <class Body>
lockstep_status Boundary(const char* function, Body&& body) noexcept {
  const lockstep::simd::ContractFloatingPointScope fp_mode;
  ClearError();
  try {
    body();
    return LOCKSTEP_OK;
  } catch (const ApiError& e) {
    return SetError(e.status, std::string(function) + ": " + e.message);
  } catch (const lockstep::Error& e) {
    return SetError(StatusOf(e.kind()), std::string(function) + ": " + e.what());
  } catch (const std::bad_alloc&) {
    return SetError(LOCKSTEP_ERROR_RESOURCE, std::string(function) + ": out of memory");
  } catch (const std::exception& e) {
    return SetError(LOCKSTEP_ERROR_INTERNAL, std::string(function) + ": " + e.what());
  } catch (...) {
    return SetError(LOCKSTEP_ERROR_INTERNAL, std::string(function) + ": unknown exception");
  }
}

// The core's trace options from the C struct (NULL strings become empty).
lockstep::trace::Options TraceOptionsOf(const lockstep_trace_options& options);

// Copies s into buf[size] with a NUL; fails when it does not fit.
void CopyString(const std::string& s, char* buf, size_t size);
// Copies a 64-digit hash into out[LOCKSTEP_HASH_SIZE].
void CopyHash(const std::string& hash, char* out);

}  // namespace capi
}  // namespace lockstep

#endif  // LOCKSTEP_BINDINGS_NATIVE_C_API_INTERNAL_H_
