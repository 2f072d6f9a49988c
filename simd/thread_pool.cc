#include "simd/thread_pool.h"

#include "simd/fp_mode.h"

#include <stdlib.h>

#include <chrono>
#include <memory>

namespace lockstep {
namespace simd {

ThreadPool::ThreadPool(size_t num_threads) {
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  num_threads = 1;  // the single-thread WebAssembly builds have no threads to start
#endif
  if (num_threads < 1) num_threads = 1;
  ranges_.reset(new Range[num_threads]);
  for (size_t w = 1; w < num_threads; ++w) workers_.emplace_back([this, w] { WorkerLoop(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& t : workers_) t.join();
}

namespace {

thread_local bool in_pool_task = false;  // set while this thread runs a pool task

// How long a worker keeps looking for the next job before it sleeps: long enough to bridge the
// serial code between the parallel kernels of a training step, short enough not to take a core
// from other programs for long. WebAssembly's serial code runs slower and its wake-up is a
// round trip through JavaScript (Atomics.notify): with 100 us, a worker slept through most gaps
// of the LeNet-5 step, and the caller ran most of each short kernel alone before it woke.
#if defined(__EMSCRIPTEN__)
constexpr auto kSpin = std::chrono::microseconds(2000);
#else
constexpr auto kSpin = std::chrono::microseconds(100);
#endif

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins until done() holds, yielding the core after a while (a task's thread may be preempted).
template <class Done>
void SpinUntil(const Done& done) {
  for (unsigned i = 0; !done(); ++i) {
    if (i < 4096) {
      CpuRelax();
    } else {
      std::this_thread::yield();
    }
  }
}

std::atomic<IdleWork*> idle_work{nullptr};
std::atomic<int> idle_slices_running{0};

// A slice of the posted idle work, if any; true when one ran.
bool RunIdleSlice() {
  if (idle_work.load(std::memory_order_relaxed) == nullptr) return false;  // the common case, cheap
  idle_slices_running.fetch_add(1);
  IdleWork* work = idle_work.load();
  const bool ran = work != nullptr && work->RunSlice();
  idle_slices_running.fetch_sub(1);
  return ran;
}

}  // namespace

void PostIdleWork(IdleWork* work) { idle_work.store(work); }

void WithdrawIdleWork(IdleWork* work) {
  IdleWork* expected = work;
  idle_work.compare_exchange_strong(expected, nullptr);
  // Sequentially consistent: a worker counted in after this reads null; one counted in before is
  // waited for.
  SpinUntil([] { return idle_slices_running.load() == 0; });
}

void ThreadPool::RunTasks(const Task& task, size_t worker) {
  // Every job runs in the contract's floating-point mode on every thread, whatever the thread's
  // own mode was (a worker inherits its creator's, and a task may change it).
  const ContractFloatingPointScope fp_mode;
  in_pool_task = true;
  size_t finished = 0;
  const size_t threads = num_threads();
  for (size_t r = 0; r < threads; ++r) {  // its own range first, then the others in turn
    Range& range = ranges_[(worker + r) % threads];
    for (;;) {
      const size_t index = range.next.fetch_add(1, std::memory_order_relaxed);
      if (index >= range.end) break;
      task(index, worker);
      ++finished;
    }
  }
  in_pool_task = false;
  if (finished != 0) done_.fetch_add(finished, std::memory_order_release);  // publishes the outputs
}

// Waits for a job newer than *seen (spinning first, doing idle work when there is some, then
// asleep); false when the pool stops.
bool ThreadPool::WaitForJob(uint64_t* seen) {
  auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (unsigned i = 1;; ++i) {
    if (stopping_.load(std::memory_order_relaxed)) return false;
    const uint64_t generation = generation_.load(std::memory_order_acquire);
    if (generation != *seen) {
      *seen = generation;
      return true;
    }
    if (RunIdleSlice()) {  // busy with it: not yet time to sleep
      deadline = std::chrono::steady_clock::now() + kSpin;
      continue;
    }
    CpuRelax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() >= deadline) break;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  // Counted before the predicate reads generation_ (both sequentially consistent): a caller that
  // bumps generation_ then reads sleepers_ == 0 is one this worker's predicate sees.
  sleepers_.fetch_add(1);
  work_ready_.wait(lock, [&] { return stopping_.load() || generation_.load() != *seen; });
  sleepers_.fetch_sub(1);
  *seen = generation_.load();
  return !stopping_.load();
}

void ThreadPool::WorkerLoop(size_t worker) {
  uint64_t seen = 0;
  while (WaitForJob(&seen)) {
    // Join only the job just seen, and only while it is open: a worker that came too late touches
    // nothing of it (the caller may have returned already). Counted in first, then checked.
    joined_.fetch_add(1);
    if (!open_.load() || generation_.load() != seen) {
      joined_.fetch_sub(1, std::memory_order_release);
      continue;
    }
    RunTasks(*task_, worker);
    joined_.fetch_sub(1, std::memory_order_release);
  }
}

void ThreadPool::ParallelFor(size_t count, const Task& task) {
  if (workers_.empty() || count <= 1 || in_pool_task || !caller_mutex_.try_lock()) {
    const ContractFloatingPointScope fp_mode;
    for (size_t i = 0; i < count; ++i) task(i, 0);
    return;
  }
  std::lock_guard<std::mutex> caller(caller_mutex_, std::adopt_lock);
  task_ = &task;
  const size_t threads = num_threads();
  for (size_t w = 0; w < threads; ++w) {
    ranges_[w].next.store(w * count / threads, std::memory_order_relaxed);
    ranges_[w].end = (w + 1) * count / threads;
  }
  done_.store(0, std::memory_order_relaxed);
  open_.store(true);  // publishes the fields above to a worker that sees it open
  generation_.fetch_add(1);
  if (sleepers_.load() != 0) {
    // A worker between counting itself asleep and waiting holds mutex_: taking it here means the
    // worker either reads the new generation or is already waiting and gets the notification.
    { std::lock_guard<std::mutex> lock(mutex_); }
    work_ready_.notify_all();
  }
  RunTasks(task, 0);
  SpinUntil([&] { return done_.load(std::memory_order_acquire) == count; });
  open_.store(false);
  // Workers that joined leave as soon as they find no task to take; one that counts itself in
  // from now on sees the job closed.
  SpinUntil([&] { return joined_.load(std::memory_order_acquire) == 0; });
}

namespace {

size_t ThreadCountFromEnvironment() {
  if (const char* env = getenv("LOCKSTEP_NUM_THREADS")) {
    const long n = strtol(env, nullptr, 10);
    if (n >= 1 && n <= 1024) return static_cast<size_t>(n);
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : hw;
}

std::mutex default_pool_mutex;
std::shared_ptr<ThreadPool> default_pool;  // guarded by default_pool_mutex

}  // namespace

std::shared_ptr<ThreadPool> DefaultThreadPool() {
  std::lock_guard<std::mutex> lock(default_pool_mutex);
  if (!default_pool) default_pool = std::make_shared<ThreadPool>(ThreadCountFromEnvironment());
  return default_pool;
}

void SetDefaultThreadCount(size_t num_threads) {
  auto pool = std::make_shared<ThreadPool>(num_threads < 1 ? 1 : num_threads);
  std::shared_ptr<ThreadPool> old;
  {
    std::lock_guard<std::mutex> lock(default_pool_mutex);
    old = std::move(default_pool);
    default_pool = std::move(pool);
  }
  // `old` is released here, outside the lock: if no kernel holds it, its workers are joined now;
  // otherwise the last kernel using it frees it.
}

size_t DefaultThreadCount() {
  {
    std::lock_guard<std::mutex> lock(default_pool_mutex);
    if (default_pool) return default_pool->num_threads();
  }
  return DefaultThreadPool()->num_threads();
}

}  // namespace simd
}  // namespace lockstep
