#include "core/safetensors.h"

#include <string.h>

#include <algorithm>
#include <limits>
#include <set>
#include <sstream>

#include "core/error.h"

namespace lockstep {

namespace {

constexpr uint32_t kCanonicalNan = 0x7FC00000u;
constexpr uint64_t kMaxInt64 = uint64_t{std::numeric_limits<int64_t>::max()};

// ---------------------------------------------------------------------------------------------
// Strings: UTF-8 validation and the canonical JSON escaping.

// Length of the UTF-8 sequence starting at s[i] (1 to 4), or 0 if it is not valid UTF-8
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
size_t Utf8SequenceLength(const uint8_t* s, size_t size, size_t i) {
  const uint8_t c = s[i];
  if (c < 0x80) return 1;
  size_t length;
  uint32_t code;
  if ((c & 0xE0) == 0xC0) {
    length = 2, code = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    length = 3, code = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    length = 4, code = c & 0x07;
  } else {
    return 0;
  }
  if (size - i < length) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((s[i + k] & 0xC0) != 0x80) return 0;
    code = (code << 6) | (s[i + k] & 0x3F);
  }
  static constexpr uint32_t kSmallest[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kSmallest[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

bool IsValidUtf8(const std::string& text) {
  const uint8_t* s = reinterpret_cast<const uint8_t*>(text.data());
  for (size_t i = 0; i < text.size();) {
    const size_t length = Utf8SequenceLength(s, text.size(), i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

// Quotes and escapes minimally: \" and \\, bytes below 0x20 as \u00xx; everything else verbatim.
void AppendJsonString(const std::string& text, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (const char ch : text) {
    const uint8_t c = static_cast<uint8_t>(ch);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(ch);
    } else if (c < 0x20) {
      out->append("\\u00");
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 15]);
    } else {
      out->push_back(ch);
    }
  }
  out->push_back('"');
}

// A short, printable rendering of a name for error messages.
std::string Quoted(const std::string& text) {
  std::string out;
  AppendJsonString(text.size() > 200 ? text.substr(0, 200) + "..." : text, &out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Arithmetic on untrusted sizes.

bool MultiplyOverflows(uint64_t a, uint64_t b, uint64_t* product) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) return true;
  *product = a * b;
  return false;
}

uint64_t ReadLittleEndian64(const uint8_t* p) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | p[i];
  return value;
}

void AppendLittleEndian64(uint64_t value, std::vector<uint8_t>* out) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<uint8_t>(value >> (8 * i)));
}

bool ParseDTypeName(const std::string& name, DType* dtype) {
  for (const DType t : {DType::kFloat32, DType::kInt32, DType::kInt64}) {
    if (name == DTypeName(t)) {
      *dtype = t;
      return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// The header parser. The safetensors header has a fixed structure (an object of objects whose
// values are strings or arrays of integers), so the parser follows that structure directly: no
// recursion, no generic JSON values, nothing allocated beyond what the header's bytes hold.

struct HeaderEntry {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
  size_t header_position = 0;  // byte offset in the file, for error messages
};

class HeaderParser {
 public:
  // [begin, end) is the header; file_offset is where it starts in the file.
  HeaderParser(const uint8_t* begin, const uint8_t* end, size_t file_offset,
               const std::string& what)
      : begin_(begin), end_(end), pos_(begin), file_offset_(file_offset), what_(what) {}

  void Parse(std::map<std::string, std::string>* metadata, std::vector<HeaderEntry>* entries) {
    // The format requires the header to start with '{' (no leading whitespace).
    if (pos_ == end_ || *pos_ != '{') Fail("'{' at the start of the JSON header");
    ++pos_;
    std::set<std::string> names;
    bool seen_metadata = false;
    std::string last_key;
    SkipWhitespace();
    if (Peek() == '}') {
      ++pos_;
    } else {
      for (;;) {
        SkipWhitespace();
        const size_t key_position = Position();
        std::string key = ParseString("a tensor name or \"__metadata__\"");
        last_key = key;
        ExpectChar(':');
        if (key == "__metadata__") {
          if (seen_metadata) FailAt(key_position, "\"__metadata__\" appears twice");
          seen_metadata = true;
          ParseMetadata(metadata);
        } else {
          if (!names.insert(key).second) {
            FailAt(key_position, "duplicate tensor name " + Quoted(key));
          }
          entries->push_back(ParseEntry(std::move(key), key_position));
        }
        SkipWhitespace();
        if (Peek() == ',') {
          ++pos_;
          continue;
        }
        if (Peek() == '}') {
          ++pos_;
          break;
        }
        Fail("',' or '}' after the value of " + Quoted(last_key));
      }
    }
    // Anything after the closing brace must be whitespace (writers pad with spaces).
    SkipWhitespace();
    if (pos_ != end_) Fail("only whitespace after the JSON header's closing '}'");
  }

 private:
  size_t Position() const { return file_offset_ + static_cast<size_t>(pos_ - begin_); }

  int Peek() const { return pos_ == end_ ? -1 : *pos_; }

  std::string Describe(int c) const {
    if (c < 0) return "the end of the header";
    std::ostringstream s;
    if (c >= 0x20 && c < 0x7F) {
      s << "'" << static_cast<char>(c) << "'";
    } else {
      s << "byte 0x" << std::hex << c;
    }
    return s.str();
  }

  [[noreturn]] void FailAt(size_t position, const std::string& problem) const {
    std::ostringstream s;
    s << what_ << ": invalid safetensors header: " << problem << " (at byte " << position
      << " of the file)";
    throw Error(s.str(), ErrorKind::kFormat);
  }

  // Expected `expected`, found the current byte.
  [[noreturn]] void Fail(const std::string& expected) const {
    FailAt(Position(), "expected " + expected + ", found " + Describe(Peek()));
  }

  void SkipWhitespace() {
    while (pos_ != end_ && (*pos_ == ' ' || *pos_ == '\t' || *pos_ == '\n' || *pos_ == '\r')) {
      ++pos_;
    }
  }

  void ExpectChar(char c) {
    SkipWhitespace();
    if (Peek() != static_cast<uint8_t>(c)) Fail(std::string("'") + c + "'");
    ++pos_;
  }

  static int HexValue(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  uint32_t ParseHex4() {
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      const int digit = HexValue(Peek());
      if (digit < 0) Fail("a hexadecimal digit in a \\u escape");
      value = (value << 4) | static_cast<uint32_t>(digit);
      ++pos_;
    }
    return value;
  }

  static void AppendUtf8(uint32_t code, std::string* out) {
    if (code < 0x80) {
      out->push_back(static_cast<char>(code));
    } else if (code < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (code >> 6)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else if (code < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (code >> 12)));
      out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (code >> 18)));
      out->push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    }
  }

  // A JSON string (the current byte must be '"'), decoded to UTF-8.
  std::string ParseString(const std::string& expected) {
    SkipWhitespace();
    if (Peek() != '"') Fail(expected + " (a JSON string)");
    ++pos_;
    std::string out;
    for (;;) {
      if (pos_ == end_) Fail("the closing '\"' of a string");
      const uint8_t c = *pos_;
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c < 0x20) Fail("an escaped control character (JSON strings cannot hold raw ones)");
      if (c == '\\') {
        ++pos_;
        const int e = Peek();
        if (e < 0) Fail("an escape sequence after a backslash");
        ++pos_;
        switch (e) {
          case '"': out.push_back('"'); break;
          case '\\': out.push_back('\\'); break;
          case '/': out.push_back('/'); break;
          case 'b': out.push_back('\b'); break;
          case 'f': out.push_back('\f'); break;
          case 'n': out.push_back('\n'); break;
          case 'r': out.push_back('\r'); break;
          case 't': out.push_back('\t'); break;
          case 'u': {
            uint32_t code = ParseHex4();
            if (code >= 0xDC00 && code <= 0xDFFF) {
              FailAt(Position() - 6, "a lone low surrogate in a \\u escape");
            }
            if (code >= 0xD800 && code <= 0xDBFF) {
              if (Peek() != '\\') Fail("a \\u escape with the low surrogate after a high one");
              ++pos_;
              if (Peek() != 'u') Fail("a \\u escape with the low surrogate after a high one");
              ++pos_;
              const uint32_t low = ParseHex4();
              if (low < 0xDC00 || low > 0xDFFF) {
                FailAt(Position() - 6, "a low surrogate after a high one in a \\u escape");
              }
              code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
            }
            AppendUtf8(code, &out);
            break;
          }
          default:
            --pos_;
            Fail("one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u after a backslash");
        }
        continue;
      }
      const size_t length = Utf8SequenceLength(pos_, static_cast<size_t>(end_ - pos_), 0);
      if (length == 0) Fail("valid UTF-8 in a string");
      out.append(reinterpret_cast<const char*>(pos_), length);
      pos_ += length;
    }
  }

