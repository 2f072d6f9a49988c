// Parameter initialisation (PyTorch's default schemes), drawing from a named Philox stream so a
// parameter's initial values depend only on the seed and its stream name.
#ifndef LOCKSTEP_CORE_NN_INIT_H_
#define LOCKSTEP_CORE_NN_INIT_H_

#include <stdint.h>

#include "core/random.h"
#include "core/tensor.h"

namespace lockstep {
namespace nn {

void UniformInit(Tensor& t, float low, float high, Generator& gen);
void NormalInit(Tensor& t, float mean, float std, Generator& gen);
void ConstantInit(Tensor& t, float value);
// PyTorch's default for Linear and Conv weights: kaiming_uniform(a = sqrt(5)), i.e.
// uniform(-b, b) with b = 1 / sqrt(fan_in) (b computed with the correctly rounded rsqrt).
void KaimingUniformDefault(Tensor& weight, int64_t fan_in, Generator& gen);
// PyTorch's default bias: uniform(-1 / sqrt(fan_in), 1 / sqrt(fan_in)).
void BiasUniformDefault(Tensor& bias, int64_t fan_in, Generator& gen);

}  // namespace nn
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_NN_INIT_H_
