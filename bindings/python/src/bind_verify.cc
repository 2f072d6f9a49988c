// verify_run for Python (verify/verify_run.h): re-executes steps of a receipt from the training
// states kept beside it and checks each against the receipt's chain.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings/python/src/bindings.h"
#include "bindings/python/src/engine.h"
#include "core/data.h"
#include "core/nn/module.h"
#include "core/optim/optimizer.h"
#include "verify/verify_run.h"

namespace lockstep {
namespace python {
namespace {

namespace py = pybind11;

// dataset, model, optimizer: a fit() run's (None for the other tasks, whose data is read from `data`).
py::dict VerifyRunPy(const std::string& receipt, const std::string& checkpoint, int64_t first, int64_t last,
                     int64_t sample, uint64_t seed, const std::string& data, const std::shared_ptr<Dataset>& dataset,
                     const std::shared_ptr<nn::Module>& model, const std::shared_ptr<optim::Optimizer>& optimizer) {
  verify::VerifyOptions o;
  verify::FitModel fit;
  fit.model = model.get();
  fit.optimizer = optimizer.get();
  if (dataset != nullptr) o.train_set = dataset.get();
  if (model != nullptr || optimizer != nullptr) o.fit = &fit;
  o.receipt_path = receipt;
  o.checkpoint_path = checkpoint;
  o.first = first;
  o.last = last;
  o.sample = sample;
  o.seed = seed;
  o.data = data;
  std::vector<std::string> report;
  o.print = [&](const std::string& line) { report.push_back(line); };
  const verify::VerifyResult r = Long([&] { return verify::VerifyRun(o); });
  py::dict out;
  out["verified"] = r.first_mismatch == 0;
  out["checked_steps"] = r.checked;
  out["executed_steps"] = r.executed;
  out["first_mismatch"] = r.first_mismatch;
  out["mismatch"] = r.mismatch;
  out["report"] = report;
  return out;
}

}  // namespace

void BindVerify(py::module_& m) { m.def("_verify_run", &VerifyRunPy); }

}  // namespace python
}  // namespace lockstep