  // A non-negative JSON integer that fits int64.
  uint64_t ParseInteger(const std::string& expected) {
    SkipWhitespace();
    const size_t start = Position();
    if (Peek() == '-') FailAt(start, "expected " + expected + " to be non-negative, found '-'");
    if (Peek() < '0' || Peek() > '9') Fail(expected + " (a non-negative integer)");
    uint64_t value = 0;
    const bool leading_zero = Peek() == '0';
    int digits = 0;
    while (Peek() >= '0' && Peek() <= '9') {
      const uint64_t digit = static_cast<uint64_t>(*pos_ - '0');
      if (value > (kMaxInt64 - digit) / 10) {
        FailAt(start, "expected " + expected + " of at most 2^63-1, found a larger integer");
      }
      value = value * 10 + digit;
      ++digits;
      ++pos_;
    }
    if (leading_zero && digits > 1) FailAt(start, "a JSON integer cannot start with 0");
    if (Peek() == '.' || Peek() == 'e' || Peek() == 'E') {
      FailAt(start, "expected " + expected + " to be an integer, found a fraction or exponent");
    }
    return value;
  }

  std::vector<uint64_t> ParseIntegerArray(const std::string& expected) {
    SkipWhitespace();
    if (Peek() != '[') Fail(expected + " (a JSON array of integers)");
    ++pos_;
    std::vector<uint64_t> values;
    SkipWhitespace();
    if (Peek() == ']') {
      ++pos_;
      return values;
    }
    for (;;) {
      values.push_back(ParseInteger("each element of " + expected));
      SkipWhitespace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() == ']') {
        ++pos_;
        return values;
      }
      Fail("',' or ']' in " + expected);
    }
  }

  void ParseMetadata(std::map<std::string, std::string>* metadata) {
    SkipWhitespace();
    if (Peek() != '{') Fail("an object of strings as the value of \"__metadata__\"");
    ++pos_;
    SkipWhitespace();
    if (Peek() == '}') {
      ++pos_;
      return;
    }
    for (;;) {
      SkipWhitespace();
      const size_t key_position = Position();
      std::string key = ParseString("a metadata key");
      ExpectChar(':');
      std::string value = ParseString("a string as the value of metadata key " + Quoted(key));
      if (!metadata->emplace(std::move(key), std::move(value)).second) {
        FailAt(key_position, "duplicate metadata key");
      }
      SkipWhitespace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() == '}') {
        ++pos_;
        return;
      }
      Fail("',' or '}' in \"__metadata__\"");
    }
  }

  HeaderEntry ParseEntry(std::string name, size_t position) {
    HeaderEntry entry;
    entry.name = std::move(name);
    entry.header_position = position;
    const std::string of = " of tensor " + Quoted(entry.name);
    SkipWhitespace();
    if (Peek() != '{') Fail("an object {\"dtype\",\"shape\",\"data_offsets\"} as the value" + of);
    ++pos_;
    bool have_dtype = false, have_shape = false, have_offsets = false;
    SkipWhitespace();
    if (Peek() != '}') {
      for (;;) {
        SkipWhitespace();
        const size_t key_position = Position();
        const std::string key = ParseString("\"dtype\", \"shape\" or \"data_offsets\"" + of);
        ExpectChar(':');
        bool* seen;
        if (key == "dtype") {
          seen = &have_dtype;
          SkipWhitespace();
          const size_t value_position = Position();
          const std::string dtype = ParseString("the dtype" + of);
          if (!ParseDTypeName(dtype, &entry.dtype)) {
            FailAt(value_position, "unknown or unsupported dtype " + Quoted(dtype) + of +
                                       " (lockstep reads F32, I32 and I64)");
          }
        } else if (key == "shape") {
          seen = &have_shape;
          for (const uint64_t d : ParseIntegerArray("the shape" + of)) {
            entry.shape.push_back(static_cast<int64_t>(d));
          }
        } else if (key == "data_offsets") {
          seen = &have_offsets;
          SkipWhitespace();
          const size_t value_position = Position();
          const std::vector<uint64_t> offsets = ParseIntegerArray("the data_offsets" + of);
          if (offsets.size() != 2) {
            std::ostringstream s;
            s << "expected data_offsets" << of << " to be [begin, end], found " << offsets.size()
              << " numbers";
            FailAt(value_position, s.str());
          }
          entry.begin = offsets[0];
          entry.end = offsets[1];
        } else {
          FailAt(key_position, "unknown key " + Quoted(key) + of +
                                   " (expected \"dtype\", \"shape\" and \"data_offsets\")");
        }
        if (*seen) FailAt(key_position, "key " + Quoted(key) + " appears twice" + of);
        *seen = true;
        SkipWhitespace();
        if (Peek() == ',') {
          ++pos_;
          continue;
        }
        if (Peek() == '}') break;
        Fail("',' or '}' in the entry" + of);
      }
    }
    ++pos_;
    if (!have_dtype || !have_shape || !have_offsets) {
      FailAt(position, std::string("tensor ") + Quoted(entry.name) + " lacks \"" +
                           (!have_dtype ? "dtype" : !have_shape ? "shape" : "data_offsets") +
                           "\"");
    }
    return entry;
  }

  const uint8_t* const begin_;
  const uint8_t* const end_;
  const uint8_t* pos_;
  const size_t file_offset_;
  const std::string& what_;
};

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << "]";
  return s.str();
}

