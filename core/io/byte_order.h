// Byte order. Every byte lockstep hashes, writes or reads (checkpoints, traces, data fingerprints,
// logits hashes, the kernel battery) is little-endian, whatever the host: on a little-endian host
// the conversions below are copies (or nothing), on a big-endian host (s390x) they swap each
// element, so the hashes are the same bits on both.
#ifndef LOCKSTEP_CORE_IO_BYTE_ORDER_H_
#define LOCKSTEP_CORE_IO_BYTE_ORDER_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <vector>

namespace lockstep {

constexpr bool kHostIsLittleEndian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

// Copies count elements of element_size bytes (1, 2, 4 or 8), reversing each element's bytes on a
// big-endian host. The same call converts host order to little-endian and back.
inline void CopyLittleEndian(void* dst, const void* src, size_t count, size_t element_size) {
  const size_t bytes = count * element_size;
  if (bytes == 0) return;
  if (kHostIsLittleEndian || element_size == 1) {
    memcpy(dst, src, bytes);
    return;
  }
  const uint8_t* s = static_cast<const uint8_t*>(src);
  uint8_t* d = static_cast<uint8_t*>(dst);
  for (size_t i = 0; i < bytes; i += element_size) {
    for (size_t k = 0; k < element_size; ++k) d[i + k] = s[i + element_size - 1 - k];
  }
}

inline uint32_t LoadLittleEndian16(const void* p) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  return uint32_t{b[0]} | (uint32_t{b[1]} << 8);
}

inline uint32_t LoadLittleEndian32(const void* p) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  return uint32_t{b[0]} | (uint32_t{b[1]} << 8) | (uint32_t{b[2]} << 16) | (uint32_t{b[3]} << 24);
}

inline uint64_t LoadLittleEndian64(const void* p) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  return uint64_t{LoadLittleEndian32(b)} | (uint64_t{LoadLittleEndian32(b + 4)} << 32);
}

inline void StoreLittleEndian64(uint64_t value, void* p) {
  uint8_t* b = static_cast<uint8_t*>(p);
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(value >> (8 * i));
}

// The little-endian bytes of count host-order elements: on a little-endian host a view of the
// elements themselves (no copy), on a big-endian one a swapped copy. The source must outlive it.
class LittleEndianBytes {
 public:
  LittleEndianBytes(const void* data, size_t count, size_t element_size) : size_(count * element_size) {
    if (kHostIsLittleEndian || element_size == 1) {
      data_ = static_cast<const uint8_t*>(data);
    } else {
      copy_.resize(size_);
      CopyLittleEndian(copy_.data(), data, count, element_size);
      data_ = copy_.data();
    }
  }
  template <class T>
  LittleEndianBytes(const T* values, size_t count) : LittleEndianBytes(values, count, sizeof(T)) {}

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_;
  std::vector<uint8_t> copy_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_IO_BYTE_ORDER_H_
