// Options every example program takes: --target NAME (force a SIMD target) and --device NAME
// (cpu, cuda, cuda:N), each returning an empty string on success, else the problem for the usage;
// and the integer parser of their numeric options.
#ifndef LOCKSTEP_EXAMPLES_COMMON_RUN_OPTIONS_H_
#define LOCKSTEP_EXAMPLES_COMMON_RUN_OPTIONS_H_

#include <stdlib.h>

#include <string>

#include "core/backend/device.h"
#include "core/error.h"
#include "simd/targets.h"

namespace lockstep {
namespace examples {

// A whole decimal integer (false for "", "12x", ...).
inline bool ParseInt(const char* text, long long* out) {
  char* end = nullptr;
  *out = strtoll(text, &end, 10);
  return end != text && *end == '\0';
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
