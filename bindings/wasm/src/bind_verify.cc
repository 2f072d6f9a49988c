// verify-run for JavaScript (verify/verify_run.h): a receipt of the MNIST reference run or of a
// fit() run and the training states kept beside it, given as bytes, re-executed on a training set
// given as a Dataset (and, for fit(), on the model and optimizer given).
#include <emscripten/bind.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings/wasm/src/js_boundary.h"
#include "core/data.h"
#include "core/error.h"
#include "core/nn/module.h"
#include "core/optim/optimizer.h"
#include "core/receipt/store.h"
#include "verify/verify_run.h"

namespace lockstep {
namespace wasm {
namespace {

using emscripten::val;

double IntegerOption(const val& options, const char* name, double fallback) {
  const val v = options[name];
  if (v.isUndefined()) return fallback;
  const double d = v.as<double>();
  LOCKSTEP_REQUIRE(d >= 0 && d <= 9007199254740991.0 && d == static_cast<double>(static_cast<int64_t>(d)),
                   "verifyRun: " << name << " must be an integer >= 0, got " << d);
  return d;
}

// receipt_text: the receipt; states: { file name: Uint8Array } (the states beside it); options:
// { sample, seed, first, last, checkpoint (a file name among states), onStep(step, ok) }.
val VerifyOn(const std::string& receipt_text, const val& states, const Dataset& train_set,
             const verify::FitModel* fit, const val& options) {
  return JsBoundary([&] {
    receipt::MemoryStore store;
    const std::string name = "run.receipt";
    store.files[name].assign(receipt_text.begin(), receipt_text.end());
    const val names = val::global("Object").call<val>("keys", states);
    const int count = names["length"].as<int>();
    for (int i = 0; i < count; ++i) {
      const std::string file = names[i].as<std::string>();
      LOCKSTEP_REQUIRE(file != name && file.find('/') == std::string::npos,
                       "verifyRun: states are named as the receipt names them (run.receipt.<step>.state), got '"
                           << file << "'");
      store.files[file] = BytesFromJs(states[file], "verifyRun state");
    }
    verify::VerifyOptions o;
    o.receipt_path = name;
    o.store = &store;
    o.train_set = &train_set;
    o.fit = fit;
    o.sample = static_cast<int64_t>(IntegerOption(options, "sample", 0));
    o.seed = static_cast<uint64_t>(IntegerOption(options, "seed", 0));
    o.first = static_cast<int64_t>(IntegerOption(options, "first", 0));
    o.last = static_cast<int64_t>(IntegerOption(options, "last", 0));
    if (!options["checkpoint"].isUndefined()) o.checkpoint_path = options["checkpoint"].as<std::string>();
    val report = val::array();
    o.print = [&](const std::string& line) { report.call<void>("push", line); };
    const val on_step = options["onStep"];
    if (!on_step.isUndefined()) o.checked = [&](int64_t step, bool ok) { on_step(static_cast<double>(step), ok); };
    const verify::VerifyResult r = verify::VerifyRun(o);
    val out = val::object();
    out.set("verified", r.first_mismatch == 0);
    out.set("checkedSteps", static_cast<double>(r.checked));
    out.set("executedSteps", static_cast<double>(r.executed));
    out.set("firstMismatch", static_cast<double>(r.first_mismatch));
    out.set("mismatch", r.mismatch);
    out.set("report", report);
    return out;
  });
}

val VerifyMnistRun(const std::string& receipt_text, const val& states, const Dataset& train_set, const val& options) {
  return VerifyOn(receipt_text, states, train_set, nullptr, options);
}

val VerifyFitRun(const std::string& receipt_text, const val& states, const Dataset& train_set,
                 const std::shared_ptr<nn::Module>& model, const std::shared_ptr<optim::Optimizer>& optimizer,
                 const val& options) {
  verify::FitModel fit;
  fit.model = model.get();
  fit.optimizer = optimizer.get();
  return VerifyOn(receipt_text, states, train_set, &fit, options);
}

}  // namespace

EMSCRIPTEN_BINDINGS(lockstep_verify) {
  emscripten::function("verifyMnistRun", &VerifyMnistRun);
  emscripten::function("verifyFitRun", &VerifyFitRun);
}

}  // namespace wasm
}  // namespace lockstep
