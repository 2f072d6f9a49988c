// The C ABI for imported ONNX models (onnx/): loading into a model handle, the graph's inputs and
// outputs, running every input; integer tensors and .npy files for the values going in and out.
#include <string.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings/native/c_api_internal.h"
#include "core/autograd.h"
#include "core/io/npy.h"
#include "core/sha256.h"
#include "onnx/model.h"

using lockstep::capi::Boundary;
using lockstep::capi::Fail;
using lockstep::capi::RequireNonNull;

namespace {

constexpr const char* kOnnxArch = "onnx";

lockstep::onnx::OnnxModel& OnnxOf(const lockstep_model* model) {
  RequireNonNull(model, "model");
  auto* onnx = dynamic_cast<lockstep::onnx::OnnxModel*>(model->module.get());
  if (onnx == nullptr) {
    Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, std::string("the model is a built-in '") + model->arch +
                                              "' model; this call takes a model loaded from ONNX");
  }
  return *onnx;
}

lockstep::Shape CheckedShape(const int64_t* shape, int rank, int64_t* numel) {
  if (rank < 0 || rank > LOCKSTEP_MAX_RANK) {
    Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "rank is " + std::to_string(rank) + ", expected 0.." + std::to_string(LOCKSTEP_MAX_RANK));
  }
  if (rank > 0) RequireNonNull(shape, "shape");
  lockstep::Shape dims;
  *numel = 1;
  for (int i = 0; i < rank; ++i) {
    if (shape[i] < 0) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "shape[" + std::to_string(i) + "] is negative");
    if (shape[i] > 0 && *numel > (int64_t{1} << 40) / shape[i]) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "shape is too large");
    *numel *= shape[i];
    dims.push_back(shape[i]);
  }
  return dims;
}

lockstep_model* Wrap(std::shared_ptr<lockstep::onnx::OnnxModel> onnx, const std::vector<uint8_t>& bytes, uint64_t seed) {
  return new lockstep_model{kOnnxArch, std::move(onnx),
                            {{"model", "onnx:" + lockstep::Sha256Hex(bytes.data(), bytes.size())},
                             {"seed", std::to_string(seed)}}};
}

}  // namespace

extern "C" {

lockstep_status lockstep_model_load_onnx(const char* path, uint64_t seed, lockstep_model** out) {
  return Boundary(__func__, [&] {
    RequireNonNull(path, "path");
    RequireNonNull(out, "out");
    lockstep::capi::RequireReadable(path);
    lockstep::onnx::LoadOptions options;
    options.seed = seed;
    const std::vector<uint8_t> bytes = lockstep::ReadWholeFile(path, lockstep::onnx::kMaxOnnxBytes);
    try {
      *out = Wrap(lockstep::onnx::LoadOnnx(bytes.data(), bytes.size(), options), bytes, seed);
    } catch (const lockstep::Error& e) {
      throw lockstep::Error(std::string(path) + ": " + e.what(), e.kind());  // as LoadOnnxFile says it
    }
  });
}

lockstep_status lockstep_model_load_onnx_bytes(const void* data, size_t size, uint64_t seed, lockstep_model** out) {
  return Boundary(__func__, [&] {
    if (size > 0) RequireNonNull(data, "data");
    RequireNonNull(out, "out");
    lockstep::onnx::LoadOptions options;
    options.seed = seed;
    const uint8_t* begin = static_cast<const uint8_t*>(data);
    *out = Wrap(lockstep::onnx::LoadOnnx(begin, size, options), std::vector<uint8_t>(begin, begin + size), seed);
  });
}

lockstep_status lockstep_model_io_count(const lockstep_model* model, int* inputs, int* outputs) {
  return Boundary(__func__, [&] {
    const lockstep::onnx::OnnxModel& onnx = OnnxOf(model);
    if (inputs != nullptr) *inputs = static_cast<int>(onnx.inputs().size());
    if (outputs != nullptr) *outputs = static_cast<int>(onnx.outputs().size());
  });
}

lockstep_status lockstep_model_io_name(const lockstep_model* model, int is_output, int index, const char** out) {
  return Boundary(__func__, [&] {
    RequireNonNull(out, "out");
    const lockstep::onnx::OnnxModel& onnx = OnnxOf(model);
    const auto& list = is_output ? onnx.outputs() : onnx.inputs();
    if (index < 0 || static_cast<size_t>(index) >= list.size()) {
      Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "index " + std::to_string(index) + " is out of range: the model has " +
                                                std::to_string(list.size()) + (is_output ? " outputs" : " inputs"));
    }
    *out = list[static_cast<size_t>(index)].name.c_str();
  });
}

