// The emulation plugin: the CUDA plugin's kernel bodies (cuda/kernels/) run as host loops, one
// index after another, behind the same plugin entry points. It lets every machine test the
// plugin's arithmetic, the plugin loader and training with `--device cuda` against the golden
// hashes; only the launch and memory calls of plugin.cu are left for a machine with a GPU.
// Selected with LOCKSTEP_CUDA_PLUGIN=<path to liblockstep_cuda_emulated.so>.
#include <stdio.h>
#include <stdlib.h>

#include <string>

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
    const size_t rounded = (bytes + 63) / 64 * 64;
    return aligned_alloc(64, rounded == 0 ? 64 : rounded);
  }
  static void Release(void* p) { free(p); }
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

constexpr const char* kDeviceName = "cuda:0 (host emulation of the CUDA plugin's kernels)";

}  // namespace
}  // namespace cuda
}  // namespace lockstep

const lockstep::backend::KernelTable* lockstep_plugin_kernel_table_v1(int index, char* why,
                                                                      size_t why_bytes) {
  using lockstep::cuda::TableImpl;
  using lockstep::cuda::HostLoops;
  if (index != 0) {
    snprintf(why, why_bytes, "the emulated CUDA device list has cuda:0 only, asked for cuda:%d", index);
    return nullptr;
  }
  static const lockstep::backend::KernelTable table =
      TableImpl<HostLoops>::Make(lockstep::cuda::kDeviceName);
  return &table;
}

int lockstep_plugin_list_devices_v1(char* names, size_t names_bytes, char* why, size_t why_bytes) {
  snprintf(names, names_bytes, "%s\n", lockstep::cuda::kDeviceName);
  if (why_bytes != 0) why[0] = '\0';
  return 1;
}
