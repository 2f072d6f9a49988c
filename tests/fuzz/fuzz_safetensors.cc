// libFuzzer target for the safetensors decoder: any input either decodes or throws
// lockstep::Error; anything else (a crash, a sanitizer report, another exception, a huge
// allocation) is a finding. A decoded file must also re-encode to a canonical file that decodes
// to the same tensors and re-encodes to the same bytes.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "core/safetensors.h"

namespace {

// Equal up to NaN canonicalisation (the encoder writes every float32 NaN as 0x7FC00000).
bool SameTensor(const lockstep::TensorRecord& a, const lockstep::TensorRecord& b) {
  if (a.name != b.name || a.dtype != b.dtype || a.shape != b.shape) return false;
  if (a.data.size() != b.data.size()) return false;
  if (a.dtype != lockstep::DType::kFloat32) return a.data == b.data;
  for (size_t i = 0; i < a.data.size(); i += 4) {
    uint32_t x, y;
    memcpy(&x, &a.data[i], 4);
    memcpy(&y, &b.data[i], 4);
    const bool x_nan = (x & 0x7F800000u) == 0x7F800000u && (x & 0x007FFFFFu) != 0;
    if (x_nan ? y != 0x7FC00000u : x != y) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lockstep::SafetensorsFile file;
  try {
    file = lockstep::DecodeSafetensors(data, size, "fuzz input");
  } catch (const lockstep::Error&) {
    return 0;
  }
  const std::vector<uint8_t> canonical = lockstep::EncodeSafetensors(file);
  const lockstep::SafetensorsFile again =
      lockstep::DecodeSafetensors(canonical.data(), canonical.size(), "canonical");
  if (again.metadata != file.metadata || again.tensors.size() != file.tensors.size()) {
    __builtin_trap();
  }
  for (size_t i = 0; i < file.tensors.size(); ++i) {
    if (!SameTensor(file.tensors[i], again.tensors[i])) __builtin_trap();
  }
  if (lockstep::EncodeSafetensors(again) != canonical) __builtin_trap();
  return 0;
}
