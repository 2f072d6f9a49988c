// The emulation's device memory: one reserved address range that the host may not touch. Its
// pages are inaccessible except while a kernel or a copy of the emulated device runs, so a core
// that dereferences a device pointer (which a real GPU's cudaMalloc memory would not allow) stops
// at once with a message naming the address, instead of passing by luck on managed memory.
#ifndef LOCKSTEP_CUDA_EMULATED_DEVICE_MEMORY_H_
#define LOCKSTEP_CUDA_EMULATED_DEVICE_MEMORY_H_

#include <stddef.h>

namespace lockstep {
namespace cuda {

// 64-byte aligned blocks of the reserved range; null when it is full (last_error says so).
void* DeviceAlloc(size_t bytes);
void DeviceRelease(void* p);
const char* DeviceMemoryError();

// While one exists (on any thread), device memory is readable and writable.
class DeviceAccess {
 public:
  DeviceAccess();
  ~DeviceAccess();
  DeviceAccess(const DeviceAccess&) = delete;
  DeviceAccess& operator=(const DeviceAccess&) = delete;
};

}  // namespace cuda
}  // namespace lockstep

#endif  // LOCKSTEP_CUDA_EMULATED_DEVICE_MEMORY_H_
