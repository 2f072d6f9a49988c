#include "onnx/value.h"

#include <string.h>

#include "core/error.h"
#include "core/io/byte_order.h"
#include "core/ops.h"
#include "onnx/float64.h"

namespace lockstep {
namespace onnx {


namespace {

struct ElemInfo {
  Elem elem;
  const char* name;
  int32_t data_type;
  int bits;  // of an integer type; 0 for the others
};
constexpr ElemInfo kElems[] = {
    {Elem::kFloat, "float", kFloat, 0},       {Elem::kInt64, "int64", kInt64, 64},
    {Elem::kInt32, "int32", kInt32, 32},      {Elem::kBool, "bool", kBool, 0},
    {Elem::kFloat16, "float16", kFloat16, 0}, {Elem::kBFloat16, "bfloat16", kBfloat16, 0},
    {Elem::kInt8, "int8", kInt8, 8},          {Elem::kUInt8, "uint8", kUint8, 8},
    {Elem::kInt16, "int16", kInt16, 16},      {Elem::kUInt16, "uint16", kUint16, 16},
    {Elem::kUInt32, "uint32", kUint32, 32},   {Elem::kUInt64, "uint64", kUint64, 64},
    {Elem::kFloat64, "float64", kDouble, 0},
};

const ElemInfo& Info(Elem e) { return kElems[static_cast<int>(e)]; }

// A float16's bits as the float32 of the same value (exact).
float HalfToFloat(uint32_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1Fu, mantissa = h & 0x3FFu;
  uint32_t bits;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-08f;
    memcpy(&bits, &magnitude, 4);
  } else if (exponent == 31) {
    bits = mantissa != 0 ? 0x7FC00000u : 0x7F800000u;
  } else {
    bits = ((exponent + 112) << 23) | (mantissa << 13);
  }
  bits = (bits == 0x7FC00000u) ? bits : (bits | sign);
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

float BFloat16ToFloat(uint32_t b) {
  uint32_t bits = (b & 0xFFFFu) << 16;
  if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu) != 0) bits = 0x7FC00000u;  // canonical NaN
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

}  // namespace

static_assert(sizeof(kElems) / sizeof(kElems[0]) == static_cast<size_t>(Elem::kFloat64) + 1, "one row per Elem");

const char* ElemName(Elem e) { return Info(e).name; }

int32_t ElemDataType(Elem e) { return Info(e).data_type; }

bool ElemFromDataType(int32_t data_type, Elem* out) {
  for (const ElemInfo& info : kElems) {
    if (info.data_type == data_type) {
      *out = info.elem;
      return true;
    }
  }
  return false;
}

int64_t WrapToElem(Elem e, int64_t v) {
  const int bits = Info(e).bits;
  if (bits == 0 || bits == 64) return v;
  const uint64_t low = static_cast<uint64_t>(v) & ((uint64_t{1} << bits) - 1);
  if (IsUnsignedElem(e)) return static_cast<int64_t>(low);
  const uint64_t sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>(low ^ sign) - static_cast<int64_t>(sign);
}

Value ValueFromTensorProto(const TensorProto& t, const std::string& where) {
  const int64_t count = CheckedElementCount(t, where);
  Elem elem;
  ElemFromDataType(t.data_type, &elem);
  const Shape shape(t.dims.begin(), t.dims.end());
  const size_t n = static_cast<size_t>(count);
  const uint8_t* raw = t.has_raw_data ? reinterpret_cast<const uint8_t*>(t.raw_data.data()) : nullptr;
  if (IsFloatElem(elem) || elem == Elem::kBool) {
    std::vector<float> v(n);
    if (elem == Elem::kBool) {
      for (size_t i = 0; i < n; ++i) v[i] = (raw ? raw[i] : t.int32_data[i]) != 0 ? 1.0f : 0.0f;
    } else if (elem == Elem::kFloat16 || elem == Elem::kBFloat16) {
      for (size_t i = 0; i < n; ++i) {
        const uint32_t bits = raw ? LoadLittleEndian16(raw + 2 * i) : static_cast<uint32_t>(t.int32_data[i]);
        v[i] = elem == Elem::kFloat16 ? HalfToFloat(bits) : BFloat16ToFloat(bits);
      }
    } else if (raw) {
      CopyLittleEndian(v.data(), raw, n, 4);
    } else {
      v = t.float_data;
    }
    return Value{Tensor::FromVector(shape, v), elem};
  }
  if (elem == Elem::kFloat64) {
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) {
      if (raw) {
        const uint64_t bits = LoadLittleEndian64(raw + 8 * i);
        memcpy(&v[i], &bits, 8);
      } else {
        v[i] = t.double_data[i];
      }
    }
    return Float64Tensor(shape, v);
  }
  std::vector<int64_t> v(n);
  const int width = elem == Elem::kInt64 || elem == Elem::kUInt64 ? 8
                    : elem == Elem::kInt32 || elem == Elem::kUInt32 ? 4
                    : elem == Elem::kInt16 || elem == Elem::kUInt16 ? 2 : 1;
  for (size_t i = 0; i < n; ++i) {
    int64_t x;
    if (raw) {
      x = width == 8 ? static_cast<int64_t>(LoadLittleEndian64(raw + 8 * i))
          : width == 4 ? static_cast<int64_t>(LoadLittleEndian32(raw + 4 * i))
          : width == 2 ? static_cast<int64_t>(LoadLittleEndian16(raw + 2 * i)) : static_cast<int64_t>(raw[i]);
    } else {
      x = elem == Elem::kInt64 ? t.int64_data[i]
          : elem == Elem::kUInt32 || elem == Elem::kUInt64 ? static_cast<int64_t>(t.uint64_data[i]) : t.int32_data[i];
    }
    v[i] = WrapToElem(elem, x);
  }
  Tensor tensor = Tensor::FromInt64(shape, v);
  return Value{elem == Elem::kInt32 ? tensor.To(DType::kInt32) : tensor, elem};
}

