#include "core/idx.h"

#include <string.h>

#include <limits>
#include <sstream>

#include "core/error.h"
#include "core/io/files.h"

namespace lockstep {

namespace {

constexpr uint32_t kCanonicalNan32 = 0x7FC00000u;
constexpr uint64_t kCanonicalNan64 = 0x7FF8000000000000u;

// Bytes per element, or 0 for an unknown type code.
size_t IdxElementSize(uint8_t type_code) {
  switch (type_code) {
    case kIdxUint8:
    case kIdxInt8: return 1;
    case kIdxInt16: return 2;
    case kIdxInt32:
    case kIdxFloat32: return 4;
    case kIdxFloat64: return 8;
  }
  return 0;
}

const char* IdxTypeName(uint8_t type_code) {
  switch (type_code) {
    case kIdxUint8: return "ubyte";
    case kIdxInt8: return "byte";
    case kIdxInt16: return "int16";
    case kIdxInt32: return "int32";
    case kIdxFloat32: return "float32";
    case kIdxFloat64: return "float64";
  }
  return "unknown";
}

std::string Hex(unsigned value) {
  std::ostringstream s;
  s << "0x" << std::hex << (value < 16 ? "0" : "") << value;
  return s.str();
}

std::string DimsString(const std::vector<int64_t>& dims) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < dims.size(); ++i) s << (i ? ", " : "") << dims[i];
  s << "]";
  return s.str();
}

uint64_t ReadBigEndian(const uint8_t* p, size_t bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; ++i) value = (value << 8) | p[i];
  return value;
}

void AppendBigEndian(uint64_t value, size_t bytes, std::vector<uint8_t>* out) {
  for (size_t i = bytes; i-- > 0;) out->push_back(static_cast<uint8_t>(value >> (8 * i)));
}

float FloatFromBits(uint32_t bits) {
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint32_t BitsOfFloat(float f) {
  uint32_t bits;
  memcpy(&bits, &f, 4);
  return bits;
}

// Contract rule 6: every NaN stored in a tensor is 0x7FC00000.
float CanonicalNan(float f) { return f != f ? FloatFromBits(kCanonicalNan32) : f; }

}  // namespace

IdxHeader DecodeIdxHeader(const uint8_t* bytes, size_t available, uint64_t file_size, const std::string& what) {
  LOCKSTEP_REQUIRE_FORMAT(file_size >= 4 && available >= 4,
                          what << ": not an IDX file: it is " << file_size
                               << " bytes long, shorter than the 4-byte magic number");
  LOCKSTEP_REQUIRE_FORMAT(!(bytes[0] == 0x1F && bytes[1] == 0x8B),
                          what << ": the file is gzip-compressed; decompress it first (gunzip -k)");
  LOCKSTEP_REQUIRE_FORMAT(bytes[0] == 0 && bytes[1] == 0,
                          what << ": not an IDX file: wrong magic number: expected the first two bytes "
                                  "to be 0x00 0x00, found "
                               << Hex(bytes[0]) << " " << Hex(bytes[1]));
  IdxHeader header;
  header.type_code = bytes[2];
  header.element_size = IdxElementSize(header.type_code);
  LOCKSTEP_REQUIRE_FORMAT(header.element_size != 0,
                          what << ": unsupported IDX element type " << Hex(header.type_code)
                               << " (byte 2 of the magic number); expected 0x08 ubyte, 0x09 byte, "
                                  "0x0B int16, 0x0C int32, 0x0D float32 or 0x0E float64");
  const size_t rank = bytes[3];
  LOCKSTEP_REQUIRE_FORMAT(rank >= 1, what << ": invalid IDX file: the magic number declares 0 "
                                             "dimensions (byte 3); expected at least 1");
  LOCKSTEP_REQUIRE_FORMAT(file_size - 4 >= 4 * rank && available - 4 >= 4 * rank,
                          what << ": truncated IDX file: " << rank << " dimensions need " << 4 + 4 * rank
                               << " header bytes, but the file is " << file_size << " bytes long");
  uint64_t count = 1;
  bool overflow = false;
  header.dims.reserve(rank);
  for (size_t i = 0; i < rank; ++i) {
    const uint64_t d = ReadBigEndian(bytes + 4 + 4 * i, 4);
    header.dims.push_back(static_cast<int64_t>(d));
    if (d != 0 && count > std::numeric_limits<uint64_t>::max() / d) overflow = true;
    if (!overflow) count *= d;
  }
  header.data_offset = 4 + 4 * rank;
  const uint64_t data_bytes = file_size - header.data_offset;
  LOCKSTEP_REQUIRE_FORMAT(!overflow && count <= std::numeric_limits<uint64_t>::max() / header.element_size,
                          what << ": invalid IDX file: dimensions " << DimsString(header.dims)
                               << " declare more elements than 64 bits can count");
  const uint64_t needed = count * header.element_size;
  LOCKSTEP_REQUIRE_FORMAT(needed <= data_bytes,
                          what << ": truncated IDX file: dimensions " << DimsString(header.dims) << " of "
                               << IdxTypeName(header.type_code) << " need " << needed
                               << " bytes of data, but only " << data_bytes << " follow the header");
  LOCKSTEP_REQUIRE_FORMAT(needed == data_bytes,
                          what << ": invalid IDX file: " << data_bytes - needed
                               << " trailing bytes after the " << needed << " bytes of data that "
                               << "dimensions " << DimsString(header.dims) << " of "
                               << IdxTypeName(header.type_code) << " declare");
  header.count = count;
  return header;
}

