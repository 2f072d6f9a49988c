// Options every example program takes: --target NAME (force a SIMD target) and --device NAME
// (cpu, cuda, cuda:N), each returning an empty string on success, else the problem for the usage;
// and the integer parser of their numeric options.
#ifndef LOCKSTEP_EXAMPLES_COMMON_RUN_OPTIONS_H_
#define LOCKSTEP_EXAMPLES_COMMON_RUN_OPTIONS_H_

#include <stdlib.h>

#include <string>

#include "core/backend/device.h"
#include "core/error.h"
#include "core/trace/trace.h"
#include "simd/targets.h"

namespace lockstep {
namespace examples {

// A whole decimal integer (false for "", "12x", ...).
inline bool ParseInt(const char* text, long long* out) {
  char* end = nullptr;
  *out = strtoll(text, &end, 10);
  return end != text && *end == '\0';
}

// A whole decimal or exponent-form float (false for "", "abc", "1.5x").
inline bool ParseFloat(const char* text, float* out) {
  char* end = nullptr;
  *out = strtof(text, &end);
  return end != text && *end == '\0';
}

// The trace options (docs/diagnostics.md): --trace FILE, --trace-values FILE, --trace-steps A-B,
// --trace-match TEXT. Returns false when `flag` is not one of them; *problem is set when its value
// is bad.
inline bool ParseTraceOption(const std::string& flag, const std::string& value, trace::Options* options,
                             std::string* problem) {
  if (flag == "--trace") {
    options->path = value;
  } else if (flag == "--trace-values") {
    options->values_path = value;
  } else if (flag == "--trace-match") {
    options->values_pattern = value;
  } else if (flag == "--trace-steps") {
    long long from = 0, to = 0;
    const size_t dash = value.find('-');
    const std::string a = value.substr(0, dash), b = dash == std::string::npos ? a : value.substr(dash + 1);
    if (!ParseInt(a.c_str(), &from) || !ParseInt(b.c_str(), &to) || from < 1 || to < from) {
      *problem = "expected --trace-steps A-B (1 <= A <= B) or N, got '" + value + "'";
    }
    options->values_from = from;
    options->values_to = to;
  } else {
    return false;
  }
  return true;
}

inline std::string ForceTargetByName(const std::string& name) {
  for (const simd::Target& t : simd::RunnableTargets()) {
    if (t.name == name) {
      simd::ForceTarget(t.bits);
      return "";
    }
  }
  return "SIMD target " + name + " is not runnable here";
}

inline std::string UseDevice(const std::string& name) {
  try {
    SetCurrentDevice(Device::Parse(name));
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace examples
}  // namespace lockstep

#endif  // LOCKSTEP_EXAMPLES_COMMON_RUN_OPTIONS_H_
