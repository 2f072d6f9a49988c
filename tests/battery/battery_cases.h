// The kernel battery: every kernel family run on fixed inputs, its outputs kept as bytes so that
// they can be hashed, written to a file, and compared element by element across platforms.
#ifndef LOCKSTEP_TESTS_BATTERY_BATTERY_CASES_H_
#define LOCKSTEP_TESTS_BATTERY_BATTERY_CASES_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "core/backend/kernel_table.h"

namespace lockstep {
namespace battery {

struct KernelOutput {
  std::string name;
  std::vector<uint8_t> bytes;  // every output element of every case, in order, little-endian

  // Appends count elements of element_size bytes as little-endian bytes.
  void Append(const void* data, size_t count, size_t element_size = 4);
};

// Runs every kernel on the currently dispatched SIMD target.
std::vector<KernelOutput> RunBattery();
// Runs the kernels of a device's table (inputs copied to it, outputs fetched back); the host-only
// kernels (IsHostOnlyKernel: Philox words, uniform and normal draws) run on the CPU when included.
std::vector<KernelOutput> RunBattery(const backend::KernelTable& kernels, bool include_host_only);
bool IsHostOnlyKernel(const std::string& name);

}  // namespace battery
}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_BATTERY_BATTERY_CASES_H_
