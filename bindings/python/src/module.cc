// lockstep._C: the CPython extension. Each part is bound in its own file (bindings.h); the
// package lockstep (lockstep/__init__.py) is the public face and imports this module.
#include <pybind11/pybind11.h>

#include "bindings/python/src/bindings.h"
#include "bindings/python/src/errors.h"
#include "bindings/python/src/unconstructed.h"

PYBIND11_MODULE(_C, m) {
  namespace py = pybind11;
  using namespace lockstep::python;
  const UnconstructedGuard guard;  // before any class is bound
  m.doc() = "lockstep's engine: bitwise-reproducible tensors, autograd, layers, optimizers and training.";
  BindErrors(m);
  BindRuntime(m);
  BindTensor(m);
  BindOps(m);
  py::module_ nn = m.def_submodule("nn", "Layers and models.");
  BindNn(nn);
  BindAttention(nn);
  BindRecurrent(nn);
  py::module_ optim = m.def_submodule("optim", "Optimizers.");
  BindOptim(optim);
  BindData(m);
  BindIo(m);
  BindVerify(m);
  py::module_ onnx = m.def_submodule("onnx", "ONNX models.");
  BindOnnx(onnx);
  guard.Install();  // after every class is bound
}
