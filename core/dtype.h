// Element types of lockstep tensors: float32 for values, int32 and int64 for indices.
#ifndef LOCKSTEP_CORE_DTYPE_H_
#define LOCKSTEP_CORE_DTYPE_H_

#include <stddef.h>

namespace lockstep {

enum class DType { kFloat32, kInt32, kInt64 };

inline size_t DTypeSize(DType t) { return t == DType::kInt64 ? 8 : 4; }

// Names as safetensors writes them ("F32", "I32", "I64").
inline const char* DTypeName(DType t) {
  switch (t) {
    case DType::kFloat32: return "F32";
    case DType::kInt32: return "I32";
    case DType::kInt64: return "I64";
  }
  return "?";
}

// PyTorch's names, for messages ("float32", "int32", "int64").
inline const char* DTypeString(DType t) {
  switch (t) {
    case DType::kFloat32: return "float32";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
  }
  return "?";
}

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_DTYPE_H_
