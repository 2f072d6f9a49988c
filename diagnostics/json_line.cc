#include "diagnostics/json_line.h"

#include <stdlib.h>

namespace lockstep {
namespace diagnostics {
namespace {

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  bool Object(JsonObject* out, std::string* error) {
    Space();
    if (!Take('{')) return Fail("expected '{'", error);
    Space();
    if (Take('}')) return End(error);
    for (;;) {
      std::string key;
      Space();
      if (!String(&key)) return Fail("expected a quoted key", error);
      Space();
      if (!Take(':')) return Fail("expected ':' after \"" + key + "\"", error);
      Space();
      JsonValue value;
      if (!Value(&value)) return Fail("bad value for \"" + key + "\"", error);
      (*out)[key] = value;
      Space();
      if (Take('}')) return End(error);
      if (!Take(',')) return Fail("expected ',' or '}'", error);
    }
  }

 private:
  bool End(std::string* error) {
    Space();
    return pos_ == s_.size() ? true : Fail("unexpected text after the object", error);
  }
  bool Fail(const std::string& what, std::string* error) {
    *error = what + " at column " + std::to_string(pos_ + 1);
    return false;
  }
  void Space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
  }
  bool Take(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool Word(const char* word) {
    const std::string w = word;
    if (s_.compare(pos_, w.size(), w) != 0) return false;
    pos_ += w.size();
    return true;
  }
  bool String(std::string* out) {
    if (!Take('"')) return false;
    while (pos_ < s_.size()) {
      const char c = s_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) return false;
      const char e = s_[pos_++];
      switch (e) {
        case '"': case '\\': case '/': out->push_back(e); break;
        case 'n': out->push_back('\n'); break;
        case 't': out->push_back('\t'); break;
        case 'r': out->push_back('\r'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'u': {
          if (pos_ + 4 > s_.size()) return false;
          const unsigned code = static_cast<unsigned>(strtoul(s_.substr(pos_, 4).c_str(), nullptr, 16));
          pos_ += 4;
          if (code < 0x80) {
            out->push_back(static_cast<char>(code));
          } else if (code < 0x800) {
            out->push_back(static_cast<char>(0xC0 | (code >> 6)));
            out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
          } else {
            out->push_back(static_cast<char>(0xE0 | (code >> 12)));
            out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
            out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
          }
          break;
        }
        default: return false;
      }
    }
    return false;
  }
  bool Number(double* out) {
    const char* start = s_.c_str() + pos_;
    char* end = nullptr;
    *out = strtod(start, &end);
    if (end == start) return false;
    pos_ += static_cast<size_t>(end - start);
    return true;
  }
  bool Value(JsonValue* v) {
    if (pos_ >= s_.size()) return false;
    const char c = s_[pos_];
    if (c == '"') {
      v->type = JsonValue::Type::kString;
      return String(&v->text);
    }
    if (c == '[') {
      ++pos_;
      v->type = JsonValue::Type::kNumberArray;
      Space();
      if (Take(']')) return true;
      for (;;) {
        Space();
        double d;
        if (!Number(&d)) return false;
        v->numbers.push_back(d);
        Space();
        if (Take(']')) return true;
        if (!Take(',')) return false;
      }
    }
    if (Word("null")) return true;
    if (Word("true") || Word("false")) {
      v->type = JsonValue::Type::kBool;
      v->boolean = s_[pos_ - 1] == 'e' && s_[pos_ - 2] == 'u';
      return true;
    }
    v->type = JsonValue::Type::kNumber;
    return Number(&v->number);
  }

  const std::string& s_;
  size_t pos_ = 0;
};

}  // namespace

bool ParseJsonLine(const std::string& line, JsonObject* out, std::string* error) {
  out->clear();
  return Parser(line).Object(out, error);
}

}  // namespace diagnostics
}  // namespace lockstep
