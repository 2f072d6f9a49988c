// NumPy's .npy format (version 1.0 to 3.0), for tensors going in and out of the command line:
// the magic "\x93NUMPY", a version, a little-endian header length, a Python-dict header
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with spaces to a multiple of
// 64 bytes, then the elements in C order. Read: float32 '<f4', float64 '<f8' (converted to float32
// with one rounding), int64 '<i8', int32 '<i4', bool '|b1'; anything else (big-endian, Fortran
// order, objects, other types) is refused naming what was found. Written: float32, int32, int64.
#ifndef LOCKSTEP_CORE_IO_NPY_H_
#define LOCKSTEP_CORE_IO_NPY_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "core/tensor.h"

namespace lockstep {

struct NpyArray {
  Tensor tensor;              // float32, int32 or int64
  std::string descr;          // as written in the file ('<f4', '|b1', ...)
  bool is_bool = false;       // '|b1': held as float32 0.0 / 1.0
};

// Parses the bytes of a .npy file; `what` names the source in errors (kind kFormat).
NpyArray DecodeNpy(const uint8_t* data, size_t size, const std::string& what);
NpyArray ReadNpy(const std::string& path);

// The bytes of a .npy file (version 1.0) holding the tensor (any layout; written in C order).
std::vector<uint8_t> EncodeNpy(const Tensor& tensor);
// Writes atomically (core/io/files.h).
void WriteNpy(const std::string& path, const Tensor& tensor);

// SHA-256 of the tensor's elements in C order, little-endian: a .npy file's data section, the
// hash `lockstep run` prints for an output.
std::string TensorSha256(const Tensor& tensor);

// The largest .npy file read (4 GiB, or what a 32-bit address space holds).
constexpr size_t kMaxNpyBytes = sizeof(size_t) >= 8 ? static_cast<size_t>(uint64_t{4} << 30) : static_cast<size_t>(0xFFFFFFFFu);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_IO_NPY_H_
