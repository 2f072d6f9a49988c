// Op-level traces for JavaScript (docs/diagnostics.md): recorded in memory and handed to
// JavaScript as bytes, so a page can offer them for download and `lockstep diff` compares them
// with a native or PyTorch trace.
#include <emscripten/bind.h>

#include <memory>

#include "bindings/wasm/src/js_boundary.h"
#include "core/error.h"
#include "core/nn/module.h"
#include "core/trace/trace.h"

namespace lockstep {
namespace wasm {
namespace {

using emscripten::val;
using ModulePtr = std::shared_ptr<nn::Module>;

// The module runs on one thread: one trace at a time.
std::unique_ptr<trace::Session>& OpenSession() {
  static std::unique_ptr<trace::Session> session;
  return session;
}
ModulePtr& TracedModel() {
  static ModulePtr model;  // kept alive while its modules are named in the trace
  return model;
}

// options: valuesFrom, valuesTo (steps whose records keep their values), valuesMatch, source
// (validated by the JavaScript layer).
void TraceBegin(const val& model, const val& options) {
  JsBoundary([&] {
    LOCKSTEP_REQUIRE_STATE(!OpenSession(), "trace: a trace is already recording (finish it first)");
    trace::Options o;
    if (!options["valuesFrom"].isUndefined()) o.values_from = static_cast<int64_t>(options["valuesFrom"].as<double>());
    if (!options["valuesTo"].isUndefined()) o.values_to = static_cast<int64_t>(options["valuesTo"].as<double>());
    if (!options["valuesMatch"].isUndefined()) o.values_pattern = options["valuesMatch"].as<std::string>();
    if (!options["source"].isUndefined()) o.source = options["source"].as<std::string>();
    TracedModel() = model.isNull() ? nullptr : model.as<ModulePtr>();
    OpenSession() = std::make_unique<trace::Session>(o, TracedModel().get());
  });
}

// Ends the trace: { trace: Uint8Array, values: Uint8Array (empty without values), records }.
val TraceEnd() {
  return JsBoundary([&] {
    LOCKSTEP_REQUIRE_STATE(OpenSession() != nullptr, "trace: no trace is recording");
    std::unique_ptr<trace::Session> session = std::move(OpenSession());
    TracedModel().reset();
    session->Finish();
    val out = val::object();
    out.set("trace", BytesToJs(session->Bytes()));
    out.set("values", BytesToJs(session->ValueBytes()));
    out.set("records", static_cast<double>(session->records()));
    return out;
  });
}

bool TraceActive() { return OpenSession() != nullptr; }

}  // namespace

EMSCRIPTEN_BINDINGS(lockstep_trace) {
  emscripten::function("traceBegin", &TraceBegin);
  emscripten::function("traceEnd", &TraceEnd);
  emscripten::function("traceActive", &TraceActive);
}

}  // namespace wasm
}  // namespace lockstep
