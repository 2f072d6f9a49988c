// lockstep._C runtime state: the default generators (manual_seed), named generators, grad mode,
// devices, kernel threads, the SIMD target, library information, and op-level trace sessions.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <string>
#include <thread>

#include "bindings/python/src/bindings.h"
#include "bindings/python/src/engine.h"
#include "core/autograd.h"
#include "core/backend/device.h"
#include "core/contract.h"
#include "core/error.h"
#include "core/fp_environment.h"
#include "core/nn/module.h"
#include "core/trace/trace.h"
#include "simd/targets.h"
#include "simd/thread_pool.h"

namespace lockstep {
namespace python {

namespace {

struct Defaults {
  uint64_t seed = 0;
  std::map<std::string, Generator> streams;
  uint64_t dropouts = 0;  // default Dropout streams handed out since manual_seed
};

Defaults& TheDefaults() {
  static Defaults* d = new Defaults();
  return *d;
}

// Autograd off for a `with` block on the calling thread (grad mode is per thread in the core).
class NoGradScope {
 public:
  void Enter() { guard_ = std::make_unique<NoGradGuard>(); }
  void Exit() { guard_.reset(); }

 private:
  std::unique_ptr<NoGradGuard> guard_;
};

// A trace::Session for a `with` block: opened and finished on the same thread (the recorder is the
// thread's); the model is kept alive while it records.
class TraceScope {
 public:
  TraceScope(const trace::Options& options, std::shared_ptr<nn::Module> model)
      : model_(std::move(model)), session_(std::make_unique<trace::Session>(options, model_.get())),
        thread_(std::this_thread::get_id()) {}
  ~TraceScope() {
    // Ended on another thread (garbage collection): the session must not reset that thread's
    // recorder, so it is left unfinished (its records are lost).
    if (session_ && std::this_thread::get_id() != thread_) session_.release();
  }
  void Finish() {
    LOCKSTEP_REQUIRE_STATE(session_ != nullptr, "trace: the session is already finished");
    LOCKSTEP_REQUIRE_STATE(std::this_thread::get_id() == thread_,
                           "trace: a trace records the thread that opened it; finish it on that thread");
    session_->Finish();
    bytes_ = session_->Bytes();
    values_ = session_->ValueBytes();
    records_ = session_->records();
    session_.reset();
  }
  py::bytes Bytes() const { return py::bytes(reinterpret_cast<const char*>(bytes_.data()), bytes_.size()); }
  py::bytes Values() const { return py::bytes(reinterpret_cast<const char*>(values_.data()), values_.size()); }
  int64_t records() const { return records_; }

