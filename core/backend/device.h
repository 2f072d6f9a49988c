// Devices: where tensors live and kernels run. The CPU is always there; CUDA devices come from a
// plugin loaded at run time (core/backend/plugin_loader.h), so the core has no CUDA code.
//
// Computation happens on the current device (like torch.set_default_device): new tensors are
// allocated there and the kernels of every op run there. An op given a tensor that lives on
// another device refuses with both devices named; Tensor::ToDevice moves data explicitly.
#ifndef LOCKSTEP_CORE_BACKEND_DEVICE_H_
#define LOCKSTEP_CORE_BACKEND_DEVICE_H_

#include <string>
#include <vector>

#include "core/backend/caching_allocator.h"
#include "core/backend/kernel_table.h"

namespace lockstep {

struct Device {
  enum class Type { kCpu, kCuda };
  Type type = Type::kCpu;
  int index = 0;

  static Device Cpu() { return Device(); }
  static Device Cuda(int index = 0) { return Device{Type::kCuda, index}; }
  // "cpu", "cuda", "cuda:N"; anything else throws naming the accepted forms.
  static Device Parse(const std::string& text);
  std::string ToString() const;  // "cpu", "cuda:0"
  bool operator==(const Device& o) const { return type == o.type && (type == Type::kCpu || index == o.index); }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

// The kernels of a device: the CPU's (simd/) or the plugin's. Throws a clear error when the
// device is not available (no plugin, no driver, no such GPU), naming the reason.
const backend::KernelTable& KernelsOf(Device device);
const backend::KernelTable& CpuKernels();

// The caching allocator of a device's tensor storage (core/backend/caching_allocator.h): its
// statistics, EmptyCache() to give cached blocks back (as torch.cuda.empty_cache), SetEnabled.
// Throws as KernelsOf does when the device is not available.
backend::CachingAllocator& AllocatorOf(Device device);

// The current device of the calling thread (every thread starts on the CPU), as CUDA's current
// device is per thread: a thread that switches devices never moves another thread's work. Setting
// it loads the device first, so a failure leaves the current device unchanged.
Device CurrentDevice();
const backend::KernelTable& CurrentKernels();
void SetCurrentDevice(Device device);

// Makes `device` current for a scope, restoring the previous one after.
class DeviceScope {
 public:
  explicit DeviceScope(Device device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  Device previous_;
};

// What the CUDA plugin reports: its path, its devices, or why there are none.
struct CudaDeviceListing {
  std::string plugin;              // the file loaded, empty when none was found
  std::vector<std::string> devices;  // "cuda:0 (NVIDIA H200, compute 9.0, 139.8 GiB)", ...
  std::string why_none;            // set when devices is empty
};
CudaDeviceListing ListCudaDevices();

// Throws unless a kernel call succeeded (status 0), with the device's own error text.
void CheckKernel(const backend::KernelTable& kernels, int status, const char* what);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_BACKEND_DEVICE_H_
