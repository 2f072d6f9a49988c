#include "core/nn/init.h"

#include "core/backend/host.h"
#include "simd/fp_mode.h"

namespace lockstep {
namespace nn {

void UniformInit(Tensor& t, float low, float high, Generator& gen) {
  const simd::ContractFloatingPointScope fp_mode;
  const uint64_t n = static_cast<uint64_t>(t.numel());
  t.CopyFrom(Tensor::FromVector(t.shape(), host::PhiloxUniform(gen.seed, gen.stream, gen.Take(n), low, high, n)));
}

void NormalInit(Tensor& t, float mean, float std, Generator& gen) {
  const simd::ContractFloatingPointScope fp_mode;
  const uint64_t n = static_cast<uint64_t>(t.numel());
  t.CopyFrom(Tensor::FromVector(t.shape(), host::PhiloxNormal(gen.seed, gen.stream, gen.Take(n), mean, std, n)));
}

void ConstantInit(Tensor& t, float value) {
  t.CopyFrom(Tensor::Full(t.shape(), value));
}

namespace {
float InverseSqrt(int64_t n) {
  const simd::ContractFloatingPointScope fp_mode;
  return host::Rsqrt(static_cast<float>(n));
}
}  // namespace

void KaimingUniformDefault(Tensor& weight, int64_t fan_in, Generator& gen) {
  const float bound = InverseSqrt(fan_in);
  UniformInit(weight, -bound, bound, gen);
}

void BiasUniformDefault(Tensor& bias, int64_t fan_in, Generator& gen) {
  const float bound = fan_in > 0 ? InverseSqrt(fan_in) : 0.0f;
  UniformInit(bias, -bound, bound, gen);
}

}  // namespace nn
}  // namespace lockstep
