#include "diagnostics/trace_file.h"

#include <string.h>

#include "core/error.h"
#include "core/io/byte_order.h"
#include "core/io/files.h"
#include "core/safetensors.h"
#include "diagnostics/json_line.h"

namespace lockstep {
namespace diagnostics {

constexpr int kSupportedVersion = 1;

std::string TraceRecord::Key() const {
  // A parameter's records are named by the parameter: the order in which an optimizer lists its
  // parameters (the call index) does not matter.
  if (!param.empty()) return std::to_string(step) + "\x1f" + phase + "\x1f" + op + "\x1f" + param;
  return std::to_string(step) + "\x1f" + phase + "\x1f" + module + "\x1f" + op + "\x1f" + std::to_string(call) +
         "\x1f" + std::to_string(out);
}

std::string TraceRecord::Describe() const {
  std::string text = "step " + std::to_string(step) + " " + phase + " ";
  text += param.empty() ? (module.empty() ? "(top level)" : module) + " " + op : "parameter " + param + " (" + op + ")";
  if (param.empty()) {
    text += " call " + std::to_string(call);
    if (out != 0) text += " output " + std::to_string(out);
  }
  return text;
}

int64_t TraceRecord::numel() const {
  int64_t n = 1;
  for (const int64_t d : shape) n *= d;
  return n;
}

namespace {

[[noreturn]] void Fail(const std::string& what, int64_t line, const std::string& problem) {
  throw Error(what + ":" + std::to_string(line) + ": " + problem, ErrorKind::kFormat);
}

const JsonValue& Field(const JsonObject& o, const char* name, JsonValue::Type type, const std::string& what,
                       int64_t line) {
  auto it = o.find(name);
  if (it == o.end()) Fail(what, line, std::string("the record has no \"") + name + "\"");
  if (it->second.type != type) Fail(what, line, std::string("\"") + name + "\" has the wrong type");
  return it->second;
}

double OptionalNumber(const JsonObject& o, const char* name, bool* present) {
  auto it = o.find(name);
  *present = it != o.end() && it->second.type == JsonValue::Type::kNumber;
  return *present ? it->second.number : 0.0;
}

TraceRecord RecordOf(const JsonObject& o, const std::string& what, int64_t line) {
  using T = JsonValue::Type;
  TraceRecord r;
  r.line = line;
  r.step = static_cast<int64_t>(Field(o, "step", T::kNumber, what, line).number);
  r.phase = Field(o, "phase", T::kString, what, line).text;
  r.module = Field(o, "module", T::kString, what, line).text;
  r.op = Field(o, "op", T::kString, what, line).text;
  r.call = static_cast<int64_t>(Field(o, "call", T::kNumber, what, line).number);
  auto out = o.find("out");
  r.out = out != o.end() && out->second.type == T::kNumber ? static_cast<int64_t>(out->second.number) : 0;
  auto param = o.find("param");
  if (param != o.end() && param->second.type == T::kString) r.param = param->second.text;
  r.dtype = Field(o, "dtype", T::kString, what, line).text;
  for (const double d : Field(o, "shape", T::kNumberArray, what, line).numbers) r.shape.push_back(static_cast<int64_t>(d));
  r.hash = Field(o, "hash", T::kString, what, line).text;
  bool present = false;
  r.min = OptionalNumber(o, "min", &present);
  r.has_min = present;
  r.max = OptionalNumber(o, "max", &present);
  r.mean = OptionalNumber(o, "mean", &present);
  r.l2 = OptionalNumber(o, "l2", &present);
  r.nan = static_cast<int64_t>(OptionalNumber(o, "nan", &present));
  r.inf = static_cast<int64_t>(OptionalNumber(o, "inf", &present));
  auto values = o.find("values");
  if (values != o.end() && values->second.type == T::kString) r.values = values->second.text;
  return r;
}

}  // namespace

TraceFile ParseTrace(const std::string& text, const std::string& what) {
  TraceFile trace;
  trace.path = what;
  size_t pos = 0;
  int64_t line_number = 0;
  bool ended = false;
  int64_t declared = -1;
  while (pos < text.size()) {
    const size_t newline = text.find('\n', pos);
    const std::string line = text.substr(pos, newline == std::string::npos ? std::string::npos : newline - pos);
    pos = newline == std::string::npos ? text.size() : newline + 1;
    ++line_number;
    if (line.empty()) continue;
    if (ended) Fail(what, line_number, "text after the end line");
    JsonObject o;
    std::string error;
    if (!ParseJsonLine(line, &o, &error)) {
      if (line_number > 1 && newline == std::string::npos) {
        Fail(what, line_number, "the trace is truncated: its last line is cut short (" + error + ")");
      }
      Fail(what, line_number, line_number == 1 ? "not a lockstep trace (the first line is not a JSON header: " + error + ")"
                                               : "not a JSON record: " + error);
    }
    if (line_number == 1) {
      auto version = o.find("lockstep_trace");
      if (version == o.end() || version->second.type != JsonValue::Type::kNumber) {
        Fail(what, 1, "not a lockstep trace (the header has no \"lockstep_trace\" version)");
      }
      trace.format_version = static_cast<int>(version->second.number);
      if (trace.format_version != kSupportedVersion) {
        Fail(what, 1, "trace format version " + std::to_string(trace.format_version) + ", this lockstep reads version " +
                          std::to_string(kSupportedVersion));
      }
      for (const auto& [key, value] : o) {
        trace.header[key] = value.type == JsonValue::Type::kString ? value.text
                            : value.type == JsonValue::Type::kNumber ? std::to_string(static_cast<int64_t>(value.number))
                                                                      : "";
      }
      continue;
    }
    auto end = o.find("end");
    if (end != o.end()) {
      ended = true;
      auto records = o.find("records");
      if (records != o.end() && records->second.type == JsonValue::Type::kNumber) {
        declared = static_cast<int64_t>(records->second.number);
      }
      continue;
    }
    trace.records.push_back(RecordOf(o, what, line_number));
  }
  if (line_number == 0) throw Error(what + ": the trace is empty", ErrorKind::kFormat);
  if (!ended) {
    throw Error(what + ": the trace is truncated: it has no end line (the run stopped before the trace was "
                       "finished, or the file was cut) after " +
                    std::to_string(trace.records.size()) + " records",
                ErrorKind::kFormat);
  }
  if (declared >= 0 && declared != static_cast<int64_t>(trace.records.size())) {
    throw Error(what + ": the end line declares " + std::to_string(declared) + " records, the file holds " +
                    std::to_string(trace.records.size()),
                ErrorKind::kFormat);
  }
  return trace;
}

void AttachValues(const std::vector<uint8_t>& sidecar, const std::string& what, TraceFile* trace) {
  const SafetensorsFile file = DecodeSafetensors(sidecar.data(), sidecar.size(), what);
  for (const TensorRecord& t : file.tensors) {
    std::vector<double>& v = trace->values[t.name];
    const size_t size = DTypeSize(t.dtype);
    v.resize(t.data.size() / size);
    for (size_t i = 0; i < v.size(); ++i) {
      const uint8_t* p = t.data.data() + i * size;
      // Stored little-endian (safetensors).
      if (t.dtype == DType::kFloat32) {
        const uint32_t bits = LoadLittleEndian32(p);
        float f;
        memcpy(&f, &bits, 4);
        v[i] = f;
      } else if (t.dtype == DType::kInt32) {
        v[i] = static_cast<int32_t>(LoadLittleEndian32(p));
      } else {
        v[i] = static_cast<double>(static_cast<int64_t>(LoadLittleEndian64(p)));
      }
    }
  }
}

TraceFile ReadTrace(const std::string& path, const std::string& values_path) {
  const std::vector<uint8_t> bytes = ReadWholeFile(path, size_t{2} << 30);
  TraceFile trace = ParseTrace(std::string(bytes.begin(), bytes.end()), path);
  if (!values_path.empty()) AttachValues(ReadWholeFile(values_path, size_t{2} << 30), values_path, &trace);
  return trace;
}

}  // namespace diagnostics
}  // namespace lockstep
