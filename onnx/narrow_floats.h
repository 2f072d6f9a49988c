// The contract's rule for float16 and bfloat16 values (docs/numerics.md): every operator computes
// in float32 on the exact float32 values of its narrow inputs, and each float result is rounded
// once, to nearest even, to the narrow type of the inputs.
#ifndef LOCKSTEP_ONNX_NARROW_FLOATS_H_
#define LOCKSTEP_ONNX_NARROW_FLOATS_H_

#include <string>

#include "onnx/op_registry.h"

namespace lockstep {
namespace onnx {

// The kernel of an operator, run by that rule when an input is float16 or bfloat16 (the first such
// input names the type). Operators whose output types are attributes or inputs (Cast, CastLike,
// EyeLike) are returned unchanged.
Kernel ComputingNarrowFloatsInFloat32(const std::string& op_type, Kernel kernel);

}  // namespace onnx
}  // namespace lockstep

#endif  // LOCKSTEP_ONNX_NARROW_FLOATS_H_
