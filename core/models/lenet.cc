#include "core/models/lenet.h"

namespace lockstep {
namespace models {

std::shared_ptr<nn::Sequential> MakeLeNet5(uint64_t seed) {
  Generator init(seed, "init");
  auto model = std::make_shared<nn::Sequential>();
  model->Add(std::make_shared<nn::Conv2d>(1, 6, 5, init, 1, 2))
      .Add(std::make_shared<nn::ReLU>())
      .Add(std::make_shared<nn::MaxPool2d>(2))
      .Add(std::make_shared<nn::Conv2d>(6, 16, 5, init))
      .Add(std::make_shared<nn::ReLU>())
      .Add(std::make_shared<nn::MaxPool2d>(2))
      .Add(std::make_shared<nn::Flatten>())
      .Add(std::make_shared<nn::Linear>(400, 120, true, init))
      .Add(std::make_shared<nn::ReLU>())
      .Add(std::make_shared<nn::Linear>(120, 84, true, init))
      .Add(std::make_shared<nn::ReLU>())
      .Add(std::make_shared<nn::Linear>(84, 10, true, init));
  return model;
}

}  // namespace models
}  // namespace lockstep