void IdxElementsToFloat(const IdxHeader& header, const uint8_t* data, uint64_t first, size_t n, float* out) {
  const size_t element_size = header.element_size;
  const uint8_t* p = data + first * element_size;
  for (size_t i = 0; i < n; ++i, p += element_size) {
    const uint64_t raw = ReadBigEndian(p, element_size);
    float v;
    switch (header.type_code) {
      case kIdxUint8: v = static_cast<float>(raw); break;
      case kIdxInt8: v = static_cast<float>(static_cast<int8_t>(raw)); break;
      case kIdxInt16: v = static_cast<float>(static_cast<int16_t>(raw)); break;
      case kIdxInt32:
        v = static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(raw)));
        break;
      case kIdxFloat32: v = CanonicalNan(FloatFromBits(static_cast<uint32_t>(raw))); break;
      default: {
        double d;
        memcpy(&d, &raw, 8);
        v = CanonicalNan(static_cast<float>(d));
      }
    }
    out[i] = v;
  }
}

IdxArray DecodeIdx(const uint8_t* bytes, size_t size, const std::string& what) {
  const IdxHeader header = DecodeIdxHeader(bytes, size, size, what);
  IdxArray array;
  array.type_code = header.type_code;
  array.dims = header.dims;
  // count * element_size == size - data_offset: the allocation is bounded by the input's size.
  array.values.resize(static_cast<size_t>(header.count));
  IdxElementsToFloat(header, bytes + header.data_offset, 0, array.values.size(), array.values.data());
  return array;
}

IdxArray ReadIdxFile(const std::string& path) {
  const InputFile file(path);
  uint8_t head[1024];
  const size_t head_size = file.size() < sizeof(head) ? static_cast<size_t>(file.size()) : sizeof(head);
  file.ReadAt(0, head, head_size);
  DecodeIdxHeader(head, head_size, file.size(), path);  // refuses a bad header before reading more
  const std::vector<uint8_t> bytes = ReadWholeFile(path, kMaxIdxFileBytes);
  return DecodeIdx(bytes.data(), bytes.size(), path);
}

std::vector<uint8_t> EncodeIdx(uint8_t type_code, const std::vector<int64_t>& dims,
                               const std::vector<float>& values) {
  const size_t element_size = IdxElementSize(type_code);
  LOCKSTEP_REQUIRE(element_size != 0, "IDX: unsupported element type " << Hex(type_code));
  LOCKSTEP_REQUIRE(!dims.empty() && dims.size() <= 255,
                   "IDX: expected 1 to 255 dimensions, given " << dims.size());
  uint64_t count = 1;
  for (const int64_t d : dims) {
    LOCKSTEP_REQUIRE(d >= 0 && d <= 0xFFFFFFFF,
                     "IDX: dimensions " << DimsString(dims) << ": each must be 0 to 2^32-1");
    LOCKSTEP_REQUIRE(d == 0 || count <= std::numeric_limits<uint64_t>::max() / uint64_t(d),
                     "IDX: dimensions " << DimsString(dims) << " overflow 64 bits");
    count *= static_cast<uint64_t>(d);
  }
  LOCKSTEP_REQUIRE(count == values.size(), "IDX: dimensions " << DimsString(dims) << " hold "
                                                              << count << " values, given "
                                                              << values.size());
  std::vector<uint8_t> out;
  out.reserve(4 + 4 * dims.size() + values.size() * element_size);
  out.push_back(0);
  out.push_back(0);
  out.push_back(type_code);
  out.push_back(static_cast<uint8_t>(dims.size()));
  for (const int64_t d : dims) AppendBigEndian(static_cast<uint64_t>(d), 4, &out);

  // Integer types: the value range of each, as floats (all exactly representable).
  float low = 0, high = 0;
  switch (type_code) {
    case kIdxUint8: low = 0.0f, high = 255.0f; break;
    case kIdxInt8: low = -128.0f, high = 127.0f; break;
    case kIdxInt16: low = -32768.0f, high = 32767.0f; break;
    case kIdxInt32: low = -2147483648.0f, high = 2147483520.0f; break;  // largest float < 2^31
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const float v = values[i];
    if (type_code == kIdxFloat32) {
      AppendBigEndian(v != v ? kCanonicalNan32 : BitsOfFloat(v), 4, &out);
    } else if (type_code == kIdxFloat64) {
      const double d = v;
      uint64_t bits;
      memcpy(&bits, &d, 8);
      AppendBigEndian(v != v ? kCanonicalNan64 : bits, 8, &out);
    } else {
      LOCKSTEP_REQUIRE(v >= low && v <= high &&
                           static_cast<float>(static_cast<int64_t>(v)) == v,
                       "IDX: value " << i << " is " << v << ", which " << IdxTypeName(type_code)
                                     << " cannot hold exactly (integers " << low << " to " << high
                                     << ")");
      AppendBigEndian(static_cast<uint64_t>(static_cast<int64_t>(v)), element_size, &out);
    }
  }
  return out;
}

}  // namespace lockstep
