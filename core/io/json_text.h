// Writing JSON text: the JSON-lines files lockstep writes (traces, receipts) quote their strings
// one way.
#ifndef LOCKSTEP_CORE_IO_JSON_TEXT_H_
#define LOCKSTEP_CORE_IO_JSON_TEXT_H_

#include <string>
#include <string_view>

namespace lockstep {

// Appends `text` as a JSON string: quoted, with '"', '\' and control characters escaped.
void AppendJsonString(std::string_view text, std::string* out);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_IO_JSON_TEXT_H_
