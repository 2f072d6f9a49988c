// The SIMD targets compiled into this build, which of them this CPU runs, and forcing one of them
// (how one test binary proves that every target gives the same bits).
#ifndef LOCKSTEP_SIMD_TARGETS_H_
#define LOCKSTEP_SIMD_TARGETS_H_

#include <stdint.h>

#include <string>
#include <vector>

namespace lockstep {
namespace simd {

struct Target {
  int64_t bits;      // Highway's target bit
  std::string name;  // e.g. "AVX2", "NEON", "WASM", "EMU128"
};

// Targets compiled into this build that this CPU can run, best first.
std::vector<Target> RunnableTargets();
// Every target compiled into this build, runnable here or not.
std::vector<Target> CompiledTargets();
// Restricts dispatch to one target (must be runnable); bits == 0 restores the best one.
void ForceTarget(int64_t bits);
// The target that the next kernel call dispatches to.
std::string ActiveTargetName();

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_TARGETS_H_
