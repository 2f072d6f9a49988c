// The calling thread's floating-point control state, described against the contract's (round-to-
// nearest-even, subnormals kept, IEEE NaN propagation). lockstep computes in the contract's mode
// whatever the caller's is (simd/fp_mode.h sets it for every op and kernel job and restores the
// caller's): these report what the caller has, for info() and for test programs that want a clean
// environment of their own.
#ifndef LOCKSTEP_CORE_FP_ENVIRONMENT_H_
#define LOCKSTEP_CORE_FP_ENVIRONMENT_H_

#include <string>

namespace lockstep {

// Empty when the calling thread's state is the contract's, otherwise what differs (e.g.
// "flush-to-zero is on (MXCSR bit 15)").
std::string DescribeFloatingPointProblem();

// One line for info(): the contract's mode, or the caller's differences and that lockstep sets
// its own mode for its work.
std::string DescribeFloatingPointEnvironment();

// Throws std::runtime_error naming the problem when the calling thread's state is not the
// contract's.
void RequireContractFloatingPoint();

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_FP_ENVIRONMENT_H_
