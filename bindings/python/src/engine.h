// How Python calls into the engine: every call holds the engine lock, so Python threads calling in
// at once take turns instead of racing on shared tensors, gradients and data sets. A short call
// keeps the GIL (a lock it gets at once costs ~20 ns); a long one (kernels over many elements,
// backward, optimizer steps, training, file I/O) lets go of the GIL first, so other Python
// threads run meanwhile. The GIL is always released before the engine lock is waited for, so the
// two locks can never deadlock. The lock is recursive: a Python callback run by the engine (a
// module's forward written in Python, a progress function) may call the engine again.
#ifndef LOCKSTEP_BINDINGS_PYTHON_ENGINE_H_
#define LOCKSTEP_BINDINGS_PYTHON_ENGINE_H_

#include <pybind11/pybind11.h>

#include <mutex>
#include <utility>

namespace lockstep {
namespace python {

namespace py = pybind11;

std::recursive_mutex& EngineMutex();

// Calls at or above this many elements release the GIL.
constexpr int64_t kLongCallElements = 1 << 15;

// Holds the engine lock for a call that keeps the GIL; waits for it without the GIL.
class ShortCall {
 public:
  ShortCall() {
    if (!EngineMutex().try_lock()) {
      py::gil_scoped_release release;
      EngineMutex().lock();
    }
  }
  ~ShortCall() { EngineMutex().unlock(); }
  ShortCall(const ShortCall&) = delete;
  ShortCall& operator=(const ShortCall&) = delete;
};

// Releases the GIL, then holds the engine lock (destroyed in reverse: unlock, then the GIL back).
class LongCall {
 public:
  LongCall() : lock_(EngineMutex()) {}
  LongCall(const LongCall&) = delete;
  LongCall& operator=(const LongCall&) = delete;

 private:
  py::gil_scoped_release release_;
  std::unique_lock<std::recursive_mutex> lock_;
};

template <class F>
auto Short(F&& body) -> decltype(body()) {
  ShortCall call;
  return body();
}

template <class F>
auto Long(F&& body) -> decltype(body()) {
  LongCall call;
  return body();
}

// Long when the work is `elements` or more, else short.
template <class F>
auto Sized(int64_t elements, F&& body) -> decltype(body()) {
  if (elements >= kLongCallElements) return Long(std::forward<F>(body));
  return Short(std::forward<F>(body));
}

// Raises the pending Python exception (KeyboardInterrupt after Ctrl-C) as a C++ exception that
// unwinds through the engine to the binding's boundary; called with the GIL released, from the
// engine's cancel and progress hooks.
void ThrowIfInterrupted();

}  // namespace python
}  // namespace lockstep

#endif  // LOCKSTEP_BINDINGS_PYTHON_ENGINE_H_
