// The CUDA plugin: the kernel bodies of cuda/kernels/ launched as CUDA grids, one thread per
// index, behind the plugin entry points of core/backend/kernel_table.h. Built with -fmad=false
// -ftz=false -prec-div=true -prec-sqrt=true and no fast math (cuda/CMakeLists.txt), so each
// + - * / sqrt is one IEEE operation rounded to nearest even, as on the CPU. No tensor cores, no
// TF32, no cuBLAS: GEMM is the contract's K-sequential sum.
//
// Tensor memory is device memory (cudaMalloc): the core reaches it only through this table's
// kernels and its two copies (core/backend/kernel_table.h), so a training step's data stays on the
// GPU. Every call synchronises before it returns. Scratch of the reductions is device memory too.
#include <stdio.h>

#include <cuda_runtime.h>

#include <mutex>
#include <string>

#include "cuda/kernel_table_impl.h"
#include "cuda/math_tables_host.h"
#include "cuda/plugin_export.h"

namespace lockstep {
namespace cuda {
namespace {

thread_local std::string last_error;

int Check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return 0;
  last_error = std::string(what) + ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")";
  return 1;
}

template <class Body>
__global__ void ForEachIndex(size_t n, Body body) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) body(i);
}

MathTables device_tables;
int device_index = 0;  // the one device this process uses

// The CUDA runtime's current device is per host thread: make it ours on whichever thread calls.
int UseDevice() {
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current == device_index) return 0;
  return Check(cudaSetDevice(device_index), "cudaSetDevice");
}

struct CudaGrid {
  static constexpr unsigned kThreads = 256;
  template <class Body>
  static int Launch(size_t n, const Body& body) {
    if (n == 0) return 0;
    if (UseDevice() != 0) return 1;
    const size_t blocks = (n + kThreads - 1) / kThreads;
    if (blocks > 0x7FFFFFFFu) {
      last_error = "kernel launch over " + std::to_string(n) + " elements exceeds the grid limit";
      return 1;
    }
    ForEachIndex<<<static_cast<unsigned>(blocks), kThreads>>>(n, body);
    if (Check(cudaGetLastError(), "kernel launch") != 0) return 1;
    return Check(cudaDeviceSynchronize(), "kernel execution");
  }
  // An allocation that would not fit, with a margin for the runtime's own, is refused with the
  // figures (cudaMalloc's own error names no sizes).
  static void* Alloc(size_t bytes) {
    constexpr size_t kMargin = size_t{256} << 20;
    if (UseDevice() != 0) return nullptr;
    size_t free_bytes = 0, total_bytes = 0;
    if (Check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo") != 0) return nullptr;
    if (bytes + kMargin > free_bytes) {
      last_error = "cannot allocate " + std::to_string(bytes) + " bytes: the GPU has " +
                   std::to_string(free_bytes) + " of " + std::to_string(total_bytes) + " bytes free";
      return nullptr;
    }
    void* p = nullptr;
    if (Check(cudaMalloc(&p, bytes == 0 ? 64 : bytes), "cudaMalloc") != 0) return nullptr;
    return p;
  }
  static void Release(void* p) {
    if (p != nullptr) cudaFree(p);
  }
  static int CopyToDevice(void* dst, const void* src, size_t bytes) {
    return bytes == 0 ? 0 : (UseDevice() != 0 ? 1 : Check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to device"));
  }
  static int CopyToHost(void* dst, const void* src, size_t bytes) {
    return bytes == 0 ? 0 : (UseDevice() != 0 ? 1 : Check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to host"));
  }
  static const MathTables& Tables() { return device_tables; }
  static const char* LastError() { return last_error.c_str(); }
  static int Fail(const char* message) {
    last_error = message;
    return 1;
  }
};

template <class T>
const T* ToDevice(const T* host, size_t count, bool* ok) {
  void* p = nullptr;
  if (Check(cudaMalloc(&p, count * sizeof(T) == 0 ? 8 : count * sizeof(T)), "cudaMalloc for math tables") != 0 ||
      Check(cudaMemcpy(p, host, count * sizeof(T), cudaMemcpyHostToDevice), "copying math tables") != 0) {
    *ok = false;
  }
  return static_cast<const T*>(p);
}

// Copies the constants and exception tables to the device once.
bool UploadMathTables() {
  const MathTables host = HostMathTables();
  bool ok = true;
  device_tables = host;
  device_tables.exp_t_hi = ToDevice(host.exp_t_hi, kExpTableSize, &ok);
  device_tables.exp_t_lo = ToDevice(host.exp_t_lo, kExpTableSize, &ok);
  device_tables.exp_poly = ToDevice(host.exp_poly, kExpPolySize, &ok);
  device_tables.log_c = ToDevice(host.log_c, kLogTableSize, &ok);
  device_tables.log_t_hi = ToDevice(host.log_t_hi, kLogTableSize, &ok);
  device_tables.log_t_lo = ToDevice(host.log_t_lo, kLogTableSize, &ok);
  device_tables.log_poly = ToDevice(host.log_poly, kLogPolySize, &ok);
  device_tables.erf_coef = ToDevice(host.erf_coef, kErfCoefSize, &ok);
  device_tables.gauss_tail_coef = ToDevice(host.gauss_tail_coef, kGaussTailCoefSize, &ok);
  device_tables.trig_reduce = ToDevice(host.trig_reduce, kTrigReduceSize, &ok);
  device_tables.sin_poly = ToDevice(host.sin_poly, kSinPolySize, &ok);
  device_tables.cos_poly = ToDevice(host.cos_poly, kCosPolySize, &ok);
  device_tables.atan_hi = ToDevice(host.atan_hi, kAtanTableSize, &ok);
  device_tables.atan_lo = ToDevice(host.atan_lo, kAtanTableSize, &ok);
  device_tables.atan_poly = ToDevice(host.atan_poly, kAtanPolySize, &ok);
  for (int i = 0; i < kExceptionTables; ++i) {
    // count pairs plus the sentinel pair
    device_tables.exception_pairs[i] = ToDevice(host.exception_pairs[i], 2 * (host.exception_counts[i] + 1), &ok);
  }
  return ok;
}

std::string DeviceDescription(int index) {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, index) != cudaSuccess) return "cuda:" + std::to_string(index);
  char text[256];
  snprintf(text, sizeof text, "cuda:%d (%s, compute %d.%d, %.1f GiB)", index, prop.name, prop.major,
           prop.minor, static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));
  return text;
}

}  // namespace
}  // namespace cuda
}  // namespace lockstep

