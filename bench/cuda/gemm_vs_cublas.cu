// GEMM on the GPU: lockstep's CUDA plugin (the contract's K-sequential sums, loaded through the
// core's device table) against cuBLAS SGEMM with TF32 and every reduced-precision mode off
// (CUBLAS_PEDANTIC_MATH). Prints GFLOP/s, the lockstep/cuBLAS ratio, and whether lockstep's GPU
// result has the same bits as the CPU's for the first size.
//
// usage: lockstep_cuda_gemm_bench [--sizes 256,512,1024,2048,4096] [--repeats N]
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "core/backend/device.h"
#include "core/error.h"

namespace {

double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void CheckCuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
    exit(2);
  }
}

// The median of `repeats` timed runs of f (after one warm-up).
template <class F>
double MedianSeconds(int repeats, F f) {
  f();
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const double start = Seconds();
    f();
    times.push_back(Seconds() - start);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<size_t> sizes = {256, 512, 1024, 2048, 4096};
  int repeats = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--repeats") == 0) repeats = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--sizes") == 0) {
      sizes.clear();
      for (const char* p = argv[i + 1]; *p;) {
        sizes.push_back(strtoull(p, const_cast<char**>(&p), 10));
        if (*p == ',') ++p;
      }
    }
  }
  using lockstep::backend::KernelTable;
  const KernelTable* gpu = nullptr;
  try {
    gpu = &lockstep::KernelsOf(lockstep::Device::Cuda(0));
  } catch (const lockstep::Error& e) {
    printf("skipped: %s\n", e.what());
    return 77;
  }
  const KernelTable& cpu = lockstep::CpuKernels();
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "cublasCreate failed\n");
    return 2;
  }
  cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH);  // no TF32, no reduced precision
  printf("device: %s\n", gpu->device_name);
  printf("%-6s %14s %14s %8s\n", "n", "lockstep GF/s", "cuBLAS GF/s", "ratio");
  for (size_t n : sizes) {
    const size_t count = n * n, bytes = count * sizeof(float);
    std::vector<float> host_a(count), host_b(count);
    for (size_t i = 0; i < count; ++i) {
      host_a[i] = static_cast<float>((i * 2654435761u) % 2001) / 1000.0f - 1.0f;
      host_b[i] = static_cast<float>((i * 40503u) % 1999) / 999.0f - 1.0f;
    }
    // lockstep: its own device memory and kernels.
    float* a = static_cast<float*>(gpu->alloc(bytes));
    float* b = static_cast<float*>(gpu->alloc(bytes));
    float* c = static_cast<float*>(gpu->alloc(bytes));
    if (a == nullptr || b == nullptr || c == nullptr) {
      fprintf(stderr, "n=%zu: %s\n", n, gpu->last_error());
      return 2;
    }
    gpu->copy_to_device(a, host_a.data(), bytes);
    gpu->copy_to_device(b, host_b.data(), bytes);
    lockstep::backend::GemmCall call{0, 0, n, n, n, a, n, b, n, c, n};
    bool kernel_ok = true;
    const double ours = MedianSeconds(repeats, [&] { kernel_ok = kernel_ok && gpu->gemm(&call) == 0; });
    if (!kernel_ok) {
      fprintf(stderr, "n=%zu: lockstep gemm failed: %s\n", n, gpu->last_error());
      return 2;
    }
    std::string same_bits;
    if (n == sizes.front()) {
      std::vector<float> from_gpu(count), from_cpu(count);
      gpu->copy_to_host(from_gpu.data(), c, bytes);
      lockstep::backend::GemmCall on_cpu{0, 0, n, n, n, host_a.data(), n, host_b.data(), n, from_cpu.data(), n};
      cpu.gemm(&on_cpu);
      same_bits = memcmp(from_gpu.data(), from_cpu.data(), bytes) == 0 ? "  (GPU bits = CPU bits)"
                                                                       : "  (GPU bits DIFFER from CPU bits)";
    }
    gpu->release(a);
    gpu->release(b);
    gpu->release(c);
    // cuBLAS: plain device memory; row-major C = A B is column-major C^T = B^T A^T.
    float *da, *db, *dc;
    CheckCuda(cudaMalloc(&da, bytes), "cudaMalloc");
    CheckCuda(cudaMalloc(&db, bytes), "cudaMalloc");
    CheckCuda(cudaMalloc(&dc, bytes), "cudaMalloc");
    CheckCuda(cudaMemcpy(da, host_a.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    CheckCuda(cudaMemcpy(db, host_b.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    const float one = 1.0f, zero = 0.0f;
    const int ni = static_cast<int>(n);
    const double theirs = MedianSeconds(repeats, [&] {
      cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, db, ni, da, ni, &zero, dc, ni);
      CheckCuda(cudaDeviceSynchronize(), "cuBLAS SGEMM");
    });
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    const double flops = 2.0 * static_cast<double>(n) * n * n;
    printf("%-6zu %14.1f %14.1f %8.3f%s\n", n, flops / ours * 1e-9, flops / theirs * 1e-9, theirs / ours,
           same_bits.c_str());
    fflush(stdout);
  }
  cublasDestroy(handle);
  return 0;
}
