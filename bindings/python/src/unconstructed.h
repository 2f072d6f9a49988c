// Objects of a bound class whose __init__ never ran. `lockstep.Tensor.__new__(lockstep.Tensor)`
// makes the Python object of a class bound with pybind11 without constructing its C++ value.
// pybind11 (Debian's 2.10) hands such an object to a method by allocating raw memory for the value
// and running the method on it: the interpreter crashes. That allocation goes through the class's
// allocation hook (pybind11's type_info::operator_new), which nothing else calls, so every class
// bound here gets a hook that raises TypeError naming the class instead.
#ifndef LOCKSTEP_BINDINGS_PYTHON_UNCONSTRUCTED_H_
#define LOCKSTEP_BINDINGS_PYTHON_UNCONSTRUCTED_H_

#include <pybind11/pybind11.h>

#include <unordered_set>

namespace lockstep {
namespace python {

class UnconstructedGuard {
 public:
  UnconstructedGuard();  // notes the classes bound so far, by any module: they are not ours
  void Install() const;  // hooks every class bound since (call once every class is bound)

 private:
  std::unordered_set<PyTypeObject*> before_;
};

}  // namespace python
}  // namespace lockstep

#endif  // LOCKSTEP_BINDINGS_PYTHON_UNCONSTRUCTED_H_
