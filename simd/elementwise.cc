// Dispatch for the elementwise family: compiled once per Highway target (foreach_target.h),
// chosen once per call.
#include "simd/elementwise.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/elementwise.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "simd/thread_pool.h"
#include "simd/elementwise-inl.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {

void BinaryTarget(BinaryOp op, const float* a, const float* b, float* out, size_t n) {
  BinaryArraysImpl(op, a, b, out, n);
}
void BinaryScalarRightTarget(BinaryOp op, const float* a, float s, float* out, size_t n) {
  BinaryScalarRightImpl(op, a, s, out, n);
}
void BinaryScalarLeftTarget(BinaryOp op, float s, const float* b, float* out, size_t n) {
  BinaryScalarLeftImpl(op, s, b, out, n);
}
void UnaryTarget(UnaryOp op, const float* a, float* out, size_t n) { UnaryImpl(op, a, out, n); }
void SelectTarget(const float* cond, const float* a, const float* b, float* out, size_t n) {
  SelectImpl(cond, a, b, out, n);
}
void ClampTarget(const float* x, float lo, float hi, float* out, size_t n) { ClampImpl(x, lo, hi, out, n); }
void ClampBackwardTarget(const float* x, float lo, float hi, const float* g, float* out, size_t n) {
  ClampBackwardImpl(x, lo, hi, g, out, n);
}
void HardtanhTarget(const float* x, float lo, float hi, float* out, size_t n) { HardtanhImpl(x, lo, hi, out, n); }
void HardtanhBackwardTarget(const float* x, float lo, float hi, const float* g, float* out, size_t n) {
  HardtanhBackwardImpl(x, lo, hi, g, out, n);
}
void NormalizeRunTarget(const float* x, float mean, float rstd, float weight, float bias, float* xhat, float* out,
                        size_t n, const NormActivation& activation) {
  NormalizeRunImpl(x, mean, rstd, weight, bias, xhat, out, n, activation);
}
void NormalizeRunBackwardTarget(const float* g, const float* xhat, float mean_g, float mean_g_xhat, float rstd,
                                float* dx, size_t n) {
  NormalizeRunBackwardImpl(g, xhat, mean_g, mean_g_xhat, rstd, dx, n);
}
void NormalizeTabledTarget(const float* x, const float* mean, const float* rstd, const float* weight, const float* bias,
                           float* xhat, float* out, size_t n, const NormActivation& activation) {
  NormalizeTabledImpl(x, mean, rstd, weight, bias, xhat, out, n, activation);
}
void NormalizeBackwardTabledTarget(const float* g, const float* xhat, const float* mean_g, const float* mean_g_xhat,
                                   const float* rstd, float* dx, size_t n) {
  NormalizeBackwardTabledImpl(g, xhat, mean_g, mean_g_xhat, rstd, dx, n);
}

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lockstep {
namespace simd {

HWY_EXPORT(BinaryTarget);
HWY_EXPORT(BinaryScalarRightTarget);
HWY_EXPORT(BinaryScalarLeftTarget);
HWY_EXPORT(UnaryTarget);
HWY_EXPORT(SelectTarget);
HWY_EXPORT(ClampTarget);
HWY_EXPORT(ClampBackwardTarget);
HWY_EXPORT(HardtanhTarget);
HWY_EXPORT(HardtanhBackwardTarget);
HWY_EXPORT(NormalizeRunTarget);
HWY_EXPORT(NormalizeRunBackwardTarget);
HWY_EXPORT(NormalizeTabledTarget);
HWY_EXPORT(NormalizeBackwardTabledTarget);

// Every output depends on its own inputs alone: large arrays run on the thread pool in chunks
// (out may alias an input exactly; each chunk reads and writes only its own range).
constexpr size_t kElementwiseChunk = size_t{1} << 15;

void Binary(BinaryOp op, const float* a, const float* b, float* out, size_t n) {
  ForEachChunk(n, kElementwiseChunk, [&](size_t first, size_t count) {
    HWY_DYNAMIC_DISPATCH(BinaryTarget)(op, a + first, b + first, out + first, count);
  });
}
void BinaryScalarRight(BinaryOp op, const float* a, float s, float* out, size_t n) {
  ForEachChunk(n, kElementwiseChunk, [&](size_t first, size_t count) {
    HWY_DYNAMIC_DISPATCH(BinaryScalarRightTarget)(op, a + first, s, out + first, count);
  });
}
void BinaryScalarLeft(BinaryOp op, float s, const float* b, float* out, size_t n) {
  ForEachChunk(n, kElementwiseChunk, [&](size_t first, size_t count) {
    HWY_DYNAMIC_DISPATCH(BinaryScalarLeftTarget)(op, s, b + first, out + first, count);
  });
}
void BinaryScalarRuns(BinaryOp op, const float* a, const float* values, size_t mod, size_t run, bool values_left,
                      float* out, size_t n) {
  // One chunk of runs per task, each run one call of the target's kernel: no pool or
  // floating-point mode set-up per run (a call per channel of a 2x2 plane cost more than its work).
  ForEachItemChunk(n / run, run, [&](size_t first, size_t count) {
    for (size_t r = first; r < first + count; ++r) {
      const float v = values[r % mod];
      if (values_left) {
        HWY_DYNAMIC_DISPATCH(BinaryScalarLeftTarget)(op, v, a + r * run, out + r * run, run);
      } else {
        HWY_DYNAMIC_DISPATCH(BinaryScalarRightTarget)(op, a + r * run, v, out + r * run, run);
      }
    }
  });
}
void Unary(UnaryOp op, const float* a, float* out, size_t n) {
  ForEachChunk(n, kElementwiseChunk, [&](size_t first, size_t count) {
    HWY_DYNAMIC_DISPATCH(UnaryTarget)(op, a + first, out + first, count);
  });
}
void Select(const float* cond, const float* a, const float* b, float* out, size_t n) {
  ForEachChunk(n, kElementwiseChunk, [&](size_t first, size_t count) {
    HWY_DYNAMIC_DISPATCH(SelectTarget)(cond + first, a + first, b + first, out + first, count);
  });
}

void Clamp(const float* x, float lo, float hi, float* out, size_t n) {
  ForEachChunk(n, kElementwiseChunk, [&](size_t first, size_t count) {
    HWY_DYNAMIC_DISPATCH(ClampTarget)(x + first, lo, hi, out + first, count);
  });
}
void ClampBackward(const float* x, float lo, float hi, const float* g, float* out, size_t n) {
  ForEachChunk(n, kElementwiseChunk, [&](size_t first, size_t count) {
    HWY_DYNAMIC_DISPATCH(ClampBackwardTarget)(x + first, lo, hi, g + first, out + first, count);
  });
}

void Hardtanh(const float* x, float lo, float hi, float* out, size_t n) {
  ForEachChunk(n, kElementwiseChunk, [&](size_t first, size_t count) {
    HWY_DYNAMIC_DISPATCH(HardtanhTarget)(x + first, lo, hi, out + first, count);
  });
}

void HardtanhBackward(const float* x, float lo, float hi, const float* g, float* out, size_t n) {
  ForEachChunk(n, kElementwiseChunk, [&](size_t first, size_t count) {
    HWY_DYNAMIC_DISPATCH(HardtanhBackwardTarget)(x + first, lo, hi, g + first, out + first, count);
  });
}

void NormalizeRun(const float* x, float mean, float rstd, float weight, float bias, float* xhat, float* out,
                  size_t n, const NormActivation& activation) {
  HWY_DYNAMIC_DISPATCH(NormalizeRunTarget)(x, mean, rstd, weight, bias, xhat, out, n, activation);
}
void NormalizeRunBackward(const float* g, const float* xhat, float mean_g, float mean_g_xhat, float rstd, float* dx,
                          size_t n) {
  HWY_DYNAMIC_DISPATCH(NormalizeRunBackwardTarget)(g, xhat, mean_g, mean_g_xhat, rstd, dx, n);
}
void NormalizeTabled(const float* x, const float* mean, const float* rstd, const float* weight, const float* bias,
                     float* xhat, float* out, size_t n, const NormActivation& activation) {
  HWY_DYNAMIC_DISPATCH(NormalizeTabledTarget)(x, mean, rstd, weight, bias, xhat, out, n, activation);
}
void NormalizeBackwardTabled(const float* g, const float* xhat, const float* mean_g, const float* mean_g_xhat,
                             const float* rstd, float* dx, size_t n) {
  HWY_DYNAMIC_DISPATCH(NormalizeBackwardTabledTarget)(g, xhat, mean_g, mean_g_xhat, rstd, dx, n);
}

const char* BinaryOpName(BinaryOp op) {
  static const char* const kNames[] = {"add", "sub", "mul", "div", "max", "min",
                                       "eq",  "ne",  "lt",  "le",  "gt",  "ge",
                                       "fmod", "remainder"};
  return kNames[static_cast<int>(op)];
}
const char* UnaryOpName(UnaryOp op) {
  static const char* const kNames[] = {"neg", "abs", "sqrt", "relu", "canonicalize", "reciprocal",
                                       "square", "floor", "ceil", "round", "round_float16",
                                       "round_bfloat16"};
  return kNames[static_cast<int>(op)];
}

}  // namespace simd
}  // namespace lockstep
#endif  // HWY_ONCE
