// lockstep::Error becomes a Python exception of the class registered for its kind
// (lockstep/_errors.py: ArgumentError is a ValueError, IoError an OSError, StateError a
// RuntimeError, ...; docs/errors.md), carrying the engine's message.
#ifndef LOCKSTEP_BINDINGS_PYTHON_ERRORS_H_
#define LOCKSTEP_BINDINGS_PYTHON_ERRORS_H_

#include <pybind11/pybind11.h>

namespace lockstep {
namespace python {

void BindErrors(pybind11::module_& m);

}  // namespace python
}  // namespace lockstep

#endif  // LOCKSTEP_BINDINGS_PYTHON_ERRORS_H_
