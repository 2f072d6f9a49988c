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

namespace lockstep {

// The canonical bytes of a model checkpoint.
std::vector<uint8_t> EncodeModel(const nn::Module& model);
// SHA-256 of EncodeModel(model), as 64 hex digits.
std::string ModelHash(const nn::Module& model);
// Writes the checkpoint atomically; returns its hash.
std::string SaveModel(const std::string& path, const nn::Module& model);
// Loads a model checkpoint (lockstep's or a PyTorch state dict saved as safetensors).
void LoadModel(const std::string& path, nn::Module& model);
void LoadModelFromBytes(const std::vector<uint8_t>& bytes, const std::string& what, nn::Module& model);

struct TrainingPosition {
  int64_t epoch = 0;          // data epoch in progress
  int64_t batch = 0;          // batches of that epoch already consumed
  std::map<std::string, uint64_t> rng_offsets;  // named generator offsets (e.g. dropout streams)
};

std::string SaveTrainingState(const std::string& path, const nn::Module& model,
                              const optim::Optimizer& optimizer, const TrainingPosition& position);
TrainingPosition LoadTrainingState(const std::string& path, nn::Module& model, optim::Optimizer& optimizer);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_CHECKPOINT_H_
