#include "bindings/python/src/errors.h"

#include <new>
#include <string>

#include "bindings/python/src/engine.h"
#include "core/error.h"

namespace lockstep {
namespace python {

std::recursive_mutex& EngineMutex() {
  static std::recursive_mutex* mutex = new std::recursive_mutex();  // never destroyed: threads may outlive exit
  return *mutex;
}

void ThrowIfInterrupted() {
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

namespace {

// The exception class per ErrorKind, set by lockstep/_errors.py at import. Plain references kept
// for the life of the process (never released: translation may run during interpreter shutdown).
PyObject* g_classes[static_cast<int>(ErrorKind::kInternal) + 1] = {};

void RegisterErrorClasses(const py::dict& classes) {
  for (int k = 0; k <= static_cast<int>(ErrorKind::kInternal); ++k) {
    const char* name = ErrorKindName(static_cast<ErrorKind>(k));
    if (!classes.contains(name)) throw py::key_error(std::string("no exception class for the kind ") + name);
    py::object cls = classes[name];
    if (!PyExceptionClass_Check(cls.ptr())) throw py::type_error(std::string("not an exception class: ") + name);
    Py_XDECREF(g_classes[k]);
    g_classes[k] = cls.release().ptr();
  }
}

void Raise(ErrorKind kind, const char* message) {
  PyObject* cls = g_classes[static_cast<int>(kind)];
  if (cls == nullptr) cls = kind == ErrorKind::kArgument ? PyExc_ValueError : PyExc_RuntimeError;
  PyErr_SetString(cls, message);
}

}  // namespace

void BindErrors(py::module_& m) {
  m.def("_register_errors", &RegisterErrorClasses, "Sets the exception class of each error kind (lockstep._errors).");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      Raise(e.kind(), e.what());
    } catch (const std::bad_alloc&) {
      Raise(ErrorKind::kResource, "out of memory");
    }
  });
}

}  // namespace python
}  // namespace lockstep
