#include "core/models/by_name.h"

#include "core/models/lenet.h"
#include "core/nn/layers.h"
#include "core/random.h"

namespace lockstep {
namespace models {

std::shared_ptr<nn::Module> MakeModelByName(const std::string& arch, uint64_t seed) {
  if (arch == "lenet5") return MakeLeNet5(seed);
  if (arch == "mlp") {
    Generator init(seed, "init");
    auto model = std::make_shared<nn::Sequential>();
    model->Add(std::make_shared<nn::Flatten>())
        .Add(std::make_shared<nn::Linear>(784, 128, true, init))
        .Add(std::make_shared<nn::ReLU>())
        .Add(std::make_shared<nn::Linear>(128, 10, true, init));
    return model;
  }
  return nullptr;
}

const std::vector<std::string>& ModelNames() {
  static const std::vector<std::string> names = {"lenet5", "mlp"};
  return names;
}

}  // namespace models
}  // namespace lockstep
