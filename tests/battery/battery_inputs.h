// Deterministic battery inputs, drawn from Philox (integer-only, so identical everywhere): ordinary
// values of many magnitudes mixed with every special class (+-0, subnormals, +-inf, NaNs with odd
// payloads, the largest and smallest normals).
#ifndef LOCKSTEP_TESTS_BATTERY_BATTERY_INPUTS_H_
#define LOCKSTEP_TESTS_BATTERY_BATTERY_INPUTS_H_

#include <stddef.h>
#include <stdint.h>

#include <vector>

namespace lockstep {
namespace battery {

// Mixed values, specials included.
std::vector<float> MixedInputs(size_t n, uint64_t stream);
// Finite values of moderate size (|x| in [2^-8, 2^8)), for sums and products whose order matters.
std::vector<float> ModerateInputs(size_t n, uint64_t stream);

// The vector lengths every elementwise and reduction kernel runs at: 0 to 3 times the widest
// vector (64 lanes, SVE at 2048 bits) and a few past the reduction block size.
const std::vector<size_t>& BatteryLengths();
// Offsets (in floats) from an aligned start, so misaligned loads are exercised.
constexpr size_t kBatteryOffsets[] = {0, 1, 3};

}  // namespace battery
}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_BATTERY_BATTERY_INPUTS_H_
