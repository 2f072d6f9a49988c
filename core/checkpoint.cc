#include "core/checkpoint.h"

#include <string.h>

#include "core/contract.h"
#include "core/error.h"
#include "core/io/files.h"
#include "core/safetensors.h"
#include "core/sha256.h"

namespace lockstep {

namespace {

// 4 GiB, or what a 32-bit address space (WebAssembly) can hold.
constexpr size_t kMaxCheckpointBytes =
    sizeof(size_t) >= 8 ? static_cast<size_t>(uint64_t{4} << 30) : static_cast<size_t>(0xFFFFFFFFu);

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "checkpoints are written little-endian");

TensorRecord ToRecord(const std::string& name, const Tensor& t) {
  TensorRecord r;
  r.name = name;
  r.dtype = t.dtype();
  r.shape = t.shape();
  const Tensor c = t.Detach().Contiguous();
  r.data.resize(static_cast<size_t>(c.numel()) * DTypeSize(c.dtype()));
  if (!r.data.empty()) {
    const void* src = c.dtype() == DType::kFloat32 ? static_cast<const void*>(c.data_f32())
                      : c.dtype() == DType::kInt32 ? static_cast<const void*>(c.data_i32())
                                                   : static_cast<const void*>(c.data_i64());
    memcpy(r.data.data(), src, r.data.size());
  }
  return r;
}

Tensor FromRecord(const TensorRecord& r) {
  Tensor t = Tensor::Empty(r.shape, r.dtype);
  if (!r.data.empty()) {
    void* dst = r.dtype == DType::kFloat32 ? static_cast<void*>(t.data_f32())
                : r.dtype == DType::kInt32 ? static_cast<void*>(t.data_i32())
                                           : static_cast<void*>(t.data_i64());
    memcpy(dst, r.data.data(), r.data.size());
  }
  return t;
}

std::map<std::string, std::string> BaseMetadata(const char* kind) {
  return {{"format", "pt"}, {"lockstep_contract", std::to_string(kContractVersion)}, {"lockstep_kind", kind}};
}

void CheckContract(const SafetensorsFile& file, const std::string& what) {
  auto it = file.metadata.find("lockstep_contract");
  if (it == file.metadata.end()) return;  // a foreign file (e.g. from PyTorch): nothing to check
  LOCKSTEP_REQUIRE(it->second == std::to_string(kContractVersion),
                   what << ": written under numerical contract version " << it->second << ", this build implements version "
                        << kContractVersion << " (results would not be bit-comparable)");
}

SafetensorsFile ReadCheckpoint(const std::string& path) {
  const std::vector<uint8_t> bytes = ReadWholeFile(path, kMaxCheckpointBytes);
  SafetensorsFile file = DecodeSafetensors(bytes.data(), bytes.size(), path);
  CheckContract(file, path);
  return file;
}

nn::NamedTensors WithPrefix(const SafetensorsFile& file, const std::string& prefix) {
  nn::NamedTensors out;
  for (const TensorRecord& r : file.tensors) {
    if (r.name.compare(0, prefix.size(), prefix) == 0) out.emplace_back(r.name.substr(prefix.size()), FromRecord(r));
  }
  return out;
}

int64_t MetadataInt(const SafetensorsFile& file, const std::string& key, const std::string& what) {
  auto it = file.metadata.find(key);
  LOCKSTEP_REQUIRE(it != file.metadata.end(), what << ": the training checkpoint has no '" << key << "' entry");
  char* end = nullptr;
  const long long v = strtoll(it->second.c_str(), &end, 10);
  LOCKSTEP_REQUIRE(end && *end == '\0' && !it->second.empty(),
                   what << ": metadata '" << key << "' should be an integer, got '" << it->second << "'");
  return v;
}

}  // namespace

std::vector<uint8_t> EncodeModel(const nn::Module& model) {
  SafetensorsFile file;
  file.metadata = BaseMetadata("model");
  for (const auto& [name, t] : model.StateDict()) file.tensors.push_back(ToRecord(name, t));
  return EncodeSafetensors(file);
}

std::string ModelHash(const nn::Module& model) {
  const std::vector<uint8_t> bytes = EncodeModel(model);
  return Sha256Hex(bytes.data(), bytes.size());
}

std::string SaveModel(const std::string& path, const nn::Module& model) {
  const std::vector<uint8_t> bytes = EncodeModel(model);
  WriteFileAtomic(path, bytes);
  return Sha256Hex(bytes.data(), bytes.size());
}

void LoadModelFromBytes(const std::vector<uint8_t>& bytes, const std::string& what, nn::Module& model) {
  const SafetensorsFile file = DecodeSafetensors(bytes.data(), bytes.size(), what);
  CheckContract(file, what);
  nn::NamedTensors state;
  for (const TensorRecord& r : file.tensors) state.emplace_back(r.name, FromRecord(r));
  model.LoadStateDict(state);
}

void LoadModel(const std::string& path, nn::Module& model) {
  LoadModelFromBytes(ReadWholeFile(path, kMaxCheckpointBytes), path, model);
}

std::string SaveTrainingState(const std::string& path, const nn::Module& model,
                              const optim::Optimizer& optimizer, const TrainingPosition& position) {
  SafetensorsFile file;
  file.metadata = BaseMetadata("training_state");
  file.metadata["step"] = std::to_string(optimizer.step_count());
  file.metadata["epoch"] = std::to_string(position.epoch);
  file.metadata["batch"] = std::to_string(position.batch);
  for (const auto& [name, offset] : position.rng_offsets) file.metadata["rng." + name] = std::to_string(offset);
  for (const auto& [name, t] : model.StateDict()) file.tensors.push_back(ToRecord("model." + name, t));
  for (const auto& [name, t] : optimizer.State()) file.tensors.push_back(ToRecord("optimizer." + name, t));
  const std::vector<uint8_t> bytes = EncodeSafetensors(file);
  WriteFileAtomic(path, bytes);
  return Sha256Hex(bytes.data(), bytes.size());
}

TrainingPosition LoadTrainingState(const std::string& path, nn::Module& model, optim::Optimizer& optimizer) {
  const SafetensorsFile file = ReadCheckpoint(path);
  auto kind = file.metadata.find("lockstep_kind");
  LOCKSTEP_REQUIRE(kind != file.metadata.end() && kind->second == "training_state",
                   path << ": not a lockstep training checkpoint (a model checkpoint holds no optimizer state)");
  TrainingPosition position;
  position.epoch = MetadataInt(file, "epoch", path);
  position.batch = MetadataInt(file, "batch", path);
  const int64_t step = MetadataInt(file, "step", path);
  for (const auto& [key, value] : file.metadata) {
    if (key.compare(0, 4, "rng.") == 0) position.rng_offsets[key.substr(4)] = static_cast<uint64_t>(MetadataInt(file, key, path));
  }
  // Validate both parts before changing anything.
  const nn::NamedTensors model_state = WithPrefix(file, "model."), optimizer_state = WithPrefix(file, "optimizer.");
  model.ValidateStateDict(model_state);
  optimizer.ValidateState(optimizer_state);
  model.LoadStateDict(model_state);
  optimizer.LoadState(optimizer_state, step);
  return position;
}

}  // namespace lockstep