// The byte size of a tensor, or false when it overflows 64 bits.
bool TensorBytes(DType dtype, const std::vector<int64_t>& shape, uint64_t* bytes) {
  uint64_t total = DTypeSize(dtype);
  for (const int64_t d : shape) {
    if (MultiplyOverflows(total, static_cast<uint64_t>(d), &total)) return false;
  }
  *bytes = total;
  return true;
}

}  // namespace

// -----------------------------------------------------------------------------------------------

std::vector<uint8_t> EncodeSafetensors(const SafetensorsFile& file) {
  std::vector<TensorSource> sources;
  sources.reserve(file.tensors.size());
  for (const TensorRecord& t : file.tensors) {
    uint64_t bytes = 0;
    LOCKSTEP_REQUIRE(!TensorBytes(t.dtype, t.shape, &bytes) || bytes == t.data.size(),
                     "safetensors: tensor " << Quoted(t.name) << " (" << DTypeName(t.dtype)
                                            << ", shape " << ShapeString(t.shape) << ") needs "
                                            << bytes << " bytes of data, but holds "
                                            << t.data.size());
    sources.push_back({t.name, t.dtype, t.shape, [&t](const ByteSink& sink) { sink(t.data.data(), t.data.size()); }});
  }
  return EncodeSafetensorsToBytes(file.metadata, sources);
}

