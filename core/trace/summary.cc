#include "core/trace/summary.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/io/byte_order.h"
#include "core/trace/bits_hash.h"

// x86-64: the hot loops also for AVX2 and AVX-512 machines (glibc's ifunc picks one at load time).
#if defined(__x86_64__) && defined(__linux__) && !defined(__SANITIZE_ADDRESS__)
#define LOCKSTEP_TRACE_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define LOCKSTEP_TRACE_CLONES
#endif

namespace lockstep {
namespace trace {
namespace {

constexpr double kNaN = __builtin_nan("");

// float32 without NaN or infinity (almost every op output), in one pass over the data. Returns
// false when the general loop is needed.
LOCKSTEP_TRACE_CLONES bool FiniteFloatStatistics(const float* p, size_t n, Statistics* out) {
  if (n == 0) return false;
  const int32_t* bits = reinterpret_cast<const int32_t*>(p);
  // One pass, lane k taking the elements with index k mod kLanes: the NaN/Inf count and the min
  // and max keys per lane (on the integer line where floats are ordered as their values), and the
  // float64 sums. A special value voids the sums; the general loop then starts again.
  constexpr size_t kLanes = 32;  // docs/diagnostics.md: accumulators by element index mod 32
  double sums[kLanes] = {}, squares[kLanes] = {};
  int32_t lo_keys[kLanes], hi_keys[kLanes], specials[kLanes] = {};
  for (size_t k = 0; k < kLanes; ++k) {
    lo_keys[k] = INT32_MAX;
    hi_keys[k] = INT32_MIN;
  }
  auto visit = [&](size_t k, size_t i) {
    const int32_t b = bits[i];
    specials[k] |= (b & 0x7F800000) == 0x7F800000;
    const int32_t key = b ^ ((b >> 31) & 0x7FFFFFFF);
    lo_keys[k] = key < lo_keys[k] ? key : lo_keys[k];
    hi_keys[k] = key > hi_keys[k] ? key : hi_keys[k];
    const double v = p[i];
    sums[k] += v;
    squares[k] += v * v;
  };
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (size_t k = 0; k < kLanes; ++k) visit(k, i + k);
  }
  for (size_t k = 0; i < n; ++i, ++k) visit(k, i);
  int32_t lo_key = INT32_MAX, hi_key = INT32_MIN, special = 0;
  for (size_t k = 0; k < kLanes; ++k) {
    special |= specials[k];
    lo_key = lo_keys[k] < lo_key ? lo_keys[k] : lo_key;
    hi_key = hi_keys[k] > hi_key ? hi_keys[k] : hi_key;
  }
  if (special != 0) return false;
  double sum = 0, sum_of_squares = 0;
  for (size_t k = 0; k < kLanes; ++k) {
    sum += sums[k];
    sum_of_squares += squares[k];
  }
  auto from_key = [](int32_t key) {
    const int32_t b = key ^ ((key >> 31) & 0x7FFFFFFF);
    float f;
    memcpy(&f, &b, 4);
    return static_cast<double>(f);
  };
  *out = Statistics{from_key(lo_key), from_key(hi_key), sum / static_cast<double>(n),
                    __builtin_sqrt(sum_of_squares), 0, 0};
  return true;
}

// The general loop (integers, and floats with NaN or infinity), in the same accumulation order.
template <class T>
Statistics GeneralStatistics(const T* p, size_t n) {
  long long nans = 0, infs = 0, finite = 0;
  double lo = __builtin_inf(), hi = -__builtin_inf();
  constexpr size_t kLanes = 32;  // docs/diagnostics.md: accumulators by element index mod 32
  double sums[kLanes] = {}, squares[kLanes] = {};
  for (size_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(p[i]);
    if (v - v != 0.0) {  // NaN or infinite
      if (v != v) ++nans; else ++infs;
      continue;
    }
    ++finite;
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
    sums[i % kLanes] += v;
    squares[i % kLanes] += v * v;
  }
  double sum = 0, sum_of_squares = 0;
  for (size_t k = 0; k < kLanes; ++k) {
    sum += sums[k];
    sum_of_squares += squares[k];
  }
  if (finite == 0) return Statistics{kNaN, kNaN, kNaN, kNaN, nans, infs};
  return Statistics{lo, hi, sum / static_cast<double>(finite), __builtin_sqrt(sum_of_squares), nans, infs};
}

void AppendNumber(const char* name, double v, std::string* out) {
  *out += ",\"";
  *out += name;
  *out += "\":";
  if (v - v != 0.0) {
    *out += "null";
    return;
  }
  char text[32];
  snprintf(text, sizeof text, "%.9g", v);
  *out += text;
}

}  // namespace

Statistics ComputeStatistics(DType dtype, const void* data, size_t n) {
  switch (dtype) {
    case DType::kFloat32: {
      Statistics s;
      if (FiniteFloatStatistics(static_cast<const float*>(data), n, &s)) return s;
      return GeneralStatistics(static_cast<const float*>(data), n);
    }
    case DType::kInt32: return GeneralStatistics(static_cast<const int32_t*>(data), n);
    case DType::kInt64: return GeneralStatistics(static_cast<const int64_t*>(data), n);
  }
  return GeneralStatistics(static_cast<const float*>(data), 0);
}

std::string SummaryJson(DType dtype, const void* data, size_t n) {
  const LittleEndianBytes bytes(data, n, DTypeSize(dtype));
  std::string text = ",\"hash\":\"" + BitsHash(bytes.data(), bytes.size()) + "\"";
  const Statistics s = ComputeStatistics(dtype, data, n);
  AppendNumber("min", s.min, &text);
  AppendNumber("max", s.max, &text);
  AppendNumber("mean", s.mean, &text);
  AppendNumber("l2", s.l2, &text);
  text += ",\"nan\":" + std::to_string(s.nan) + ",\"inf\":" + std::to_string(s.inf);
  return text;
}

}  // namespace trace
}  // namespace lockstep
