// One line of a trace: a flat JSON object whose values are strings, numbers, booleans, null or
// arrays of numbers (docs/diagnostics.md). A small strict parser, so that the C++ side reads traces
// written by lockstep and by the PyTorch tracer without a JSON library.
#ifndef LOCKSTEP_DIAGNOSTICS_JSON_LINE_H_
#define LOCKSTEP_DIAGNOSTICS_JSON_LINE_H_

#include <map>
#include <string>
#include <vector>

namespace lockstep {
namespace diagnostics {

struct JsonValue {
  enum class Type { kNull, kBool, kNumber, kString, kNumberArray } type = Type::kNull;
  bool boolean = false;
  double number = 0;
  std::string text;
  std::vector<double> numbers;
};

using JsonObject = std::map<std::string, JsonValue>;

// Parses `line`; false with *error describing the first problem (and its column).
bool ParseJsonLine(const std::string& line, JsonObject* out, std::string* error);

}  // namespace diagnostics
}  // namespace lockstep

#endif  // LOCKSTEP_DIAGNOSTICS_JSON_LINE_H_
