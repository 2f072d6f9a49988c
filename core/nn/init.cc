#include "core/nn/init.h"

#include "simd/fp_mode.h"
#include "simd/math.h"
#include "simd/philox.h"

namespace lockstep {
namespace nn {

void UniformInit(Tensor& t, float low, float high, Generator& gen) {
  const simd::ContractFloatingPointScope fp_mode;
  const uint64_t n = static_cast<uint64_t>(t.numel());
  simd::PhiloxUniformRange(gen.seed, gen.stream, gen.Take(n), low, high, t.data_f32(), n);
}

void NormalInit(Tensor& t, float mean, float std, Generator& gen) {
  const simd::ContractFloatingPointScope fp_mode;
  const uint64_t n = static_cast<uint64_t>(t.numel());
  simd::PhiloxNormal(gen.seed, gen.stream, gen.Take(n), mean, std, t.data_f32(), n);
}

void ConstantInit(Tensor& t, float value) {
  for (int64_t i = 0; i < t.numel(); ++i) t.data_f32()[i] = value;
}

namespace {
float InverseSqrt(int64_t n) {
  const simd::ContractFloatingPointScope fp_mode;
  const float x = static_cast<float>(n);
  float r;
  simd::Math(simd::MathFn::kRsqrt, &x, &r, 1);
  return r;
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
