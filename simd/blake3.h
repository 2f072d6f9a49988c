// BLAKE3 (the 256-bit hash mode): training receipts hash the bulk of each step's bytes with it
// (core/receipt/state_hash.h). Its tree lets many chunks be compressed at once, one per SIMD lane
// (blake3_lanes.h): several times SHA-256's speed on one core. Incremental like Sha256; the
// digest never depends on how the input was split between Update calls, nor on the target.
#ifndef LOCKSTEP_SIMD_BLAKE3_H_
#define LOCKSTEP_SIMD_BLAKE3_H_

#include <stddef.h>
#include <stdint.h>

#include <array>
#include <vector>

namespace lockstep {
namespace simd {

class Blake3 {
 public:
  // Whole-chunk runs this long and aligned to it are hashed a subtree at a time, in SIMD lanes:
  // a caller that feeds a long input in pieces keeps the speed with pieces of this size.
  static constexpr size_t kSubtreeBytes = 64 * 1024;

  Blake3();
  // Back to the empty input.
  void Reset();
  void Update(const void* data, size_t size);
  // Finishes and returns the 32 digest bytes; the object is then spent.
  std::array<uint8_t, 32> Digest();

 private:
  friend class Blake3Sliced;
  // After whole chunks only, the input so far a multiple of `chunks` (a power of two, at least 2):
  // the next `chunks` chunks, as the two children of their subtree's root.
  void PushSubtree(const uint32_t left[8], const uint32_t right[8], uint64_t chunks);
  // After whole chunks only, with more to follow or at least one chunk before: the next chunk.
  void PushChunk(const uint32_t cv[8]);

  // The chunk being filled: its chaining value so far, the block not yet compressed.
  struct ChunkState {
    uint32_t cv[8];
    uint8_t block[64];
    size_t block_len = 0, blocks_compressed = 0;
    uint64_t counter = 0;
    void Start(uint64_t chunk_counter);
    size_t length() const { return 64 * blocks_compressed + block_len; }
    void Update(const uint8_t* data, size_t size);
    uint32_t StartFlag() const;
  };
  void PushChainingValue(const uint32_t cv[8], uint64_t chunk_counter);
  // Merges the stack's top entries until it holds one entry per set bit of total_chunks.
  void MergeStack(uint64_t total_chunks);

  ChunkState chunk_;
  uint32_t stack_[54][8];  // 2^54 chunks is more than any input
  size_t stack_len_ = 0;
};

std::array<uint8_t, 32> Blake3Digest(const void* data, size_t size);

// The BLAKE3 digest of bytes that stay in place, computed a bounded amount of work at a time: a
// receipt's step hashing runs in the thread pool's waits between kernels, where a piece of work
// must end within a microsecond or so. Whole chunks go a vector of them at a time, a block of each
// per call where the budget is small (simd::Blake3ChunkGroup). The digest is Blake3's.
class Blake3Sliced {
 public:
  void Start(const uint8_t* data, size_t size);
  // Hashes about `budget` bytes' worth (at least one step where any is left); returns the bytes'
  // worth done.
  size_t Advance(size_t budget);
  bool done() const { return offset_ == size_; }
  // The same bytes, moved to `data`.
  void Rebase(const uint8_t* data) { data_ = data; }
  // Once done; the object is then spent until the next Start.
  std::array<uint8_t, 32> Digest() { return tree_.Digest(); }

 private:
  Blake3 tree_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0, offset_ = 0;
  size_t lanes_ = 0;              // a chunk group's most chunks (0: no groups on this target)
  size_t group_ = 0, block_ = 0;  // the group in flight: its chunks, its next block
  std::vector<uint32_t> state_, cvs_;
};

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_BLAKE3_H_
