// Tensors and NumPy arrays. NumPy to lockstep copies (the engine owns its storage: 64-byte
// aligned, on the current device), honouring any strides, so non-contiguous, negatively strided
// and read-only arrays all work. lockstep to NumPy shares: the array views the tensor's storage with
// its strides and keeps the storage alive, so no copy is made whatever the view's layout.
#ifndef LOCKSTEP_BINDINGS_PYTHON_NUMPY_BRIDGE_H_
#define LOCKSTEP_BINDINGS_PYTHON_NUMPY_BRIDGE_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "core/tensor.h"

namespace lockstep {
namespace python {

// float32, int32 and int64 arrays; any other dtype is a TypeError naming it.
Tensor TensorFromArray(const pybind11::array& array);
// A view of a CPU tensor's storage (writable; the caller decides whether to allow it).
pybind11::array ArrayView(const Tensor& t);
// A shape from a sequence of Python ints (each >= 0; -1 allowed where `allow_infer`).
Shape ShapeFrom(const pybind11::handle& sequence, const char* what, bool allow_infer = false);
pybind11::tuple ShapeTuple(const Shape& shape);

}  // namespace python
}  // namespace lockstep

#endif  // LOCKSTEP_BINDINGS_PYTHON_NUMPY_BRIDGE_H_
