#include "core/checkpoint.h"

#include <stdio.h>
#include <string.h>

#include <algorithm>

#include "core/contract.h"
#include "core/error.h"
#include "core/io/byte_order.h"
#include "core/io/files.h"
#include "core/nn/layers.h"
#include "core/safetensors.h"
#include "core/sha256.h"

namespace lockstep {

namespace {

// A tensor as the encoder's source (CanonicalTensorBytes).
TensorSource ToSource(const std::string& name, const Tensor& t) {
  return {name, t.dtype(), t.shape(), [t](const ByteSink& sink) { CanonicalTensorBytes(t, sink); }};
}

std::vector<TensorSource> ToSources(const nn::NamedTensors& tensors, const std::string& prefix) {
  std::vector<TensorSource> out;
  out.reserve(tensors.size());
  for (const auto& [name, t] : tensors) out.push_back(ToSource(prefix + name, t));
  return out;
}

Tensor FromRecord(const TensorRecord& r) {
  const Device device = CurrentDevice();
  Tensor t;
  {
    const DeviceScope host(Device::Cpu());  // decoded in host memory, then moved to the device
    t = Tensor::Empty(r.shape, r.dtype);
  }
  if (!r.data.empty()) {
    void* dst = r.dtype == DType::kFloat32 ? static_cast<void*>(t.data_f32())
                : r.dtype == DType::kInt32 ? static_cast<void*>(t.data_i32())
                                           : static_cast<void*>(t.data_i64());
    CopyLittleEndian(dst, r.data.data(), static_cast<size_t>(t.numel()), DTypeSize(r.dtype));
  }
  return t.ToDevice(device);
}

std::map<std::string, std::string> BaseMetadata(const char* kind) {
  return {{"format", "pt"}, {"lockstep_contract", std::to_string(kContractVersion)}, {"lockstep_kind", kind}};
}

void CheckContract(const SafetensorsFile& file, const std::string& what) {
  auto it = file.metadata.find("lockstep_contract");
  if (it == file.metadata.end()) return;  // a foreign file (e.g. from PyTorch): nothing to check
  LOCKSTEP_REQUIRE_FORMAT(it->second == std::to_string(kContractVersion),
                   what << ": written under numerical contract version " << it->second << ", this build implements version "
                        << kContractVersion << " (results would not be bit-comparable)");
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
  LOCKSTEP_REQUIRE_FORMAT(it != file.metadata.end(), what << ": the training checkpoint has no '" << key << "' entry");
  char* end = nullptr;
  const long long v = strtoll(it->second.c_str(), &end, 10);
  LOCKSTEP_REQUIRE_FORMAT(end && *end == '\0' && !it->second.empty(),
                   what << ": metadata '" << key << "' should be an integer, got '" << it->second << "'");
  return v;
}

}  // namespace

// The data as it is on a little-endian host, else copied to little-endian bytes a piece at a time,
// so a checkpoint is hashed or encoded without a second copy of every tensor.
void CanonicalTensorBytes(const Tensor& t, const ByteSink& sink) {
  const Tensor c = t.Detach().Contiguous().ToDevice(Device::Cpu());  // saving: data crosses to the host
  const size_t count = static_cast<size_t>(c.numel()), element = DTypeSize(c.dtype());
  if (count == 0) return;
  const uint8_t* src = static_cast<const uint8_t*>(
      c.dtype() == DType::kFloat32 ? static_cast<const void*>(c.data_f32())
      : c.dtype() == DType::kInt32 ? static_cast<const void*>(c.data_i32())
                                   : static_cast<const void*>(c.data_i64()));
  if (kHostIsLittleEndian) return sink(src, count * element);  // already the file's bytes
  constexpr size_t kPieceElements = 1 << 16;
  std::vector<uint8_t> piece(std::min(count, kPieceElements) * element);
  for (size_t start = 0; start < count; start += kPieceElements) {
    const size_t n = std::min(kPieceElements, count - start);
    CopyLittleEndian(piece.data(), src + start * element, n, element);
    sink(piece.data(), n * element);
  }
}

std::string FloatBits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, 4);
  char text[16];
  snprintf(text, sizeof text, "0x%08x", bits);
  return text;
}

std::vector<uint8_t> EncodeModel(const nn::Module& model) {
  return EncodeSafetensorsToBytes(BaseMetadata("model"), ToSources(model.StateDict(), ""));
}

std::string ModelHash(const nn::Module& model) {
  Sha256 sha;  // the bytes hashed as they are made: no copy of the checkpoint in memory
  EncodeSafetensorsTo(BaseMetadata("model"), ToSources(model.StateDict(), ""),
                      [&](const uint8_t* data, size_t size) { sha.Update(data, size); });
  return sha.HexDigest();
}

std::string SaveModel(const std::string& path, const nn::Module& model) {
  const std::vector<uint8_t> bytes = EncodeModel(model);
  WriteFileAtomic(path, bytes);
  return Sha256Hex(bytes.data(), bytes.size());
}

