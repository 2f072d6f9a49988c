// ONNX's sequences and optionals (onnx/ops_sequence.cc): the operators that build, read and take
// them apart, and the rule that every other operator takes tensors only.
#ifndef LOCKSTEP_ONNX_SEQUENCES_H_
#define LOCKSTEP_ONNX_SEQUENCES_H_

#include <string>

#include "onnx/op_registry.h"

namespace lockstep {
namespace onnx {

// Whether an operator takes or makes sequences or optionals (they move tensors, never compute on
// them, so the element-type rules of narrow floats and float64 do not apply to them; the control
// flow operators are among them: their subgraphs' nodes follow those rules themselves).
bool IsSequenceOperator(const std::string& op_type);

// The kernel of an operator, made to refuse a sequence or optional input (a type error) unless the
// operator takes them.
Kernel RefusingNonTensors(const std::string& op_type, Kernel kernel);

}  // namespace onnx
}  // namespace lockstep

#endif  // LOCKSTEP_ONNX_SEQUENCES_H_
