// The layer that lets one kernel source compile twice: with nvcc for the GPU (cuda/plugin.cu) and
// with the host compiler for the emulation plugin (cuda/emulation.cc), which runs every kernel
// body on the CPU so that the plugin's arithmetic is tested against the golden hashes on any
// machine. Both builds forbid contraction (-fmad=false / -ffp-contract=off) and fast math, so a
// plain + - * / is one IEEE operation rounded to nearest even in either.
#ifndef LOCKSTEP_CUDA_KERNELS_PORTABLE_H_
#define LOCKSTEP_CUDA_KERNELS_PORTABLE_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define LS_HD __host__ __device__ __forceinline__
#else
#define LS_HD inline
#endif

namespace lockstep {
namespace cuda {

template <class To, class From>
LS_HD To BitCast(From from) {
  static_assert(sizeof(To) == sizeof(From), "BitCast needs equal sizes");
  To to;
  memcpy(&to, &from, sizeof(To));
  return to;
}

// IEEE square roots (one correctly rounded operation), never a libm call.
LS_HD float SqrtF(float x) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(x);
#else
  return __builtin_sqrtf(x);
#endif
}
LS_HD double SqrtD(double x) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(x);
#else
  return __builtin_sqrt(x);
#endif
}

constexpr uint32_t kCanonicalNaNBits = 0x7FC00000u;
LS_HD float CanonicalNaN() { return BitCast<float>(kCanonicalNaNBits); }
LS_HD bool IsNaN(float x) { return !(x == x); }
LS_HD bool IsNaN(double x) { return !(x == x); }
LS_HD float Canonical(float x) { return IsNaN(x) ? CanonicalNaN() : x; }
LS_HD float InfF() { return BitCast<float>(0x7F800000u); }
LS_HD float CopySign(float magnitude, float sign) {
  return BitCast<float>((BitCast<uint32_t>(magnitude) & 0x7FFFFFFFu) |
                        (BitCast<uint32_t>(sign) & 0x80000000u));
}

// max/min by the contract: NaN propagates (canonical), -0 < +0.
LS_HD float MaxByContract(float a, float b) {
  if (IsNaN(a) || IsNaN(b)) return CanonicalNaN();
  if (a == b) return BitCast<float>(BitCast<uint32_t>(a) & BitCast<uint32_t>(b));
  return b > a ? b : a;
}
LS_HD float MinByContract(float a, float b) {
  if (IsNaN(a) || IsNaN(b)) return CanonicalNaN();
  if (a == b) return BitCast<float>(BitCast<uint32_t>(a) | BitCast<uint32_t>(b));
  return b < a ? b : a;
}

}  // namespace cuda
}  // namespace lockstep

#endif  // LOCKSTEP_CUDA_KERNELS_PORTABLE_H_