std::vector<uint8_t> CanonicalizeCheckpoint(const std::vector<uint8_t>& bytes, const std::string& what) {
  SafetensorsFile file = DecodeSafetensors(bytes.data(), bytes.size(), what);
  CheckContract(file, what);
  if (file.metadata.find("lockstep_kind") == file.metadata.end()) file.metadata = BaseMetadata("model");
  return EncodeSafetensors(file);
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

std::vector<uint8_t> EncodeTrainingState(const nn::Module& model, const optim::Optimizer& optimizer,
                                         const TrainingPosition& position) {
  std::map<std::string, std::string> metadata = BaseMetadata("training_state");
  metadata["step"] = std::to_string(optimizer.step_count());
  metadata["epoch"] = std::to_string(position.epoch);
  metadata["batch"] = std::to_string(position.batch);
  for (const auto& [name, offset] : position.rng_offsets) metadata["rng." + name] = std::to_string(offset);
  for (const auto& [key, value] : position.run) metadata["run." + key] = value;
  for (const auto& [key, value] : position.counters) metadata["counter." + key] = value;
  std::vector<TensorSource> sources = ToSources(model.StateDict(), "model.");
  for (TensorSource& s : ToSources(optimizer.State(), "optimizer.")) sources.push_back(std::move(s));
  return EncodeSafetensorsToBytes(metadata, sources);
}

std::string SaveTrainingState(const std::string& path, const nn::Module& model,
                              const optim::Optimizer& optimizer, const TrainingPosition& position) {
  const std::vector<uint8_t> bytes = EncodeTrainingState(model, optimizer, position);
  WriteFileAtomic(path, bytes);
  return Sha256Hex(bytes.data(), bytes.size());
}

namespace {

TrainingPosition PositionOf(const SafetensorsFile& file, const std::string& what) {
  auto kind = file.metadata.find("lockstep_kind");
  LOCKSTEP_REQUIRE_FORMAT(kind != file.metadata.end() && kind->second == "training_state",
                          what << ": not a lockstep training state (a model checkpoint holds no optimizer state "
                                  "and no position: resume from a training state, written by --checkpoint-every, "
                                  "a config's checkpoint_path or fit()'s onCheckpoint)");
  TrainingPosition position;
  position.epoch = MetadataInt(file, "epoch", what);
  position.batch = MetadataInt(file, "batch", what);
  for (const auto& [key, value] : file.metadata) {
    if (key.compare(0, 4, "rng.") == 0) position.rng_offsets[key.substr(4)] = static_cast<uint64_t>(MetadataInt(file, key, what));
    if (key.compare(0, 4, "run.") == 0) position.run[key.substr(4)] = value;
    if (key.compare(0, 8, "counter.") == 0) position.counters[key.substr(8)] = std::to_string(MetadataInt(file, key, what));
  }
  LOCKSTEP_REQUIRE_FORMAT(position.epoch >= 0 && position.batch >= 0,
                          what << ": invalid position (epoch " << position.epoch << ", batch " << position.batch << ")");
  return position;
}

}  // namespace

std::vector<uint8_t> ResumeBytes(const std::vector<uint8_t>& given, const std::string& path) {
  return given.empty() ? ReadWholeFile(path, kMaxTrainingStateBytes) : given;
}

TrainingPosition PeekTrainingState(const std::vector<uint8_t>& bytes, const std::string& what) {
  const SafetensorsFile file = DecodeSafetensors(bytes.data(), bytes.size(), what);
  CheckContract(file, what);
  return PositionOf(file, what);
}

TrainingPosition LoadTrainingStateFromBytes(const std::vector<uint8_t>& bytes, const std::string& what,
                                            nn::Module& model, optim::Optimizer& optimizer) {
  const SafetensorsFile file = DecodeSafetensors(bytes.data(), bytes.size(), what);
  CheckContract(file, what);
  const TrainingPosition position = PositionOf(file, what);
  const int64_t step = MetadataInt(file, "step", what);
  LOCKSTEP_REQUIRE_FORMAT(step >= 0, what << ": invalid step " << step);
  // Validate both parts before changing anything.
  const nn::NamedTensors model_state = WithPrefix(file, "model."), optimizer_state = WithPrefix(file, "optimizer.");
  model.ValidateStateDict(model_state);
  optimizer.ValidateState(optimizer_state);
  model.LoadStateDict(model_state);
  optimizer.LoadState(optimizer_state, step);
  return position;
}

TrainingPosition LoadTrainingState(const std::string& path, nn::Module& model, optim::Optimizer& optimizer) {
  return LoadTrainingStateFromBytes(ReadWholeFile(path, kMaxCheckpointBytes), path, model, optimizer);
}

void RequireSameRun(const TrainingPosition& saved, const std::map<std::string, std::string>& expected,
                    const std::string& what) {
  for (const auto& [key, value] : expected) {
    auto it = saved.run.find(key);
    LOCKSTEP_REQUIRE_STATE(it != saved.run.end(),
                           what << ": the training state does not record the run's " << key
                                << " (written by another kind of run?); cannot check that resuming continues the "
                                   "same run");
    LOCKSTEP_REQUIRE_STATE(it->second == value, what << ": the training state belongs to another run: its " << key
                                                     << " is " << it->second << ", this run's is " << value
                                                     << " (resume with the same configuration, or start afresh)");
  }
}

std::map<std::string, uint64_t> DropoutOffsets(nn::Module& model) {
  std::map<std::string, uint64_t> out;
  for (const auto& [path, module] : model.NamedModules()) {
    if (auto* dropout = dynamic_cast<nn::Dropout*>(module)) out["dropout@" + path] = dropout->generator().offset;
  }
  return out;
}

void RestoreDropoutOffsets(nn::Module& model, const std::map<std::string, uint64_t>& offsets, const std::string& what) {
  for (const auto& [path, module] : model.NamedModules()) {
    if (auto* dropout = dynamic_cast<nn::Dropout*>(module)) {
      auto it = offsets.find("dropout@" + path);
      LOCKSTEP_REQUIRE_FORMAT(it != offsets.end(), what << ": the training state has no generator offset for the "
                                                        << "dropout layer '" << path << "'");
      dropout->generator().offset = it->second;
    }
  }
}

}  // namespace lockstep
