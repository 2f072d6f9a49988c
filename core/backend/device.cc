#include "core/backend/device.h"

#include <stdlib.h>

#include <atomic>
#include <map>
#include <mutex>

#include "core/backend/plugin_loader.h"
#include "core/error.h"

namespace lockstep {

Device Device::Parse(const std::string& text) {
  if (text == "cpu") return Cpu();
  if (text == "cuda") return Cuda(0);
  if (text.rfind("cuda:", 0) == 0 && text.size() > 5 && text.size() <= 8) {
    const std::string digits = text.substr(5);
    if (digits.find_first_not_of("0123456789") == std::string::npos) return Cuda(atoi(digits.c_str()));
  }
  throw Error("unknown device '" + text + "': expected cpu, cuda or cuda:N (N a device number)");
}

std::string Device::ToString() const {
  return type == Type::kCpu ? "cpu" : "cuda:" + std::to_string(index);
}

namespace {

std::mutex device_mutex;
// Per thread, as CUDA's own current device is: one thread switching devices never changes where
// another thread's ops run. Every thread starts on the CPU.
thread_local const backend::KernelTable* current_kernels = nullptr;  // null: the CPU
thread_local int current_cuda_index = -1;                            // -1: the CPU

struct LoadedDevice {
  const backend::KernelTable* table;
  backend::CachingAllocator* allocator;  // never freed: storage may outlive static destruction
};

const LoadedDevice& LoadCuda(int index) {
  // Never freed, like the CPU's allocator: tensors held by static objects are released after main
  // returns, and the devices must outlive them.
  static auto* const loaded = new std::map<int, LoadedDevice>;
  std::lock_guard<std::mutex> lock(device_mutex);
  auto found = loaded->find(index);
  if (found != loaded->end()) return found->second;
  const std::string name = "cuda:" + std::to_string(index);
  std::string why;
  const DevicePlugin* plugin = LoadCudaPlugin(&why);
  LOCKSTEP_REQUIRE_KIND(ErrorKind::kUnavailable, plugin != nullptr, "device " << name << " is not available: " << why);
  char reason[1024] = "";
  const backend::KernelTable* table = plugin->kernel_table(index, reason, sizeof reason);
  LOCKSTEP_REQUIRE_KIND(ErrorKind::kUnavailable, table != nullptr, "device " << name << " is not available: " << reason
                                               << " (plugin " << plugin->path << ")");
  LOCKSTEP_REQUIRE_KIND(ErrorKind::kUnavailable, table->abi_version == backend::kKernelTableAbi &&
                       table->table_bytes == sizeof(backend::KernelTable),
                   "the CUDA plugin " << plugin->path << " was built for kernel table version "
                                      << table->abi_version << " (" << table->table_bytes
                                      << " bytes); this lockstep needs version "
                                      << backend::kKernelTableAbi << " ("
                                      << sizeof(backend::KernelTable) << " bytes): rebuild it");
  return (*loaded)[index] = LoadedDevice{table, new backend::CachingAllocator(table->alloc, table->release)};
}

}  // namespace

const backend::KernelTable& KernelsOf(Device device) {
  return device.type == Device::Type::kCpu ? CpuKernels() : *LoadCuda(device.index).table;
}

backend::CachingAllocator& AllocatorOf(Device device) {
  if (device.type != Device::Type::kCpu) return *LoadCuda(device.index).allocator;
  // Never freed: tensors held by static objects are released after main returns.
  static backend::CachingAllocator* const cpu = new backend::CachingAllocator(CpuKernels().alloc, CpuKernels().release);
  return *cpu;
}

Device CurrentDevice() {
  return current_cuda_index < 0 ? Device::Cpu() : Device::Cuda(current_cuda_index);
}

const backend::KernelTable& CurrentKernels() {
  return current_kernels != nullptr ? *current_kernels : CpuKernels();
}

void SetCurrentDevice(Device device) {
  const backend::KernelTable& table = KernelsOf(device);  // throws before anything changes
  const bool cpu = device.type == Device::Type::kCpu;
  current_kernels = cpu ? nullptr : &table;
  current_cuda_index = cpu ? -1 : device.index;
}

DeviceScope::DeviceScope(Device device) : previous_(CurrentDevice()) { SetCurrentDevice(device); }
DeviceScope::~DeviceScope() { SetCurrentDevice(previous_); }

CudaDeviceListing ListCudaDevices() {
  CudaDeviceListing listing;
  const DevicePlugin* plugin = LoadCudaPlugin(&listing.why_none);
  if (plugin == nullptr) return listing;
  listing.plugin = plugin->path;
  char names[4096] = "", why[1024] = "";
  const int count = plugin->list_devices(names, sizeof names, why, sizeof why);
  std::string all = names;
  for (size_t start = 0; start < all.size();) {
    const size_t end = all.find('\n', start);
    const std::string line = all.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!line.empty()) listing.devices.push_back(line);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (count <= 0 || listing.devices.empty()) {
    listing.devices.clear();
    listing.why_none = std::string("the CUDA plugin found no device: ") + why;
  }
  return listing;
}

void CheckKernel(const backend::KernelTable& kernels, int status, const char* what) {
  if (status == 0) return;
  throw Error(std::string(what) + " failed on " + kernels.device_name + ": " + kernels.last_error());
}

}  // namespace lockstep
