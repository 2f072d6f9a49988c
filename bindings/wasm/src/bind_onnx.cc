// ONNX models for JavaScript (onnx/, docs/onnx.md): an .onnx file's bytes imported as a Module
// (forward, fit, evaluate, save, hash work on it as on any module), its inputs and outputs, and a
// run on every input.
#include <emscripten/bind.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings/wasm/src/js_boundary.h"
#include "core/autograd.h"
#include "core/error.h"
#include "onnx/model.h"

namespace lockstep {
namespace wasm {
namespace {

using emscripten::val;
using ModulePtr = std::shared_ptr<nn::Module>;

onnx::OnnxModel& OnnxOf(const ModulePtr& m) {
  auto* model = dynamic_cast<onnx::OnnxModel*>(m.get());
  LOCKSTEP_REQUIRE(model != nullptr, "onnx: expected a model loaded from ONNX, got a " << m->Name());
  return *model;
}

ModulePtr LoadOnnxJs(const val& bytes, double seed) {
  return JsBoundary([&]() -> ModulePtr {
    const std::vector<uint8_t> data = BytesFromJs(bytes, "onnx.load");
    onnx::LoadOptions options;
    options.seed = SeedFromJs(seed, "onnx.load seed");
    return onnx::LoadOnnx(data.data(), data.size(), options);
  });
}

// [{name, dtype, shape}], a symbolic dimension as its name (a string).
val IoList(const std::vector<onnx::IoInfo>& list) {
  val out = val::array();
  for (const onnx::IoInfo& info : list) {
    val entry = val::object();
    entry.set("name", info.name);
    entry.set("dtype", onnx::TypeName(info));
    if (info.has_shape) {
      val shape = val::array();
      for (size_t i = 0; i < info.dims.size(); ++i) {
        if (info.dims[i] >= 0) {
          shape.call<void>("push", static_cast<double>(info.dims[i]));
        } else {
          shape.call<void>("push", info.dim_params[i].empty() ? std::string("?") : info.dim_params[i]);
        }
      }
      entry.set("shape", shape);
    } else {
      entry.set("shape", val::null());
    }
    out.call<void>("push", entry);
  }
  return out;
}

val Signature(const ModulePtr& m) {
  return JsBoundary([&]() -> val {
    const onnx::OnnxModel& model = OnnxOf(m);
    val out = val::object();
    out.set("inputs", IoList(model.inputs()));
    out.set("outputs", IoList(model.outputs()));
    out.set("opset", static_cast<double>(model.opset()));
    out.set("producer", model.producer());
    return out;
  });
}

// tensors: one per input, in order (int64 tensors feed integer inputs, float32 0/1 bool ones).
// Returns [[tensor, dtype], ...] per output; bool outputs are float32 0/1 tensors.
val RunJs(const ModulePtr& m, const val& tensors) {
  return JsBoundary([&]() -> val {
    onnx::OnnxModel& model = OnnxOf(m);
    const size_t n = tensors["length"].as<size_t>();
    std::vector<onnx::Value> inputs;
    for (size_t i = 0; i < n; ++i) {
      inputs.push_back(model.InputValue(i, tensors[i].as<Tensor>()));
    }
    const std::vector<onnx::Value> outputs = model.Run(inputs);
    val out = val::array();
    for (const onnx::Value& v : outputs) {
      val pair = val::array();
      const Tensor t = onnx::CallerTensor(v).Contiguous();
      pair.call<void>("push", val(t));  // val(lvalue) hands JavaScript its own copy of the handle
      // The tensor's type as it arrives: float64 outputs come as float32 (CallerTensor).
      pair.call<void>("push", std::string(onnx::ElemName(v.is_float64() ? onnx::Elem::kFloat : v.elem)));
      out.call<void>("push", pair);
    }
    return out;
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(lockstep_onnx) {
  emscripten::function("loadOnnx", &LoadOnnxJs);
  emscripten::function("onnxSignature", &Signature);
  emscripten::function("onnxRun", &RunJs);
}

}  // namespace wasm
}  // namespace lockstep
