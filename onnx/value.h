// A value flowing through an imported graph: a lockstep tensor and its ONNX element type. ONNX's
// bool tensors are float32 tensors of 0.0 and 1.0 (what lockstep's comparisons produce and its
// select kernel reads); int32 and int64 are lockstep's integer tensors. The narrower types are held
// in wider ones, exactly (the contract's element types, docs/numerics.md): float16 and bfloat16 as
// float32 tensors of float16 or bfloat16 values; int8, uint8, int16, uint16 and uint32 as int64
// tensors of in-range values; uint64 as int64 tensors of the same 64 bits. float64 is held as its 64
// bits in an int64 tensor (onnx/float64.h).
#ifndef LOCKSTEP_ONNX_VALUE_H_
#define LOCKSTEP_ONNX_VALUE_H_

#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "onnx/proto.h"

namespace lockstep {
namespace onnx {

enum class Elem { kFloat, kInt64, kInt32, kBool, kFloat16, kBFloat16, kInt8, kUInt8, kInt16, kUInt16, kUInt32, kUInt64, kFloat64 };

inline bool IsIntElem(Elem e) {
  return e == Elem::kInt64 || e == Elem::kInt32 || (e >= Elem::kInt8 && e <= Elem::kUInt64);
}
inline bool IsFloatElem(Elem e) { return e == Elem::kFloat || e == Elem::kFloat16 || e == Elem::kBFloat16; }
inline bool IsUnsignedElem(Elem e) { return e == Elem::kUInt8 || e == Elem::kUInt16 || e == Elem::kUInt32 || e == Elem::kUInt64; }
// An integer as the type holds it: wrapped modulo 2^bits into the type's range, as C's conversion
// to a fixed-width type does (uint64's 64 bits stay as they are).
int64_t WrapToElem(Elem e, int64_t v);

struct Value {
  Value() = default;
  Value(Tensor t, Elem e) : tensor(std::move(t)), elem(e) {}

  Tensor tensor;
  Elem elem = Elem::kFloat;
  // ONNX's sequences and optionals (onnx/ops_sequence.cc): a sequence holds its tensors in `items`
  // (all of type `elem`; no tensor of its own). An optional that holds a value is that value with
  // `optional` set; an empty one has `none` set and nothing else (`items` marks an empty optional
  // sequence as a sequence type). Only the sequence and optional operators take them.
  std::shared_ptr<const std::vector<Value>> items;
  bool optional = false;
  bool none = false;

  bool defined() const { return tensor.defined() || items != nullptr || none; }
  bool is_tensor() const { return tensor.defined(); }
  bool is_sequence() const { return items != nullptr && !none; }
  bool is_int() const { return IsIntElem(elem); }
  bool is_float() const { return IsFloatElem(elem); }
  bool is_float64() const { return elem == Elem::kFloat64; }
  const Shape& shape() const { return tensor.shape(); }
};

inline Value FloatValue(Tensor t) { return Value{std::move(t), Elem::kFloat}; }
inline Value BoolValue(Tensor t) { return Value{std::move(t), Elem::kBool}; }
inline Value Int64Value(Tensor t) { return Value{std::move(t), Elem::kInt64}; }
// A sequence of these tensors, of element type `elem`.
Value SequenceValue(std::vector<Value> items, Elem elem);
// An empty optional of a tensor (or, with `of_sequence`, of a sequence) of element type `elem`.
Value NoneValue(Elem elem, bool of_sequence);
// The value of a SequenceProto or an OptionalProto (as ValueFromTensorProto reads tensors).
Value ValueFromSequenceProto(const SequenceProto& s, int32_t declared_elem, const std::string& where);
Value ValueFromOptionalProto(const OptionalProto& o, int32_t declared_elem, bool of_sequence, const std::string& where);
// "float", "sequence of float", "optional float", "optional sequence of float", "empty optional float".
std::string KindName(const Value& v);

// "float", "int64", "int32", "bool", "float16", "bfloat16", "int8", "uint8", ...
const char* ElemName(Elem e);
// The ONNX data type of an element kind, and back (false for a type lockstep does not hold).
int32_t ElemDataType(Elem e);
bool ElemFromDataType(int32_t data_type, Elem* out);

// The tensor of a TensorProto (an initializer, a Constant's value, a test's input): every size is
// checked against the data the message holds before anything is allocated; external data, strings
// and types lockstep does not compute with are refused with errors that say so.
Value ValueFromTensorProto(const TensorProto& t, const std::string& where);
// Integer values of a small int tensor (shapes, axes, indices), as int64.
std::vector<int64_t> IntValues(const Value& v);

// A caller's tensor as a value of the declared element type: float32 data for a float16 or bfloat16
// input is rounded to that type (to nearest, ties to even, as a cast would); integer data for a
// narrower integer input must be in its range; bool inputs are float32 0.0 / 1.0; float32 data for a
// float64 input is widened (exactly).
Value ValueForDeclared(const Tensor& t, Elem declared, const std::string& name);
// A value as callers receive it: its tensor, except that float64 values arrive as float32 tensors,
// each element rounded once to nearest even (lockstep's tensors hold float32, int32 and int64).
Tensor CallerTensor(const Value& v);

}  // namespace onnx
}  // namespace lockstep

#endif  // LOCKSTEP_ONNX_VALUE_H_
