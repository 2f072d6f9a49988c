// A value flowing through an imported graph: a lockstep tensor and its ONNX element type. ONNX's
// bool tensors are float32 tensors of 0.0 and 1.0 (what lockstep's comparisons produce and its
// select kernel reads); int32 and int64 are lockstep's integer tensors.
#ifndef LOCKSTEP_ONNX_VALUE_H_
#define LOCKSTEP_ONNX_VALUE_H_

#include <string>
#include <vector>

#include "core/tensor.h"
#include "onnx/proto.h"

namespace lockstep {
namespace onnx {

enum class Elem { kFloat, kInt64, kInt32, kBool };

struct Value {
  Tensor tensor;
  Elem elem = Elem::kFloat;

  bool defined() const { return tensor.defined(); }
  bool is_int() const { return elem == Elem::kInt64 || elem == Elem::kInt32; }
  const Shape& shape() const { return tensor.shape(); }
};

inline Value FloatValue(Tensor t) { return Value{std::move(t), Elem::kFloat}; }
inline Value BoolValue(Tensor t) { return Value{std::move(t), Elem::kBool}; }
inline Value Int64Value(Tensor t) { return Value{std::move(t), Elem::kInt64}; }

// "float", "int64", "int32", "bool".
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

}  // namespace onnx
}  // namespace lockstep

#endif  // LOCKSTEP_ONNX_VALUE_H_
