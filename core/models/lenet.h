// LeNet-5 as RepDL's MNIST example uses it: Conv2d(1,6,5,padding=2), ReLU, MaxPool2d(2),
// Conv2d(6,16,5), ReLU, MaxPool2d(2), Flatten, Linear(400,120), ReLU, Linear(120,84), ReLU,
// Linear(84,10). Parameters are drawn in that order from the stream "init" under the seed.
#ifndef LOCKSTEP_CORE_MODELS_LENET_H_
#define LOCKSTEP_CORE_MODELS_LENET_H_

#include <stdint.h>

#include <memory>

#include "core/nn/layers.h"

namespace lockstep {
namespace models {

std::shared_ptr<nn::Sequential> MakeLeNet5(uint64_t seed);

}  // namespace models
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_MODELS_LENET_H_
