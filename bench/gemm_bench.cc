// lockstep_gemm_bench: GFLOP/s of lockstep::simd::Gemm per SIMD target and thread count.
//
// For every (shape, target, threads): one warm-up call, a calibration that doubles the number of
// calls until a batch lasts --min-ms, then --samples timed samples of that many calls; GFLOP/s = 2*m*n*k*calls / seconds. Prints
// min / median / max over the samples. It also checks the contract while it is at it: the output
// of every (target, threads) run of a shape must be bit-identical to the first one.
//
//   lockstep_gemm_bench [--quick] [--sizes LIST] [--targets LIST|best|all] [--threads LIST]
//                       [--samples N] [--min-ms MS] [--clock wall|cpu] [--tsv]
//
// --clock cpu divides by the process's CPU time instead of the wall time, times the thread count:
// on a machine shared with other work it measures what the code does while it runs (exact for one
// thread; with more, any time a thread spends waiting lowers the figure).
// A shape is MxNxK (or one number for a square product), optionally followed by :TT with T in
// {N, T} for op(A), op(B) (e.g. 100x120x400:TN), and by /G with a group size for the batch-grouped
// product of a weight gradient (e.g. 128x384x1024:TN/G32: K in groups of 32; lockstep only, the
// peers of bench/run-gemm.sh have no such product). Targets are Highway names (AVX2, SSE4, ...).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "simd/gemm.h"
#include "simd/philox.h"
#include "simd/targets.h"
#include "simd/thread_pool.h"

