// IDX (the MNIST format): exact bytes, round trips for every element type, and every malformed
// case refused with a clear lockstep::Error.
#include <doctest/doctest.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "core/io/files.h"
#include "core/error.h"
#include "core/idx.h"
#include "core/safetensors.h"

namespace lockstep {
namespace {

uint32_t Bits(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}

float FromBits(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}

std::string DecodeError(const std::vector<uint8_t>& bytes) {
  try {
    DecodeIdx(bytes.data(), bytes.size(), "test.idx");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string EncodeError(uint8_t type, const std::vector<int64_t>& dims,
                        const std::vector<float>& values) {
  try {
    EncodeIdx(type, dims, values);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("IDX bytes: magic, big-endian dimensions, row-major big-endian data") {
  CHECK(EncodeIdx(kIdxUint8, {2, 3}, {0, 1, 2, 3, 4, 255}) ==
        std::vector<uint8_t>{0, 0, 0x08, 2, 0, 0, 0, 2, 0, 0, 0, 3, 0, 1, 2, 3, 4, 255});
  CHECK(EncodeIdx(kIdxFloat32, {2}, {1.0f, -2.5f}) ==
        std::vector<uint8_t>{0, 0, 0x0D, 1, 0, 0, 0, 2, 0x3F, 0x80, 0, 0, 0xC0, 0x20, 0, 0});
  CHECK(EncodeIdx(kIdxInt32, {1}, {-2.0f}) ==
        std::vector<uint8_t>{0, 0, 0x0C, 1, 0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFE});
  CHECK(EncodeIdx(kIdxInt16, {1}, {258.0f}) ==
        std::vector<uint8_t>{0, 0, 0x0B, 1, 0, 0, 0, 1, 0x01, 0x02});
  // MNIST's own label file header: 60000 labels.
  const IdxArray labels = DecodeIdx(
      std::vector<uint8_t>{0, 0, 8, 1, 0, 0, 0, 3, 5, 0, 4}.data(), 11, "labels");
  CHECK(labels.type_code == kIdxUint8);
  CHECK(labels.dims == std::vector<int64_t>{3});
  CHECK(labels.values == std::vector<float>{5, 0, 4});
}

TEST_CASE("IDX round trip for every element type") {
  struct Case {
    uint8_t type;
    std::vector<float> values;
  };
  const Case cases[] = {
      {kIdxUint8, {0, 1, 128, 255, 7, 9}},
      {kIdxInt8, {-128, -1, 0, 1, 127, 5}},
      {kIdxInt16, {-32768, -300, 0, 300, 32767, 1}},
      {kIdxInt32, {-2147483648.0f, -16777217.0f, 0, 16777216.0f, 2147483520.0f, 3}},
      {kIdxFloat32, {0.0f, -0.0f, 1e-45f, 3.4028235e38f, -1.5f, 0.1f}},
      {kIdxFloat64, {0.0f, -0.0f, 1e-45f, 3.4028235e38f, -1.5f, 0.1f}},
  };
  for (const Case& c : cases) {
    CAPTURE(int(c.type));
    const std::vector<uint8_t> bytes = EncodeIdx(c.type, {3, 1, 2}, c.values);
    const IdxArray back = DecodeIdx(bytes.data(), bytes.size(), "memory");
    CHECK(back.type_code == c.type);
    CHECK(back.dims == std::vector<int64_t>{3, 1, 2});
    REQUIRE(back.values.size() == c.values.size());
    for (size_t i = 0; i < c.values.size(); ++i) CHECK(Bits(back.values[i]) == Bits(c.values[i]));
    // Encoding what was decoded gives the same bytes.
    CHECK(EncodeIdx(back.type_code, back.dims, back.values) == bytes);
  }
  // Empty arrays are valid.
  const std::vector<uint8_t> empty = EncodeIdx(kIdxFloat32, {0, 28, 28}, {});
  CHECK(DecodeIdx(empty.data(), empty.size(), "empty").values.empty());
}

TEST_CASE("IDX conversions to float32 round to nearest even; NaNs become 0x7FC00000") {
  // int32 16777217 = 2^24 + 1 is halfway between two floats: rounds to the even 2^24.
  std::vector<uint8_t> i32 = {0, 0, 0x0C, 1, 0, 0, 0, 1, 0x01, 0x00, 0x00, 0x01};
  CHECK(DecodeIdx(i32.data(), i32.size(), "i32").values[0] == 16777216.0f);
  // float64 0.1 rounds to the float32 nearest 0.1.
  std::vector<uint8_t> f64 = {0,    0,    0x0E, 1,    0,    0,    0,    1,
                              0x3F, 0xB9, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9A};
  CHECK(Bits(DecodeIdx(f64.data(), f64.size(), "f64").values[0]) == Bits(0.1f));
  std::vector<uint8_t> nan32 = {0, 0, 0x0D, 1, 0, 0, 0, 2, 0xFF, 0xC0, 0, 1, 0x7F, 0x80, 0, 0};
  const IdxArray a = DecodeIdx(nan32.data(), nan32.size(), "nan");
  CHECK(Bits(a.values[0]) == 0x7FC00000u);
  CHECK(Bits(a.values[1]) == 0x7F800000u);  // infinity is kept
  std::vector<uint8_t> nan64 = {0, 0, 0x0E, 1, 0, 0, 0, 1, 0xFF, 0xF0, 0, 0, 0, 0, 0, 1};
  CHECK(Bits(DecodeIdx(nan64.data(), nan64.size(), "nan64").values[0]) == 0x7FC00000u);
  // Writing canonicalises NaNs too.
  const std::vector<uint8_t> written = EncodeIdx(kIdxFloat32, {1}, {FromBits(0xFFC00001u)});
  CHECK(std::vector<uint8_t>(written.begin() + 8, written.end()) ==
        std::vector<uint8_t>{0x7F, 0xC0, 0, 0});
}

TEST_CASE("malformed IDX files are refused with a clear lockstep::Error") {
  struct Case {
    const char* title;
    std::vector<uint8_t> bytes;
    const char* expected;
  };
  const Case cases[] = {
      {"empty", {}, "shorter than the 4-byte magic"},
      {"3 bytes", {0, 0, 8}, "3 bytes long"},
      {"gzip", {0x1F, 0x8B, 8, 0, 0, 0}, "gzip-compressed"},
      {"wrong magic", {0, 1, 8, 1, 0, 0, 0, 0}, "wrong magic number"},
      {"unsupported type", {0, 0, 0x0A, 1, 0, 0, 0, 0}, "unsupported IDX element type 0x0a"},
      {"no dimensions", {0, 0, 8, 0}, "declares 0 dimensions"},
      {"truncated dimensions", {0, 0, 8, 3, 0, 0, 0, 1, 0, 0}, "3 dimensions need 16 header bytes"},
      {"truncated data", {0, 0, 0x0D, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0},
       "need 8 bytes of data, but only 6"},
      {"trailing bytes", {0, 0, 8, 1, 0, 0, 0, 2, 1, 2, 3}, "1 trailing bytes"},
      {"huge dimensions", {0, 0, 8, 2, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1},
       "need 18446744065119617025 bytes of data, but only 1"},
      {"dimensions overflow 64 bits",
       {0, 0, 0x0E, 3, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF},
       "more elements than 64 bits can count"},
      {"element bytes overflow 64 bits",
       {0, 0, 0x0E, 2, 0xFF, 0xFF, 0xFF, 0xFF, 0x40, 0, 0, 0}, "more elements than 64 bits"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.title);
    const std::string message = DecodeError(c.bytes);
    CHECK_MESSAGE(Contains(message, c.expected), message);
    CHECK_MESSAGE(Contains(message, "test.idx"), message);
  }
}

TEST_CASE("EncodeIdx refuses what the type cannot hold exactly") {
  CHECK(Contains(EncodeError(kIdxUint8, {1}, {0.5f}), "cannot hold exactly"));
  CHECK(Contains(EncodeError(kIdxUint8, {1}, {256.0f}), "cannot hold exactly"));
  CHECK(Contains(EncodeError(kIdxUint8, {1}, {-1.0f}), "cannot hold exactly"));
  CHECK(Contains(EncodeError(kIdxInt32, {1}, {2147483648.0f}), "cannot hold exactly"));
  CHECK(Contains(EncodeError(kIdxInt16, {1}, {FromBits(0x7FC00000u)}), "cannot hold exactly"));
  CHECK(Contains(EncodeError(kIdxUint8, {2}, {1.0f}), "hold 2 values, given 1"));
  CHECK(Contains(EncodeError(kIdxUint8, {}, {}), "expected 1 to 255 dimensions"));
  CHECK(Contains(EncodeError(kIdxUint8, {-1}, {}), "each must be 0 to 2^32-1"));
  CHECK(Contains(EncodeError(kIdxUint8, {int64_t{1} << 32}, {}), "each must be 0 to 2^32-1"));
  CHECK(Contains(EncodeError(0x0A, {1}, {1.0f}), "unsupported element type 0x0a"));
}

TEST_CASE("every truncation and bit flip of a valid IDX file decodes or throws lockstep::Error") {
  const std::vector<uint8_t> valid = EncodeIdx(kIdxInt16, {2, 3}, {1, 2, 3, 4, 5, 6});
  for (size_t size = 0; size < valid.size(); ++size) {
    CHECK_FALSE(DecodeError(std::vector<uint8_t>(valid.begin(), valid.begin() + size)).empty());
  }
  for (size_t i = 0; i < valid.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> flipped = valid;
      flipped[i] ^= static_cast<uint8_t>(1 << bit);
      DecodeError(flipped);
    }
  }
}

TEST_CASE("ReadIdxFile reads what WriteFileAtomic wrote, and names a missing file") {
  const char* base = getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/lockstep_idx_XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  REQUIRE(mkdtemp(buffer.data()) != nullptr);
  const std::string folder = buffer.data();
  const std::string path = folder + "/images.idx";
  WriteFileAtomic(path, EncodeIdx(kIdxFloat32, {2, 2}, {0.25f, 0.5f, 0.75f, 1.0f}));
  const IdxArray a = ReadIdxFile(path);
  CHECK(a.dims == std::vector<int64_t>{2, 2});
  CHECK(a.values == std::vector<float>{0.25f, 0.5f, 0.75f, 1.0f});
  unlink(path.c_str());
  std::string message;
  try {
    ReadIdxFile(path);
  } catch (const Error& e) {
    message = e.what();
  }
  CHECK_MESSAGE(Contains(message, path), message);
  CHECK_MESSAGE(Contains(message, "No such file or directory"), message);
  rmdir(folder.c_str());
}

}  // namespace
}  // namespace lockstep