lockstep_status lockstep_model_run(lockstep_model* model, const lockstep_tensor* const* inputs, int input_count,
                                   lockstep_tensor** outputs, int output_count) {
  return Boundary(__func__, [&] {
    lockstep::onnx::OnnxModel& onnx = OnnxOf(model);
    const auto& declared = onnx.inputs();
    if (input_count != static_cast<int>(declared.size()) || output_count != static_cast<int>(onnx.outputs().size())) {
      Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "the model takes " + std::to_string(declared.size()) + " inputs and gives " +
                                                std::to_string(onnx.outputs().size()) + " outputs, got counts " +
                                                std::to_string(input_count) + " and " + std::to_string(output_count));
    }
    if (input_count > 0) RequireNonNull(inputs, "inputs");
    if (output_count > 0) RequireNonNull(outputs, "outputs");
    std::vector<lockstep::onnx::Value> values;
    for (int i = 0; i < input_count; ++i) {
      RequireNonNull(inputs[i], "inputs[i]");
      values.push_back(onnx.InputValue(static_cast<size_t>(i), inputs[i]->tensor));
    }
    lockstep::NoGradGuard no_grad;
    const bool was_training = onnx.training();
    onnx.Eval();
    std::vector<lockstep::onnx::Value> results;
    try {
      results = onnx.Run(values);
    } catch (...) {
      onnx.Train(was_training);
      throw;
    }
    onnx.Train(was_training);
    for (int i = 0; i < output_count; ++i) outputs[i] = new lockstep_tensor{lockstep::onnx::CallerTensor(results[static_cast<size_t>(i)]).Contiguous()};
  });
}

lockstep_status lockstep_tensor_create_int64(const int64_t* data, const int64_t* shape, int rank, lockstep_tensor** out) {
  return Boundary(__func__, [&] {
    RequireNonNull(out, "out");
    int64_t numel = 0;
    const lockstep::Shape dims = CheckedShape(shape, rank, &numel);
    if (numel > 0) RequireNonNull(data, "data");
    *out = new lockstep_tensor{lockstep::Tensor::FromInt64(dims, std::vector<int64_t>(data, data + numel))};
  });
}

lockstep_status lockstep_tensor_dtype(const lockstep_tensor* tensor, lockstep_dtype* out) {
  return Boundary(__func__, [&] {
    RequireNonNull(tensor, "tensor");
    RequireNonNull(out, "out");
    switch (tensor->tensor.dtype()) {
      case lockstep::DType::kFloat32: *out = LOCKSTEP_FLOAT32; break;
      case lockstep::DType::kInt32: *out = LOCKSTEP_INT32; break;
      case lockstep::DType::kInt64: *out = LOCKSTEP_INT64; break;
    }
  });
}

lockstep_status lockstep_tensor_copy_int64(const lockstep_tensor* tensor, int64_t* out, int64_t count) {
  return Boundary(__func__, [&] {
    RequireNonNull(tensor, "tensor");
    if (tensor->tensor.dtype() == lockstep::DType::kFloat32) {
      Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "the tensor is float32; use lockstep_tensor_copy_data");
    }
    const int64_t numel = tensor->tensor.numel();
    if (count != numel) {
      Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "count is " + std::to_string(count) + ", the tensor has " + std::to_string(numel) + " elements");
    }
    if (numel == 0) return;
    RequireNonNull(out, "out");
    const std::vector<int64_t> values = tensor->tensor.ToInt64Vector();
    memcpy(out, values.data(), values.size() * sizeof(int64_t));
  });
}

lockstep_status lockstep_tensor_load_npy(const char* path, lockstep_tensor** out) {
  return Boundary(__func__, [&] {
    RequireNonNull(path, "path");
    RequireNonNull(out, "out");
    lockstep::capi::RequireReadable(path);
    *out = new lockstep_tensor{lockstep::ReadNpy(path).tensor};
  });
}

lockstep_status lockstep_tensor_save_npy(const lockstep_tensor* tensor, const char* path) {
  return Boundary(__func__, [&] {
    RequireNonNull(tensor, "tensor");
    RequireNonNull(path, "path");
    lockstep::WriteNpy(path, tensor->tensor);
  });
}

lockstep_status lockstep_tensor_sha256(const lockstep_tensor* tensor, char out[LOCKSTEP_HASH_SIZE]) {
  return Boundary(__func__, [&] {
    RequireNonNull(tensor, "tensor");
    RequireNonNull(out, "out");
    lockstep::capi::CopyHash(lockstep::TensorSha256(tensor->tensor), out);
  });
}

}  // extern "C"
