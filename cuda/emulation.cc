// The emulation plugin: the CUDA plugin's kernel bodies (cuda/kernels/) run as host loops, one
// index after another, behind the same plugin entry points. It lets every machine test the
// plugin's arithmetic, the plugin loader and training with `--device cuda` against the golden
// hashes; only the launch and memory calls of plugin.cu are left for a machine with a GPU.
// Its memory behaves as cudaMalloc's does for the host: not addressable (emulated_device_memory.h)
// except inside the table's own calls, so the core's one path to device data, kernels and
// copies, is enforced here too. Selected with LOCKSTEP_CUDA_PLUGIN=<path to
// liblockstep_cuda_emulated.so>.
#include <stdio.h>
#include <stdlib.h>

#include <string>

#include "cuda/emulated_device_memory.h"
#include "cuda/kernel_table_impl.h"
#include "cuda/math_tables_host.h"
#include "cuda/plugin_export.h"

namespace lockstep {
namespace cuda {
namespace {

thread_local std::string last_error;

struct HostLoops {
  template <class Body>
  static int Launch(size_t n, const Body& body) {
    for (size_t i = 0; i < n; ++i) body(i);
    return 0;
  }
  static void* Alloc(size_t bytes) {
    void* p = DeviceAlloc(bytes);
    if (p == nullptr) last_error = DeviceMemoryError();
    return p;
  }
  static void Release(void* p) { DeviceRelease(p); }
  static int CopyToDevice(void* dst, const void* src, size_t bytes) {
    if (bytes != 0) memcpy(dst, src, bytes);
    return 0;
  }
  static int CopyToHost(void* dst, const void* src, size_t bytes) {
    if (bytes != 0) memcpy(dst, src, bytes);
    return 0;
  }
  static const MathTables& Tables() {
    static const MathTables tables = HostMathTables();
    return tables;
  }
  static const char* LastError() { return last_error.c_str(); }
  static int Fail(const char* message) {
    last_error = message;
    return 1;
  }
};

// The table's entries with device memory open for the duration of each call.
struct Guarded {
  using Impl = TableImpl<HostLoops>;
#define LOCKSTEP_GUARDED_KERNEL(name, Name, label, parameters, arguments) \
  static int Name parameters {                                            \
    const DeviceAccess access;                                            \
    return Impl::Name arguments;                                          \
  }
  LOCKSTEP_KERNELS(LOCKSTEP_GUARDED_KERNEL)
#undef LOCKSTEP_GUARDED_KERNEL
  static void* Alloc(size_t bytes) { return HostLoops::Alloc(bytes); }
  static void Release(void* p) { HostLoops::Release(p); }
  static int CopyToDevice(void* dst, const void* src, size_t bytes) {
    const DeviceAccess access;
    return HostLoops::CopyToDevice(dst, src, bytes);
  }
  static int CopyToHost(void* dst, const void* src, size_t bytes) {
    const DeviceAccess access;
    return HostLoops::CopyToHost(dst, src, bytes);
  }
  static const char* LastError() { return HostLoops::LastError(); }
};

constexpr const char* kDeviceName = "cuda:0 (host emulation of the CUDA plugin's kernels)";

}  // namespace
}  // namespace cuda
}  // namespace lockstep

const lockstep::backend::KernelTable* lockstep_plugin_kernel_table_v1(int index, char* why,
                                                                      size_t why_bytes) {
  if (index != 0) {
    snprintf(why, why_bytes, "the emulated CUDA device list has cuda:0 only, asked for cuda:%d", index);
    return nullptr;
  }
  static const lockstep::backend::KernelTable table =
      lockstep::backend::MakeKernelTable<lockstep::cuda::Guarded>(lockstep::cuda::kDeviceName);
  return &table;
}

int lockstep_plugin_list_devices_v1(char* names, size_t names_bytes, char* why, size_t why_bytes) {
  snprintf(names, names_bytes, "%s\n", lockstep::cuda::kDeviceName);
  if (why_bytes != 0) why[0] = '\0';
  return 1;
}
