#include "simd/thread_pool.h"

#include <stdlib.h>

#include <memory>

namespace lockstep {
namespace simd {

ThreadPool::ThreadPool(size_t num_threads) {
#ifdef __EMSCRIPTEN__
  num_threads = 1;  // the WebAssembly builds are single-threaded
#endif
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
}  // namespace

void ThreadPool::RunTasks(size_t worker) {
  in_pool_task = true;
  for (;;) {
    const size_t index = next_.fetch_add(1);
    if (index >= count_) break;
    (*task_)(index, worker);
  }
  in_pool_task = false;
}

void ThreadPool::WorkerLoop(size_t worker) {
  size_t seen_generation = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_ready_.wait(lock, [&] { return stopping_ || generation_ != seen_generation; });
      if (stopping_) return;
      seen_generation = generation_;
    }
    RunTasks(worker);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--busy_workers_ == 0) work_done_.notify_one();
    }
  }
}

void ThreadPool::ParallelFor(size_t count, const std::function<void(size_t, size_t)>& task) {
  if (workers_.empty() || count <= 1 || in_pool_task || !caller_mutex_.try_lock()) {
    for (size_t i = 0; i < count; ++i) task(i, 0);
    return;
  }
  std::lock_guard<std::mutex> caller(caller_mutex_, std::adopt_lock);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = &task;
    count_ = count;
    next_.store(0);
    busy_workers_ = workers_.size();
    ++generation_;
  }
  work_ready_.notify_all();
  RunTasks(0);
  std::unique_lock<std::mutex> lock(mutex_);
  work_done_.wait(lock, [&] { return busy_workers_ == 0; });
  task_ = nullptr;
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
