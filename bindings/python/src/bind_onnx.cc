// lockstep._C.onnx: an .onnx file's bytes imported as a module (onnx/, docs/onnx.md), its inputs
// and outputs, and a run over every input. lockstep/onnx.py gives it its Python surface.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings/python/src/bindings.h"
#include "bindings/python/src/engine.h"
#include "core/nn/module.h"
#include "onnx/model.h"

namespace lockstep {
namespace python {

namespace {

// [(name, dtype, shape or None)], a named dimension as its name (a str).
py::list IoList(const std::vector<onnx::IoInfo>& list) {
  py::list out;
  for (const onnx::IoInfo& info : list) {
    py::object shape = py::none();
    if (info.has_shape) {
      py::list dims;
      for (size_t i = 0; i < info.dims.size(); ++i) {
        if (info.dims[i] >= 0) {
          dims.append(info.dims[i]);
        } else {
          dims.append(info.dim_params[i].empty() ? std::string("?") : info.dim_params[i]);
        }
      }
      shape = py::tuple(dims);
    }
    out.append(py::make_tuple(info.name, onnx::TypeName(info), shape));
  }
  return out;
}

}  // namespace

void BindOnnx(py::module_& m) {
  py::class_<onnx::OnnxModel, nn::Module, std::shared_ptr<onnx::OnnxModel>>(
      m, "OnnxModel", py::dynamic_attr(), "An ONNX graph imported as a module (lockstep.onnx.load).")
      .def("_inputs", [](const onnx::OnnxModel& self) { return IoList(self.inputs()); })
      .def("_outputs", [](const onnx::OnnxModel& self) { return IoList(self.outputs()); })
      .def_property_readonly("opset", &onnx::OnnxModel::opset)
      .def_property_readonly("producer", &onnx::OnnxModel::producer)
      .def("_run", [](onnx::OnnxModel& self, const std::vector<Tensor>& tensors) {
        return Long([&] {
          std::vector<onnx::Value> inputs;
          for (size_t i = 0; i < tensors.size(); ++i) inputs.push_back(self.InputValue(i, tensors[i]));
          std::vector<Tensor> out;
          for (const onnx::Value& v : self.Run(inputs)) out.push_back(onnx::CallerTensor(v).Contiguous());
          return out;
        });
      });
  m.def("_load", [](const py::bytes& data, uint64_t seed) {
    const std::string bytes = data;  // a copy, taken with the GIL held
    return Long([&] {
      onnx::LoadOptions options;
      options.seed = seed;
      return onnx::LoadOnnx(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), options);
    });
  });
}

}  // namespace python
}  // namespace lockstep
