// Host-side utilities the core uses on host values (never on tensor data, which only kernels
// touch): Philox draws into vectors, cos(pi x) in double precision, the CPU's SIMD target. The
// core reaches simd/ only through core/backend/; these are its host-side doors.
#ifndef LOCKSTEP_CORE_BACKEND_HOST_H_
#define LOCKSTEP_CORE_BACKEND_HOST_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

namespace lockstep {
namespace host {

// Philox4x32-10 words and draws of (seed, stream) from word `first` on (simd/philox.h).
std::vector<uint32_t> PhiloxWords(uint64_t seed, uint64_t stream, uint64_t first, size_t n);
std::vector<float> PhiloxUniform(uint64_t seed, uint64_t stream, uint64_t first, float low, float high, size_t n);
std::vector<float> PhiloxNormal(uint64_t seed, uint64_t stream, uint64_t first, float mean, float std, size_t n);

// Correctly rounded (simd/math.h).
double CosPi(double x);
float Rsqrt(float x);

// The integer exponents pow() computes with a proof of correct rounding (simd/math.h).
int PowIntProvenMin();
int PowIntProvenMax();

// The SIMD target the CPU's kernels run on ("AVX2", "NEON", "WASM", ...).
std::string SimdTargetName();

}  // namespace host
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_BACKEND_HOST_H_
