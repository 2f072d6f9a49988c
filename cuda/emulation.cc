// The emulation plugin: the CUDA plugin's kernel bodies (cuda/kernels/) run as host loops, one
// index after another, behind the same plugin entry points. It lets every machine test the
// plugin's arithmetic, the plugin loader and training with `--device cuda` against the golden
// hashes; only the launch and memory calls of plugin.cu are left for a machine with a GPU.
// Its memory behaves as cudaMalloc's does for the host: not addressable (emulated_device_memory.h)
// except while a kernel body or a copy runs, so the one path to device data, kernels and copies,
// is enforced here too, for the core and for the table's own host code. Selected with LOCKSTEP_CUDA_PLUGIN=<path to
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
  // Device memory opens for the kernel bodies and the copies only, as on a GPU: the table's own
  // host code (kernel_table_impl.h) may not touch it either.
  template <class Body>
  static int Launch(size_t n, const Body& body) {
    const DeviceAccess access;
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
    const DeviceAccess access;
    if (bytes != 0) memcpy(dst, src, bytes);
    return 0;
  }
  static int CopyToHost(void* dst, const void* src, size_t bytes) {
    const DeviceAccess access;
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
      lockstep::cuda::TableImpl<lockstep::cuda::HostLoops>::Make(lockstep::cuda::kDeviceName);
  return &table;
}

int lockstep_plugin_list_devices_v1(char* names, size_t names_bytes, char* why, size_t why_bytes) {
  snprintf(names, names_bytes, "%s\n", lockstep::cuda::kDeviceName);
  if (why_bytes != 0) why[0] = '\0';
  return 1;
}
