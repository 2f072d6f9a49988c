// The architectures the C ABI offers by name, and the input shapes each accepts.
#ifndef LOCKSTEP_BINDINGS_NATIVE_MODELS_H_
#define LOCKSTEP_BINDINGS_NATIVE_MODELS_H_

#include <stdint.h>

#include <memory>

#include "core/nn/module.h"
#include "core/shape.h"

namespace lockstep {
namespace capi {

constexpr int64_t kNumClasses = 10;

// "lenet5" or "mlp" (Flatten, Linear(784, 128), ReLU, Linear(128, 10), drawn from the seed's
// "init" stream); null for any other name. *canonical receives the static name.
std::shared_ptr<nn::Module> MakeModel(const char* arch, uint64_t seed, const char** canonical);

// Fails with LOCKSTEP_ERROR_INVALID_ARGUMENT unless shape is a non-empty batch the arch accepts:
// lenet5 [N, 1, 28, 28]; mlp [N, 784] or [N, 1, 28, 28]; onnx any [N, ...] (the graph checks the rest).
void RequireInputShape(const char* arch, const Shape& shape);

}  // namespace capi
}  // namespace lockstep

#endif  // LOCKSTEP_BINDINGS_NATIVE_MODELS_H_
