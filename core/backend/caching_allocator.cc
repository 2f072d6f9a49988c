#include "core/backend/caching_allocator.h"

#include <stdlib.h>
#include <string.h>

namespace lockstep {
namespace backend {

namespace {

constexpr size_t kSmallRequest = size_t{1} << 20;  // up to this, requests share segments of:
constexpr size_t kSmallSegment = size_t{2} << 20;
constexpr size_t kSmallRound = 256;                // request rounding, and the smallest split
constexpr size_t kLargeRound = size_t{64} << 10;

size_t RoundUp(size_t v, size_t to) { return (v + to - 1) / to * to; }

// On unless LOCKSTEP_CACHING_ALLOCATOR=0; off by default under AddressSanitizer, whose
// use-after-free checks need freed memory to go back to it.
bool EnabledByDefault() {
  if (const char* env = getenv("LOCKSTEP_CACHING_ALLOCATOR")) return strcmp(env, "0") != 0;
#if defined(__SANITIZE_ADDRESS__)
  return false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return false;
#endif
#endif
  return true;
}

}  // namespace

CachingAllocator::CachingAllocator(void* (*alloc)(size_t), void (*release)(void*))
    : alloc_(alloc), release_(release), enabled_(EnabledByDefault()) {}

CachingAllocator::~CachingAllocator() { EmptyCache(); }

// The most it holds: the peak in use, 1/8 more for fragmentation, and one small segment.
size_t CachingAllocator::Limit() const {
  return stats_.peak_in_use_bytes + stats_.peak_in_use_bytes / 8 + kSmallSegment;
}

void* CachingAllocator::Allocate(size_t bytes) {
  const bool small = bytes <= kSmallRequest;
  const size_t size = RoundUp(bytes == 0 ? 1 : bytes, small ? kSmallRound : kLargeRound);
  std::lock_guard<std::mutex> lock(mutex_);
  if (stats_.in_use_bytes + size > stats_.peak_in_use_bytes) stats_.peak_in_use_bytes = stats_.in_use_bytes + size;
  Block* block = nullptr;
  if (!enabled_) {
    void* ptr = alloc_(size);
    if (ptr == nullptr) return nullptr;
    block = new Block{static_cast<uint8_t*>(ptr), size, false, small, nullptr, nullptr, nullptr};
    stats_.held_bytes += size;
    ++stats_.device_allocations;
  } else {
    std::set<Block*, BySize>& pool = small ? free_small_ : free_large_;
    Block key{nullptr, size, true, small, nullptr, nullptr, nullptr};
    auto fit = pool.lower_bound(&key);  // the smallest free block that holds size
    if (fit != pool.end()) {
      block = *fit;
      pool.erase(fit);
      if (WhollyFree(block)) free_segments_.erase(block->segment->freed_stamp);
      ++stats_.reused;
    } else {
      block = NewSegmentLocked(size, small);
      if (block == nullptr) return nullptr;
    }
    TakeLocked(block, size);
  }
  block->free = false;
  in_use_[block->ptr] = block;
  stats_.in_use_bytes += block->size;
  return block->ptr;
}

CachingAllocator::Block* CachingAllocator::NewSegmentLocked(size_t size, bool small) {
  const size_t segment_size = small ? kSmallSegment : size;
  const size_t limit = Limit();
  while (stats_.held_bytes + segment_size > limit && !free_segments_.empty()) {
    ReleaseSegmentLocked(free_segments_.begin()->second);
  }
  void* ptr = alloc_(segment_size);
  if (ptr == nullptr && !free_segments_.empty()) {  // out of device memory: give back what is free, retry
    while (!free_segments_.empty()) ReleaseSegmentLocked(free_segments_.begin()->second);
    ptr = alloc_(segment_size);
  }
  if (ptr == nullptr) return nullptr;
  Segment* segment = new Segment{static_cast<uint8_t*>(ptr), segment_size, 0};
  stats_.held_bytes += segment_size;
  ++stats_.device_allocations;
  return new Block{segment->base, segment_size, true, small, nullptr, nullptr, segment};
}

// Splits off what block does not need when the rest is worth keeping as a free block of its own.
void CachingAllocator::TakeLocked(Block* block, size_t size) {
  const size_t rest = block->size - size;
  if (rest < (block->small ? kSmallRound : kLargeRound)) return;
  Block* tail = new Block{block->ptr + size, rest, true, block->small, block, block->next, block->segment};
  if (block->next != nullptr) block->next->prev = tail;
  block->next = tail;
  block->size = size;
  (block->small ? free_small_ : free_large_).insert(tail);
}

void CachingAllocator::Release(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = in_use_.find(ptr);
  if (found == in_use_.end()) return;  // not ours: nothing to do (never happens through Storage)
  Block* block = found->second;
  in_use_.erase(found);
  stats_.in_use_bytes -= block->size;
  if (block->segment == nullptr) {
    release_(ptr);
    stats_.held_bytes -= block->size;
    ++stats_.device_releases;
    delete block;
    return;
  }
  std::set<Block*, BySize>& pool = block->small ? free_small_ : free_large_;
  block->free = true;
  if (Block* prev = block->prev; prev != nullptr && prev->free) {  // merge into the free block before
    pool.erase(prev);
    prev->size += block->size;
    prev->next = block->next;
    if (block->next != nullptr) block->next->prev = prev;
    delete block;
    block = prev;
  }
  if (Block* next = block->next; next != nullptr && next->free) {  // and the free block after
    pool.erase(next);
    block->size += next->size;
    block->next = next->next;
    if (next->next != nullptr) next->next->prev = block;
    delete next;
  }
  pool.insert(block);
  if (WhollyFree(block)) {
    block->segment->freed_stamp = next_stamp_++;
    free_segments_[block->segment->freed_stamp] = block;
    if (!enabled_) {
      ReleaseSegmentLocked(block);
    } else {
      ReleaseFreeSegmentsLocked(Limit());
    }
  }
}

void CachingAllocator::ReleaseFreeSegmentsLocked(size_t keep_below) {
  while (stats_.held_bytes > keep_below && !free_segments_.empty()) {
    ReleaseSegmentLocked(free_segments_.begin()->second);
  }
}

void CachingAllocator::ReleaseSegmentLocked(Block* whole) {
  (whole->small ? free_small_ : free_large_).erase(whole);
  free_segments_.erase(whole->segment->freed_stamp);
  release_(whole->segment->base);
  stats_.held_bytes -= whole->segment->size;
  ++stats_.device_releases;
  delete whole->segment;
  delete whole;
}

void CachingAllocator::EmptyCache() {
  std::lock_guard<std::mutex> lock(mutex_);
  ReleaseFreeSegmentsLocked(0);
}

void CachingAllocator::SetEnabled(bool enabled) {
  std::lock_guard<std::mutex> lock(mutex_);
  enabled_ = enabled;
  if (!enabled) ReleaseFreeSegmentsLocked(0);
}

bool CachingAllocator::enabled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return enabled_;
}

MemoryStats CachingAllocator::Stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace backend
}  // namespace lockstep
