// Safetensors files (checkpoints and training state): the canonical encoder and a validating
// decoder (file I/O: core/io/files.h).
//
// Contract rule 8: the model hash is the SHA-256 of the checkpoint file, so the encoder writes one
// canonical byte sequence for a given content:
//   - 8-byte little-endian header length N, then N bytes of JSON header, then the data;
//   - the JSON has no whitespace; "__metadata__" comes first (omitted when there is no metadata),
//     its keys sorted by byte order, values strings; then the tensors sorted by name (byte order),
//     each as {"dtype":..,"shape":[..],"data_offsets":[begin,end]} in that key order;
//   - strings escape only '"' as \", '\' as \\ and bytes below 0x20 as \u00xx (lowercase hex);
//     every other byte, UTF-8 included, is written as is;
//   - the header is padded with spaces (0x20) to a multiple of 8 bytes, so the data is 8-aligned;
//   - the tensors' data follows in the same sorted order, contiguous, little-endian, row-major;
//   - every float32 NaN is written as 0x7FC00000 (rule 6).
// The decoder accepts any valid safetensors file with F32, I32 and I64 tensors (any key order,
// any JSON whitespace, any data order), as the Python safetensors/PyTorch ecosystem writes them,
// and rejects everything else with a lockstep::Error naming what was expected, what was found and
// where.
#ifndef LOCKSTEP_CORE_SAFETENSORS_H_
#define LOCKSTEP_CORE_SAFETENSORS_H_

#include <stddef.h>
#include <stdint.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace lockstep {

struct TensorRecord {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;  // outermost first; {} is a scalar
  std::vector<uint8_t> data;   // little-endian, row-major: DTypeSize(dtype) * numel bytes
};

struct SafetensorsFile {
  std::map<std::string, std::string> metadata;
  std::vector<TensorRecord> tensors;  // any order on encode; sorted by name on decode
};

// The largest JSON header accepted (the reference implementation's limit too).
constexpr uint64_t kMaxSafetensorsHeaderBytes = uint64_t{100} << 20;

// The canonical bytes described above. Throws lockstep::Error for a record whose data size does
// not match its dtype and shape, a negative dimension, a duplicate name, the name "__metadata__",
// or a string that is not valid UTF-8.
std::vector<uint8_t> EncodeSafetensors(const SafetensorsFile& file);

// Receives a file's bytes piece by piece, in order.
using ByteSink = std::function<void(const uint8_t* data, size_t size)>;

// A tensor whose data is produced while encoding: `write` passes its little-endian, row-major
// bytes to the sink it is given, in pieces of whole elements, DTypeSize(dtype) * numel in all.
struct TensorSource {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::function<void(const ByteSink& sink)> write;
};

// The same canonical bytes, passed to `sink` as they are made (the header, then each tensor's data
// in pieces), so a model is hashed or copied without a second copy of all its data in memory (a
// 200M-parameter model in WebAssembly's 4 GiB). Throws as EncodeSafetensors does, and for a
// source that writes another number of bytes than its dtype and shape need.
void EncodeSafetensorsTo(const std::map<std::string, std::string>& metadata, const std::vector<TensorSource>& tensors,
                         const ByteSink& sink);

// EncodeSafetensorsTo into one buffer allocated once at its final size.
std::vector<uint8_t> EncodeSafetensorsToBytes(const std::map<std::string, std::string>& metadata,
                                              const std::vector<TensorSource>& tensors);

// Parses and validates a whole file held in memory; `what` names the source (a path) in errors.
// Tensors come back sorted by name, their data exactly as stored (NaN bits included).
SafetensorsFile DecodeSafetensors(const uint8_t* bytes, size_t size, const std::string& what);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_SAFETENSORS_H_