std::vector<int64_t> IntValues(const Value& v) { return v.tensor.ToInt64Vector(); }

Value ValueForDeclared(const Tensor& t, Elem declared, const std::string& name) {
  if (t.dtype() == DType::kFloat32) {
    if (declared == Elem::kFloat64) return CastToFloat64(FloatValue(t));
    if (declared == Elem::kBool) return Value{t, Elem::kBool};
    if (declared == Elem::kFloat16) return Value{RoundToFloat16(t), declared};
    if (declared == Elem::kBFloat16) return Value{RoundToBFloat16(t), declared};
    return FloatValue(t);
  }
  const Elem held = t.dtype() == DType::kInt64 ? Elem::kInt64 : Elem::kInt32;
  if (!IsIntElem(declared) || declared == Elem::kInt64 || declared == Elem::kInt32) return Value{t, held};
  std::vector<int64_t> v = t.ToInt64Vector();
  for (size_t i = 0; i < v.size(); ++i) {
    LOCKSTEP_REQUIRE(declared == Elem::kUInt64 || WrapToElem(declared, v[i]) == v[i],
                     name << " is declared " << ElemName(declared) << ", but element " << i << " is " << v[i]
                          << ", outside its range");
  }
  return Value{t.To(DType::kInt64), declared};
}

Value SequenceValue(std::vector<Value> items, Elem elem) {
  Value v;
  v.elem = elem;
  v.items = std::make_shared<const std::vector<Value>>(std::move(items));
  return v;
}

Value NoneValue(Elem elem, bool of_sequence) {
  Value v;
  v.elem = elem;
  v.optional = true;
  v.none = true;
  if (of_sequence) v.items = std::make_shared<const std::vector<Value>>();
  return v;
}

Value ValueFromSequenceProto(const SequenceProto& s, int32_t declared_elem, const std::string& where) {
  LOCKSTEP_REQUIRE_KIND(ErrorKind::kUnavailable, !s.other,
                        where << ": a sequence of sequences, maps or sparse tensors; lockstep holds sequences of tensors");
  Elem elem;
  LOCKSTEP_REQUIRE_KIND(ErrorKind::kUnavailable, ElemFromDataType(declared_elem, &elem),
                        where << ": a sequence of " << DataTypeName(declared_elem) << " tensors");
  std::vector<Value> items;
  for (size_t i = 0; i < s.tensors.size(); ++i) {
    items.push_back(ValueFromTensorProto(s.tensors[i], where + "[" + std::to_string(i) + "]"));
    LOCKSTEP_REQUIRE_FORMAT(items.back().elem == elem, where << "[" << i << "] is " << ElemName(items.back().elem)
                                                             << ", the sequence " << ElemName(elem));
  }
  return SequenceValue(std::move(items), elem);
}

Value ValueFromOptionalProto(const OptionalProto& o, int32_t declared_elem, bool of_sequence, const std::string& where) {
  LOCKSTEP_REQUIRE_KIND(ErrorKind::kUnavailable, !o.other, where << ": an optional of a map, sparse tensor or optional");
  Elem elem;
  LOCKSTEP_REQUIRE_KIND(ErrorKind::kUnavailable, ElemFromDataType(declared_elem, &elem),
                        where << ": an optional of " << DataTypeName(declared_elem));
  Value v;
  if (of_sequence && !o.sequence.empty()) {
    v = ValueFromSequenceProto(o.sequence[0], declared_elem, where);
  } else if (!of_sequence && !o.tensor.empty()) {
    v = ValueFromTensorProto(o.tensor[0], where);
  } else {
    LOCKSTEP_REQUIRE_FORMAT(o.tensor.empty() && o.sequence.empty(),
                            where << ": holds a " << (of_sequence ? "tensor" : "sequence") << " where its type says "
                                  << (of_sequence ? "sequence" : "tensor"));
    return NoneValue(elem, of_sequence);
  }
  v.optional = true;
  return v;
}

std::string KindName(const Value& v) {
  const std::string inner = std::string(v.items ? "sequence of " : "") + ElemName(v.elem);
  if (v.none) return "empty optional " + inner;
  return (v.optional ? "optional " : "") + inner;
}

Tensor CallerTensor(const Value& v) {
  LOCKSTEP_REQUIRE_KIND(ErrorKind::kUnavailable, v.is_tensor(),
                        "onnx: an output is a " << KindName(v) << "; this interface returns tensors (C++'s Run returns every kind)");
  return v.is_float64() ? CastFromFloat64(v, Elem::kFloat).tensor : v.tensor;
}

}  // namespace onnx
}  // namespace lockstep

