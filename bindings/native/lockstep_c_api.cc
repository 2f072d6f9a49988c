// The C ABI: errors, library information, file hashing and tensors.
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "bindings/native/c_api_internal.h"
#include "core/contract.h"
#include "core/error.h"
#include "core/io/files.h"
#include "core/sha256.h"
#include "simd/targets.h"
#include "simd/thread_pool.h"

namespace lockstep {
namespace capi {
namespace {
thread_local std::string last_error;
}  // namespace

void Fail(lockstep_status status, const std::string& message) { throw ApiError{status, message}; }

lockstep_status StatusOf(lockstep::ErrorKind kind) {
  switch (kind) {
    case lockstep::ErrorKind::kArgument: return LOCKSTEP_ERROR_INVALID_ARGUMENT;
    case lockstep::ErrorKind::kFormat: return LOCKSTEP_ERROR_FORMAT;
    case lockstep::ErrorKind::kIo: return LOCKSTEP_ERROR_IO;
    case lockstep::ErrorKind::kState: return LOCKSTEP_ERROR_STATE;
    case lockstep::ErrorKind::kUnavailable: return LOCKSTEP_ERROR_UNAVAILABLE;
    case lockstep::ErrorKind::kResource: return LOCKSTEP_ERROR_RESOURCE;
    case lockstep::ErrorKind::kCancelled: return LOCKSTEP_ERROR_CANCELLED;
    case lockstep::ErrorKind::kInternal: return LOCKSTEP_ERROR_INTERNAL;
  }
  return LOCKSTEP_ERROR_INTERNAL;
}

void ClearError() { last_error.clear(); }

lockstep_status SetError(lockstep_status status, const std::string& message) {
  try {
    last_error = message;
  } catch (...) {
    last_error.clear();  // out of memory while reporting: the status still says what happened
  }
  return status;
}

void RequireReadable(const std::string& path) { const InputFile file(path); }

void CheckReceiptFields(const char* receipt_path, int64_t receipt_every, const char* resume_path) {
  if (receipt_every < 0) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "receipt_every must be >= 0");
  if (receipt_path == nullptr) return;
  if (receipt_path[0] == '\0') Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "receipt_path is empty: expected a file");
  if (resume_path != nullptr) {
    Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "receipt_path with resume_path: a receipt covers a run from its first step");
  }
}

void RequireStructSize(uint32_t given, size_t expected, const char* type) {
  if (given != expected) {
    Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, std::string(type) + ".struct_size is " + std::to_string(given) +
                                              ", this library's is " + std::to_string(expected) +
                                              ": fill the struct with its _default function (or rebuild against "
                                              "this library's lockstep.h)");
  }
}


void CopyString(const std::string& s, char* buf, size_t size) {
  RequireNonNull(buf, "buf");
  if (s.size() + 1 > size) {
    Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT,
         "buffer of " + std::to_string(size) + " bytes is too small, need " + std::to_string(s.size() + 1));
  }
  memcpy(buf, s.c_str(), s.size() + 1);
}

void CopyHash(const std::string& hash, char* out) { CopyString(hash, out, LOCKSTEP_HASH_SIZE); }

}  // namespace capi
}  // namespace lockstep

using lockstep::capi::Boundary;
using lockstep::capi::Fail;
using lockstep::capi::RequireNonNull;

extern "C" {

const char* lockstep_last_error(void) { return lockstep::capi::last_error.c_str(); }

const char* lockstep_status_name(lockstep_status status) {
  switch (status) {
    case LOCKSTEP_OK: return "LOCKSTEP_OK";
    case LOCKSTEP_ERROR_INVALID_ARGUMENT: return "LOCKSTEP_ERROR_INVALID_ARGUMENT";
    case LOCKSTEP_ERROR_IO: return "LOCKSTEP_ERROR_IO";
    case LOCKSTEP_ERROR_FORMAT: return "LOCKSTEP_ERROR_FORMAT";
    case LOCKSTEP_ERROR_STATE: return "LOCKSTEP_ERROR_STATE";
    case LOCKSTEP_ERROR_INTERNAL: return "LOCKSTEP_ERROR_INTERNAL";
    case LOCKSTEP_ERROR_CANCELLED: return "LOCKSTEP_ERROR_CANCELLED";
    case LOCKSTEP_ERROR_RESOURCE: return "LOCKSTEP_ERROR_RESOURCE";
    case LOCKSTEP_ERROR_UNAVAILABLE: return "LOCKSTEP_ERROR_UNAVAILABLE";
  }
  return "LOCKSTEP_ERROR_UNKNOWN";
}

lockstep_status lockstep_version(const char** out) {
  return Boundary(__func__, [&] {
    RequireNonNull(out, "out");
    *out = LOCKSTEP_VERSION_STRING;
  });
}

lockstep_status lockstep_contract_version(int* out) {
  return Boundary(__func__, [&] {
    RequireNonNull(out, "out");
    *out = lockstep::kContractVersion;
  });
}

lockstep_status lockstep_simd_target(char* buf, size_t size) {
  return Boundary(__func__, [&] { lockstep::capi::CopyString(lockstep::simd::ActiveTargetName(), buf, size); });
}

lockstep_status lockstep_simd_targets_available(char* buf, size_t size) {
  return Boundary(__func__, [&] {
    std::string names;
    for (const auto& target : lockstep::simd::RunnableTargets()) names += (names.empty() ? "" : ", ") + target.name;
    lockstep::capi::CopyString(names, buf, size);
  });
}

lockstep_status lockstep_set_num_threads(int n) {
  return Boundary(__func__, [&] {
    if (n < 1 || n > 1024) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "n is " + std::to_string(n) + ", expected 1..1024");
    lockstep::simd::SetDefaultThreadCount(static_cast<size_t>(n));
  });
}

