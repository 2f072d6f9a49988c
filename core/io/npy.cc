#include "core/io/npy.h"

#include <string.h>

#include "core/autograd.h"
#include "core/error.h"
#include "core/io/byte_order.h"
#include "core/io/files.h"
#include "core/sha256.h"

namespace lockstep {

namespace {

constexpr char kMagic[] = "\x93NUMPY";

// A minimal reader of the header's Python literal: a dict with string keys whose values are a
// string, True/False, or a tuple of integers.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& what) : s_(text), what_(what) {}

  void Parse(std::string* descr, bool* fortran, Shape* shape) {
    bool has_descr = false, has_fortran = false, has_shape = false;
    Expect('{');
    while (true) {
      Skip();
      if (Peek() == '}') break;
      const std::string key = QuotedString();
      Expect(':');
      if (key == "descr") {
        *descr = QuotedString();
        has_descr = true;
      } else if (key == "fortran_order") {
        *fortran = Bool();
        has_fortran = true;
      } else if (key == "shape") {
        *shape = Tuple();
        has_shape = true;
      } else {
        Fail("an unknown key '" + key + "'");
      }
      Skip();
      if (Peek() == ',') {
        ++at_;
        continue;
      }
      Skip();
      if (Peek() != '}') Fail("',' or '}'");
    }
    ++at_;
    Skip();
    if (at_ != s_.size()) Fail("the end of the header");
    if (!has_descr || !has_fortran || !has_shape) Fail("the keys descr, fortran_order and shape");
  }

 private:
  [[noreturn]] void Fail(const std::string& expected) const {
    LOCKSTEP_REQUIRE_FORMAT(false, what_ << ": not a .npy header: expected " << expected << " at byte " << at_
                                         << " of '" << s_ << "'");
    abort();  // not reached
  }
  void Skip() {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\n' || s_[at_] == '\t')) ++at_;
  }
  char Peek() const { return at_ < s_.size() ? s_[at_] : '\0'; }
  void Expect(char c) {
    Skip();
    if (Peek() != c) Fail(std::string("'") + c + "'");
    ++at_;
  }
  std::string QuotedString() {
    Skip();
    const char quote = Peek();
    if (quote != '\'' && quote != '"') Fail("a quoted string");
    const size_t end = s_.find(quote, at_ + 1);
    if (end == std::string::npos) Fail("a closing quote");
    std::string out = s_.substr(at_ + 1, end - at_ - 1);
    at_ = end + 1;
    return out;
  }
  bool Bool() {
    Skip();
    if (s_.compare(at_, 4, "True") == 0) {
      at_ += 4;
      return true;
    }
    if (s_.compare(at_, 5, "False") == 0) {
      at_ += 5;
      return false;
    }
    Fail("True or False");
  }
  Shape Tuple() {
    Expect('(');
    Shape shape;
    while (true) {
      Skip();
      if (Peek() == ')') break;
      int64_t v = 0;
      size_t digits = 0;
      while (Peek() >= '0' && Peek() <= '9') {
        if (v > (INT64_MAX - 9) / 10) Fail("a dimension that fits in 64 bits");
        v = v * 10 + (s_[at_++] - '0');
        ++digits;
      }
      if (digits == 0) Fail("a dimension");
      shape.push_back(v);
      Skip();
      if (Peek() == ',') ++at_;
    }
    ++at_;
    return shape;
  }

  const std::string& s_;
  const std::string& what_;
  size_t at_ = 0;
};

std::string DescrOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "<f4";
    case DType::kInt32: return "<i4";
    case DType::kInt64: return "<i8";
  }
  return "?";
}

}  // namespace

