// A caching allocator for tensor storage, one per device (core/backend/device.h). A training step
// allocates and frees the same buffers every step; giving each back to the system and taking
// fresh, page-faulting memory again cost about a fifth of a LeNet-5 step. This allocator keeps the
// memory and hands it out again.
//
// Best fit with splitting and coalescing (as TensorFlow's BFC allocator and PyTorch's CUDA caching
// allocator): memory is taken from the device in segments; a request takes the smallest free block
// that fits (a piece split off when the rest is worth keeping) and a released block merges with its
// free neighbours. Requests up to 1 MiB share segments of 2 MiB; larger ones get segments of their
// own size (rounded to 256 KiB), which smaller large requests may split later.
//
// Bounded: whenever it holds more than the most bytes ever in use at once, plus 1/8 of that, plus
// one 2 MiB segment, it gives wholly free segments back to the device, oldest first (before taking
// a new segment and whenever one becomes free). A segment partly in use stays, so fragmentation can
// keep it above that mark until its blocks are released. A failed device allocation gives every
// free segment back and tries once more. In a training loop it holds about the peak in use (the
// LeNet-5 step: 26 MB held for a 22 MB peak, no device allocation after the first step), so it does
// not raise the program's peak memory; EmptyCache() gives back what a finished phase left.
//
// Contents of a reused block are whatever its last user left, as for any Tensor::Empty.
#ifndef LOCKSTEP_CORE_BACKEND_CACHING_ALLOCATOR_H_
#define LOCKSTEP_CORE_BACKEND_CACHING_ALLOCATOR_H_

#include <stddef.h>
#include <stdint.h>

#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

namespace lockstep {
namespace backend {

struct MemoryStats {
  size_t in_use_bytes = 0;       // blocks handed out and not yet released (rounded sizes)
  size_t held_bytes = 0;         // segments taken from the device (in use + free)
  size_t peak_in_use_bytes = 0;  // the most in use at once
  uint64_t reused = 0;           // requests served from memory already held
  uint64_t device_allocations = 0;  // segments taken from the device
  uint64_t device_releases = 0;     // segments given back
};

class CachingAllocator {
 public:
  // alloc/release: the device's own (a kernel table's); alloc returns null on failure and
  // 64-byte-aligned memory otherwise.
  CachingAllocator(void* (*alloc)(size_t bytes), void (*release)(void* ptr));
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A 64-byte-aligned block of at least `bytes` bytes (bytes <= SIZE_MAX / 2), or null when the
  // device has no memory left even after the free segments were given back.
  void* Allocate(size_t bytes);
  // Takes back a block from Allocate.
  void Release(void* ptr);
  // Gives every wholly free segment back to the device.
  void EmptyCache();
  // Off: each request is its own device allocation, given back on release (as under
  // AddressSanitizer, whose use-after-free checks need that; LOCKSTEP_CACHING_ALLOCATOR=0 too).
  void SetEnabled(bool enabled);
  bool enabled() const;
  MemoryStats Stats() const;

 private:
  struct Segment;
  struct Block {
    uint8_t* ptr;
    size_t size;
    bool free;
    bool small;            // which pool
    Block* prev = nullptr;  // neighbours in the segment, by address
    Block* next = nullptr;
    Segment* segment;       // null: a block of its own (caching off)
  };
  struct Segment {
    uint8_t* base;
    size_t size;
    uint64_t freed_stamp;  // when it last became wholly free: the oldest goes back first
  };
  struct BySize {
    bool operator()(const Block* a, const Block* b) const {
      return a->size != b->size ? a->size < b->size : a->ptr < b->ptr;
    }
  };

  size_t Limit() const;
  Block* NewSegmentLocked(size_t request, bool small);
  void TakeLocked(Block* block, size_t size);
  void ReleaseFreeSegmentsLocked(size_t keep_below);
  void ReleaseSegmentLocked(Block* whole);
  static bool WhollyFree(const Block* b) { return b->free && b->prev == nullptr && b->next == nullptr; }

  void* (*const alloc_)(size_t);
  void (*const release_)(void*);
  mutable std::mutex mutex_;
  std::set<Block*, BySize> free_small_, free_large_;
  std::unordered_map<void*, Block*> in_use_;
  std::map<uint64_t, Block*> free_segments_;  // wholly free segments by freed_stamp
  MemoryStats stats_;
  uint64_t next_stamp_ = 0;
  bool enabled_;
};

}  // namespace backend
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_BACKEND_CACHING_ALLOCATOR_H_