const lockstep::backend::KernelTable* lockstep_plugin_kernel_table_v1(int index, char* why,
                                                                      size_t why_bytes) {
  namespace lc = lockstep::cuda;
  static std::mutex mutex;
  static lockstep::backend::KernelTable table;
  static std::string name;
  static int ready_index = -1;
  std::lock_guard<std::mutex> lock(mutex);
  if (ready_index >= 0) {
    if (index == ready_index) return &table;
    snprintf(why, why_bytes, "this process already uses cuda:%d; one CUDA device per process", ready_index);
    return nullptr;
  }
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    snprintf(why, why_bytes, "no CUDA device: %s (%s)", cudaGetErrorName(status), cudaGetErrorString(status));
    return nullptr;
  }
  if (index < 0 || index >= count) {
    snprintf(why, why_bytes, "no device cuda:%d: this machine has %d CUDA device(s)", index, count);
    return nullptr;
  }
  lc::device_index = index;
  if (lc::UseDevice() != 0 || !lc::UploadMathTables()) {
    snprintf(why, why_bytes, "cannot set up cuda:%d: %s", index, lc::last_error.c_str());
    return nullptr;
  }
  name = lc::DeviceDescription(index);
  table = lc::TableImpl<lc::CudaGrid>::Make(name.c_str());
  ready_index = index;
  return &table;
}

int lockstep_plugin_list_devices_v1(char* names, size_t names_bytes, char* why, size_t why_bytes) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (names_bytes != 0) names[0] = '\0';
  if (why_bytes != 0) why[0] = '\0';
  if (status != cudaSuccess) {
    snprintf(why, why_bytes, "%s (%s)", cudaGetErrorName(status), cudaGetErrorString(status));
    return 0;
  }
  std::string all;
  for (int i = 0; i < count; ++i) all += lockstep::cuda::DeviceDescription(i) + "\n";
  snprintf(names, names_bytes, "%s", all.c_str());
  return count;
}
