// What the Python binding needs of nn::Module beyond its public API: the children (as shared
// pointers, so Python can hold them), registration from Python, and a trampoline so a module's
// forward can be written in Python (PyTorch's `class Net(nn.Module)`).
#ifndef LOCKSTEP_BINDINGS_PYTHON_MODULE_ACCESS_H_
#define LOCKSTEP_BINDINGS_PYTHON_MODULE_ACCESS_H_

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/nn/module.h"

namespace lockstep {
namespace python {

// Reaches nn::Module's protected members through pointers to members named via a derived class
// (the language allows forming them there; the resulting pointers work on any Module).
struct ModuleAccess : nn::Module {
  using Children = std::vector<std::pair<std::string, std::shared_ptr<nn::Module>>>;
  static const Children& ChildrenOf(const nn::Module& m) { return (m.*(&ModuleAccess::children))(); }
  static void AddParameter(nn::Module& m, const std::string& name, const Tensor& t) {
    (m.*(&ModuleAccess::RegisterParameter))(name, t);
  }
  static void AddBuffer(nn::Module& m, const std::string& name, const Tensor& t) {
    (m.*(&ModuleAccess::RegisterBuffer))(name, t);
  }
  static void AddModule(nn::Module& m, const std::string& name, std::shared_ptr<nn::Module> child) {
    using Register = std::shared_ptr<nn::Module> (nn::Module::*)(const std::string&, std::shared_ptr<nn::Module>);
    const Register reg = &ModuleAccess::RegisterModule<nn::Module>;
    (m.*reg)(name, std::move(child));
  }
};

// A module whose forward is Python code: Forward calls the Python method `forward` (taking the
// GIL), Name the Python method `_trace_name` (the class name, for traces and messages).
class PyModule : public nn::Module {
 public:
  Tensor Forward(const Tensor& x) override {
    pybind11::gil_scoped_acquire gil;
    const pybind11::function forward = pybind11::get_override(static_cast<const nn::Module*>(this), "forward");
    if (!forward) {
      PyErr_SetString(PyExc_NotImplementedError, ("the module " + Name() + " has no forward method").c_str());
      throw pybind11::error_already_set();
    }
    const pybind11::object out = forward(x);
    if (!pybind11::isinstance<Tensor>(out)) {
      throw pybind11::type_error(
          pybind11::str("{}.forward returned a {}: a module called by the engine (inside Sequential, fit, ...) "
                        "must return one tensor")
              .format(pybind11::type::handle_of(forward.attr("__self__")).attr("__name__"),
                      pybind11::type::handle_of(out).attr("__name__"))
              .cast<std::string>());
    }
    return out.cast<Tensor>();
  }
  std::string Name() const override { PYBIND11_OVERRIDE_PURE_NAME(std::string, nn::Module, "_trace_name", Name, ); }
};

// Containers whose children are called by their owner, never by a forward of their own.
class ModuleList : public nn::Module {
 public:
  Tensor Forward(const Tensor&) override {
    LOCKSTEP_REQUIRE(false, "ModuleList is not callable: call its modules (iterate over it)");
    return Tensor();
  }
  std::string Name() const override { return "ModuleList"; }
};

class Identity : public nn::Module {
 public:
  Tensor Forward(const Tensor& x) override { return x; }
  std::string Name() const override { return "Identity"; }
};

}  // namespace python
}  // namespace lockstep

#endif  // LOCKSTEP_BINDINGS_PYTHON_MODULE_ACCESS_H_
