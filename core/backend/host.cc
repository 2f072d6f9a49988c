#include "core/backend/host.h"

#include "simd/math.h"
#include "simd/philox.h"
#include "simd/targets.h"

namespace lockstep {
namespace host {

std::vector<uint32_t> PhiloxWords(uint64_t seed, uint64_t stream, uint64_t first, size_t n) {
  std::vector<uint32_t> words(n);
  simd::PhiloxUint32(seed, stream, first, words.data(), n);
  return words;
}

std::vector<float> PhiloxUniform(uint64_t seed, uint64_t stream, uint64_t first, float low, float high, size_t n) {
  std::vector<float> values(n);
  simd::PhiloxUniformRange(seed, stream, first, low, high, values.data(), n);
  return values;
}

std::vector<float> PhiloxNormal(uint64_t seed, uint64_t stream, uint64_t first, float mean, float std, size_t n) {
  std::vector<float> values(n);
  simd::PhiloxNormal(seed, stream, first, mean, std, values.data(), n);
  return values;
}

double CosPi(double x) { return simd::CosPiF64(x); }

float Rsqrt(float x) {
  float r;
  simd::Math(simd::MathFn::kRsqrt, &x, &r, 1);
  return r;
}

int PowIntProvenMin() { return simd::kPowIntProvenMin; }
int PowIntProvenMax() { return simd::kPowIntProvenMax; }

std::string SimdTargetName() { return simd::ActiveTargetName(); }

}  // namespace host
}  // namespace lockstep
