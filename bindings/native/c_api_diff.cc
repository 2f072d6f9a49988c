// The C ABI: comparing two traces (diagnostics/diff.h), for `lockstep diff` and C callers.
#include <string>

#include "bindings/native/c_api_internal.h"
#include "core/io/files.h"
#include "diagnostics/diff.h"
#include "diagnostics/trace_file.h"

using lockstep::capi::Boundary;
using lockstep::capi::Fail;
using lockstep::capi::RequireNonNull;

extern "C" {

lockstep_status lockstep_diff_options_default(lockstep_diff_options* out) {
  return Boundary(__func__, [&] {
    RequireNonNull(out, "out");
    *out = lockstep_diff_options{sizeof(lockstep_diff_options), nullptr, nullptr, nullptr, 20};
  });
}

lockstep_status lockstep_trace_diff(const char* a, const char* b, const lockstep_diff_options* options,
                                    void (*write)(const char* text, void* user), void* user, int* identical) {
  return Boundary(__func__, [&] {
    RequireNonNull(a, "a");
    RequireNonNull(b, "b");
    RequireNonNull(identical, "identical");
    lockstep_diff_options o;
    lockstep_diff_options_default(&o);
    if (options != nullptr) {
      lockstep::capi::RequireStructSize(options->struct_size, sizeof(lockstep_diff_options), "lockstep_diff_options");
      o = *options;
    }
    if (o.max_rows < 1) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "max_rows must be >= 1");
    if (o.html_path != nullptr) lockstep::RequireWritableFile(o.html_path);
    const lockstep::diagnostics::TraceFile ta = lockstep::diagnostics::ReadTrace(a, o.a_values ? o.a_values : "");
    const lockstep::diagnostics::TraceFile tb = lockstep::diagnostics::ReadTrace(b, o.b_values ? o.b_values : "");
    const lockstep::diagnostics::DiffResult result = lockstep::diagnostics::Diff(ta, tb);
    if (write != nullptr) write(lockstep::diagnostics::FormatReport(result, ta, tb, o.max_rows).c_str(), user);
    if (o.html_path != nullptr) {
      const std::string html = lockstep::diagnostics::HtmlReport(result, ta, tb);
      lockstep::WriteFileAtomic(o.html_path, std::vector<uint8_t>(html.begin(), html.end()));
    }
    *identical = result.same() ? 1 : 0;
  });
}

}  // extern "C"
