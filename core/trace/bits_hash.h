// The trace format's hash of a tensor's exact bits (docs/diagnostics.md): 128 bits, fast enough to
// run on every op output during training, and simple to compute with NumPy (the PyTorch tracer
// does). Not a cryptographic hash: equal bits give equal hashes; different bits, different hashes
// with overwhelming probability for the data a trace meets.
//
// The bytes are read as little-endian 64-bit words w_i (the last one padded with zero bytes), and
// for each lane c of (P, Q) = (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9), (0xC2B2AE3D27D4EB4F,
// 0x94D049BB133111EB), in 64-bit wrapping arithmetic:
//   x_i = (w_i + (i + 1) * P) * Q;  x_i ^= x_i >> 31;  s = sum of x_i;
//   h = fmix64(s ^ (byte count * P))   (MurmurHash3's finaliser)
// The hash is h_0 then h_1 as 32 lowercase hex digits.
#ifndef LOCKSTEP_CORE_TRACE_BITS_HASH_H_
#define LOCKSTEP_CORE_TRACE_BITS_HASH_H_

#include <stddef.h>
#include <stdint.h>

#include <string>

namespace lockstep {
namespace trace {

// data holds the tensor's elements in little-endian byte order (core/io/byte_order.h converts them
// on a big-endian host).
std::string BitsHash(const void* data, size_t bytes);

// The hash in parts, for passes that split a tensor into pieces (the sums are wrapping additions,
// so pieces may be added in any order) or that compute the words themselves.
struct HashSums {
  uint64_t s0 = 0, s1 = 0;
  void Add(const HashSums& other) {
    s0 += other.s0;
    s1 += other.s1;
  }
};
constexpr uint64_t kHashP0 = 0x9E3779B97F4A7C15ULL, kHashP1 = 0xC2B2AE3D27D4EB4FULL;
constexpr uint64_t kHashQ0 = 0xBF58476D1CE4E5B9ULL, kHashQ1 = 0x94D049BB133111EBULL;
// The terms of words first_word .. first_word + ceil(bytes / 8) - 1, read from data as above.
HashSums BitsHashTerms(const void* data, size_t bytes, uint64_t first_word);
// The hash of a tensor of total_bytes bytes from the sums of all its words' terms.
std::string FinishBitsHash(const HashSums& sums, size_t total_bytes);

}  // namespace trace
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_TRACE_BITS_HASH_H_