namespace {

using lockstep::simd::GemmArgs;

struct Shape {
  size_t m, n, k;
  bool trans_a = false, trans_b = false;
  size_t k_per_group = 0;  // > 0: GemmBatchGrouped with groups of this many K
  std::string label;
};

const char* kDefaultSizes =
    "128,256,512,1024,2048,100x120x400,100x84x120,100x400x120,1024x384x128,1024x128x512";
const char* kQuickSizes = "128,256,512,1024,100x120x400,100x84x120,100x400x120,1024x384x128,1024x128x512";

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

bool ParseShape(const std::string& full, Shape* shape) {
  std::string text = full;
  const size_t slash = full.find("/G");
  if (slash != std::string::npos) {
    char* end = nullptr;
    const unsigned long long group = strtoull(full.c_str() + slash + 2, &end, 10);
    if (group == 0 || *end != '\0') return false;
    shape->k_per_group = static_cast<size_t>(group);
    text = full.substr(0, slash);
  }
  std::string dims = text, ops = "NN";
  const size_t colon = text.find(':');
  if (colon != std::string::npos) {
    dims = text.substr(0, colon);
    ops = text.substr(colon + 1);
  }
  if (ops.size() != 2 || (ops[0] != 'N' && ops[0] != 'T') || (ops[1] != 'N' && ops[1] != 'T')) {
    return false;
  }
  std::vector<std::string> parts = Split(dims, 'x');
  std::vector<size_t> v;
  for (const std::string& p : parts) {
    char* end = nullptr;
    const unsigned long long x = strtoull(p.c_str(), &end, 10);
    if (end == p.c_str() || *end != '\0' || x == 0) return false;
    v.push_back(static_cast<size_t>(x));
  }
  if (v.size() == 1) {
    v = {v[0], v[0], v[0]};
  } else if (v.size() != 3) {
    return false;
  }
  shape->m = v[0];
  shape->n = v[1];
  shape->k = v[2];
  shape->trans_a = ops[0] == 'T';
  shape->trans_b = ops[1] == 'T';
  shape->label = std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
  if (ops != "NN") shape->label += ":" + ops;
  if (shape->k_per_group != 0) shape->label += "/G" + std::to_string(shape->k_per_group);
  return true;
}

bool g_cpu_clock = false;

void Multiply(const Shape& s, const lockstep::simd::GemmArgs& g, lockstep::simd::ThreadPool* pool) {
  if (s.k_per_group != 0) {
    lockstep::simd::GemmBatchGrouped(g, s.k_per_group, pool);
  } else {
    lockstep::simd::Gemm(g, pool);
  }
}

double Seconds() {
  if (g_cpu_clock) {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

uint64_t HashBits(const float* x, size_t n) {  // FNV-1a over the bits
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) {
    uint32_t b;
    memcpy(&b, &x[i], 4);
    for (int s = 0; s < 32; s += 8) {
      h ^= (b >> s) & 0xFF;
      h *= 1099511628211ull;
    }
  }
  return h;
}

struct Stats {
  double min, median, max;
};

Stats Summarise(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  const double median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return {v.front(), median, v.back()};
}

void Usage() {
  fprintf(stderr,
          "usage: lockstep_gemm_bench [--quick] [--sizes LIST] [--targets LIST|best|all]\n"
          "                           [--threads LIST] [--samples N] [--min-ms MS] [--clock wall|cpu]\n"
          "                           [--tsv]\n"
          "  --sizes    comma list of MxNxK[:TT][/Gk] or N (square); default %s\n"
          "  --targets  Highway target names (e.g. AVX2,SSE4), 'best' or 'all' (default all)\n"
          "  --threads  comma list of thread counts (default 1,2)\n"
          "  --samples  timed samples per case (default 7; --quick 5)\n"
          "  --min-ms   minimum duration of one sample in ms (default 50; --quick 20)\n"
          "  --quick    fewer samples, shorter samples, no 2048 unless --sizes names it\n"
          "  --clock    wall (default) or cpu: process CPU time / threads (for a busy machine)\n"
          "  --tsv      machine-readable output: one line per sample set\n",
          kDefaultSizes);
}

}  // namespace

int main(int argc, char** argv) {
  std::string sizes_arg, targets_arg = "all", threads_arg = "1,2";
  int samples = -1;
  double min_ms = -1;
  bool quick = false, tsv = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        fprintf(stderr, "%s needs a value\n", a.c_str());
        exit(2);
      }
      return argv[++i];
    };
    if (a == "--quick") {
      quick = true;
    } else if (a == "--tsv") {
      tsv = true;
    } else if (a == "--sizes") {
      sizes_arg = value();
    } else if (a == "--targets") {
      targets_arg = value();
    } else if (a == "--threads") {
      threads_arg = value();
    } else if (a == "--samples") {
      samples = atoi(value().c_str());
    } else if (a == "--clock") {
      const std::string c = value();
      if (c != "wall" && c != "cpu") {
        fprintf(stderr, "--clock wants wall or cpu\n");
        return 2;
      }
      g_cpu_clock = c == "cpu";
    } else if (a == "--min-ms") {
      min_ms = atof(value().c_str());
    } else if (a == "-h" || a == "--help") {
      Usage();
      return 0;
    } else {
      fprintf(stderr, "unknown argument %s\n", a.c_str());
      Usage();
      return 2;
    }
  }
  if (sizes_arg.empty()) sizes_arg = quick ? kQuickSizes : kDefaultSizes;
  if (samples <= 0) samples = quick ? 5 : 7;
  if (min_ms <= 0) min_ms = quick ? 20 : 50;

  std::vector<Shape> shapes;
  for (const std::string& s : Split(sizes_arg, ',')) {
    Shape shape;
    if (!ParseShape(s, &shape)) {
      fprintf(stderr, "bad size '%s' (want MxNxK[:TT][/Gk] or N)\n", s.c_str());
      return 2;
    }
    shapes.push_back(shape);
  }
  std::vector<size_t> thread_counts;
  for (const std::string& s : Split(threads_arg, ',')) {
    const int t = atoi(s.c_str());
    if (t <= 0) {
      fprintf(stderr, "bad thread count '%s'\n", s.c_str());
      return 2;
    }
    thread_counts.push_back(static_cast<size_t>(t));
  }
  const std::vector<lockstep::simd::Target> runnable = lockstep::simd::RunnableTargets();
  std::vector<lockstep::simd::Target> targets;
  if (targets_arg == "all") {
    targets = runnable;
  } else if (targets_arg == "best") {
    targets.push_back(runnable.front());
  } else {
    for (const std::string& name : Split(targets_arg, ',')) {
      bool found = false;
      for (const auto& t : runnable) {
        if (strcasecmp(t.name.c_str(), name.c_str()) == 0) {
          targets.push_back(t);
          found = true;
        }
      }
      if (!found) {
        fprintf(stderr, "target '%s' is not runnable here; runnable:", name.c_str());
        for (const auto& t : runnable) fprintf(stderr, " %s", t.name.c_str());
        fprintf(stderr, "\n");
        return 2;
      }
    }
  }

  std::string runnable_names;
  for (const auto& t : runnable) runnable_names += (runnable_names.empty() ? "" : ",") + t.name;
  if (tsv) {
    printf("# lockstep_gemm_bench runnable=%s samples=%d min_ms=%g clock=%s\n", runnable_names.c_str(),
           samples, min_ms, g_cpu_clock ? "cpu" : "wall");
    printf("impl\tsize\ttarget\tthreads\tgflops_min\tgflops_median\tgflops_max\tcalls_per_sample\n");
  } else {
    printf("lockstep GEMM (C = op(A) op(B), float32, K-sequential, no FMA)\n");
    printf("runnable targets: %s; %d samples of >= %g ms (%s clock) after one warm-up call\n\n",
           runnable_names.c_str(), samples, min_ms, g_cpu_clock ? "process CPU" : "wall");
    printf("%-18s %-8s %7s %10s %10s %10s %6s\n", "size MxNxK", "target", "threads", "min", "median",
           "max", "calls");
    printf("%-18s %-8s %7s %10s %10s %10s %6s\n", "", "", "", "GFLOP/s", "GFLOP/s", "GFLOP/s", "");
  }
  fflush(stdout);

  int mismatches = 0;
  std::vector<lockstep::simd::ThreadPool*> pools;
  for (size_t t : thread_counts) pools.push_back(new lockstep::simd::ThreadPool(t));

  for (const Shape& s : shapes) {
    // op(A) is m x k, op(B) is k x n; stored transposed when asked.
    const size_t rows_a = s.trans_a ? s.k : s.m, cols_a = s.trans_a ? s.m : s.k;
    const size_t rows_b = s.trans_b ? s.n : s.k, cols_b = s.trans_b ? s.k : s.n;
    std::vector<float> a(rows_a * cols_a), b(rows_b * cols_b), c(s.m * s.n);
    lockstep::simd::PhiloxUniformRange(1234, 1, 0, -1.0f, 1.0f, a.data(), a.size());
    lockstep::simd::PhiloxUniformRange(1234, 2, 0, -1.0f, 1.0f, b.data(), b.size());
    GemmArgs g;
    g.trans_a = s.trans_a;
    g.trans_b = s.trans_b;
    g.m = s.m;
    g.n = s.n;
    g.k = s.k;
    g.a = a.data();
    g.lda = cols_a;
    g.b = b.data();
    g.ldb = cols_b;
    g.c = c.data();
    g.ldc = s.n;
    const double flops = 2.0 * s.m * s.n * s.k;
    bool have_reference = false;
    uint64_t reference_hash = 0;

    for (const auto& target : targets) {
      lockstep::simd::ForceTarget(target.bits);
      for (size_t ti = 0; ti < thread_counts.size(); ++ti) {
        lockstep::simd::ThreadPool* pool = pools[ti];
        // Warm-up; its bits must equal those of the first (target, threads) run.
        Multiply(s, g, pool);
        const uint64_t h = HashBits(c.data(), c.size());
        if (!have_reference) {
          reference_hash = h;
          have_reference = true;
        } else if (h != reference_hash) {
          ++mismatches;
          fprintf(stderr, "CONTRACT VIOLATION: %s on %s with %zu threads gives different bits\n",
                  s.label.c_str(), target.name.c_str(), thread_counts[ti]);
        }
        // Calibration (more warm-up): double the calls until one batch lasts min_ms.
        const double per_thread = g_cpu_clock ? static_cast<double>(thread_counts[ti]) : 1.0;
        size_t calls = 1;
        for (;;) {
          const double t0 = Seconds();
          for (size_t q = 0; q < calls; ++q) Multiply(s, g, pool);
          const double dt = (Seconds() - t0) / per_thread;
          if (dt >= 1e-3 * min_ms) break;
          const double scale = dt > 0 ? 1.2e-3 * min_ms / dt : 8.0;
          calls = static_cast<size_t>(calls * std::min(std::max(scale, 2.0), 8.0));
        }
        std::vector<double> gflops;
        for (int r = 0; r < samples; ++r) {
          const double t0 = Seconds();
          for (size_t q = 0; q < calls; ++q) Multiply(s, g, pool);
          const double dt = (Seconds() - t0) / per_thread;  // CPU seconds per thread with --clock cpu
          gflops.push_back(flops * calls / dt * 1e-9);
        }
        const Stats st = Summarise(gflops);
        if (tsv) {
          printf("lockstep\t%s\t%s\t%zu\t%.2f\t%.2f\t%.2f\t%zu\n", s.label.c_str(), target.name.c_str(),
                 thread_counts[ti], st.min, st.median, st.max, calls);
        } else {
          printf("%-18s %-8s %7zu %10.1f %10.1f %10.1f %6zu\n", s.label.c_str(), target.name.c_str(),
                 thread_counts[ti], st.min, st.median, st.max, calls);
        }
        fflush(stdout);
      }
    }
  }
  lockstep::simd::ForceTarget(0);
  for (auto* p : pools) delete p;
  if (!tsv) {
    printf("\nbits identical across targets and thread counts: %s\n", mismatches ? "NO" : "yes");
  } else {
    printf("# bits_identical=%s\n", mismatches ? "no" : "yes");
  }
  return mismatches ? 1 : 0;
}
