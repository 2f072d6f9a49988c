// A fixed pool of worker threads for kernels that parallelise over independent outputs. Which
// thread runs a task never changes a result: every task owns its outputs and computes them in the
// contract's fixed order (docs/numerics.md, rule 4).
#ifndef LOCKSTEP_SIMD_THREAD_POOL_H_
#define LOCKSTEP_SIMD_THREAD_POOL_H_

#include <stddef.h>
#include <stdint.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "simd/fp_mode.h"

namespace lockstep {
namespace simd {

class ThreadPool {
 public:
  // num_threads counts the calling thread; 1 runs everything inline and starts no thread.
  explicit ThreadPool(size_t num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  size_t num_threads() const { return workers_.size() + 1; }

  // Runs task(index, worker) for every index in [0, count) and returns when all are done. Called
  // from inside a task, or while another thread is using the pool, it runs the tasks itself, in
  // order: nesting and concurrent callers are safe (the contract makes results independent of how
  // tasks are spread).
  // worker in [0, num_threads()) identifies per-thread scratch space. Every task runs in the
  // contract's floating-point mode (simd/fp_mode.h); each thread gets its own mode back after.
  void ParallelFor(size_t count, const std::function<void(size_t index, size_t worker)>& task);

 private:
  using Task = std::function<void(size_t, size_t)>;
  void WorkerLoop(size_t worker);
  bool WaitForJob(uint64_t* seen);
  void RunTasks(const Task& task, size_t worker);

  // Why it is built this way (a training step calls it hundreds of times, often on little work):
  // workers spin for a short while after each job before they sleep, so back-to-back jobs start
  // without a wake-up; the caller runs tasks too and waits only for tasks that were taken and for
  // workers that joined the job, never for a worker still asleep or waking up.
  // Joining and closing a job take no lock (a contended one cost a futex round trip each in
  // WebAssembly): a worker counts itself in joined_, then checks that the job it saw is still
  // open; the caller closes it, then waits for joined_ to reach 0. Both sides use sequentially
  // consistent operations, so either the worker sees the job closed or the caller sees it joined,
  // and task_ and ranges_ stay valid while any worker is in.
  // Thread w first takes the tasks of its own range, the w-th of num_threads() contiguous
  // ranges, then those left in the others. Consecutive kernels over one batch split it alike, so
  // each thread mostly reads what it wrote itself, still in its own core's cache: taken in one
  // shared order, half of every pass over an activation read the other core's writes.
  struct alignas(64) Range {
    std::atomic<size_t> next{0};  // the next task index to claim
    size_t end = 0;               // written before open_ publishes it
  };
  std::unique_ptr<Range[]> ranges_;
  std::vector<std::thread> workers_;
  std::mutex caller_mutex_;  // held by the one caller whose tasks the workers run
  std::mutex mutex_;         // only for sleeping: work_ready_'s predicate
  std::condition_variable work_ready_;
  const Task* task_ = nullptr;  // written before open_ and generation_ publish it
  std::atomic<bool> open_{false};     // workers may join the current job
  std::atomic<size_t> sleepers_{0};   // workers going to sleep or asleep on work_ready_
  std::atomic<bool> stopping_{false};
  // Each on its own cache line: spinning workers read generation_ while tasks are claimed and
  // finished on the others.
  alignas(64) std::atomic<uint64_t> generation_{0};  // bumped by every job
  alignas(64) std::atomic<size_t> done_{0};          // tasks finished
  alignas(64) std::atomic<size_t> joined_{0};        // workers inside the current job
};

// Background work that a pool's workers do while they wait for their next job, a slice at a time:
// on a machine whose every core trains, the time a worker spends waiting between kernels is the
// only spare time there is (a receipt's step hashing uses it: core/receipt/step_hasher.cc). Work
// done this way changes no kernel's result; a job published meanwhile waits at most one slice.
class IdleWork {
 public:
  virtual ~IdleWork() = default;
  // Does a few microseconds of work; false when there is none to do now.
  virtual bool RunSlice() = 0;
};
// At most one piece of work is posted at a time (a later post replaces it). Withdraw returns once
// no worker is inside a slice of `work`.
void PostIdleWork(IdleWork* work);
void WithdrawIdleWork(IdleWork* work);

// The pool kernels use unless given one. Its size comes from SetDefaultThreadCount, else the
// LOCKSTEP_NUM_THREADS environment variable, else the number of hardware threads (always 1 in
// the single-thread WebAssembly builds; the pthreads build runs its threads as Web Workers).
// Safe from any thread: the pool is created once under a lock, and a caller holds its pool for
// as long as it uses it, so SetDefaultThreadCount from another thread takes effect for the next
// kernel call and frees the old pool only when its last user is done.
std::shared_ptr<ThreadPool> DefaultThreadPool();
void SetDefaultThreadCount(size_t num_threads);
// The default pool's size, without creating it if it does not exist yet.
size_t DefaultThreadCount();

// Runs body(first, count) over [0, n) in chunks of `chunk` elements (the last one shorter): on the
// default pool when there are at least two chunks and it has more than one thread, else in one
// call. For kernels whose every output depends on its own inputs alone, so the split never
// changes a bit (chunk a multiple of every target's vector length keeps the vector loops whole).
template <class Body>
void ForEachChunk(size_t n, size_t chunk, const Body& body) {
  if (n < 2 * chunk) {
    const ContractFloatingPointScope fp_mode;
    body(size_t{0}, n);
    return;
  }
  const std::shared_ptr<ThreadPool> held = DefaultThreadPool();  // alive until the tasks are done
  if (held->num_threads() == 1) {
    const ContractFloatingPointScope fp_mode;
    body(size_t{0}, n);
    return;
  }
  held->ParallelFor((n + chunk - 1) / chunk, [&](size_t index, size_t) {
    const size_t first = index * chunk;
    body(first, n - first < chunk ? n - first : chunk);
  });
}

// body(i) for i < items, each item independent: on `pool` when it has more than one thread, there
// are several items and `work` (multiply-adds or floats moved, in all) is worth handing out; else
// in order on the calling thread.
template <class Body>
void ForEachItem(ThreadPool* pool, size_t items, size_t work, const Body& body) {
  const size_t threads = pool == nullptr ? 1 : pool->num_threads();
  if (threads > 1 && items > 1 && work >= (size_t{1} << 16)) {
    pool->ParallelFor(items, [&](size_t i, size_t /*worker*/) { body(i); });
  } else {
    for (size_t i = 0; i < items; ++i) body(i);
  }
}

// ForEachChunk over `items` independent items of `item_size` elements each, in chunks of about
// 2^15 elements (at least one item): small enough to spread over the pool, large enough that a
// task's work outweighs handing it out.
template <class Body>
void ForEachItemChunk(size_t items, size_t item_size, const Body& body) {
  constexpr size_t kChunkElements = size_t{1} << 15;
  const size_t per_chunk = item_size >= kChunkElements ? 1 : kChunkElements / (item_size == 0 ? 1 : item_size);
  ForEachChunk(items, per_chunk, body);
}

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_THREAD_POOL_H_
