// lockstep_math_bench: throughput of the correctly rounded elementary functions (simd/math.h) per
// SIMD target, one thread, in elements per second of CPU time (of wall time in WebAssembly).
//
// Each function gets inputs from the range where a training step calls it (GELU and erf around
// zero, exp of a softmax's shifted logits, ...); every call works on --n elements (default 4096:
// in and out stay in the L1 cache, so the figure is the arithmetic's, not the memory's). For every
// (function, target): a warm-up call, a calibration to --min-ms per sample, then --samples samples;
// prints min / median / max. It also checks that every target writes the same bits.
//
//   lockstep_math_bench [--fn LIST] [--targets LIST|best|all] [--n N] [--samples S] [--min-ms MS]
//                       [--range LOW HIGH] [--tsv]
// --range replaces every function's input range.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <string>
#include <vector>

#include "simd/math.h"
#include "simd/philox.h"
#include "simd/targets.h"
#include "simd/thread_pool.h"

namespace {

using lockstep::simd::MathFn;

struct Fn {
  std::string name;
  int kind;  // 0: Math, 1: PowInt
  MathFn fn;
  int exponent;
  float low, high;  // the inputs' range (uniform)
};

std::vector<Fn> AllFns() {
  return {
      {"exp", 0, MathFn::kExp, 0, -16.0f, 4.0f},
      {"log", 0, MathFn::kLog, 0, 1e-4f, 100.0f},
      {"tanh", 0, MathFn::kTanh, 0, -6.0f, 6.0f},
      {"sigmoid", 0, MathFn::kSigmoid, 0, -8.0f, 8.0f},
      {"erf", 0, MathFn::kErf, 0, -4.0f, 4.0f},
      {"gelu_erf", 0, MathFn::kGeluErf, 0, -6.0f, 6.0f},
      {"gelu_tanh", 0, MathFn::kGeluTanh, 0, -6.0f, 6.0f},
      {"softplus", 0, MathFn::kSoftplus, 0, -8.0f, 8.0f},
      {"rsqrt", 0, MathFn::kRsqrt, 0, 1e-4f, 100.0f},
      {"pow_int_3", 1, MathFn::kExp, 3, -4.0f, 4.0f},
      {"pow_int_-2", 1, MathFn::kExp, -2, 0.1f, 4.0f},
  };
}

// Process CPU time; WebAssembly (Node) has no CPU-time clock, so wall time there.
double CpuSeconds() {
  timespec ts;
#if defined(__EMSCRIPTEN__)
  clock_gettime(CLOCK_MONOTONIC, &ts);
#else
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
#endif
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

void Run(const Fn& f, const float* in, float* out, size_t n) {
  if (f.kind == 0) {
    lockstep::simd::Math(f.fn, in, out, n);
  } else {
    lockstep::simd::PowInt(in, f.exponent, out, n);
  }
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string fns = "all", targets = "all";
  size_t n = 4096;
  int samples = 7;
  double min_ms = 100;
  bool tsv = false;
  float low = 0, high = 0;  // 0, 0: each function's own range
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--fn" && i + 1 < argc) fns = argv[++i];
    else if (a == "--targets" && i + 1 < argc) targets = argv[++i];
    else if (a == "--n" && i + 1 < argc) n = strtoull(argv[++i], nullptr, 10);
    else if (a == "--samples" && i + 1 < argc) samples = atoi(argv[++i]);
    else if (a == "--min-ms" && i + 1 < argc) min_ms = atof(argv[++i]);
    else if (a == "--tsv") tsv = true;
    else if (a == "--range" && i + 2 < argc) {
      low = strtof(argv[++i], nullptr);
      high = strtof(argv[++i], nullptr);
    }
    else {
      fprintf(stderr,
              "usage: lockstep_math_bench [--fn LIST] [--targets LIST|best|all] [--n N] "
              "[--samples S] [--min-ms MS] [--range LOW HIGH] [--tsv]\n");
      return 2;
    }
  }
  if (n == 0 || samples < 1) return 2;
  lockstep::simd::SetDefaultThreadCount(1);

  std::vector<lockstep::simd::Target> run;
  const std::vector<lockstep::simd::Target> runnable = lockstep::simd::RunnableTargets();
  if (targets == "all") {
    run = runnable;
  } else if (targets == "best") {
    run.push_back(runnable.front());
  } else {
    for (const std::string& name : Split(targets)) {
      auto it = std::find_if(runnable.begin(), runnable.end(),
                             [&](const lockstep::simd::Target& t) { return t.name == name; });
      if (it == runnable.end()) {
        fprintf(stderr, "target %s is not runnable here\n", name.c_str());
        return 2;
      }
      run.push_back(*it);
    }
  }

  printf(tsv ? "function\ttarget\tmin\tmedian\tmax\n"
             : "%-11s %-8s %12s %12s %12s   (Melem/s, n = %zu)\n",
         "function", "target", "min", "median", "max", n);
  int failures = 0;
  for (const Fn& f : AllFns()) {
    if (fns != "all") {
      const std::vector<std::string> want = Split(fns);
      if (std::find(want.begin(), want.end(), f.name) == want.end()) continue;
    }
    std::vector<float> in(n), out(n), first;
    lockstep::simd::PhiloxUniformRange(2026, 17, 0, low < high ? low : f.low,
                                       low < high ? high : f.high, in.data(), n);
    for (const lockstep::simd::Target& t : run) {
      lockstep::simd::ForceTarget(t.bits);
      Run(f, in.data(), out.data(), n);  // warm-up
      size_t calls = 1;
      for (;;) {
        const double t0 = CpuSeconds();
        for (size_t c = 0; c < calls; ++c) Run(f, in.data(), out.data(), n);
        if ((CpuSeconds() - t0) * 1e3 >= min_ms || calls >= (size_t{1} << 30)) break;
        calls *= 2;
      }
      std::vector<double> rates;
      for (int s = 0; s < samples; ++s) {
        const double t0 = CpuSeconds();
        for (size_t c = 0; c < calls; ++c) Run(f, in.data(), out.data(), n);
        rates.push_back(static_cast<double>(n) * calls / (CpuSeconds() - t0) * 1e-6);
      }
      std::sort(rates.begin(), rates.end());
      printf(tsv ? "%s\t%s\t%.1f\t%.1f\t%.1f\n" : "%-11s %-8s %12.1f %12.1f %12.1f\n",
             f.name.c_str(), t.name.c_str(), rates.front(), rates[rates.size() / 2], rates.back());
      fflush(stdout);
      if (first.empty()) {
        first = out;
      } else if (memcmp(first.data(), out.data(), n * sizeof(float)) != 0) {
        fprintf(stderr, "%s: %s gives other bits than %s\n", f.name.c_str(), t.name.c_str(),
                run.front().name.c_str());
        ++failures;
      }
    }
  }
  lockstep::simd::ForceTarget(0);
  return failures ? 1 : 0;
}
