// The caching allocator of tensor storage: reuse without going back to the device, best fit with
// splitting and coalescing, the bound on what it holds, the switch that turns it off, running out
// of device memory, alignment and concurrent use. Each test drives its own allocator over a
// counting stand-in for a device.
#include <doctest/doctest.h>
#include <stdint.h>
#include <stdlib.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "core/backend/caching_allocator.h"
#include "core/backend/device.h"
#include "core/tensor.h"

namespace lockstep {
namespace {

using backend::CachingAllocator;
using backend::MemoryStats;

// A device with a byte budget that knows what it has handed out.
std::mutex device_mutex;
std::map<void*, size_t> device_blocks;
size_t device_bytes = 0, device_budget = SIZE_MAX;
void* BudgetAlloc(size_t bytes) {
  std::lock_guard<std::mutex> lock(device_mutex);
  if (bytes > device_budget - device_bytes) return nullptr;
  void* p = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (p != nullptr) {
    device_blocks[p] = bytes;
    device_bytes += bytes;
  }
  return p;
}
void BudgetRelease(void* p) {
  std::lock_guard<std::mutex> lock(device_mutex);
  device_bytes -= device_blocks.at(p);
  device_blocks.erase(p);
  free(p);
}
void SetBudget(size_t bytes) {  // SIZE_MAX: unlimited; else this many bytes beyond what is out now
  std::lock_guard<std::mutex> lock(device_mutex);
  device_budget = bytes == SIZE_MAX ? SIZE_MAX : device_bytes + bytes;
}

struct Fresh {
  Fresh() {
    SetBudget(SIZE_MAX);
    allocator.SetEnabled(true);
  }
  ~Fresh() {
    allocator.EmptyCache();
    SetBudget(SIZE_MAX);
  }
  CachingAllocator allocator{&BudgetAlloc, &BudgetRelease};
};

constexpr size_t kMiB = size_t{1} << 20;

TEST_CASE("a released block is handed out again without a device allocation") {
  Fresh f;
  void* a = f.allocator.Allocate(3 * kMiB);
  REQUIRE(a != nullptr);
  f.allocator.Release(a);
  void* b = f.allocator.Allocate(3 * kMiB);
  CHECK(b == a);
  const MemoryStats s = f.allocator.Stats();
  CHECK(s.device_allocations == 1);
  CHECK(s.reused == 1);
  CHECK(s.in_use_bytes >= 3 * kMiB);
  f.allocator.Release(b);
  CHECK(f.allocator.Stats().in_use_bytes == 0);
  f.allocator.EmptyCache();
  CHECK(f.allocator.Stats().held_bytes == 0);
  CHECK(f.allocator.Stats().device_releases == 1);
}

TEST_CASE("small requests share a segment; a large free block is split and merges back") {
  Fresh f;
  std::vector<void*> small;
  for (int i = 0; i < 16; ++i) small.push_back(f.allocator.Allocate(1000 + 37 * i));
  CHECK(f.allocator.Stats().device_allocations == 1);  // one 2 MiB segment holds them all
  for (void* p : small) f.allocator.Release(p);

  void* big = f.allocator.Allocate(8 * kMiB);
  f.allocator.Release(big);
  const uint64_t before = f.allocator.Stats().device_allocations;
  void* left = f.allocator.Allocate(3 * kMiB);
  void* right = f.allocator.Allocate(4 * kMiB);
  CHECK(f.allocator.Stats().device_allocations == before);  // both cut from the 8 MiB block
  CHECK(left == big);
  CHECK(static_cast<uint8_t*>(right) == static_cast<uint8_t*>(big) + 3 * kMiB);
  f.allocator.Release(left);
  f.allocator.Release(right);
  void* again = f.allocator.Allocate(8 * kMiB);  // the pieces merged back into one block
  CHECK(again == big);
  CHECK(f.allocator.Stats().device_allocations == before);
  f.allocator.Release(again);
}

TEST_CASE("every block is 64-byte aligned and holds what was asked") {
  Fresh f;
  std::vector<void*> blocks;
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{4097}, kMiB - 1, kMiB,
                       kMiB + 1, 5 * kMiB + 3}) {
    void* p = f.allocator.Allocate(bytes);
    REQUIRE(p != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
    std::fill(static_cast<uint8_t*>(p), static_cast<uint8_t*>(p) + bytes, uint8_t{0xAB});  // ASan checks the extent
    blocks.push_back(p);
  }
  std::sort(blocks.begin(), blocks.end());
  CHECK(std::adjacent_find(blocks.begin(), blocks.end()) == blocks.end());  // no block handed out twice
  for (void* p : blocks) f.allocator.Release(p);
}

TEST_CASE("what it holds stays within the peak in use, 1/8 more and one small segment") {
  Fresh f;
  // Phases of different sizes, as a training step's forward and backward passes: the memory of
  // one phase serves the next instead of growing.
  uint64_t state = 12345;
  const auto next = [&] { return state = state * 6364136223846793005ULL + 1442695040888963407ULL; };
  for (int phase = 0; phase < 40; ++phase) {
    std::vector<void*> live;
    const int count = 1 + static_cast<int>(next() >> 61);
    for (int i = 0; i < count; ++i) {
      const size_t bytes = (next() >> 40) % (6 * kMiB) + 1;
      live.push_back(f.allocator.Allocate(bytes));
      REQUIRE(live.back() != nullptr);
      const MemoryStats s = f.allocator.Stats();
      CHECK(s.held_bytes <= s.peak_in_use_bytes + s.peak_in_use_bytes / 8 + 2 * kMiB + (6 * kMiB + 64 * 1024));
    }
    for (void* p : live) f.allocator.Release(p);
    const MemoryStats s = f.allocator.Stats();
    CHECK(s.held_bytes <= s.peak_in_use_bytes + s.peak_in_use_bytes / 8 + 2 * kMiB);
  }
  CHECK(f.allocator.Stats().in_use_bytes == 0);
  CHECK(f.allocator.Stats().reused > 0);
}

TEST_CASE("turned off, every block goes straight back to the device") {
  Fresh f;
  f.allocator.SetEnabled(false);
  CHECK_FALSE(f.allocator.enabled());
  for (int i = 0; i < 3; ++i) {
    void* p = f.allocator.Allocate(2 * kMiB + 5);
    f.allocator.Release(p);
  }
  const MemoryStats s = f.allocator.Stats();
  CHECK(s.device_allocations == 3);
  CHECK(s.device_releases == 3);
  CHECK(s.held_bytes == 0);
  CHECK(s.reused == 0);
  // Blocks handed out while it was on are given back when released after it was turned off.
  f.allocator.SetEnabled(true);
  void* kept = f.allocator.Allocate(3 * kMiB);
  f.allocator.SetEnabled(false);
  f.allocator.Release(kept);
  CHECK(f.allocator.Stats().held_bytes == 0);
}

TEST_CASE("out of device memory: the free segments go back and the request is tried again") {
  Fresh f;
  void* a = f.allocator.Allocate(6 * kMiB);
  f.allocator.Release(a);  // cached
  SetBudget(kMiB);  // the device has room for 1 MiB more
  void* b = f.allocator.Allocate(7 * kMiB);  // only fits once the cached 6 MiB are given back
  CHECK(b != nullptr);
  CHECK(f.allocator.Stats().device_releases == 1);
  SetBudget(0);  // full
  CHECK(f.allocator.Allocate(9 * kMiB) == nullptr);
  CHECK(f.allocator.Stats().in_use_bytes == 7 * kMiB);
  f.allocator.Release(b);
}

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)  // the single-thread WebAssembly builds start no threads
TEST_CASE("threads allocating and releasing at once leave it consistent") {
  Fresh f;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&f, t] {
      std::vector<void*> mine;
      for (int i = 0; i < 400; ++i) {
        mine.push_back(f.allocator.Allocate(static_cast<size_t>((i * 7919 + t * 104729) % (3 * kMiB)) + 1));
        if (mine.size() > 5) {
          f.allocator.Release(mine.front());
          mine.erase(mine.begin());
        }
      }
      for (void* p : mine) f.allocator.Release(p);
    });
  }
  for (std::thread& t : threads) t.join();
  const MemoryStats s = f.allocator.Stats();
  CHECK(s.in_use_bytes == 0);
  f.allocator.EmptyCache();
  CHECK(f.allocator.Stats().held_bytes == 0);
  CHECK(f.allocator.Stats().device_allocations == f.allocator.Stats().device_releases);
}
#endif

TEST_CASE("tensor storage comes from the device's caching allocator") {
  CachingAllocator& cpu = AllocatorOf(Device::Cpu());
  const bool was = cpu.enabled();
  cpu.SetEnabled(true);
  const MemoryStats before = cpu.Stats();
  { const Tensor t = Tensor::Empty({1000, 1000}); }
  { const Tensor t = Tensor::Empty({1000, 1000}); }
  const MemoryStats after = cpu.Stats();
  CHECK(after.reused > before.reused);
  CHECK(after.in_use_bytes == before.in_use_bytes);
  cpu.SetEnabled(was);
}

}  // namespace
}  // namespace lockstep
