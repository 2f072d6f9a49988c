// The remainders of simd/elementwise.h (BinaryOp::kFmod and kRemainder) for one pair of floats, by
// integer operations on the significands: fmod is exact (no rounding), so this gives the same bits
// on every target; the CUDA plugin compiles the same header for the GPU. (No libm: the contract
// computes nothing through a platform's math library.)
#ifndef LOCKSTEP_SIMD_EXACT_REMAINDER_H_
#define LOCKSTEP_SIMD_EXACT_REMAINDER_H_

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define LOCKSTEP_REMAINDER_HD __host__ __device__ __forceinline__
#else
#define LOCKSTEP_REMAINDER_HD inline
#endif

namespace lockstep {
namespace simd {

LOCKSTEP_REMAINDER_HD uint32_t RemainderBitsOf(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

LOCKSTEP_REMAINDER_HD float RemainderFloatOf(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

// x - n * y for the integer n = trunc(x / y), exactly, with x's sign (C's fmod). The canonical NaN
// for a NaN operand, an infinite x or a zero y; x itself for an infinite y or |x| < |y|.
LOCKSTEP_REMAINDER_HD float ExactFmod(float x, float y) {
  const uint32_t ux = RemainderBitsOf(x), ax = ux & 0x7FFFFFFFu, ay = RemainderBitsOf(y) & 0x7FFFFFFFu;
  if (ax >= 0x7F800000u || ay > 0x7F800000u || ay == 0) return RemainderFloatOf(0x7FC00000u);
  if (ay == 0x7F800000u || ax < ay) return x;
  // |x| = mx * 2^(ex - 150) and |y| = my * 2^(ey - 150), ex >= ey since |x| >= |y|.
  int ex = static_cast<int>(ax >> 23), ey = static_cast<int>(ay >> 23);
  uint64_t mx = ax & 0x7FFFFFu, my = ay & 0x7FFFFFu;
  if (ex == 0) {
    ex = 1;
  } else {
    mx |= 0x800000u;
  }
  if (ey == 0) {
    ey = 1;
  } else {
    my |= 0x800000u;
  }
  // (mx * 2^(ex - ey)) mod my, at most 40 doublings at a time (r < 2^24 keeps r << 40 in 64 bits).
  uint64_t r = mx % my;
  for (int d = ex - ey; d > 0;) {
    const int step = d < 40 ? d : 40;
    r = (r << step) % my;
    d -= step;
  }
  // r * 2^(ey - 150), exact: normalized while the exponent allows, else a subnormal.
  int e = ey;
  while (r != 0 && r < 0x800000u && e > 1) {
    r <<= 1;
    --e;
  }
  const uint32_t magnitude = r < 0x800000u ? static_cast<uint32_t>(r)
                                           : (static_cast<uint32_t>(e) << 23) | (static_cast<uint32_t>(r) & 0x7FFFFFu);
  return RemainderFloatOf(magnitude | (ux & 0x80000000u));
}

// Python's %: the fmod, plus y (one rounded addition) where it is nonzero and its sign differs
// from y's; NaN canonical.
LOCKSTEP_REMAINDER_HD float FloorRemainder(float x, float y) {
  float r = ExactFmod(x, y);
  if (r != 0.0f && ((r < 0.0f) != (y < 0.0f))) r = r + y;
  return r != r ? RemainderFloatOf(0x7FC00000u) : r;
}

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_EXACT_REMAINDER_H_
