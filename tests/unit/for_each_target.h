// Runs a test body once per SIMD target that this build compiled and this CPU runs, forcing
// dispatch to it, so every kernel is tested on every target.
#ifndef LOCKSTEP_TESTS_UNIT_FOR_EACH_TARGET_H_
#define LOCKSTEP_TESTS_UNIT_FOR_EACH_TARGET_H_

#include <doctest/doctest.h>

#include "simd/targets.h"
#include "simd/thread_pool.h"

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

// Runs a test body with the default thread pool at 1 and 2 threads (1 only in the single-thread
// WebAssembly builds, which start no threads), then restores the thread count.
template <class Body>
void ForOneAndTwoThreads(const Body& body) {
  const size_t before = simd::DefaultThreadCount();
#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
  const size_t thread_counts[] = {1, 2};
#else
  const size_t thread_counts[] = {1};
#endif
  for (size_t threads : thread_counts) {
    simd::SetDefaultThreadCount(threads);
    INFO("threads: " << threads);
    body(threads);
  }
  simd::SetDefaultThreadCount(before);
}

}  // namespace testing
}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_UNIT_FOR_EACH_TARGET_H_
