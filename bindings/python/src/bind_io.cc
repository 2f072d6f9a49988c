// lockstep._C checkpoints and hashes: canonical safetensors files whose SHA-256 is the model hash
// (core/checkpoint.h), any safetensors file read as named tensors (validated first), and SHA-256.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bindings/python/src/bindings.h"
#include "bindings/python/src/engine.h"
#include "core/checkpoint.h"
#include "core/error.h"
#include "core/io/byte_order.h"
#include "core/io/files.h"
#include "core/safetensors.h"
#include "core/sha256.h"

namespace lockstep {
namespace python {

namespace {

using Named = std::vector<std::pair<std::string, Tensor>>;

std::vector<uint8_t> BytesOf(const py::bytes& b) {
  const std::string s = b;
  return std::vector<uint8_t>(s.begin(), s.end());
}

py::bytes ToBytes(const std::vector<uint8_t>& v) {
  return py::bytes(reinterpret_cast<const char*>(v.data()), v.size());
}

// Records hold little-endian bytes (core/io/byte_order.h: a copy on little-endian hosts).
Tensor FromRecord(const TensorRecord& r) {
  const Device device = CurrentDevice();
  Tensor t;
  {
    const DeviceScope host(Device::Cpu());  // decoded in host memory, then moved to the current device
    t = Tensor::Empty(r.shape, r.dtype);
  }
  CopyLittleEndian(t.impl()->storage->data(), r.data.data(), static_cast<size_t>(t.numel()), DTypeSize(r.dtype));
  return t.ToDevice(device);
}

TensorRecord ToRecord(const std::string& name, const Tensor& t) {
  TensorRecord r;
  r.name = name;
  r.dtype = t.dtype();
  r.shape = t.shape();
  const Tensor c = t.Detach().Contiguous().ToDevice(Device::Cpu());
  r.data.resize(static_cast<size_t>(c.numel()) * DTypeSize(c.dtype()));
  CopyLittleEndian(r.data.data(), c.impl()->storage->data() + c.impl()->offset * DTypeSize(c.dtype()),
                   static_cast<size_t>(c.numel()), DTypeSize(c.dtype()));
  return r;
}

// A safetensors file as (metadata, tensors sorted by name). A lockstep file of another contract
// version is refused (kFormat), as LoadModel refuses it.
py::tuple ReadSafetensors(const std::string& path) {
  SafetensorsFile file = Long([&] {
    const std::vector<uint8_t> bytes = ReadWholeFile(path, kMaxCheckpointBytes);
    CanonicalizeCheckpoint(bytes, path);  // validates, contract version included
    return DecodeSafetensors(bytes.data(), bytes.size(), path);
  });
  py::list tensors;
  for (const TensorRecord& r : file.tensors) tensors.append(py::make_tuple(r.name, Short([&] { return FromRecord(r); })));
  return py::make_tuple(file.metadata, tensors);
}

std::string WriteSafetensors(const std::string& path, const Named& tensors,
                             const std::map<std::string, std::string>& metadata) {
  return Long([&] {
    SafetensorsFile file;
    file.metadata = metadata;
    for (const auto& [name, t] : tensors) file.tensors.push_back(ToRecord(name, t));
    const std::vector<uint8_t> bytes = EncodeSafetensors(file);
    WriteFileAtomic(path, bytes);
    return Sha256Hex(bytes.data(), bytes.size());
  });
}

}  // namespace

void BindIo(py::module_& m) {
  m.def("_save", [](const nn::Module& model, const std::string& path) { return Long([&] { return SaveModel(path, model); }); });
  m.def("_encode", [](const nn::Module& model) { return ToBytes(Long([&] { return EncodeModel(model); })); });
  m.def("_model_hash", [](const nn::Module& model) { return Long([&] { return ModelHash(model); }); });
  m.def("_load_into", [](nn::Module& model, const std::string& path) { Long([&] { LoadModel(path, model); }); });
  m.def("_load_bytes_into", [](nn::Module& model, const py::bytes& b) {
    const std::vector<uint8_t> bytes = BytesOf(b);
    Long([&] { LoadModelFromBytes(bytes, "checkpoint bytes", model); });
  });
  m.def("_read_safetensors", &ReadSafetensors);
  m.def("_write_safetensors", &WriteSafetensors);
  m.def("canonicalize", [](const py::bytes& b) {
    const std::vector<uint8_t> bytes = BytesOf(b);
    return ToBytes(Long([&] { return CanonicalizeCheckpoint(bytes, "checkpoint bytes"); }));
  }, py::arg("data"), "The canonical form of any safetensors checkpoint (its SHA-256 is the model hash).");
  m.def("sha256", [](const py::bytes& b) {
    const std::string s = b;
    return Long([&] { return Sha256Hex(s.data(), s.size()); });
  }, py::arg("data"), "SHA-256 of bytes as 64 hex digits.");
  m.def("file_sha256", [](const std::string& path) {
    return Long([&] {
      const std::vector<uint8_t> bytes = ReadWholeFile(path, kMaxCheckpointBytes);
      return Sha256Hex(bytes.data(), bytes.size());
    });
  }, py::arg("path"), "SHA-256 of a regular file's bytes.");
}

}  // namespace python
}  // namespace lockstep
