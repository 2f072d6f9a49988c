// SHA-256 (FIPS 180-4): model hashes are the SHA-256 of checkpoint files, and the kernel battery
// hashes every output buffer.
#ifndef LOCKSTEP_CORE_SHA256_H_
#define LOCKSTEP_CORE_SHA256_H_

#include <stddef.h>
#include <stdint.h>

#include <array>
#include <string>

#include "core/io/byte_order.h"

namespace lockstep {

class Sha256 {
 public:
  Sha256();
  void Update(const void* data, size_t size);
  // Hashes count numbers as their little-endian bytes: the same digest on every host.
  template <class T>
  void UpdateValues(const T* values, size_t count) {
    const LittleEndianBytes bytes(values, count);
    Update(bytes.data(), bytes.size());
  }
  // a.Update(data_a, size_a) and b.Update(data_b, size_b), the two messages' whole blocks
  // compressed together where the CPU gains by it (SHA-NI: nearly twice one message's speed).
  static void UpdateTwo(Sha256& a, const void* data_a, size_t size_a, Sha256& b, const void* data_b, size_t size_b);
  // Finishes and returns the 32 digest bytes; the object is then spent.
  std::array<uint8_t, 32> Digest();
  // Finishes and returns the digest as 64 lowercase hex digits; the object is then spent.
  std::string HexDigest();

 private:
  // Compresses count consecutive 64-byte blocks into state_.
  void Compress(const uint8_t* blocks, size_t count);
  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

std::string Sha256Hex(const void* data, size_t size);
// Bytes as lowercase hex digits, two per byte.
std::string HexOf(const uint8_t* bytes, size_t size);

// Tests only: true makes every Sha256 use the portable scalar compressor even where the CPU has
// the SHA extensions, so the two paths can be compared. Digests are the same either way.
void Sha256ForcePortableForTesting(bool force);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_SHA256_H_