namespace {

// A file ready to be written: the 8-byte length and the JSON header, then the tensors in name
// order with their byte sizes.
struct EncodePlan {
  std::vector<uint8_t> head;
  std::vector<std::pair<const TensorSource*, uint64_t>> sorted;
  uint64_t data_bytes = 0;
};

EncodePlan PlanEncoding(const std::map<std::string, std::string>& metadata, const std::vector<TensorSource>& tensors) {
  EncodePlan plan;
  plan.sorted.reserve(tensors.size());
  for (const TensorSource& t : tensors) {
    LOCKSTEP_REQUIRE(
        t.name != "__metadata__",
        "safetensors: a tensor cannot be named \"__metadata__\" (the format reserves it)");
    LOCKSTEP_REQUIRE(IsValidUtf8(t.name),
                     "safetensors: tensor name " << Quoted(t.name) << " is not valid UTF-8");
    for (const int64_t d : t.shape) {
      LOCKSTEP_REQUIRE(d >= 0, "safetensors: tensor " << Quoted(t.name) << " has shape "
                                                      << ShapeString(t.shape)
                                                      << " with a negative dimension");
    }
    uint64_t bytes = 0;
    LOCKSTEP_REQUIRE(TensorBytes(t.dtype, t.shape, &bytes),
                     "safetensors: tensor " << Quoted(t.name) << " (" << DTypeName(t.dtype) << ", shape "
                                            << ShapeString(t.shape) << ") has more bytes than a file can hold");
    plan.sorted.emplace_back(&t, bytes);
  }
  std::sort(plan.sorted.begin(), plan.sorted.end(),
            [](const auto& a, const auto& b) { return a.first->name < b.first->name; });
  for (size_t i = 1; i < plan.sorted.size(); ++i) {
    LOCKSTEP_REQUIRE(plan.sorted[i - 1].first->name != plan.sorted[i].first->name,
                     "safetensors: two tensors are named " << Quoted(plan.sorted[i].first->name));
  }

  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [key, value] : metadata) {  // std::map: sorted by byte order
      LOCKSTEP_REQUIRE(IsValidUtf8(key) && IsValidUtf8(value),
                       "safetensors: metadata key " << Quoted(key)
                                                    << " or its value is not valid UTF-8");
      if (!first) header += ",";
      first = false;
      AppendJsonString(key, &header);
      header += ":";
      AppendJsonString(value, &header);
    }
    header += "}";
  }
  uint64_t offset = 0;
  for (size_t i = 0; i < plan.sorted.size(); ++i) {
    const TensorSource& t = *plan.sorted[i].first;
    if (i > 0 || !metadata.empty()) header += ",";
    AppendJsonString(t.name, &header);
    header += ":{\"dtype\":\"";
    header += DTypeName(t.dtype);
    header += "\",\"shape\":[";
    for (size_t k = 0; k < t.shape.size(); ++k) {
      if (k) header += ",";
      header += std::to_string(t.shape[k]);
    }
    header += "],\"data_offsets\":[";
    header += std::to_string(offset);
    header += ",";
    offset += plan.sorted[i].second;
    header += std::to_string(offset);
    header += "]}";
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  LOCKSTEP_REQUIRE(header.size() <= kMaxSafetensorsHeaderBytes,
                   "safetensors: the header would be " << header.size()
                                                       << " bytes, more than the readable limit of "
                                                       << kMaxSafetensorsHeaderBytes);
  LOCKSTEP_REQUIRE(offset <= std::numeric_limits<size_t>::max() - 8 - header.size(),
                   "safetensors: " << offset << " bytes of data do not fit in memory");
  AppendLittleEndian64(header.size(), &plan.head);
  plan.head.insert(plan.head.end(), header.begin(), header.end());
  plan.data_bytes = offset;
  return plan;
}