NpyArray DecodeNpy(const uint8_t* data, size_t size, const std::string& what) {
  LOCKSTEP_REQUIRE_FORMAT(size >= 10 && memcmp(data, kMagic, 6) == 0,
                          what << ": not a .npy file (it does not start with \\x93NUMPY)");
  const uint8_t major = data[6];
  LOCKSTEP_REQUIRE_FORMAT(major >= 1 && major <= 3, what << ": .npy version " << int(major) << "." << int(data[7])
                                                         << " is not one of 1.0, 2.0, 3.0");
  size_t header_len, at;
  if (major == 1) {
    header_len = size_t{data[8]} | (size_t{data[9]} << 8);
    at = 10;
  } else {
    LOCKSTEP_REQUIRE_FORMAT(size >= 12, what << ": truncated .npy header");
    header_len = LoadLittleEndian32(data + 8);
    at = 12;
  }
  LOCKSTEP_REQUIRE_FORMAT(header_len <= size - at, what << ": the .npy header declares " << header_len
                                                        << " bytes, the file holds " << size - at);
  const std::string header(reinterpret_cast<const char*>(data + at), header_len);
  at += header_len;
  std::string descr;
  bool fortran = false;
  Shape shape;
  HeaderParser(header, what).Parse(&descr, &fortran, &shape);
  LOCKSTEP_REQUIRE_FORMAT(!fortran, what << ": Fortran-order arrays are not supported (save with np.ascontiguousarray)");
  size_t width = 0;
  if (descr == "<f4" || descr == "<i4") width = 4;
  if (descr == "<f8" || descr == "<i8") width = 8;
  if (descr == "|b1") width = 1;
  LOCKSTEP_REQUIRE_FORMAT(width != 0, what << ": element type '" << descr
                                           << "' is not supported; lockstep reads '<f4', '<f8', '<i4', '<i8' and '|b1'");
  int64_t count = 1;
  for (int64_t d : shape) {
    LOCKSTEP_REQUIRE_FORMAT(d == 0 || count <= INT64_MAX / d, what << ": shape " << ShapeString(shape) << " is too large");
    count *= d;
  }
  // The data must be exactly there before anything is allocated.
  const uint64_t bytes = static_cast<uint64_t>(count) * width;
  LOCKSTEP_REQUIRE_FORMAT(count <= static_cast<int64_t>((size - at) / width) && bytes == size - at,
                          what << ": shape " << ShapeString(shape) << " of '" << descr << "' needs " << count * 1.0 * width
                               << " bytes of data, the file holds " << size - at);
  ValidateShape(shape, "npy");
  NpyArray out;
  out.descr = descr;
  const uint8_t* p = data + at;
  const size_t n = static_cast<size_t>(count);
  if (descr == "<f4" || descr == "<f8" || descr == "|b1") {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) {
      if (descr == "<f4") {
        const uint32_t bits = LoadLittleEndian32(p + 4 * i);
        memcpy(&v[i], &bits, 4);
      } else if (descr == "<f8") {
        const uint64_t bits = LoadLittleEndian64(p + 8 * i);
        double d;
        memcpy(&d, &bits, 8);
        v[i] = static_cast<float>(d);  // one rounding to nearest
      } else {
        LOCKSTEP_REQUIRE_FORMAT(p[i] <= 1, what << ": bool element " << i << " is " << int(p[i]) << ", not 0 or 1");
        v[i] = p[i] ? 1.0f : 0.0f;
      }
    }
    out.tensor = Tensor::FromVector(shape, v);
    out.is_bool = descr == "|b1";
    return out;
  }
  std::vector<int64_t> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = descr == "<i8" ? static_cast<int64_t>(LoadLittleEndian64(p + 8 * i))
                          : static_cast<int32_t>(LoadLittleEndian32(p + 4 * i));
  }
  out.tensor = Tensor::FromInt64(shape, v);
  if (descr == "<i4") out.tensor = out.tensor.To(DType::kInt32);
  return out;
}

NpyArray ReadNpy(const std::string& path) {
  const std::vector<uint8_t> bytes = ReadWholeFile(path, kMaxNpyBytes);
  return DecodeNpy(bytes.data(), bytes.size(), path);
}

namespace {

// The elements in C order, little-endian.
std::vector<uint8_t> DataBytes(const Tensor& tensor) {
  NoGradGuard no_grad;
  const Tensor t = tensor.Contiguous().ToDevice(Device::Cpu());
  const size_t width = DTypeSize(t.dtype()), n = static_cast<size_t>(t.numel());
  std::vector<uint8_t> out(n * width);
  if (n == 0) return out;
  const void* src = t.dtype() == DType::kFloat32 ? static_cast<const void*>(t.data_f32())
                    : t.dtype() == DType::kInt32 ? static_cast<const void*>(t.data_i32())
                                                 : static_cast<const void*>(t.data_i64());
  CopyLittleEndian(out.data(), src, n, width);
  return out;
}

}  // namespace

std::vector<uint8_t> EncodeNpy(const Tensor& tensor) {
  // NumPy's spelling of the shape: (), (2,), (2, 3).
  std::string dims;
  for (size_t i = 0; i < tensor.shape().size(); ++i) dims += (i ? ", " : "") + std::to_string(tensor.shape()[i]);
  if (tensor.shape().size() == 1) dims += ",";
  std::string header = "{'descr': '" + DescrOf(tensor.dtype()) + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Magic (6) + version (2) + length (2) + header + '\n', padded to a multiple of 64.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out(kMagic, kMagic + 6);
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<uint8_t>(header.size() & 0xFF));
  out.push_back(static_cast<uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  const std::vector<uint8_t> data = DataBytes(tensor);
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

void WriteNpy(const std::string& path, const Tensor& tensor) { WriteFileAtomic(path, EncodeNpy(tensor)); }

std::string TensorSha256(const Tensor& tensor) {
  const std::vector<uint8_t> data = DataBytes(tensor);
  return Sha256Hex(data.data(), data.size());
}

}  // namespace lockstep
