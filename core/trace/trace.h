// Op-level traces (docs/diagnostics.md): while a trace::Session is open on a thread, every op that
// computes (not views) records one line of JSON: the training step, the phase (forward, backward,
// grad, update, eval, sample), the module path (PyTorch's names: "features.0"), the op name, its
// call index within that module, step and phase, the output's dtype, shape, a hash of its exact
// bits and summary statistics; parameter gradients and optimizer updates are recorded by
// parameter name. Chosen records can also keep their full values, written to a safetensors
// sidecar, so that `lockstep diff` can report ulps.
//
// Off (no session on the thread), the hooks below cost one predictable branch on a thread-local
// pointer.
#ifndef LOCKSTEP_CORE_TRACE_TRACE_H_
#define LOCKSTEP_CORE_TRACE_TRACE_H_

#include <stdint.h>

#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "simd/fp_mode.h"

namespace lockstep {
namespace nn {
class Module;
}
namespace trace {

constexpr int kFormatVersion = 1;

struct Options {
  std::string path;          // the trace (JSON lines); empty: kept in memory (Session::Bytes)
  std::string values_path;   // the values sidecar (safetensors); empty: values kept in memory
  // Which records keep their full values: steps in [values_from, values_to] (0 = none) whose
  // "module/op" (for gradients and updates "param/op": "0.weight/grad") contains values_pattern
  // ("" = all).
  int64_t values_from = 0, values_to = 0;
  std::string values_pattern;
  std::string source;  // free text in the header ("lockstep train mnist --seed 2", ...)
  // A planted fault, to show that `lockstep diff` finds what changed (docs/diagnostics.md): the
  // forward op `fault_op` of module `fault_module` at step `fault_step` has its first element
  // moved by one ulp, in place, before it is recorded and used. Set from the environment variable
  // LOCKSTEP_TRACE_FAULT=STEP:MODULE:OP when a session opens; fault_step 0: none.
  int64_t fault_step = 0;
  std::string fault_module, fault_op;
};

class Recorder;

// Records the calling thread's ops while alive. `model` names the modules and parameters (it may
// be null: then module paths are empty and parameters are named by position). Throws (kind kIo)
// when the trace file cannot be written; the file is written atomically when the session ends,
// so an interrupted run never leaves half a trace.
class Session {
 public:
  Session(const Options& options, nn::Module* model);
  ~Session();  // finishes (errors while finishing are lost: call Finish() to see them)
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Writes the trace (and the values sidecar) and ends recording.
  void Finish();
  // The trace's bytes (JSON lines) and the sidecar's (safetensors; empty when no values were kept).
  std::vector<uint8_t> Bytes() const;
  std::vector<uint8_t> ValueBytes() const;
  int64_t records() const;

 private:
  std::unique_ptr<Recorder> recorder_;
  Recorder* previous_;
  bool finished_ = false;
};

// ---- hooks, called by the engine (cheap when no session is open)

// The recorder of the calling thread, or null.
Recorder* Current();
inline bool Active() { return Current() != nullptr; }

// Sets the step and phase of the following records, and restarts the call indices.
void BeginStep(int64_t step, const char* phase = "forward");
// A phase for a scope (eval, sample), restored afterwards.
class PhaseScope {
 public:
  explicit PhaseScope(const char* phase);
  ~PhaseScope();
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  const char* previous_ = nullptr;
};

// Ops run inside it are not recorded (data preparation: a batch's normalisation is not the
// model's work, and PyTorch loops prepare their batches outside the traced step).
class PauseScope {
 public:
  PauseScope();
  ~PauseScope();
  PauseScope(const PauseScope&) = delete;
  PauseScope& operator=(const PauseScope&) = delete;

 private:
  bool active_;
};

// Records an op's output (forward, eval and sample phases; ignored inside backward rules).
void RecordOp(const char* op, const Tensor& out);
// Runs an op body and records its result: the ops' public functions are written as
// `return trace::Op("conv2d", [&] { ...; return out; });`. The body runs in the contract's
// floating-point mode (simd/fp_mode.h), host loops included, whatever the caller's mode.
template <class Body>
inline Tensor Op(const char* name, Body&& body) {
  const simd::ContractFloatingPointScope fp_mode;
  if (!Active()) return body();
  Tensor out = body();
  RecordOp(name, out);
  return out;
}

// Module scopes: the path of the module whose Forward runs (its output is recorded as op
// "output" when it returns).
void EnterModule(const nn::Module* module);
void LeaveModule(const nn::Module* module, const Tensor& out);
// The current module's index, kept by autograd nodes so that backward records carry the module
// of the forward op (-1: none).
int32_t CurrentModuleIndex();

// Backward: the phase for the duration of a backward pass, and one node's input gradients (op
// "<name>_backward", output index = input position).
class BackwardScope {
 public:
  BackwardScope();
  ~BackwardScope();
  BackwardScope(const BackwardScope&) = delete;
  BackwardScope& operator=(const BackwardScope&) = delete;

 private:
  bool active_;
};
void RecordBackward(const char* op, int32_t module_index, const std::vector<Tensor>& grads);

// Optimizer: parameter gradients before an update (phase "grad") and parameter values after it
// (phase "update"), by parameter name.
void RecordParameters(const char* phase, const std::vector<Tensor>& params, bool gradients);

}  // namespace trace
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_TRACE_TRACE_H_
