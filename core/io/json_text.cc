#include "core/io/json_text.h"

#include <stdio.h>

namespace lockstep {

void AppendJsonString(std::string_view text, std::string* out) {
  out->push_back('"');
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escape[8];
      snprintf(escape, sizeof escape, "\\u%04x", c);
      out->append(escape);
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

}  // namespace lockstep
