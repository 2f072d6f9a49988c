// Runs battery kernels through one device's table (battery_cases.cc, battery_layer_cases.cc).
#ifndef LOCKSTEP_TESTS_BATTERY_BATTERY_RUNNER_H_
#define LOCKSTEP_TESTS_BATTERY_BATTERY_RUNNER_H_

#include <vector>

#include "core/backend/device.h"
#include "core/backend/kernel_table.h"
#include "core/error.h"
#include "tests/battery/battery_cases.h"

namespace lockstep {
namespace battery {

// Runs kernels through one device's table: inputs are copied to device buffers once, outputs are
// written to a device buffer and fetched after each call.
class Runner {
 public:
  explicit Runner(const backend::KernelTable& k) : k(k) {}
  ~Runner() {
    for (void* p : buffers_) k.release(p);
  }
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;
  // A device copy of a host array.
  template <class T>
  T* Upload(const std::vector<T>& host) {
    T* device = Alloc<T>(host.size());
    Check(k.copy_to_device(device, host.data(), host.size() * sizeof(T)), "copy to device");
    return device;
  }
  // Overwrites count elements of a device array with a host array's first elements.
  template <class T>
  void Store(T* device, const std::vector<T>& host, size_t count) {
    LOCKSTEP_REQUIRE(count <= host.size(), "battery: storing " << count << " of " << host.size() << " elements");
    Check(k.copy_to_device(device, host.data(), count * sizeof(T)), "copy to device");
  }
  template <class T>
  T* Alloc(size_t count) {
    void* p = k.alloc(count * sizeof(T) + 64);
    LOCKSTEP_REQUIRE(p != nullptr, "out of memory on " << k.device_name);
    buffers_.push_back(p);
    return static_cast<T*>(p);
  }
  // Appends count elements of a device array to the kernel's output.
  template <class T>
  void Fetch(KernelOutput& into, const T* device, size_t count) {
    std::vector<T> host(count);
    Check(k.copy_to_host(host.data(), device, count * sizeof(T)), "copy to host");
    into.Append(host.data(), count, sizeof(T));
  }
  void Check(int status, const char* what) const { CheckKernel(k, status, what); }

  const backend::KernelTable& k;

 private:
  std::vector<void*> buffers_;
};

// The cases of golden section 2 (battery_layer_cases.cc): the table's entries the first battery
// left out (battery_coverage.h names every case's entries and section).
void LayerCases(Runner& r, std::vector<KernelOutput>& outputs);
// The cases of golden section 8 (battery_training_cases.cc).
void TrainingCases(Runner& r, std::vector<KernelOutput>& outputs);

}  // namespace battery
}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_BATTERY_BATTERY_RUNNER_H_