bool IsNan(const uint8_t* le) {
  const uint32_t bits = uint32_t{le[0]} | (uint32_t{le[1]} << 8) | (uint32_t{le[2]} << 16) | (uint32_t{le[3]} << 24);
  return (bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu) != 0;
}

// The tensors' data after the head, each checked for its size.
void WriteData(const EncodePlan& plan, const ByteSink& sink) {
  std::vector<uint8_t> piece;  // a float32 piece with its NaNs made canonical
  for (const auto& [source, expected] : plan.sorted) {
    const TensorSource& t = *source;
    const size_t element = DTypeSize(t.dtype);
    uint64_t written = 0;
    t.write([&, expected = expected](const uint8_t* data, size_t size) {
      LOCKSTEP_REQUIRE(size % element == 0 && written + size <= expected,
                       "safetensors: tensor " << Quoted(t.name) << " was given " << written + size << " bytes ("
                                              << expected << " expected, whole elements)");
      written += size;
      // Contract rule 6: every stored NaN is 0x7FC00000 (exponent all ones, fraction non-zero).
      // A piece is copied only when it holds a NaN to rewrite.
      size_t k = 0;
      if (t.dtype == DType::kFloat32) {
        while (k < size && !IsNan(data + k)) k += 4;
      } else {
        k = size;
      }
      if (k == size) return sink(data, size);
      piece.assign(data, data + size);
      for (; k < size; k += 4) {
        if (!IsNan(&piece[k])) continue;
        for (int b = 0; b < 4; ++b) piece[k + b] = static_cast<uint8_t>(kCanonicalNan >> (8 * b));
      }
      sink(piece.data(), size);
    });
    LOCKSTEP_REQUIRE(written == expected, "safetensors: tensor " << Quoted(t.name) << " (" << DTypeName(t.dtype)
                                                                 << ", shape " << ShapeString(t.shape) << ") needs "
                                                                 << expected << " bytes of data, but was given "
                                                                 << written);
  }
}

}  // namespace

std::vector<uint8_t> EncodeSafetensorsToBytes(const std::map<std::string, std::string>& metadata,
                                              const std::vector<TensorSource>& tensors) {
  const EncodePlan plan = PlanEncoding(metadata, tensors);
  std::vector<uint8_t> out;
  // Allocated once at the file's size: growing it would hold two copies of a large model for a moment.
  out.reserve(plan.head.size() + static_cast<size_t>(plan.data_bytes));
  out.insert(out.end(), plan.head.begin(), plan.head.end());
  WriteData(plan, [&](const uint8_t* data, size_t size) { out.insert(out.end(), data, data + size); });
  return out;
}

void EncodeSafetensorsTo(const std::map<std::string, std::string>& metadata, const std::vector<TensorSource>& tensors,
                         const ByteSink& sink) {
  const EncodePlan plan = PlanEncoding(metadata, tensors);
  sink(plan.head.data(), 8);  // the header's length, then the header
  sink(plan.head.data() + 8, plan.head.size() - 8);
  WriteData(plan, sink);
}

