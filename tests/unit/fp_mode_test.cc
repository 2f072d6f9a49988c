// lockstep computes in the contract's floating-point mode whatever the calling thread's mode is
// (simd/fp_mode.h): under flush-to-zero and denormals-are-zero (x86) or FZ, DN and AH (AArch64) set
// by the caller, inherited by a pool worker, or left behind by a task, ops keep subnormals, and
// the caller gets its own mode back. WebAssembly has no such state; s390x's is only reported.
#include <doctest/doctest.h>

#include <stdint.h>
#include <string.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/fp_environment.h"
#include "core/ops.h"
#include "simd/fp_mode.h"
#include "simd/thread_pool.h"

namespace lockstep {
namespace {

#if defined(__x86_64__) || defined(__aarch64__)

// The mode a speed-minded library sets: FTZ and DAZ on x86; FZ, DN and AH on AArch64 (AH only
// where the CPU has FEAT_AFP; elsewhere the bit reads as 0 and the others still flush).
uint64_t NonContractMode(uint64_t control) {
#if defined(__x86_64__)
  return control | (1u << 15) | (1u << 6);
#else
  return control | (uint64_t{1} << 24) | (uint64_t{1} << 25) | (uint64_t{1} << 1);
#endif
}

// Sets the non-contract mode on this thread for its lifetime.
class CallerMode {
 public:
  CallerMode() : saved_(simd::ReadFloatingPointControl()) {
    simd::WriteFloatingPointControl(NonContractMode(saved_));
    set_ = simd::ReadFloatingPointControl();
  }
  ~CallerMode() { simd::WriteFloatingPointControl(saved_); }
  uint64_t set() const { return set_; }

 private:
  uint64_t saved_;
  uint64_t set_;
};

uint32_t Bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

// Subnormal inputs of every size, and values whose products and sums are subnormal.
std::vector<float> SubnormalValues(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t bits = 1u + static_cast<uint32_t>((i * 2654435761u) % 0x007FFFFFu);
    memcpy(&v[i], &bits, 4);
    if (i % 3 == 0) v[i] = -v[i];
  }
  return v;
}

// x * 1, x + x and exp(x - 100) (results down to 3.7e-44, subnormal), all in one vector.
std::vector<float> Compute(const Tensor& x) {
  std::vector<float> out = MulScalar(x, 1.0f).ToVector();
  const std::vector<float> sum = Add(x, x).ToVector();
  const std::vector<float> e = Exp(AddScalar(MulScalar(x, 1e38f), -100.0f)).ToVector();
  out.insert(out.end(), sum.begin(), sum.end());
  out.insert(out.end(), e.begin(), e.end());
  return out;
}

size_t CountDifferentBits(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  size_t different = 0;
  for (size_t i = 0; i < a.size(); ++i) different += Bits(a[i]) != Bits(b[i]);
  return different;
}

// Restores the default pool's size after a test that changed it.
class DefaultThreads {
 public:
  DefaultThreads() : saved_(simd::DefaultThreadCount()) {}
  ~DefaultThreads() { simd::SetDefaultThreadCount(saved_); }

 private:
  size_t saved_;
};

TEST_CASE("the non-contract mode really flushes subnormals on this CPU (else the tests below prove nothing)") {
  volatile float x = 1e-39f, one = 1.0f;  // volatile: computed at run time, in the mode set
  float product;
  {
    const CallerMode mode;
    product = x * one;
  }
  CHECK(product == 0.0f);
  CHECK(x * one == 1e-39f);
}

TEST_CASE("ops under a caller's flush-to-zero keep subnormals, and the caller's mode is given back") {
  const std::vector<float> values = SubnormalValues(1000);
  const Tensor x = Tensor::FromVector({1000}, values);
  const std::vector<float> expected = Compute(x);
  CHECK(expected[0] == values[0]);  // a subnormal times one is itself
  std::vector<float> got;
  {
    const CallerMode mode;
    CHECK_FALSE(DescribeFloatingPointProblem().empty());
    CHECK(DescribeFloatingPointEnvironment().find("lockstep computes in the contract's mode") != std::string::npos);
    got = Compute(x);
    CHECK(simd::ReadFloatingPointControl() == mode.set());  // the caller's mode, untouched
  }
  CHECK(CountDifferentBits(got, expected) == 0);
  CHECK(DescribeFloatingPointProblem().empty());
}

TEST_CASE("backward under a caller's flush-to-zero gives the contract's gradient") {
  const std::vector<float> values = SubnormalValues(64);
  auto gradient = [&] {
    Tensor w = Tensor::FromVector({64}, values);
    w.RequiresGrad();
    Sum(Mul(w, w)).Backward();  // 2w: subnormal
    return w.grad().ToVector();
  };
  const std::vector<float> expected = gradient();
  std::vector<float> got;
  {
    const CallerMode mode;
    got = gradient();
  }
  CHECK(CountDifferentBits(got, expected) == 0);
}

TEST_CASE("pool workers that inherited a non-contract mode compute in the contract's") {
  const DefaultThreads restore;
  simd::SetDefaultThreadCount(1);
  const size_t n = size_t{1} << 18;  // many chunks: every worker takes some
  const Tensor x = Tensor::FromVector({static_cast<int64_t>(n)}, SubnormalValues(n));
  const std::vector<float> expected = Compute(x);
  {
    const CallerMode mode;
    simd::SetDefaultThreadCount(2);  // the workers start with the caller's mode
  }
  CHECK(CountDifferentBits(Compute(x), expected) == 0);
}

TEST_CASE("a task that changes its thread's mode does not change the next job's results") {
  const DefaultThreads restore;
  simd::SetDefaultThreadCount(2);
  const std::shared_ptr<simd::ThreadPool> pool = simd::DefaultThreadPool();
  // Until a worker (not the caller) has run one, tasks set the non-contract mode and leave it.
  // The caller's tasks wait (up to a few seconds) for a worker to take one, so a busy machine that
  // is slow to wake the worker cannot let the caller run them all.
  std::atomic<bool> worker_changed{false};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (int attempt = 0; attempt < 1000 && !worker_changed; ++attempt) {
    pool->ParallelFor(64, [&](size_t, size_t worker) {
      simd::WriteFloatingPointControl(NonContractMode(simd::ReadFloatingPointControl()));
      if (worker != 0) {
        worker_changed = true;
        return;
      }
      while (!worker_changed && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    });
  }
  REQUIRE(worker_changed);
  CHECK(DescribeFloatingPointProblem().empty());  // the caller's own mode came back too
  const size_t n = size_t{1} << 18;
  std::vector<float> values = SubnormalValues(n);
  std::vector<float> out(n, 1.0f);
  std::atomic<size_t> on_worker{0};
  pool->ParallelFor(64, [&](size_t index, size_t worker) {
    if (worker != 0) on_worker.fetch_add(1);
    for (size_t i = index * (n / 64); i < (index + 1) * (n / 64); ++i) {
      volatile float v = values[i];
      out[i] = v * 1.0f;
    }
  });
  CHECK(CountDifferentBits(out, values) == 0);
  INFO("tasks run on the worker: " << on_worker.load());
}

#endif  // x86-64 or AArch64

}  // namespace
}  // namespace lockstep
