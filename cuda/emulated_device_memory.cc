#include "cuda/emulated_device_memory.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <string>

namespace lockstep {
namespace cuda {
namespace {

// Address space only: pages cost memory once written.
constexpr size_t kReserved = size_t{64} << 30;
constexpr size_t kAlign = 64;

struct Arena {
  std::mutex mutex;
  uint8_t* base = nullptr;
  size_t high_water = 0;                 // bytes from base ever handed out (page-rounded when opened)
  std::map<size_t, size_t> free_blocks;  // offset -> bytes, coalesced
  std::map<size_t, size_t> used_blocks;  // offset -> bytes
  int open_count = 0;                    // DeviceAccess objects alive
  std::string error;
};

Arena& TheArena() {
  static Arena* arena = new Arena();  // never destroyed: kernels may run during exit
  return *arena;
}

size_t PageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

size_t Accessible(const Arena& a) { return (a.high_water + PageSize() - 1) / PageSize() * PageSize(); }

struct sigaction previous_segv;

// A fault inside the reserved range is the host touching device memory: say so, then fault again
// under the previous handler (the default one ends the process as a segmentation fault).
void OnSegv(int signal, siginfo_t* info, void* context) {
  const Arena& a = TheArena();
  const uint8_t* at = static_cast<const uint8_t*>(info->si_addr);
  if (a.base != nullptr && at >= a.base && at < a.base + kReserved) {
    char message[256];
    const int length = snprintf(message, sizeof message,
                                "lockstep: the host dereferenced emulated CUDA device memory at %p (offset %zu): "
                                "device data may be touched only by kernels and copies\n",
                                info->si_addr, static_cast<size_t>(at - a.base));
    if (length > 0) (void)!write(2, message, static_cast<size_t>(length));
  } else if ((previous_segv.sa_flags & SA_SIGINFO) && previous_segv.sa_sigaction != nullptr) {
    previous_segv.sa_sigaction(signal, info, context);
    return;
  }
  sigaction(SIGSEGV, &previous_segv, nullptr);  // returning re-runs the faulting access
}

bool Reserve(Arena& a) {
  if (a.base != nullptr) return true;
  void* p = mmap(nullptr, kReserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    a.error = std::string("cannot reserve the emulated device's address range: ") + strerror(errno);
    return false;
  }
  a.base = static_cast<uint8_t*>(p);
  return true;
}

// Puts OnSegv in front of whatever handler is installed now (a test framework or a runtime may have
// replaced it since the last time), chaining to that one for faults elsewhere.
void EnsureHandler() {
  struct sigaction current {};
  if (sigaction(SIGSEGV, nullptr, &current) != 0) return;
  if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == &OnSegv) return;
  struct sigaction action {};
  action.sa_sigaction = &OnSegv;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, &previous_segv);
}

void SetAccess(Arena& a, int protection) {
  const size_t bytes = Accessible(a);
  if (bytes == 0) return;
  if (protection == PROT_NONE) EnsureHandler();
  mprotect(a.base, bytes, protection);
}

}  // namespace

void* DeviceAlloc(size_t bytes) {
  Arena& a = TheArena();
  std::lock_guard<std::mutex> lock(a.mutex);
  if (!Reserve(a)) return nullptr;
  const size_t size = (bytes == 0 ? kAlign : (bytes + kAlign - 1) / kAlign * kAlign);
  for (auto it = a.free_blocks.begin(); it != a.free_blocks.end(); ++it) {
    if (it->second < size) continue;
    const size_t offset = it->first, rest = it->second - size;
    a.free_blocks.erase(it);
    if (rest != 0) a.free_blocks[offset + size] = rest;
    a.used_blocks[offset] = size;
    return a.base + offset;
  }
  if (size > kReserved - a.high_water) {
    a.error = "cannot allocate " + std::to_string(bytes) + " bytes: the emulated device's " +
              std::to_string(kReserved >> 30) + " GiB are in use";
    return nullptr;
  }
  const size_t offset = a.high_water;
  a.high_water += size;
  if (a.open_count > 0) SetAccess(a, PROT_READ | PROT_WRITE);  // the new pages too
  a.used_blocks[offset] = size;
  return a.base + offset;
}

void DeviceRelease(void* p) {
  if (p == nullptr) return;
  Arena& a = TheArena();
  std::lock_guard<std::mutex> lock(a.mutex);
  const size_t offset = static_cast<size_t>(static_cast<uint8_t*>(p) - a.base);
  auto used = a.used_blocks.find(offset);
  if (used == a.used_blocks.end()) return;
  size_t start = offset, size = used->second;
  a.used_blocks.erase(used);
  auto next = a.free_blocks.find(start + size);
  if (next != a.free_blocks.end()) {
    size += next->second;
    a.free_blocks.erase(next);
  }
  auto after = a.free_blocks.lower_bound(start);
  if (after != a.free_blocks.begin()) {
    auto before = std::prev(after);
    if (before->first + before->second == start) {
      start = before->first;
      size += before->second;
      a.free_blocks.erase(before);
    }
  }
  a.free_blocks[start] = size;
}

const char* DeviceMemoryError() { return TheArena().error.c_str(); }

DeviceAccess::DeviceAccess() {
  Arena& a = TheArena();
  std::lock_guard<std::mutex> lock(a.mutex);
  if (a.open_count++ == 0) SetAccess(a, PROT_READ | PROT_WRITE);
}

DeviceAccess::~DeviceAccess() {
  Arena& a = TheArena();
  std::lock_guard<std::mutex> lock(a.mutex);
  if (--a.open_count == 0) SetAccess(a, PROT_NONE);
}

}  // namespace cuda
}  // namespace lockstep
