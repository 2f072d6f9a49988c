// A reader for protobuf's wire format: just what ONNX's messages need (varints, fixed 32/64-bit
// values, length-delimited fields and packed repeated scalars). Every read is bounds-checked and
// every malformed byte sequence throws lockstep::Error (kind kFormat) naming where it was, so a
// hostile file can never read past its buffer (docs/onnx.md says why not libprotobuf).
#ifndef LOCKSTEP_ONNX_WIRE_H_
#define LOCKSTEP_ONNX_WIRE_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

namespace lockstep {
namespace onnx {

enum class WireType : uint8_t { kVarint = 0, kFixed64 = 1, kBytes = 2, kFixed32 = 5 };

// A span of the input buffer (not owned).
struct Bytes {
  const uint8_t* data = nullptr;
  size_t size = 0;
  std::string ToString() const { return std::string(reinterpret_cast<const char*>(data), size); }
};

// One field of a message: its number, wire type and value (varint, fixed or bytes).
struct Field {
  uint32_t number = 0;
  WireType type = WireType::kVarint;
  uint64_t scalar = 0;  // varint, fixed32 or fixed64 bits
  Bytes bytes;          // kBytes
};

// Reads the fields of one message in order. `where` names the message in errors
// ("model.graph.node[3]").
class WireReader {
 public:
  WireReader(Bytes message, std::string where) : at_(message.data), end_(message.data + message.size), where_(std::move(where)) {}
  // The next field, or false at the end of the message.
  bool Next(Field* field);
  const std::string& where() const { return where_; }

 private:
  uint64_t Varint();
  const uint8_t* at_;
  const uint8_t* end_;
  std::string where_;
};

// Field values with their declared types checked (a float field sent as a varint is an error).
int64_t AsInt64(const Field& f, const std::string& where);
int32_t AsInt32(const Field& f, const std::string& where);
float AsFloat(const Field& f, const std::string& where);
Bytes AsBytes(const Field& f, const std::string& where);
std::string AsString(const Field& f, const std::string& where);

// Repeated scalars, packed (one kBytes field) or not (one field per value): appended to out.
void AppendInt64s(const Field& f, const std::string& where, std::vector<int64_t>* out);
void AppendInt32s(const Field& f, const std::string& where, std::vector<int32_t>* out);
void AppendFloats(const Field& f, const std::string& where, std::vector<float>* out);
void AppendDoubles(const Field& f, const std::string& where, std::vector<double>* out);
void AppendUint64s(const Field& f, const std::string& where, std::vector<uint64_t>* out);

}  // namespace onnx
}  // namespace lockstep

#endif  // LOCKSTEP_ONNX_WIRE_H_
