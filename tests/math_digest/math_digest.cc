// math_digest: a 64-bit digest of each elementary function's outputs over all 2^32 float32 inputs,
// in input order, on the SIMD target chosen (or the best one). tools/prove-math proves the
// functions correctly rounded on one target with MPFR; a build or target whose digests equal the
// proven one's computes the same bits for every input, and so is proven too. Built wherever the
// tests are (WebAssembly and the cross builds included), with no MPFR.
//
// Usage: math_digest [--fn NAME]... [--target NAME]
// Prints `target NAME DIGEST SECONDS` per function; exit 2 on a bad argument.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <chrono>
#include <string>
#include <vector>

#include "simd/math.h"
#include "simd/targets.h"

namespace {

using lockstep::simd::MathFn;

// FNV-1a over the 32-bit output words of one chunk, then over the chunk digests in order: any
// change in any output changes the total (short of a 64-bit collision, not a concern between
// builds that do not try to collide).
constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull, kFnvPrime = 0x100000001b3ull;
uint64_t Fnv(const uint32_t* words, size_t n, uint64_t h = kFnvOffset) {
  for (size_t i = 0; i < n; ++i) h = (h ^ words[i]) * kFnvPrime;
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> names;
  std::string target;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--fn" && i + 1 < argc) names.push_back(argv[++i]);
    else if (a == "--target" && i + 1 < argc) target = argv[++i];
    else {
      fprintf(stderr, "usage: %s [--fn NAME]... [--target NAME]\n", argv[0]);
      return 2;
    }
  }
  if (!target.empty()) {
    int64_t bits = 0;
    for (const lockstep::simd::Target& t : lockstep::simd::RunnableTargets()) {
      if (t.name == target) bits = t.bits;
    }
    if (bits == 0) {
      fprintf(stderr, "--target %s: not a target this machine runs in this build\n", target.c_str());
      return 2;
    }
    lockstep::simd::ForceTarget(bits);
  }
  std::vector<MathFn> fns;
  for (int f = 0; f < lockstep::simd::kMathFnCount; ++f) {
    const MathFn fn = static_cast<MathFn>(f);
    bool wanted = names.empty();
    for (const std::string& n : names) wanted = wanted || n == lockstep::simd::MathFnName(fn);
    if (wanted) fns.push_back(fn);
  }
  if (fns.size() < (names.empty() ? 1 : names.size())) {
    fprintf(stderr, "unknown function name among --fn\n");
    return 2;
  }
  constexpr size_t kChunk = size_t{1} << 20;
  std::vector<float> in(kChunk), out(kChunk);
  for (MathFn fn : fns) {
    const auto t0 = std::chrono::steady_clock::now();
    uint64_t total = kFnvOffset;
    for (uint64_t first = 0; first < (uint64_t{1} << 32); first += kChunk) {
      for (size_t i = 0; i < kChunk; ++i) {
        const uint32_t bits = static_cast<uint32_t>(first + i);
        memcpy(&in[i], &bits, 4);
      }
      lockstep::simd::Math(fn, in.data(), out.data(), kChunk);
      uint32_t chunk_digest[2];
      const uint64_t h = Fnv(reinterpret_cast<const uint32_t*>(out.data()), kChunk);
      chunk_digest[0] = static_cast<uint32_t>(h);
      chunk_digest[1] = static_cast<uint32_t>(h >> 32);
      total = Fnv(chunk_digest, 2, total);
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    printf("%s %s %016llx %.1f\n", lockstep::simd::ActiveTargetName().c_str(), lockstep::simd::MathFnName(fn),
           static_cast<unsigned long long>(total), s);
    fflush(stdout);
  }
  return 0;
}
