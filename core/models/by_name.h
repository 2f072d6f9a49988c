// The reference architectures by name, as the C ABI, the CLI and the npm package offer them.
#ifndef LOCKSTEP_CORE_MODELS_BY_NAME_H_
#define LOCKSTEP_CORE_MODELS_BY_NAME_H_

#include <stdint.h>

#include <memory>
#include <string>
#include <vector>

#include "core/nn/module.h"

namespace lockstep {
namespace models {

// "lenet5": LeNet-5 for [N, 1, 28, 28] images. "mlp": Flatten, Linear(784, 128), ReLU,
// Linear(128, 10). Parameters come from the seed's "init" stream. Null for any other name.
std::shared_ptr<nn::Module> MakeModelByName(const std::string& arch, uint64_t seed);

// The names MakeModelByName knows, in a stable order.
const std::vector<std::string>& ModelNames();

}  // namespace models
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_MODELS_BY_NAME_H_
