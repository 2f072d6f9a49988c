// Checkpoints are canonical safetensors files (docs/numerics.md, rule 8): the model hash is the
// SHA-256 of the file, exactly what `sha256sum model.safetensors` prints. A model checkpoint holds
// the state dict (parameters and buffers, PyTorch's names); a training checkpoint adds the
// optimizer state, the step, the data position and the random-stream offsets, so a resumed run
// ends with the same hash as one never interrupted. Writes are atomic; loads validate everything.
#ifndef LOCKSTEP_CORE_CHECKPOINT_H_
#define LOCKSTEP_CORE_CHECKPOINT_H_

#include <stdint.h>

#include <map>
#include <string>
#include <vector>

#include "core/nn/module.h"
#include "core/optim/optimizer.h"
#include "core/safetensors.h"

namespace lockstep {

// The largest checkpoint or training state read: 4 GiB, or what a 32-bit address space
// (WebAssembly) can hold.
constexpr size_t kMaxCheckpointBytes =
    sizeof(size_t) >= 8 ? static_cast<size_t>(uint64_t{4} << 30) : static_cast<size_t>(0xFFFFFFFFu);
constexpr size_t kMaxTrainingStateBytes = kMaxCheckpointBytes;

// A tensor's canonical bytes (contiguous, little-endian, brought to the host), passed to sink in
// pieces: what a checkpoint holds and what receipts hash.
void CanonicalTensorBytes(const Tensor& t, const ByteSink& sink);

// "0x3a83126f": a float's exact bits, for run identities (a decimal could round).
std::string FloatBits(float value);

// The canonical bytes of a model checkpoint.
std::vector<uint8_t> EncodeModel(const nn::Module& model);
// SHA-256 of EncodeModel(model), as 64 hex digits.
std::string ModelHash(const nn::Module& model);
// Writes the checkpoint atomically; returns its hash.
std::string SaveModel(const std::string& path, const nn::Module& model);
// The canonical form of any safetensors file (another tool's, a lockstep checkpoint): the same
// tensors and values, encoded as lockstep writes checkpoints (sorted keys, canonical header and NaNs,
// lockstep's metadata; lockstep's own metadata is kept). Its SHA-256 is the model hash lockstep
// prints for a model loaded from that file.
std::vector<uint8_t> CanonicalizeCheckpoint(const std::vector<uint8_t>& bytes, const std::string& what);

// Loads a model checkpoint (lockstep's or a PyTorch state dict saved as safetensors).
void LoadModel(const std::string& path, nn::Module& model);
void LoadModelFromBytes(const std::vector<uint8_t>& bytes, const std::string& what, nn::Module& model);

struct TrainingPosition {
  int64_t epoch = 0;          // data epoch in progress
  int64_t batch = 0;          // batches of that epoch already consumed
  std::map<std::string, uint64_t> rng_offsets;  // named generator offsets (e.g. dropout streams)
  // What identifies the run ("seed", "data", "model", "lr", ...): a run resumed from this state
  // must have the same values (RequireSameRun), or its hash would silently differ from the
  // uninterrupted run's.
  std::map<std::string, std::string> run;
  std::map<std::string, std::string> counters;  // other progress a trainer keeps (estimates done, ...)
};

std::vector<uint8_t> EncodeTrainingState(const nn::Module& model, const optim::Optimizer& optimizer,
                                         const TrainingPosition& position);
// Writes the state atomically; returns its hash.
std::string SaveTrainingState(const std::string& path, const nn::Module& model,
                              const optim::Optimizer& optimizer, const TrainingPosition& position);
// Validates everything (model tensors, optimizer state, metadata) before changing the model or the
// optimizer; `what` names the source in errors.
TrainingPosition LoadTrainingStateFromBytes(const std::vector<uint8_t>& bytes, const std::string& what,
                                            nn::Module& model, optim::Optimizer& optimizer);
TrainingPosition LoadTrainingState(const std::string& path, nn::Module& model, optim::Optimizer& optimizer);
// The training state a trainer resumes from: the bytes given (a trainer's resume_state), else the
// file at `path` (its resume_path), read whole.
std::vector<uint8_t> ResumeBytes(const std::vector<uint8_t>& given, const std::string& path);
// Reads only the metadata (position, run identity): to check a resume before building anything.
TrainingPosition PeekTrainingState(const std::vector<uint8_t>& bytes, const std::string& what);

// Throws (kind kState) naming the first entry of `expected` that the saved run lacks or holds with
// another value: resuming with another seed, data set or model is refused.
void RequireSameRun(const TrainingPosition& saved, const std::map<std::string, std::string>& expected,
                    const std::string& what);

// The offsets of every Dropout's generator by module path ("dropout@transformer.h.0.attn_dropout"),
// and their restoration (every path must be present).
std::map<std::string, uint64_t> DropoutOffsets(nn::Module& model);
void RestoreDropoutOffsets(nn::Module& model, const std::map<std::string, uint64_t>& offsets, const std::string& what);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_CHECKPOINT_H_
