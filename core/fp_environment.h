// The floating-point control state the contract needs: round-to-nearest-even, subnormals kept
// (no flush-to-zero, no denormals-are-zero). Another library in the process (or -ffast-math code)
// can change it; lockstep then refuses to compute rather than give different bits.
#ifndef LOCKSTEP_CORE_FP_ENVIRONMENT_H_
#define LOCKSTEP_CORE_FP_ENVIRONMENT_H_

#include <string>

namespace lockstep {

// Empty when the state is as required, otherwise what is wrong (e.g. "flush-to-zero is on (MXCSR
// bit 15)").
std::string DescribeFloatingPointProblem();

// Throws std::runtime_error naming the problem when the state is not as required.
void RequireContractFloatingPoint();

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_FP_ENVIRONMENT_H_
