#include "core/fp_environment.h"

#include <stdint.h>

#include <stdexcept>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace lockstep {

std::string DescribeFloatingPointProblem() {
  std::string problems;
  auto add = [&](const char* what) {
    if (!problems.empty()) problems += "; ";
    problems += what;
  };
#if defined(__x86_64__) || defined(__i386__)
  const unsigned mxcsr = _mm_getcsr();
  if (mxcsr & (1u << 15)) add("flush-to-zero is on (MXCSR bit 15)");
  if (mxcsr & (1u << 6)) add("denormals-are-zero is on (MXCSR bit 6)");
  if ((mxcsr >> 13) & 3u) add("the rounding mode is not round-to-nearest (MXCSR bits 13-14)");
#elif defined(__aarch64__)
  uint64_t fpcr;
  __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
  if (fpcr & (uint64_t{1} << 24)) add("flush-to-zero is on (FPCR.FZ)");
  if ((fpcr >> 22) & 3u) add("the rounding mode is not round-to-nearest (FPCR.RMode)");
#else
  // WebAssembly has no floating-point control state: always round-to-nearest, never flushing.
  (void)add;
#endif
  return problems;
}

void RequireContractFloatingPoint() {
  const std::string problem = DescribeFloatingPointProblem();
  if (!problem.empty()) {
    throw std::runtime_error(
        "lockstep: the floating-point environment breaks the numerical contract: " + problem +
        ". Something in this process (a library built with -ffast-math, or an explicit call) "
        "changed it; lockstep needs round-to-nearest with subnormals kept.");
  }
}

}  // namespace lockstep
