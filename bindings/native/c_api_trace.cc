// The C ABI: op-level traces of the calling thread (docs/diagnostics.md).
#include <memory>
#include <string>

#include "bindings/native/c_api_internal.h"
#include "core/trace/trace.h"

using lockstep::capi::Boundary;
using lockstep::capi::Fail;
using lockstep::capi::RequireNonNull;

namespace lockstep {
namespace capi {

trace::Options TraceOptionsOf(const lockstep_trace_options& options) {
  trace::Options o;
  if (options.path != nullptr) o.path = options.path;
  if (options.values_path != nullptr) o.values_path = options.values_path;
  if (options.values_pattern != nullptr) o.values_pattern = options.values_pattern;
  o.values_from = options.values_from;
  o.values_to = options.values_to;
  if (o.values_from < 0 || o.values_to < o.values_from) {
    Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "trace values steps [" + std::to_string(o.values_from) + ", " +
                                              std::to_string(o.values_to) + "] are not a range of steps >= 0");
  }
  if (o.path.empty()) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "trace options: path is NULL or empty");
  return o;
}

namespace {
thread_local std::unique_ptr<trace::Session> thread_session;
}  // namespace

}  // namespace capi
}  // namespace lockstep

extern "C" {

lockstep_status lockstep_trace_begin(lockstep_model* model, const lockstep_trace_options* options) {
  return Boundary(__func__, [&] {
    RequireNonNull(options, "options");
    if (lockstep::capi::thread_session) Fail(LOCKSTEP_ERROR_STATE, "a trace is already recording on this thread");
    lockstep::capi::thread_session = std::make_unique<lockstep::trace::Session>(
        lockstep::capi::TraceOptionsOf(*options), model != nullptr ? model->module.get() : nullptr);
  });
}

lockstep_status lockstep_trace_end(int64_t* records_out) {
  return Boundary(__func__, [&] {
    if (!lockstep::capi::thread_session) Fail(LOCKSTEP_ERROR_STATE, "no trace is recording on this thread");
    std::unique_ptr<lockstep::trace::Session> session = std::move(lockstep::capi::thread_session);
    session->Finish();
    if (records_out != nullptr) *records_out = session->records();
  });
}

}  // extern "C"
