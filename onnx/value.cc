#include "onnx/value.h"

#include <string.h>

#include "core/error.h"
#include "core/io/byte_order.h"

namespace lockstep {
namespace onnx {


const char* ElemName(Elem e) {
  switch (e) {
    case Elem::kFloat: return "float";
    case Elem::kInt64: return "int64";
    case Elem::kInt32: return "int32";
    case Elem::kBool: return "bool";
  }
  return "?";
}

int32_t ElemDataType(Elem e) {
  switch (e) {
    case Elem::kFloat: return kFloat;
    case Elem::kInt64: return kInt64;
    case Elem::kInt32: return kInt32;
    case Elem::kBool: return kBool;
  }
  return kUndefined;
}

bool ElemFromDataType(int32_t data_type, Elem* out) {
  switch (data_type) {
    case kFloat: *out = Elem::kFloat; return true;
    case kInt64: *out = Elem::kInt64; return true;
    case kInt32: *out = Elem::kInt32; return true;
    case kBool: *out = Elem::kBool; return true;
    default: return false;
  }
}

Value ValueFromTensorProto(const TensorProto& t, const std::string& where) {
  const int64_t count = CheckedElementCount(t, where);
  Elem elem;
  ElemFromDataType(t.data_type, &elem);
  const Shape shape(t.dims.begin(), t.dims.end());
  const size_t n = static_cast<size_t>(count);
  if (elem == Elem::kFloat || elem == Elem::kBool) {
    std::vector<float> v(n);
    if (elem == Elem::kBool) {
      for (size_t i = 0; i < n; ++i) v[i] = (t.has_raw_data ? t.raw_data[i] : t.int32_data[i]) != 0 ? 1.0f : 0.0f;
    } else if (t.has_raw_data) {
      CopyLittleEndian(v.data(), t.raw_data.data(), n, 4);
    } else {
      v = t.float_data;
    }
    return Value{Tensor::FromVector(shape, v), elem};
  }
  std::vector<int64_t> v(n);
  if (t.has_raw_data) {
    for (size_t i = 0; i < n; ++i) {
      v[i] = elem == Elem::kInt64 ? static_cast<int64_t>(LoadLittleEndian64(&t.raw_data[8 * i]))
                                  : static_cast<int32_t>(LoadLittleEndian32(&t.raw_data[4 * i]));
    }
  } else if (elem == Elem::kInt64) {
    v = t.int64_data;
  } else {
    v.assign(t.int32_data.begin(), t.int32_data.end());
  }
  Tensor tensor = Tensor::FromInt64(shape, v);
  return Value{elem == Elem::kInt32 ? tensor.To(DType::kInt32) : tensor, elem};
}

std::vector<int64_t> IntValues(const Value& v) { return v.tensor.ToInt64Vector(); }

}  // namespace onnx
}  // namespace lockstep
