// MathTables pointing at the host copies of the generated constants and exception tables.
// plugin.cu copies the same arrays to the device; emulation.cc uses them as they are.
#ifndef LOCKSTEP_CUDA_MATH_TABLES_HOST_H_
#define LOCKSTEP_CUDA_MATH_TABLES_HOST_H_

#include "cuda/kernels/math.h"
#include "simd/math_exceptions.h"
#include "simd/math_tables.h"

namespace lockstep {
namespace cuda {

inline MathTables HostMathTables() {
  MathTables t{};
  t.exp_t_hi = mt::kExpTHi;
  t.exp_t_lo = mt::kExpTLo;
  t.exp_poly = mt::kExpPoly;
  t.log_c = mt::kLogC;
  t.log_t_hi = mt::kLogTHi;
  t.log_t_lo = mt::kLogTLo;
  t.log_poly = mt::kLogPoly;
  t.erf_coef = mt::kErfCoef;
  t.gauss_tail_coef = mt::kGaussTailCoef;
  t.trig_reduce = mt::kTrigReduce;
  t.sin_poly = mt::kSinPoly;
  t.cos_poly = mt::kCosPoly;
  t.atan_hi = mt::kAtanHi;
  t.atan_lo = mt::kAtanLo;
  t.atan_poly = mt::kAtanPoly;
  namespace me = ::lockstep::simd::math_exceptions;
  static_assert(sizeof(me::kTables) / sizeof(me::kTables[0]) == kExceptionTables,
                "math_exceptions.h must list every MathFn and pow_int_-4..4");
  for (int i = 0; i < kExceptionTables; ++i) {
    t.exception_pairs[i] = me::kTables[i].pairs;
    t.exception_counts[i] = me::kTables[i].count;
  }
  return t;
}

// Sizes in elements of the constant arrays (for copies to the device).
constexpr size_t kExpTableSize = sizeof(mt::kExpTHi) / sizeof(double);
constexpr size_t kExpPolySize = sizeof(mt::kExpPoly) / sizeof(double);
constexpr size_t kLogTableSize = sizeof(mt::kLogC) / sizeof(double);
constexpr size_t kLogPolySize = sizeof(mt::kLogPoly) / sizeof(double);
constexpr size_t kErfCoefSize = sizeof(mt::kErfCoef) / sizeof(double);
constexpr size_t kGaussTailCoefSize = sizeof(mt::kGaussTailCoef) / sizeof(double);
constexpr size_t kTrigReduceSize = sizeof(mt::kTrigReduce) / sizeof(double);
constexpr size_t kSinPolySize = sizeof(mt::kSinPoly) / sizeof(double);
constexpr size_t kCosPolySize = sizeof(mt::kCosPoly) / sizeof(double);
constexpr size_t kAtanTableSize = sizeof(mt::kAtanHi) / sizeof(double);
constexpr size_t kAtanPolySize = sizeof(mt::kAtanPoly) / sizeof(double);

}  // namespace cuda
}  // namespace lockstep

#endif  // LOCKSTEP_CUDA_MATH_TABLES_HOST_H_
