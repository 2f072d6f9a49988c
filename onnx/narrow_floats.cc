#include "onnx/narrow_floats.h"

#include <utility>

#include "core/ops.h"
#include "onnx/sequences.h"

namespace lockstep {
namespace onnx {

namespace {

bool IsNarrowFloat(const Value& v) { return v.defined() && (v.elem == Elem::kFloat16 || v.elem == Elem::kBFloat16); }

}  // namespace

Kernel ComputingNarrowFloatsInFloat32(const std::string& op_type, Kernel kernel) {
  if (op_type == "Cast" || op_type == "CastLike" || op_type == "EyeLike" || IsSequenceOperator(op_type)) return kernel;
  return [kernel = std::move(kernel)](const Values& in, RunContext& context) -> Values {
    Elem narrow = Elem::kFloat;
    for (const Value& v : in) {
      if (IsNarrowFloat(v)) {
        narrow = v.elem;
        break;
      }
    }
    if (narrow == Elem::kFloat) return kernel(in, context);
    Values wide = in;
    for (Value& v : wide) {
      if (IsNarrowFloat(v)) v.elem = Elem::kFloat;  // the same float32 tensor: its values are exact
    }
    Values out = kernel(wide, context);
    for (Value& v : out) {
      if (v.defined() && v.elem == Elem::kFloat) {
        v = Value{narrow == Elem::kFloat16 ? RoundToFloat16(v.tensor) : RoundToBFloat16(v.tensor), narrow};
      }
    }
    return out;
  };
}

}  // namespace onnx
}  // namespace lockstep
