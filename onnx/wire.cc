#include "onnx/wire.h"

#include <string.h>

#include "core/error.h"
#include "core/io/byte_order.h"

namespace lockstep {
namespace onnx {

namespace {

const char* WireTypeName(WireType t) {
  switch (t) {
    case WireType::kVarint: return "varint";
    case WireType::kFixed64: return "fixed64";
    case WireType::kBytes: return "length-delimited";
    case WireType::kFixed32: return "fixed32";
  }
  return "?";
}

void RequireType(const Field& f, WireType type, const std::string& where) {
  LOCKSTEP_REQUIRE_FORMAT(f.type == type, where << ": field " << f.number << " should be " << WireTypeName(type)
                                                << ", the file has " << WireTypeName(f.type));
}

// Reads a varint from [*at, end); false when truncated or longer than 10 bytes.
bool ReadVarint(const uint8_t** at, const uint8_t* end, uint64_t* value) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*at == end) return false;
    const uint8_t b = *(*at)++;
    v |= static_cast<uint64_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) {
      *value = v;
      return true;
    }
  }
  return false;
}

// The values of a packed run (or of one unpacked field) handed to `one` as raw scalars.
template <class F>
void ForEachScalar(const Field& f, WireType element, const std::string& where, F one) {
  if (f.type != WireType::kBytes) {
    RequireType(f, element, where);
    one(f.scalar);
    return;
  }
  const uint8_t* at = f.bytes.data;
  const uint8_t* end = at + f.bytes.size;
  const size_t width = element == WireType::kFixed32 ? 4 : 8;
  if (element != WireType::kVarint) {
    LOCKSTEP_REQUIRE_FORMAT(f.bytes.size % width == 0, where << ": packed field " << f.number << " holds "
                                                             << f.bytes.size << " bytes, not a multiple of " << width);
    for (; at != end; at += width) one(width == 4 ? LoadLittleEndian32(at) : LoadLittleEndian64(at));
    return;
  }
  while (at != end) {
    uint64_t v;
    LOCKSTEP_REQUIRE_FORMAT(ReadVarint(&at, end, &v), where << ": packed field " << f.number << " ends inside a varint");
    one(v);
  }
}

}  // namespace

uint64_t WireReader::Varint() {
  uint64_t v;
  LOCKSTEP_REQUIRE_FORMAT(ReadVarint(&at_, end_, &v), where_ << ": truncated or overlong varint");
  return v;
}

bool WireReader::Next(Field* field) {
  if (at_ == end_) return false;
  const uint64_t key = Varint();
  const uint64_t number = key >> 3;
  LOCKSTEP_REQUIRE_FORMAT(number >= 1 && number <= 0x1FFFFFFF, where_ << ": invalid field number " << number);
  field->number = static_cast<uint32_t>(number);
  const uint64_t type = key & 7;
  field->bytes = Bytes();
  field->scalar = 0;
  switch (type) {
    case 0:
      field->type = WireType::kVarint;
      field->scalar = Varint();
      return true;
    case 1:
      field->type = WireType::kFixed64;
      LOCKSTEP_REQUIRE_FORMAT(end_ - at_ >= 8, where_ << ": field " << number << " is truncated (fixed64)");
      field->scalar = LoadLittleEndian64(at_);
      at_ += 8;
      return true;
    case 5:
      field->type = WireType::kFixed32;
      LOCKSTEP_REQUIRE_FORMAT(end_ - at_ >= 4, where_ << ": field " << number << " is truncated (fixed32)");
      field->scalar = LoadLittleEndian32(at_);
      at_ += 4;
      return true;
    case 2: {
      field->type = WireType::kBytes;
      const uint64_t length = Varint();
      LOCKSTEP_REQUIRE_FORMAT(length <= static_cast<uint64_t>(end_ - at_),
                              where_ << ": field " << number << " declares " << length << " bytes but only "
                                     << (end_ - at_) << " remain");
      field->bytes = Bytes{at_, static_cast<size_t>(length)};
      at_ += length;
      return true;
    }
    default:
      LOCKSTEP_REQUIRE_FORMAT(false, where_ << ": field " << number << " has wire type " << type
                                            << " (groups and unknown types are not protobuf 3)");
  }
  return false;
}

int64_t AsInt64(const Field& f, const std::string& where) {
  RequireType(f, WireType::kVarint, where);
  return static_cast<int64_t>(f.scalar);
}

int32_t AsInt32(const Field& f, const std::string& where) {
  RequireType(f, WireType::kVarint, where);
  // int32 values are sign-extended to 64 bits on the wire; anything else does not fit.
  const int64_t v = static_cast<int64_t>(f.scalar);
  LOCKSTEP_REQUIRE_FORMAT(v >= INT32_MIN && v <= INT32_MAX, where << ": field " << f.number << " holds " << v
                                                                  << ", outside int32");
  return static_cast<int32_t>(v);
}

float AsFloat(const Field& f, const std::string& where) {
  RequireType(f, WireType::kFixed32, where);
  const uint32_t bits = static_cast<uint32_t>(f.scalar);
  float v;
  memcpy(&v, &bits, 4);
  return v;
}

Bytes AsBytes(const Field& f, const std::string& where) {
  RequireType(f, WireType::kBytes, where);
  return f.bytes;
}

std::string AsString(const Field& f, const std::string& where) { return AsBytes(f, where).ToString(); }

void AppendInt64s(const Field& f, const std::string& where, std::vector<int64_t>* out) {
  ForEachScalar(f, WireType::kVarint, where, [&](uint64_t v) { out->push_back(static_cast<int64_t>(v)); });
}

void AppendInt32s(const Field& f, const std::string& where, std::vector<int32_t>* out) {
  ForEachScalar(f, WireType::kVarint, where, [&](uint64_t raw) {
    const int64_t v = static_cast<int64_t>(raw);
    LOCKSTEP_REQUIRE_FORMAT(v >= INT32_MIN && v <= INT32_MAX,
                            where << ": field " << f.number << " holds " << v << ", outside int32");
    out->push_back(static_cast<int32_t>(v));
  });
}

void AppendFloats(const Field& f, const std::string& where, std::vector<float>* out) {
  ForEachScalar(f, WireType::kFixed32, where, [&](uint64_t raw) {
    const uint32_t bits = static_cast<uint32_t>(raw);
    float v;
    memcpy(&v, &bits, 4);
    out->push_back(v);
  });
}

void AppendDoubles(const Field& f, const std::string& where, std::vector<double>* out) {
  ForEachScalar(f, WireType::kFixed64, where, [&](uint64_t bits) {
    double v;
    memcpy(&v, &bits, 8);
    out->push_back(v);
  });
}

void AppendUint64s(const Field& f, const std::string& where, std::vector<uint64_t>* out) {
  ForEachScalar(f, WireType::kVarint, where, [&](uint64_t v) { out->push_back(v); });
}

}  // namespace onnx
}  // namespace lockstep
