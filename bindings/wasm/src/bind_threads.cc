// Kernel threads for JavaScript. In the pthreads build (lockstep-threads) the kernels split their
// work over Web Workers along the contract's fixed blocks, so the bits never depend on the count;
// the single-thread builds always report 1.
#include <emscripten/bind.h>

#include <string>

#include "bindings/wasm/src/js_boundary.h"
#include "core/error.h"
#include "simd/thread_pool.h"

namespace lockstep {
namespace wasm {
namespace {

#ifdef __EMSCRIPTEN_PTHREADS__
constexpr bool kThreadsBuild = true;
#else
constexpr bool kThreadsBuild = false;
#endif

// The loader sizes the module's worker pool before the engine starts (a pthread whose worker is
// not loaded yet would wait for the JavaScript thread that is waiting for it), so it passes the
// most threads the pool can run.
void SetThreads(int count, int most) {
  JsBoundary([&] {
    LOCKSTEP_REQUIRE(count >= 1 && count <= most,
                     "setThreads: expected 1 to " + std::to_string(most) +
                         " threads (the workers this engine was loaded with), got " + std::to_string(count));
    LOCKSTEP_REQUIRE(kThreadsBuild || count == 1,
                     "setThreads: this build runs one thread; load the 'threads' build for " +
                         std::to_string(count));
    simd::SetDefaultThreadCount(static_cast<size_t>(count));
    return 0;
  });
}

int Threads() { return static_cast<int>(simd::DefaultThreadCount()); }

}  // namespace
}  // namespace wasm
}  // namespace lockstep

EMSCRIPTEN_BINDINGS(lockstep_threads) {
  emscripten::function("setThreads", &lockstep::wasm::SetThreads);
  emscripten::function("threads", &lockstep::wasm::Threads);
}
