// lockstep_peak_flops: the machine's peak float32 rate for multiply-then-add WITHOUT fusion (the
// only form the numerical contract allows), the ceiling for a K-sequential GEMM.
//
// Each chain is acc = acc + acc * m with m = 2^-30: the product is far below half an ulp of acc,
// so acc never changes (no overflow, no subnormals), but the CPU still executes one multiply and
// one add per step, each depending on the previous step. C independent chains hide the latency;
// the kernel is built for every Highway target (and, like every file here, with -ffp-contract=off:
// the objdump check in bench/run-gemm.sh confirms there is no vfmadd). Flops = 2 * lanes * C per
// step. Reports, per target and thread count, the best over chain counts (and each count).
//
// Built a second time as lockstep_fused_peak_flops (LOCKSTEP_PEAK_FUSED=1), each step is one
// fused multiply-add instead (Highway's MulAdd: FMA where the target has it): the rate a peer's
// kernels built on FMA can reach, which the contract's cannot use. Where the FMA units also do the
// separate multiplies and adds (Intel's cores with 512-bit vectors) it is twice the
// multiply-then-add rate; where adders of their own run beside them (AMD's Zen) about the same.
// The real-models table prints both. (A binary of its own: lockstep_peak_flops stays free of FMA
// instructions, which bench/run-gemm.sh checks.)
//
//   lockstep_peak_flops [--targets LIST|best|all] [--threads LIST] [--ms MS] [--clock wall|cpu] [--tsv]
//
// --clock cpu: each thread divides its flops by its own CPU time (CLOCK_THREAD_CPUTIME_ID) and the
// rates are added: the machine's rate while the code runs, on a machine shared with other work.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#ifndef LOCKSTEP_PEAK_FUSED
#define LOCKSTEP_PEAK_FUSED 0
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/peak_flops.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace bench {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Runs `steps` steps of C chains; returns a value that depends on every chain (so nothing is
// optimised away). Written with named variables, not an array, so it also builds for sizeless
// vector types (SVE, RVV).
template <int C>
HWY_NOINLINE float ChainsT(uint64_t steps, float seed) {
  const hn::ScalableTag<float> d;
  const auto m = hn::Set(d, 9.313225746154785e-10f);  // 2^-30
#define LOCKSTEP_PEAK_DECL(i) auto v##i = hn::Set(d, seed + static_cast<float>(i));
  LOCKSTEP_PEAK_DECL(0) LOCKSTEP_PEAK_DECL(1) LOCKSTEP_PEAK_DECL(2) LOCKSTEP_PEAK_DECL(3)
  LOCKSTEP_PEAK_DECL(4) LOCKSTEP_PEAK_DECL(5) LOCKSTEP_PEAK_DECL(6) LOCKSTEP_PEAK_DECL(7)
  LOCKSTEP_PEAK_DECL(8) LOCKSTEP_PEAK_DECL(9) LOCKSTEP_PEAK_DECL(10) LOCKSTEP_PEAK_DECL(11)
  LOCKSTEP_PEAK_DECL(12) LOCKSTEP_PEAK_DECL(13) LOCKSTEP_PEAK_DECL(14) LOCKSTEP_PEAK_DECL(15)
  LOCKSTEP_PEAK_DECL(16) LOCKSTEP_PEAK_DECL(17) LOCKSTEP_PEAK_DECL(18) LOCKSTEP_PEAK_DECL(19)
  LOCKSTEP_PEAK_DECL(20) LOCKSTEP_PEAK_DECL(21) LOCKSTEP_PEAK_DECL(22) LOCKSTEP_PEAK_DECL(23)
#undef LOCKSTEP_PEAK_DECL
  for (uint64_t s = 0; s < steps; ++s) {
#if LOCKSTEP_PEAK_FUSED
#define LOCKSTEP_PEAK_STEP(i) \
  if (C > i) v##i = hn::MulAdd(v##i, m, v##i);
#else
#define LOCKSTEP_PEAK_STEP(i) \
  if (C > i) v##i = hn::Add(v##i, hn::Mul(v##i, m));
#endif
    LOCKSTEP_PEAK_STEP(0) LOCKSTEP_PEAK_STEP(1) LOCKSTEP_PEAK_STEP(2) LOCKSTEP_PEAK_STEP(3)
    LOCKSTEP_PEAK_STEP(4) LOCKSTEP_PEAK_STEP(5) LOCKSTEP_PEAK_STEP(6) LOCKSTEP_PEAK_STEP(7)
    LOCKSTEP_PEAK_STEP(8) LOCKSTEP_PEAK_STEP(9) LOCKSTEP_PEAK_STEP(10) LOCKSTEP_PEAK_STEP(11)
    LOCKSTEP_PEAK_STEP(12) LOCKSTEP_PEAK_STEP(13) LOCKSTEP_PEAK_STEP(14) LOCKSTEP_PEAK_STEP(15)
    LOCKSTEP_PEAK_STEP(16) LOCKSTEP_PEAK_STEP(17) LOCKSTEP_PEAK_STEP(18) LOCKSTEP_PEAK_STEP(19)
    LOCKSTEP_PEAK_STEP(20) LOCKSTEP_PEAK_STEP(21) LOCKSTEP_PEAK_STEP(22) LOCKSTEP_PEAK_STEP(23)
#undef LOCKSTEP_PEAK_STEP
  }
  auto sum = hn::Zero(d);
#define LOCKSTEP_PEAK_SUM(i) \
  if (C > i) sum = hn::Add(sum, v##i);
  LOCKSTEP_PEAK_SUM(0) LOCKSTEP_PEAK_SUM(1) LOCKSTEP_PEAK_SUM(2) LOCKSTEP_PEAK_SUM(3)
  LOCKSTEP_PEAK_SUM(4) LOCKSTEP_PEAK_SUM(5) LOCKSTEP_PEAK_SUM(6) LOCKSTEP_PEAK_SUM(7)
  LOCKSTEP_PEAK_SUM(8) LOCKSTEP_PEAK_SUM(9) LOCKSTEP_PEAK_SUM(10) LOCKSTEP_PEAK_SUM(11)
  LOCKSTEP_PEAK_SUM(12) LOCKSTEP_PEAK_SUM(13) LOCKSTEP_PEAK_SUM(14) LOCKSTEP_PEAK_SUM(15)
  LOCKSTEP_PEAK_SUM(16) LOCKSTEP_PEAK_SUM(17) LOCKSTEP_PEAK_SUM(18) LOCKSTEP_PEAK_SUM(19)
  LOCKSTEP_PEAK_SUM(20) LOCKSTEP_PEAK_SUM(21) LOCKSTEP_PEAK_SUM(22) LOCKSTEP_PEAK_SUM(23)
#undef LOCKSTEP_PEAK_SUM
  return hn::GetLane(sum);
}

size_t LanesF32() { return hn::Lanes(hn::ScalableTag<float>()); }
float Chains8(uint64_t s, float x) { return ChainsT<8>(s, x); }
float Chains12(uint64_t s, float x) { return ChainsT<12>(s, x); }
float Chains14(uint64_t s, float x) { return ChainsT<14>(s, x); }
float Chains16(uint64_t s, float x) { return ChainsT<16>(s, x); }
float Chains24(uint64_t s, float x) { return ChainsT<24>(s, x); }
int64_t CompiledFor() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace bench
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lockstep {
namespace bench {

HWY_EXPORT(LanesF32);
HWY_EXPORT(Chains8);
HWY_EXPORT(Chains12);
HWY_EXPORT(Chains14);
HWY_EXPORT(Chains16);
HWY_EXPORT(Chains24);

using ChainsFn = float (*)(uint64_t, float);

double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

volatile float g_sink;
bool g_cpu_clock = false;

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

// GFLOP/s of `threads` threads each running fn for `steps` steps at once: total flops over the
// wall time, or (--clock cpu) the sum of each thread's flops over its own CPU time.
double Measure(ChainsFn fn, int chains, size_t lanes, uint64_t steps, size_t threads) {
  std::vector<std::thread> pool;
  std::vector<float> out(threads);
  std::vector<double> cpu(threads);
  const double flops_per_thread = 2.0 * lanes * chains * steps;
  auto run = [&](size_t t) {
    const double c0 = ThreadCpuSeconds();
    out[t] = fn(steps, 1.0f + t);
    cpu[t] = ThreadCpuSeconds() - c0;
  };
  const double t0 = Seconds();
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(run, t);
  run(0);
  for (auto& th : pool) th.join();
  const double dt = Seconds() - t0;
  for (float v : out) g_sink = g_sink + v;
  if (!g_cpu_clock) return flops_per_thread * threads / dt * 1e-9;
  double rate = 0;
  for (double c : cpu) rate += flops_per_thread / c * 1e-9;
  return rate;
}

}  // namespace bench
}  // namespace lockstep

int main(int argc, char** argv) {
  using namespace lockstep::bench;
  std::string targets_arg = "best", threads_arg = "1,2";
  double ms = 200;
  bool tsv = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--targets" && i + 1 < argc) {
      targets_arg = argv[++i];
    } else if (a == "--threads" && i + 1 < argc) {
      threads_arg = argv[++i];
    } else if (a == "--ms" && i + 1 < argc) {
      ms = atof(argv[++i]);
    } else if (a == "--tsv") {
      tsv = true;
    } else if (a == "--clock" && i + 1 < argc) {
      const std::string c = argv[++i];
      if (c != "wall" && c != "cpu") {
        fprintf(stderr, "--clock wants wall or cpu\n");
        return 2;
      }
      g_cpu_clock = c == "cpu";
    } else {
      fprintf(stderr,
              "usage: lockstep_peak_flops [--targets LIST|best|all] [--threads LIST] [--ms MS]\n"
              "                           [--clock wall|cpu] [--tsv]\n");
      return a == "-h" || a == "--help" ? 0 : 2;
    }
  }
  std::vector<int64_t> targets;
  for (int64_t bits : hwy::SupportedAndGeneratedTargets()) {
    const bool all = targets_arg == "all";
    const bool best = targets_arg == "best" && targets.empty();
    bool named = false;
    for (const std::string& n : Split(targets_arg, ',')) named |= strcasecmp(n.c_str(), hwy::TargetName(bits)) == 0;
    if (all || best || named) targets.push_back(bits);
  }
  if (targets.empty()) {
    fprintf(stderr, "no runnable target matches '%s'\n", targets_arg.c_str());
    return 2;
  }
  // 16 registers (SSE, AVX2) hold 14 chains plus the constant and a temporary; 16 and 24 chains
  // spill there but fit the 32 registers of AVX-512. 12 already cover the mul+add latency of
  // Zen 3 (3 + 3 cycles at 2 multiplies and 2 adds per cycle); 8 do not.
  constexpr int kVariants = 5;
  const int kChains[kVariants] = {8, 12, 14, 16, 24};
  if (tsv) {
    printf("# lockstep_peak_flops clock=%s\n", g_cpu_clock ? "cpu" : "wall");
    printf("impl\ttarget\tthreads\tlanes\tchains\tgflops\n");
  } else {
    printf("peak float32 %s, independent chains, %g ms per measurement (%s clock)\n",
           LOCKSTEP_PEAK_FUSED ? "fused multiply-add (FMA where the target has it: not the contract's)"
                               : "multiply-then-add (no FMA)",
           ms, g_cpu_clock ? "thread CPU" : "wall");
    printf("%-8s %7s %5s  %s\n", "target", "threads", "lanes", "GFLOP/s for 8 / 12 / 14 / 16 / 24 chains -> best");
  }
  for (int64_t bits : targets) {
    hwy::SetSupportedTargetsForTest(bits);
    const size_t lanes = HWY_DYNAMIC_DISPATCH(LanesF32)();
    ChainsFn fns[kVariants];
    // HWY_DYNAMIC_DISPATCH yields the function chosen for the current (forced) target.
    fns[0] = [](uint64_t s, float x) { return HWY_DYNAMIC_DISPATCH(Chains8)(s, x); };
    fns[1] = [](uint64_t s, float x) { return HWY_DYNAMIC_DISPATCH(Chains12)(s, x); };
    fns[2] = [](uint64_t s, float x) { return HWY_DYNAMIC_DISPATCH(Chains14)(s, x); };
    fns[3] = [](uint64_t s, float x) { return HWY_DYNAMIC_DISPATCH(Chains16)(s, x); };
    fns[4] = [](uint64_t s, float x) { return HWY_DYNAMIC_DISPATCH(Chains24)(s, x); };
    for (const std::string& ts : Split(threads_arg, ',')) {
      const size_t threads = static_cast<size_t>(atoi(ts.c_str()));
      if (threads == 0) continue;
      double best = 0;
      double rates[kVariants];
      for (int v = 0; v < kVariants; ++v) {
        // Calibrate on one thread: steps for about `ms` milliseconds.
        uint64_t steps = 1 << 16;
        for (;;) {
          const double t0 = Seconds();
          g_sink = g_sink + fns[v](steps, 1.0f);
          const double dt = Seconds() - t0;
          if (dt > 0.02) {
            steps = static_cast<uint64_t>(steps * (1e-3 * ms / dt)) + 1;
            break;
          }
          steps *= 4;
        }
        double r = 0;
        // Peak is a best case: the best of 10 short runs (a shared machine disturbs some).
        for (int rep = 0; rep < 10; ++rep) r = std::max(r, Measure(fns[v], kChains[v], lanes, steps / 10 + 1, threads));
        rates[v] = r;
        best = std::max(best, r);
        if (tsv) printf("peak\t%s\t%zu\t%zu\t%d\t%.2f\n", hwy::TargetName(bits), threads, lanes, kChains[v], r);
      }
      if (tsv) {
        printf("peak\t%s\t%zu\t%zu\tbest\t%.2f\n", hwy::TargetName(bits), threads, lanes, best);
      } else {
        printf("%-8s %7zu %5zu  %.1f / %.1f / %.1f / %.1f / %.1f -> %.1f\n", hwy::TargetName(bits), threads,
               lanes, rates[0], rates[1], rates[2], rates[3], rates[4], best);
      }
      fflush(stdout);
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  return 0;
}
#endif  // HWY_ONCE
