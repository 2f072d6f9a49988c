// A tensor as a safetensors record (float32 or int64), for the reference fixtures.
#ifndef LOCKSTEP_TESTS_REFERENCE_TENSOR_RECORD_H_
#define LOCKSTEP_TESTS_REFERENCE_TENSOR_RECORD_H_

#include <stdio.h>
#include <string.h>

#include <string>
#include <vector>

#include "core/safetensors.h"
#include "core/tensor.h"

namespace lockstep {

inline TensorRecord Record(const std::string& name, const Tensor& t) {
  TensorRecord r;
  r.name = name;
  r.shape = t.shape();
  if (t.dtype() == DType::kFloat32) {
    const std::vector<float> v = t.ToVector();
    r.dtype = DType::kFloat32;
    r.data.resize(v.size() * 4);
    if (!v.empty()) memcpy(r.data.data(), v.data(), r.data.size());
  } else {
    const std::vector<int64_t> v = t.ToInt64Vector();
    r.dtype = DType::kInt64;
    r.data.resize(v.size() * 8);
    if (!v.empty()) memcpy(r.data.data(), v.data(), r.data.size());
  }
  return r;
}

// "01", "02", ...: step numbers that sort as text.
inline std::string TwoDigits(int64_t s) {
  char buf[24];
  snprintf(buf, sizeof buf, "%02lld", static_cast<long long>(s));
  return buf;
}

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_REFERENCE_TENSOR_RECORD_H_
