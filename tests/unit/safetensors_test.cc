// Safetensors: the canonical encoding byte for byte (contract rule 8: the model hash is the file
// hash), round trips, files as the Python ecosystem writes them, every malformed case refused
// with a clear lockstep::Error (file I/O: files_test.cc).
#include <doctest/doctest.h>
#include <string.h>

#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/safetensors.h"
#include "core/sha256.h"

namespace lockstep {
namespace {

std::vector<uint8_t> LittleEndian(uint64_t value, int bytes) {
  std::vector<uint8_t> out;
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(value >> (8 * i)));
  return out;
}

std::vector<uint8_t> Floats(std::initializer_list<uint32_t> bits) {
  std::vector<uint8_t> out;
  for (const uint32_t b : bits) {
    const std::vector<uint8_t> le = LittleEndian(b, 4);
    out.insert(out.end(), le.begin(), le.end());
  }
  return out;
}

TensorRecord Record(const std::string& name, DType dtype, std::vector<int64_t> shape,
                    std::vector<uint8_t> data) {
  TensorRecord t;
  t.name = name;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data = std::move(data);
  return t;
}

// A file from a header string (padded with spaces to a multiple of 8, as writers do) and data.
std::vector<uint8_t> RawFile(const std::string& header_json, const std::vector<uint8_t>& data,
                             bool pad = true) {
  std::string header = header_json;
  if (pad) header.append((8 - header.size() % 8) % 8, ' ');
  std::vector<uint8_t> file = LittleEndian(header.size(), 8);
  file.insert(file.end(), header.begin(), header.end());
  file.insert(file.end(), data.begin(), data.end());
  return file;
}

// The message of the lockstep::Error that decoding throws ("" when it succeeds). Any other
// exception escapes and fails the test.
std::string DecodeError(const std::vector<uint8_t>& file) {
  try {
    DecodeSafetensors(file.data(), file.size(), "test.safetensors");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string EncodeError(const SafetensorsFile& file) {
  try {
    EncodeSafetensors(file);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

SafetensorsFile SmallFile() {
  SafetensorsFile file;
  file.metadata = {{"format", "lockstep"}, {"contract", "1"}};
  // Given out of order; 0xFFC00001 is a NaN that must be written as 0x7FC00000.
  file.tensors.push_back(Record("w", DType::kFloat32, {2, 1}, Floats({0x3F800000, 0xFFC00001})));
  file.tensors.push_back(Record("b", DType::kInt64, {1}, LittleEndian(7, 8)));
  file.tensors.push_back(Record("idx", DType::kInt32, {0}, {}));
  return file;
}

TEST_CASE("the canonical encoding, byte for byte") {
  const std::vector<uint8_t> bytes = EncodeSafetensors(SmallFile());
  // 217 bytes of JSON, padded with 7 spaces to 224 = 28 * 8.
  const std::string expected_header =
      "{\"__metadata__\":{\"contract\":\"1\",\"format\":\"lockstep\"},"
      "\"b\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]},"
      "\"idx\":{\"dtype\":\"I32\",\"shape\":[0],\"data_offsets\":[8,8]},"
      "\"w\":{\"dtype\":\"F32\",\"shape\":[2,1],\"data_offsets\":[8,16]}}       ";
  REQUIRE(expected_header.size() == 224);
  std::vector<uint8_t> expected = LittleEndian(224, 8);
  expected.insert(expected.end(), expected_header.begin(), expected_header.end());
  for (const auto& part : {LittleEndian(7, 8), Floats({0x3F800000, 0x7FC00000})}) {
    expected.insert(expected.end(), part.begin(), part.end());
  }
  CHECK(std::string(bytes.begin() + 8, bytes.begin() + 8 + 224) == expected_header);
  CHECK(bytes == expected);
  // The model hash is the file hash: what `sha256sum` prints for these 248 bytes (computed
  // independently with Python's hashlib from the bytes above).
  CHECK(Sha256Hex(bytes.data(), bytes.size()) ==
        "172bbc2a5f8eb799708c33c39b3460283f619550200bc38b43551572642d3128");
  Sha256 streamed;
  streamed.Update(bytes.data(), 100);
  streamed.Update(bytes.data() + 100, bytes.size() - 100);
  CHECK(streamed.HexDigest() == Sha256Hex(bytes.data(), bytes.size()));
}

TEST_CASE("streamed from sources in pieces: the same bytes; a source that writes too little or too much is refused") {
  const SafetensorsFile file = SmallFile();
  std::vector<TensorSource> sources;
  for (const TensorRecord& r : file.tensors) {
    // One element per piece: NaNs are made canonical piece by piece.
    const size_t element = DTypeSize(r.dtype);
    sources.push_back({r.name, r.dtype, r.shape, [&r, element](const ByteSink& sink) {
                         for (size_t i = 0; i < r.data.size(); i += element) sink(r.data.data() + i, element);
                       }});
  }
  std::vector<uint8_t> streamed;
  size_t pieces = 0;
  EncodeSafetensorsTo(file.metadata, sources, [&](const uint8_t* data, size_t size) {
    streamed.insert(streamed.end(), data, data + size);
    ++pieces;
  });
  CHECK(streamed == EncodeSafetensors(file));
  CHECK(pieces == 2 + 1 + 2);  // length, header, then b's one piece and w's two
  const std::vector<uint8_t> bytes = EncodeSafetensorsToBytes(file.metadata, sources);
  CHECK(bytes == streamed);
  CHECK(bytes.capacity() == bytes.size());  // allocated once, at the file's size

  auto error_of = [&](std::function<void(const ByteSink&)> write) {
    std::vector<TensorSource> one = {{"w", DType::kFloat32, {2}, std::move(write)}};
    try {
      EncodeSafetensorsTo({}, one, [](const uint8_t*, size_t) {});
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::vector<uint8_t> twelve(12, 0);
  CHECK(Contains(error_of([&](const ByteSink& sink) { sink(twelve.data(), 4); }), "needs 8 bytes of data, but was given 4"));
  CHECK(Contains(error_of([&](const ByteSink& sink) { sink(twelve.data(), 12); }), "was given 12 bytes (8 expected"));
  CHECK(Contains(error_of([&](const ByteSink& sink) { sink(twelve.data(), 6); }), "whole elements"));
  CHECK(error_of([&](const ByteSink& sink) { sink(twelve.data(), 8); }).empty());
}

TEST_CASE("the encoding does not depend on the order of the records") {
  SafetensorsFile a = SmallFile();
  SafetensorsFile b = SmallFile();
  std::swap(b.tensors[0], b.tensors[2]);
  CHECK(EncodeSafetensors(a) == EncodeSafetensors(b));
}

TEST_CASE("an empty file, and no metadata, are encoded without a __metadata__ key") {
  const std::vector<uint8_t> empty = EncodeSafetensors(SafetensorsFile{});
  CHECK(empty == RawFile("{}", {}));
  CHECK(empty.size() == 16);
  SafetensorsFile one;
  one.tensors.push_back(Record("x", DType::kInt32, {}, LittleEndian(5, 4)));
  CHECK(EncodeSafetensors(one) ==
        RawFile("{\"x\":{\"dtype\":\"I32\",\"shape\":[],\"data_offsets\":[0,4]}}",
                LittleEndian(5, 4)));
}

TEST_CASE("round trip: decode(encode(file)) gives the same file, sorted by name") {
  SafetensorsFile file;
  file.metadata = {{"step", "1200"}, {"contract", "1"}, {"", "empty key"}};
  std::vector<uint8_t> big;
  for (uint32_t i = 0; i < 3 * 5 * 7; ++i) {
    const std::vector<uint8_t> le = LittleEndian(0x3F000000u + i * 0x1234u, 4);
    big.insert(big.end(), le.begin(), le.end());
  }
  file.tensors.push_back(Record("layer2.weight", DType::kFloat32, {3, 5, 7}, big));
  file.tensors.push_back(Record("layer1.bias", DType::kFloat32, {3}, Floats({0, 0x80000000, 1})));
  file.tensors.push_back(Record("counts", DType::kInt64, {2}, Floats({1, 2, 3, 4})));
  file.tensors.push_back(Record("empty", DType::kFloat32, {4, 0, 2}, {}));
  file.tensors.push_back(Record("scalar", DType::kInt32, {}, LittleEndian(0xFFFFFFFF, 4)));
  const std::vector<uint8_t> bytes = EncodeSafetensors(file);
  const SafetensorsFile back = DecodeSafetensors(bytes.data(), bytes.size(), "memory");
  CHECK(back.metadata == file.metadata);
  REQUIRE(back.tensors.size() == 5);
  const char* sorted[] = {"counts", "empty", "layer1.bias", "layer2.weight", "scalar"};
  for (size_t i = 0; i < 5; ++i) {
    const TensorRecord& got = back.tensors[i];
    CHECK(got.name == sorted[i]);
    bool found = false;
    for (const TensorRecord& want : file.tensors) {
      if (want.name != got.name) continue;
      found = true;
      CHECK(got.dtype == want.dtype);
      CHECK(got.shape == want.shape);
      CHECK(got.data == want.data);
    }
    CHECK(found);
  }
  // Encoding what was decoded gives the same bytes: the canonical form is a fixed point.
  CHECK(EncodeSafetensors(back) == bytes);
  // The header length is a multiple of 8, so the data is 8-aligned in the file.
  CHECK((bytes[0] | (bytes[1] << 8)) % 8 == 0);
}

TEST_CASE("float32 NaNs are canonicalised on write; other bits and other dtypes are kept") {
  SafetensorsFile file;
  file.tensors.push_back(Record(
      "f", DType::kFloat32, {6},
      Floats({0xFFC00000, 0x7F800001, 0xFFFFFFFF, 0x7F800000, 0xFF800000, 0x00000001})));
  file.tensors.push_back(Record("i", DType::kInt32, {1}, Floats({0xFFC00000})));
  const std::vector<uint8_t> bytes = EncodeSafetensors(file);
  const SafetensorsFile back = DecodeSafetensors(bytes.data(), bytes.size(), "memory");
  CHECK(back.tensors[0].data ==
        Floats({0x7FC00000, 0x7FC00000, 0x7FC00000, 0x7F800000, 0xFF800000, 0x00000001}));
  CHECK(back.tensors[1].data == Floats({0xFFC00000}));
}

TEST_CASE("strings are escaped minimally and deterministically, and come back unchanged") {
  SafetensorsFile file;
  const std::string name = std::string("a\"b\\c\nd") + '\x01' + "\xC3\xA9/\x7F";
  file.metadata = {{"note", "tab\there"}};
  file.tensors.push_back(Record(name, DType::kInt32, {}, LittleEndian(1, 4)));
  const std::vector<uint8_t> bytes = EncodeSafetensors(file);
  const std::string header(bytes.begin() + 8, bytes.end() - 4);
  CHECK(Contains(header, "\"note\":\"tab\\u0009here\""));
  CHECK(Contains(header, "\"a\\\"b\\\\c\\u000ad\\u0001\xC3\xA9/\x7F\":"));
  const SafetensorsFile back = DecodeSafetensors(bytes.data(), bytes.size(), "memory");
  CHECK(back.tensors[0].name == name);
  CHECK(back.metadata == file.metadata);
}

TEST_CASE("files as the Python safetensors/PyTorch ecosystem writes them are read") {
  // The reference writer's compact form (here with tensors not in name order).
  const std::vector<uint8_t> compact = RawFile(
      "{\"__metadata__\":{\"format\":\"pt\"},"
      "\"weight\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      "\"bias\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
      Floats({0x3F800000, 0x40000000, 0x40400000}));
  const SafetensorsFile a = DecodeSafetensors(compact.data(), compact.size(), "compact");
  CHECK(a.metadata == std::map<std::string, std::string>{{"format", "pt"}});
  REQUIRE(a.tensors.size() == 2);
  CHECK(a.tensors[0].name == "bias");
  CHECK(a.tensors[0].data == Floats({0x40400000}));
  CHECK(a.tensors[1].name == "weight");
  CHECK(a.tensors[1].shape == std::vector<int64_t>{2});
  CHECK(a.tensors[1].data == Floats({0x3F800000, 0x40000000}));

  // Whitespace anywhere, any key order, metadata last, escapes (\/ and a surrogate pair), the
  // data in another order than the header, no padding.
  const std::vector<uint8_t> loose = RawFile(
      "{ \"b\\u00e9\\/x\" : {\n \"shape\" : [ 2 ] ,\t\"data_offsets\": [4,20], \"dtype\":\"I64\" },"
      "\r\n \"a\\ud83d\\ude00\": {\"data_offsets\":[0,4],\"dtype\":\"I32\",\"shape\":[]},"
      "\"__metadata__\": {} }",
      {9, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}, false);
  const SafetensorsFile b = DecodeSafetensors(loose.data(), loose.size(), "loose");
  CHECK(b.metadata.empty());
  REQUIRE(b.tensors.size() == 2);
  CHECK(b.tensors[0].name == "a\xF0\x9F\x98\x80");
  CHECK(b.tensors[0].dtype == DType::kInt32);
  CHECK(b.tensors[0].shape.empty());
  CHECK(b.tensors[0].data == LittleEndian(9, 4));
  CHECK(b.tensors[1].name == "b\xC3\xA9/x");
  CHECK(b.tensors[1].dtype == DType::kInt64);
  CHECK(b.tensors[1].data.size() == 16);
}

TEST_CASE("malformed files are refused with a clear lockstep::Error") {
  const std::vector<uint8_t> f32x1 = Floats({0x3F800000});
  auto tensor = [](const std::string& body) { return "{\"t\":{" + body + "}}"; };
  struct Case {
    const char* title;
    std::vector<uint8_t> file;
    const char* expected;
  };
  std::vector<uint8_t> too_long_header = LittleEndian(200ull << 20, 8);
  too_long_header.resize(64, ' ');
  std::vector<uint8_t> max_header = LittleEndian(~0ull, 8);
  std::vector<uint8_t> beyond = LittleEndian(100, 8);
  beyond.resize(20, ' ');
  const Case cases[] = {
      {"empty file", {}, "shorter than the 8-byte header length"},
      {"7 bytes", {1, 0, 0, 0, 0, 0, 0}, "7 bytes long"},
      {"header length beyond the file", beyond, "only 12 bytes follow"},
      {"absurd header length", too_long_header, "more than the limit"},
      {"header length 2^64-1", max_header, "more than the limit"},
      {"not JSON", RawFile("hello", {}), "expected '{' at the start"},
      {"leading whitespace", RawFile(" {}", {}), "expected '{' at the start"},
      {"truncated JSON", RawFile("{\"t\":", {}, false), "found the end of the header"},
      {"missing colon", RawFile("{\"t\" {}}", {}), "expected ':'"},
      {"unterminated string", RawFile("{\"t", {}, false), "closing '\"'"},
      {"bad escape", RawFile("{\"\\q\":{}}", {}), "after a backslash"},
      {"lone surrogate", RawFile("{\"\\udc00\":{}}", {}), "lone low surrogate"},
      {"raw control character", RawFile("{\"a\nb\":{}}", {}), "control character"},
      {"invalid UTF-8", RawFile("{\"\xC0\x80\":{}}", {}), "valid UTF-8"},
      {"garbage after the object", RawFile("{} x", {}), "only whitespace after"},
      {"two objects", RawFile("{}{}", {}), "only whitespace after"},
      {"trailing comma", RawFile("{\"__metadata__\":{},}", {}), "a tensor name"},
      {"not an object", RawFile(tensor("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]")
                                    .replace(5, 1, "["), f32x1), "expected an object"},
      {"unknown dtype", RawFile(tensor("\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]"),
                                f32x1), "unsupported dtype \"F16\""},
      {"dtype not a string", RawFile(tensor("\"dtype\":4,\"shape\":[1],\"data_offsets\":[0,4]"),
                                     f32x1), "expected the dtype"},
      {"missing dtype", RawFile(tensor("\"shape\":[1],\"data_offsets\":[0,4]"), f32x1),
       "lacks \"dtype\""},
      {"missing data_offsets", RawFile(tensor("\"dtype\":\"F32\",\"shape\":[1]"), f32x1),
       "lacks \"data_offsets\""},
      {"unknown key", RawFile(tensor("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],"
                                     "\"x\":1"), f32x1), "unknown key \"x\""},
      {"repeated key", RawFile(tensor("\"dtype\":\"F32\",\"shape\":[1],\"shape\":[1],"
                                      "\"data_offsets\":[0,4]"), f32x1), "appears twice"},
      {"negative dimension", RawFile(tensor("\"dtype\":\"F32\",\"shape\":[-1],"
                                            "\"data_offsets\":[0,4]"), f32x1), "non-negative"},
      {"fractional dimension", RawFile(tensor("\"dtype\":\"F32\",\"shape\":[1.0],"
                                              "\"data_offsets\":[0,4]"), f32x1),
       "fraction or exponent"},
      {"leading zero", RawFile(tensor("\"dtype\":\"F32\",\"shape\":[01],\"data_offsets\":[0,4]"),
                               f32x1), "cannot start with 0"},
      {"integer beyond int64", RawFile(tensor("\"dtype\":\"F32\",\"shape\":[1],"
                                              "\"data_offsets\":[0,99999999999999999999]"),
                                       f32x1), "at most 2^63-1"},
      {"three offsets", RawFile(tensor("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]"),
                                f32x1), "found 3 numbers"},
      {"shape and offsets disagree",
       RawFile(tensor("\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]"), f32x1),
       "needs 8 bytes, but its data_offsets [0, 4] span 4"},
      {"offsets reversed", RawFile(tensor("\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,0]"),
                                   f32x1), "expected 0 <= begin <= end <= 4"},
      {"offsets beyond the data",
       RawFile(tensor("\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]"), f32x1),
       "expected 0 <= begin <= end <= 4"},
      {"numel overflow",
       RawFile(tensor("\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,16],"
                      "\"data_offsets\":[0,4]"), f32x1), "overflows 64 bits"},
      {"overlap", RawFile("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                          "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
                          Floats({1, 2, 3})), "overlaps tensor \"a\""},
      {"gap", RawFile("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                      "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
                      Floats({1, 2, 3})), "bytes 4..8 of the data section belong to no tensor"},
      {"trailing bytes",
       RawFile(tensor("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]"), Floats({1, 2})),
       "4 trailing bytes"},
      {"data but no tensors", RawFile("{}", Floats({1})), "4 trailing bytes"},
      {"duplicate names",
       RawFile("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
               "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", Floats({1, 2})),
       "duplicate tensor name \"a\""},
      {"duplicate metadata", RawFile("{\"__metadata__\":{},\"__metadata__\":{}}", {}),
       "appears twice"},
      {"duplicate metadata key", RawFile("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", {}),
       "duplicate metadata key"},
      {"metadata value not a string", RawFile("{\"__metadata__\":{\"k\":1}}", {}),
       "expected a string as the value of metadata key \"k\""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.title);
    const std::string message = DecodeError(c.file);
    CHECK_MESSAGE(Contains(message, c.expected), message);
    if (!c.file.empty()) CHECK_MESSAGE(Contains(message, "test.safetensors"), message);
  }
}

TEST_CASE("invalid records are refused by the encoder") {
  SafetensorsFile f;
  f.tensors.push_back(Record("x", DType::kFloat32, {3}, Floats({1, 2})));
  CHECK(Contains(EncodeError(f), "needs 12 bytes of data, but holds 8"));
  f.tensors[0] = Record("x", DType::kFloat32, {-1}, {});
  CHECK(Contains(EncodeError(f), "negative dimension"));
  f.tensors[0] = Record("__metadata__", DType::kFloat32, {}, Floats({1}));
  CHECK(Contains(EncodeError(f), "reserves it"));
  f.tensors[0] = Record("\xFF", DType::kFloat32, {}, Floats({1}));
  CHECK(Contains(EncodeError(f), "not valid UTF-8"));
  f.tensors[0] = Record("x", DType::kFloat32, {}, Floats({1}));
  f.tensors.push_back(f.tensors[0]);
  CHECK(Contains(EncodeError(f), "two tensors are named \"x\""));
  f.tensors.pop_back();
  f.metadata["k"] = "\xC3";
  CHECK(Contains(EncodeError(f), "not valid UTF-8"));
}

TEST_CASE("every truncation and bit flip of a valid file decodes or throws lockstep::Error") {
  const std::vector<uint8_t> valid = EncodeSafetensors(SmallFile());
  for (size_t size = 0; size < valid.size(); ++size) {
    const std::vector<uint8_t> prefix(valid.begin(), valid.begin() + size);
    CHECK_FALSE(DecodeError(prefix).empty());
  }
  for (size_t i = 0; i < valid.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> flipped = valid;
      flipped[i] ^= static_cast<uint8_t>(1 << bit);
      DecodeError(flipped);  // must not crash or throw anything else
    }
  }
}

}  // namespace
}  // namespace lockstep