lockstep_status lockstep_get_num_threads(int* out) {
  return Boundary(__func__, [&] {
    RequireNonNull(out, "out");
    *out = static_cast<int>(lockstep::simd::DefaultThreadCount());
  });
}

lockstep_status lockstep_file_sha256(const char* path, char out[LOCKSTEP_HASH_SIZE]) {
  return Boundary(__func__, [&] {
    RequireNonNull(path, "path");
    RequireNonNull(out, "out");
    const lockstep::InputFile file(path);  // regular files only: a FIFO or device is refused
    lockstep::Sha256 sha;
    std::vector<unsigned char> chunk(1 << 20);
    for (uint64_t offset = 0; offset < file.size(); offset += chunk.size()) {
      const size_t n = file.size() - offset < chunk.size() ? static_cast<size_t>(file.size() - offset) : chunk.size();
      file.ReadAt(offset, chunk.data(), n);
      sha.Update(chunk.data(), n);
    }
    lockstep::capi::CopyHash(sha.HexDigest(), out);
  });
}

lockstep_status lockstep_tensor_create(const float* data, const int64_t* shape, int rank, lockstep_tensor** out) {
  return Boundary(__func__, [&] {
    RequireNonNull(out, "out");
    if (rank < 0 || rank > LOCKSTEP_MAX_RANK) {
      Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "rank is " + std::to_string(rank) + ", expected 0.." +
                                                std::to_string(LOCKSTEP_MAX_RANK));
    }
    if (rank > 0) RequireNonNull(shape, "shape");
    lockstep::Shape dims;
    int64_t numel = 1;
    for (int i = 0; i < rank; ++i) {
      if (shape[i] < 0) {
        Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT,
             "shape[" + std::to_string(i) + "] is " + std::to_string(shape[i]) + ", expected >= 0");
      }
      if (shape[i] > 0 && numel > (int64_t{1} << 40) / shape[i]) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "shape is too large");
      numel *= shape[i];
      dims.push_back(shape[i]);
    }
    if (numel > 0) RequireNonNull(data, "data");
    const float* values = static_cast<const float*>(data);
    lockstep::Tensor t = lockstep::Tensor::FromVector(dims, std::vector<float>(values, values + numel));
    *out = new lockstep_tensor{t};
  });
}

lockstep_status lockstep_tensor_free(lockstep_tensor* tensor) {
  delete tensor;  // never fails, and leaves lockstep_last_error() as it was
  return LOCKSTEP_OK;
}

lockstep_status lockstep_tensor_rank(const lockstep_tensor* tensor, int* out) {
  return Boundary(__func__, [&] {
    RequireNonNull(tensor, "tensor");
    RequireNonNull(out, "out");
    *out = static_cast<int>(tensor->tensor.dim());
  });
}

lockstep_status lockstep_tensor_shape(const lockstep_tensor* tensor, int64_t* shape, int capacity) {
  return Boundary(__func__, [&] {
    RequireNonNull(tensor, "tensor");
    const int rank = static_cast<int>(tensor->tensor.dim());
    if (capacity < rank) {
      Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT,
           "capacity is " + std::to_string(capacity) + ", the tensor has rank " + std::to_string(rank));
    }
    if (rank > 0) RequireNonNull(shape, "shape");
    for (int i = 0; i < rank; ++i) shape[i] = tensor->tensor.size(i);
  });
}

lockstep_status lockstep_tensor_numel(const lockstep_tensor* tensor, int64_t* out) {
  return Boundary(__func__, [&] {
    RequireNonNull(tensor, "tensor");
    RequireNonNull(out, "out");
    *out = tensor->tensor.numel();
  });
}

lockstep_status lockstep_tensor_copy_data(const lockstep_tensor* tensor, float* out, int64_t count) {
  return Boundary(__func__, [&] {
    RequireNonNull(tensor, "tensor");
    const int64_t numel = tensor->tensor.numel();
    if (count != numel) {
      Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT,
           "count is " + std::to_string(count) + ", the tensor has " + std::to_string(numel) + " elements");
    }
    if (numel == 0) return;
    RequireNonNull(out, "out");
    const std::vector<float> values = tensor->tensor.ToVector();
    memcpy(out, values.data(), values.size() * sizeof(float));
  });
}

}  // extern "C"
