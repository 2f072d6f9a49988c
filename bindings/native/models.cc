#include "bindings/native/models.h"

#include <string.h>

#include <string>

#include "bindings/native/c_api_internal.h"
#include "core/models/by_name.h"

namespace lockstep {
namespace capi {

std::shared_ptr<nn::Module> MakeModel(const char* arch, uint64_t seed, const char** canonical) {
  for (const std::string& name : models::ModelNames()) {
    if (name == arch) {
      *canonical = name.c_str();  // static storage
      return models::MakeModelByName(name, seed);
    }
  }
  return nullptr;
}

void RequireInputShape(const char* arch, const Shape& shape) {
  if (strcmp(arch, "onnx") == 0) {  // an imported graph checks its inputs against its declaration
    if (shape.empty() || shape[0] < 1) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "the batch is empty");
    return;
  }
  const bool image = shape.size() == 4 && shape[1] == 1 && shape[2] == 28 && shape[3] == 28;
  const bool flat = shape.size() == 2 && shape[1] == 784;
  const bool mlp = strcmp(arch, "mlp") == 0;
  if (!(image || (mlp && flat))) {
    Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, std::string(arch) + " expects inputs of shape " +
                                              (mlp ? "[N, 784] or [N, 1, 28, 28]" : "[N, 1, 28, 28]") + ", got " +
                                              ShapeString(shape));
  }
  if (shape[0] < 1) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "the batch is empty");
}

}  // namespace capi
}  // namespace lockstep
