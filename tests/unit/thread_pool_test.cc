// The kernel thread pool: every task runs exactly once and its writes are visible when ParallelFor
// returns, for any count and thread count, back to back (workers still spinning), after pauses
// (workers asleep), nested, from several callers at once, and while pools come and go; idle work
// done in the workers' waits.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "simd/thread_pool.h"

namespace lockstep {
namespace {

using simd::ThreadPool;

// Runs one job of `count` tasks and checks each ran once with a valid worker index.
void CheckJob(ThreadPool& pool, size_t count, uint32_t salt) {
  std::vector<uint32_t> out(count, 0);
  std::vector<std::atomic<int>> runs(count);
  std::atomic<bool> bad_worker{false};
  pool.ParallelFor(count, [&](size_t i, size_t worker) {
    if (worker >= pool.num_threads()) bad_worker = true;
    out[i] = static_cast<uint32_t>(i) * 2654435761u + salt;  // a plain write, read after the join
    runs[i].fetch_add(1, std::memory_order_relaxed);
  });
  CHECK_FALSE(bad_worker);
  size_t wrong = 0;
  for (size_t i = 0; i < count; ++i) {
    wrong += runs[i].load() != 1 || out[i] != static_cast<uint32_t>(i) * 2654435761u + salt;
  }
  CHECK(wrong == 0);
}

TEST_CASE("every task runs exactly once, back to back, for any count and thread count") {
  for (size_t threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    for (uint32_t rep = 0; rep < 300; ++rep) CheckJob(pool, rep % 37, rep);
  }
}

TEST_CASE("jobs after the workers went to sleep still run every task once") {
  ThreadPool pool(3);
  for (uint32_t rep = 0; rep < 6; ++rep) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // past the workers' spin
    CheckJob(pool, 16 + rep, rep);
  }
}

TEST_CASE("a task that calls ParallelFor runs the inner tasks itself") {
  ThreadPool pool(4);
  std::vector<std::atomic<int>> inner(8 * 8);
  pool.ParallelFor(8, [&](size_t i, size_t) {
    pool.ParallelFor(8, [&](size_t j, size_t) { inner[i * 8 + j].fetch_add(1); });
  });
  for (auto& n : inner) CHECK(n.load() == 1);
}

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)  // the single-thread WebAssembly builds start no threads
TEST_CASE("several threads calling one pool at once each get all their tasks run") {
  ThreadPool pool(2);
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&pool, &failures, c] {
      for (int rep = 0; rep < 200; ++rep) {
        const size_t count = static_cast<size_t>(1 + (rep + c) % 19);
        std::vector<std::atomic<int>> runs(count);
        pool.ParallelFor(count, [&](size_t i, size_t) { runs[i].fetch_add(1); });
        for (auto& n : runs) failures += n.load() != 1;
      }
    });
  }
  for (std::thread& t : callers) t.join();
  CHECK(failures.load() == 0);
}

TEST_CASE("each thread starts on its own contiguous range of the tasks") {
  // Every thread's first task waits (up to 10 s) until both threads are in one, so neither can
  // take the other's range first: the caller starts at task 0, the worker at task count / 2.
  ThreadPool pool(2);
  for (size_t count : {2, 9, 40}) {
    std::atomic<int> entered{0};
    std::atomic<size_t> first[2] = {{count}, {count}};
    pool.ParallelFor(count, [&](size_t i, size_t worker) {
      size_t none = count;
      if (!first[worker].compare_exchange_strong(none, i)) return;
      entered.fetch_add(1);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (entered.load() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    });
    CHECK(entered.load() == 2);
    CHECK(first[0].load() == 0);
    CHECK(first[1].load() == count / 2);
  }
}

#endif

TEST_CASE("pools created and destroyed right after a job, workers spinning or asleep") {
  for (int rep = 0; rep < 50; ++rep) {
    ThreadPool pool(1 + rep % 4);
    CheckJob(pool, 9, static_cast<uint32_t>(rep));
    if (rep % 10 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)  // the single-thread WebAssembly builds start no threads
// Idle work: done by the workers while they wait for a job (none runs on the caller), jobs still run
// every task once meanwhile, and once withdrawn no slice runs.
class CountedWork : public simd::IdleWork {
 public:
  explicit CountedWork(int slices) : left_(slices) {}
  bool RunSlice() override {
    if (left_.load() <= 0) return false;
    --left_;
    ran_on_.push_back(std::this_thread::get_id());  // one worker at a time in this test
    return true;
  }
  std::atomic<int> left_;
  std::vector<std::thread::id> ran_on_;
};

TEST_CASE("waiting workers do the posted idle work a slice at a time; withdrawn, none") {
  ThreadPool pool(2);
  CountedWork work(1000);
  CheckJob(pool, 8, 1);  // the worker is awake and waiting
  simd::PostIdleWork(&work);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (uint32_t rep = 0; work.left_.load() > 0 && std::chrono::steady_clock::now() < deadline; ++rep) {
    CheckJob(pool, 5, rep);  // jobs meanwhile wake the worker and run every task once
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  simd::WithdrawIdleWork(&work);
  CHECK(work.left_.load() == 0);
  size_t on_caller = 0;
  for (const std::thread::id& id : work.ran_on_) on_caller += id == std::this_thread::get_id();
  CHECK(on_caller == 0);
  work.left_ = 5;
  CheckJob(pool, 8, 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  CHECK(work.left_.load() == 5);
}
#endif

}  // namespace
}  // namespace lockstep
