// libFuzzer target for the IDX decoder: any input either decodes or throws lockstep::Error;
// anything else is a finding. A decoded array that re-encodes must decode to the same values.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "core/idx.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lockstep::IdxArray array;
  try {
    array = lockstep::DecodeIdx(data, size, "fuzz input");
  } catch (const lockstep::Error&) {
    return 0;
  }
  std::vector<uint8_t> bytes;
  try {
    // May refuse legitimately: an int32 beyond 2^24 read as float can round out of range.
    bytes = lockstep::EncodeIdx(array.type_code, array.dims, array.values);
  } catch (const lockstep::Error&) {
    if (array.type_code != lockstep::kIdxInt32) __builtin_trap();
    return 0;
  }
  const lockstep::IdxArray again = lockstep::DecodeIdx(bytes.data(), bytes.size(), "re-encoded");
  if (again.type_code != array.type_code || again.dims != array.dims ||
      again.values.size() != array.values.size()) {
    __builtin_trap();
  }
  if (!array.values.empty() &&
      memcmp(again.values.data(), array.values.data(), 4 * array.values.size()) != 0) {
    __builtin_trap();
  }
  return 0;
}
