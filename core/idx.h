// IDX files (the MNIST format): a 4-byte magic {0, 0, type code, number of dimensions}, each
// dimension as a big-endian 32-bit size, then the elements in row-major order, big-endian.
// lockstep reads every IDX element type into float32 and writes them for tests and data
// preparation (tools/prepare-mnist.mjs writes the same layout).
#ifndef LOCKSTEP_CORE_IDX_H_
#define LOCKSTEP_CORE_IDX_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

namespace lockstep {

// IDX element types (the magic's third byte).
constexpr uint8_t kIdxUint8 = 0x08;
constexpr uint8_t kIdxInt8 = 0x09;
constexpr uint8_t kIdxInt16 = 0x0B;
constexpr uint8_t kIdxInt32 = 0x0C;
constexpr uint8_t kIdxFloat32 = 0x0D;
constexpr uint8_t kIdxFloat64 = 0x0E;

// The largest IDX file ReadIdxFile reads (Fashion-MNIST's largest file is 47 MB).
constexpr size_t kMaxIdxFileBytes = size_t{1} << 30;

struct IdxArray {
  uint8_t type_code = kIdxFloat32;  // the type stored in the file
  std::vector<int64_t> dims;        // outermost first
  // Every element as float32: integers converted exactly (int32 beyond 2^24 rounds to nearest
  // even), float32 bits kept, float64 rounded to nearest even; every NaN becomes 0x7FC00000.
  std::vector<float> values;
};

// An IDX header: enough to know the shape and where the elements are, before reading them.
struct IdxHeader {
  uint8_t type_code = kIdxFloat32;
  std::vector<int64_t> dims;  // outermost first
  size_t data_offset = 0;     // bytes before the first element
  uint64_t count = 0;         // elements
  size_t element_size = 0;    // bytes per element
};

// Parses the header at the start of `bytes` (at least the first min(file_size, 1024) bytes of the
// file) and checks it against the file's total size: the data must be exactly count *
// element_size bytes. Throws lockstep::Error (kind kFormat) as DecodeIdx does, before any data is
// read: a file of absurd declared size is refused by its header.
IdxHeader DecodeIdxHeader(const uint8_t* bytes, size_t available, uint64_t file_size, const std::string& what);

// Converts elements [first, first + n) of an IDX data region (`data` points at element 0, in the
// file's big-endian layout) to float32 as IdxArray::values describes.
void IdxElementsToFloat(const IdxHeader& header, const uint8_t* data, uint64_t first, size_t n, float* out);

// Parses and validates a whole IDX file held in memory; `what` names the source in errors.
// Throws lockstep::Error for a wrong magic, an unsupported type, no dimensions, data shorter or
// longer than the dimensions say, or sizes that overflow. A gzip-compressed file is recognised
// and refused with a hint to decompress it.
IdxArray DecodeIdx(const uint8_t* bytes, size_t size, const std::string& what);

// Reads and decodes a file (at most kMaxIdxFileBytes; the header is checked before the data is
// read).
IdxArray ReadIdxFile(const std::string& path);

// The IDX bytes of `values` (row-major, dims outermost first) as type_code. Throws
// lockstep::Error when the type is unknown, a dimension is negative or beyond 2^32-1, there are
// more than 255 dimensions or none, the value count differs from the dimensions' product, or a
// value cannot be stored exactly in an integer type (a fraction, NaN, or out of range).
std::vector<uint8_t> EncodeIdx(uint8_t type_code, const std::vector<int64_t>& dims,
                               const std::vector<float>& values);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_IDX_H_