 private:
  std::shared_ptr<nn::Module> model_;
  std::unique_ptr<trace::Session> session_;
  std::thread::id thread_;
  std::vector<uint8_t> bytes_, values_;
  int64_t records_ = 0;
};

}  // namespace

Generator& DefaultGenerator(const std::string& name) {
  Defaults& d = TheDefaults();
  auto it = d.streams.find(name);
  if (it == d.streams.end()) it = d.streams.emplace(name, Generator(d.seed, name)).first;
  return it->second;
}

Generator NextDropoutGenerator() {
  Defaults& d = TheDefaults();
  return Generator(d.seed, "dropout/" + std::to_string(d.dropouts++));
}

void BindRuntime(py::module_& m) {
  py::class_<Generator>(m, "Generator", "A position in a named Philox stream under a seed: draws depend only on "
                                        "(seed, name, how much was drawn before).")
      .def(py::init([](uint64_t seed, const std::string& name) { return Generator(seed, name); }), py::arg("seed"),
           py::arg("name") = "init")
      .def_readonly("seed", &Generator::seed)
      .def_readonly("stream", &Generator::stream, "The stream id: 64-bit FNV-1a of the name.")
      .def_readwrite("offset", &Generator::offset, "Words drawn so far.");
  m.def("manual_seed", [](uint64_t seed) {
    Short([&] {
      Defaults& d = TheDefaults();
      d.seed = seed;
      d.streams.clear();
      d.dropouts = 0;
    });
  }, py::arg("seed"),
        "Seeds the default generators: layers' initial values (stream 'init'), randn/rand, and the default "
        "Dropout streams ('dropout/0', 'dropout/1', ... restart).");
  m.def("initial_seed", [] { return Short([] { return TheDefaults().seed; }); }, "The seed manual_seed last set (0 at start).");

  py::class_<NoGradScope>(m, "_NoGradScope").def(py::init<>()).def("enter", &NoGradScope::Enter).def("exit", &NoGradScope::Exit);
  m.def("is_grad_enabled", &GradEnabled, "Whether ops record history on this thread.");
  m.def("_trace_active", &trace::Active);
  // Whether every C++ part of a pybind11 instance has been constructed: methods called on one that
  // is not would run on unconstructed memory (pybind11 does not check), so the Python layer asks.
  m.def("_constructed", [](const py::handle& obj) {
    if (!py::detail::get_type_info(Py_TYPE(obj.ptr()))) return false;
    auto* inst = reinterpret_cast<py::detail::instance*>(obj.ptr());
    for (const auto& vh : py::detail::values_and_holders(inst)) {
      if (!vh.holder_constructed()) return false;
    }
    return true;
  });

  m.def("_set_device", [](const std::string& d) { Short([&] { SetCurrentDevice(Device::Parse(d)); }); });
  m.def("_current_device", [] { return CurrentDevice().ToString(); });
  m.def("_cuda_devices", [] {
    const CudaDeviceListing l = Short([] { return ListCudaDevices(); });
    return py::make_tuple(l.plugin, l.devices, l.why_none);
  });
  m.def("set_num_threads", [](int64_t n) {
    LOCKSTEP_REQUIRE(n >= 1, "set_num_threads: expected a count >= 1, got " << n);
    simd::SetDefaultThreadCount(static_cast<size_t>(n));
  }, py::arg("count"), "Kernel threads (results never depend on it).");
  m.def("get_num_threads", [] { return simd::DefaultThreadCount(); }, "Kernel threads in use.");
  m.def("_force_target", [](int64_t bits) { Short([&] { simd::ForceTarget(bits); }); });
  m.def("_targets", [] {
    py::list out;
    for (const simd::Target& t : simd::RunnableTargets()) out.append(py::make_tuple(t.name, t.bits));
    return out;
  });
  m.def("_info", [] {
    py::dict out;
    out["version"] = LOCKSTEP_VERSION_STRING;
    out["contract_version"] = kContractVersion;
    out["simd_target"] = simd::ActiveTargetName();
    out["platform"] = LOCKSTEP_PLATFORM;
    out["threads"] = simd::DefaultThreadCount();
    out["floating_point"] = DescribeFloatingPointEnvironment();
    return out;
  });

  py::class_<trace::Options>(m, "_TraceOptions")
      .def(py::init<>())
      .def_readwrite("path", &trace::Options::path)
      .def_readwrite("values_path", &trace::Options::values_path)
      .def_readwrite("values_from", &trace::Options::values_from)
      .def_readwrite("values_to", &trace::Options::values_to)
      .def_readwrite("values_pattern", &trace::Options::values_pattern)
      .def_readwrite("source", &trace::Options::source);
  py::class_<TraceScope>(m, "_TraceScope")
      .def(py::init([](const trace::Options& o, const std::shared_ptr<nn::Module>& model) {
        return Short([&] { return std::make_unique<TraceScope>(o, model); });
      }), py::arg("options"), py::arg("model").none(true))
      .def("finish", [](TraceScope& t) { Long([&] { t.Finish(); }); })
      .def("bytes", &TraceScope::Bytes)
      .def("values", &TraceScope::Values)
      .def_property_readonly("records", &TraceScope::records);
}

}  // namespace python
}  // namespace lockstep
