#include "core/fp_environment.h"

#include <stdint.h>

#include <stdexcept>

#include "simd/fp_mode.h"

namespace lockstep {

std::string DescribeFloatingPointProblem() {
  std::string problems;
  auto add = [&](const char* what) {
    if (!problems.empty()) problems += "; ";
    problems += what;
  };
  const uint64_t control = simd::ReadFloatingPointControl();
  auto bit = [&](int b) { return ((control >> b) & 1u) != 0; };
#if defined(__x86_64__) || defined(__i386__)
  if (bit(15)) add("flush-to-zero is on (MXCSR bit 15)");
  if (bit(6)) add("denormals-are-zero is on (MXCSR bit 6)");
  if ((control >> 13) & 3u) add("the rounding mode is not round-to-nearest (MXCSR bits 13-14)");
#elif defined(__aarch64__)
  if (bit(24)) add("flush-to-zero is on (FPCR.FZ)");
  if (bit(25)) add("default-NaN mode is on (FPCR.DN)");
  if (bit(1)) add("alternate floating-point behaviour is on (FPCR.AH)");
  if (bit(0)) add("flush-inputs-to-zero is on (FPCR.FIZ)");
  if (bit(2)) add("the vector-preserving scalar mode is on (FPCR.NEP)");
  if (bit(19)) add("half-precision flush-to-zero is on (FPCR.FZ16)");
  if ((control >> 22) & 3u) add("the rounding mode is not round-to-nearest (FPCR.RMode)");
#else
  // WebAssembly has no floating-point control state: always round-to-nearest, never flushing.
  (void)add;
  (void)bit;
#endif
  return problems;
}

std::string DescribeFloatingPointEnvironment() {
  const std::string problem = DescribeFloatingPointProblem();
  if (problem.empty()) return "round-to-nearest, subnormals kept (the contract's)";
  return "the caller's thread: " + problem +
         "; lockstep computes in the contract's mode (round-to-nearest, subnormals kept) and gives the "
         "caller's back";
}

void RequireContractFloatingPoint() {
  const std::string problem = DescribeFloatingPointProblem();
  if (!problem.empty()) {
    throw std::runtime_error(
        "lockstep: the floating-point environment breaks the numerical contract: " + problem +
        ". Something in this process (a library built with -ffast-math, or an explicit call) "
        "changed it; this program needs round-to-nearest with subnormals kept.");
  }
}

}  // namespace lockstep
