// Runs a test body once per SIMD target that this build compiled and this CPU runs, forcing
// dispatch to it, so every kernel is tested on every target.
#ifndef LOCKSTEP_TESTS_UNIT_FOR_EACH_TARGET_H_
#define LOCKSTEP_TESTS_UNIT_FOR_EACH_TARGET_H_

#include <doctest/doctest.h>

#include "simd/targets.h"

namespace lockstep {
namespace testing {

template <class Body>
void ForEachTarget(const Body& body) {
  for (const simd::Target& target : simd::RunnableTargets()) {
    simd::ForceTarget(target.bits);
    INFO("SIMD target: " << target.name);
    body(target);
  }
  simd::ForceTarget(0);
}

}  // namespace testing
}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_UNIT_FOR_EACH_TARGET_H_
