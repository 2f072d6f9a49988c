// Reading traces (docs/diagnostics.md): the header line, one record per line, the end line, and
// the optional values sidecar. Every problem is a lockstep::Error (kind kFormat) naming the file,
// the line and what was expected: a truncated file (no end line), another format version, a line
// that is not a record.
#ifndef LOCKSTEP_DIAGNOSTICS_TRACE_FILE_H_
#define LOCKSTEP_DIAGNOSTICS_TRACE_FILE_H_

#include <stdint.h>

#include <map>
#include <string>
#include <vector>

namespace lockstep {
namespace diagnostics {

struct TraceRecord {
  int64_t step = 0;
  std::string phase, module, op, param;
  int64_t call = 0, out = 0;
  std::string dtype;
  std::vector<int64_t> shape;
  std::string hash;
  double min = 0, max = 0, mean = 0, l2 = 0;
  bool has_min = false;  // min/max/mean are null when no element is finite
  int64_t nan = 0, inf = 0;
  std::string values;  // the sidecar tensor's name, or empty
  int64_t line = 0;    // 1-based line in its file

  // The alignment key: (step, phase, module, op, call, out), or (step, phase, op, param) for a
  // parameter's records.
  std::string Key() const;
  // "step 3 backward 0/conv2d_backward call 0 output 1" (the parameter when there is one).
  std::string Describe() const;
  int64_t numel() const;
};

struct TraceFile {
  std::string path;
  std::map<std::string, std::string> header;  // producer, version, platform, simd, source, ...
  int format_version = 0;
  std::vector<TraceRecord> records;
  // Values from the sidecar by record name, as float64 (float32 and integer tensors converted).
  std::map<std::string, std::vector<double>> values;
};

// Reads a trace from bytes (what = its name in messages); values_sidecar may be empty.
TraceFile ParseTrace(const std::string& text, const std::string& what);
TraceFile ReadTrace(const std::string& path, const std::string& values_path = "");
// Adds the sidecar's tensors (safetensors) to `trace`.
void AttachValues(const std::vector<uint8_t>& sidecar, const std::string& what, TraceFile* trace);

}  // namespace diagnostics
}  // namespace lockstep

#endif  // LOCKSTEP_DIAGNOSTICS_TRACE_FILE_H_