SafetensorsFile DecodeSafetensors(const uint8_t* bytes, size_t size, const std::string& what) {
  LOCKSTEP_REQUIRE_FORMAT(size >= 8, what << ": not a safetensors file: it is " << size
                                   << " bytes long, shorter than the 8-byte header length");
  const uint64_t header_size = ReadLittleEndian64(bytes);
  LOCKSTEP_REQUIRE_FORMAT(header_size <= kMaxSafetensorsHeaderBytes,
                   what << ": not a valid safetensors file: the header length field says "
                        << header_size << " bytes, more than the limit of "
                        << kMaxSafetensorsHeaderBytes);
  LOCKSTEP_REQUIRE_FORMAT(header_size <= size - 8,
                   what << ": not a valid safetensors file: the header length field says "
                        << header_size << " bytes, but only " << size - 8
                        << " bytes follow it (the file is truncated or not safetensors)");
  const size_t data_start = 8 + static_cast<size_t>(header_size);
  const uint64_t data_size = size - data_start;

  std::map<std::string, std::string> metadata;
  std::vector<HeaderEntry> entries;
  HeaderParser(bytes + 8, bytes + data_start, 8, what).Parse(&metadata, &entries);

  for (const HeaderEntry& e : entries) {
    uint64_t expected = 0;
    LOCKSTEP_REQUIRE_FORMAT(TensorBytes(e.dtype, e.shape, &expected),
                     what << ": invalid safetensors header: tensor " << Quoted(e.name)
                          << " has shape " << ShapeString(e.shape)
                          << " whose byte size overflows 64 bits");
    LOCKSTEP_REQUIRE_FORMAT(e.begin <= e.end && e.end <= data_size,
                     what << ": invalid safetensors header: tensor " << Quoted(e.name)
                          << " has data_offsets [" << e.begin << ", " << e.end
                          << "], expected 0 <= begin <= end <= " << data_size
                          << " (the size of the data section)");
    LOCKSTEP_REQUIRE_FORMAT(e.end - e.begin == expected,
                     what << ": invalid safetensors header: tensor " << Quoted(e.name) << " ("
                          << DTypeName(e.dtype) << ", shape " << ShapeString(e.shape)
                          << ") needs " << expected << " bytes, but its data_offsets ["
                          << e.begin << ", " << e.end << "] span " << e.end - e.begin);
  }

  // The tensors must tile the data section: no overlap, no gap, no uncovered bytes at the end.
  std::vector<const HeaderEntry*> by_offset;
  by_offset.reserve(entries.size());
  for (const HeaderEntry& e : entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(), [](const HeaderEntry* a, const HeaderEntry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t covered = 0;
  const HeaderEntry* previous = nullptr;
  for (const HeaderEntry* e : by_offset) {
    LOCKSTEP_REQUIRE_FORMAT(e->begin >= covered,
                     what << ": invalid safetensors header: tensor " << Quoted(e->name)
                          << " (bytes " << e->begin << ".." << e->end << ") overlaps tensor "
                          << Quoted(previous ? previous->name : "") << " (bytes "
                          << (previous ? previous->begin : 0) << ".." << covered << ")");
    LOCKSTEP_REQUIRE_FORMAT(e->begin == covered,
                     what << ": invalid safetensors header: bytes " << covered << ".." << e->begin
                          << " of the data section belong to no tensor (a gap before tensor "
                          << Quoted(e->name) << ")");
    covered = e->end;
    previous = e;
  }
  LOCKSTEP_REQUIRE_FORMAT(covered == data_size,
                   what << ": invalid safetensors file: bytes " << covered << ".." << data_size
                        << " of the data section (" << data_size - covered
                        << " trailing bytes) belong to no tensor");

  SafetensorsFile file;
  file.metadata = std::move(metadata);
  std::sort(entries.begin(), entries.end(),
            [](const HeaderEntry& a, const HeaderEntry& b) { return a.name < b.name; });
  file.tensors.reserve(entries.size());
  for (HeaderEntry& e : entries) {
    TensorRecord t;
    t.name = std::move(e.name);
    t.dtype = e.dtype;
    t.shape = std::move(e.shape);
    const uint8_t* data = bytes + data_start + static_cast<size_t>(e.begin);
    t.data.assign(data, data + static_cast<size_t>(e.end - e.begin));
    file.tensors.push_back(std::move(t));
  }
  return file;
}

}  // namespace lockstep
