#include "core/trace/summary.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <charconv>
#include <vector>

#include "core/io/byte_order.h"
#include "core/trace/bits_hash.h"
#include "simd/thread_pool.h"

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
// docs/diagnostics.md: the statistics sum each block of 2^14 elements into 32 accumulators by
// element index mod 32, and add the blocks in order. Blocks are independent, so a large output is
// summarised on every thread of the pool with the same result as on one.
constexpr size_t kBlock = size_t{1} << 14;
constexpr size_t kLanes = 32;

// One block's part of a record's summary.
struct BlockSummary {
  HashSums hash;
  double sum = 0, sum_of_squares = 0;  // the block's accumulators, combined in order
  long long finite = 0, nans = 0, infs = 0;
  double lo = __builtin_inf(), hi = -__builtin_inf();
  bool special = false;  // float32 pass: a NaN or infinity voided the sums
};

// Elements e and e + 1 of a float32 tensor as the hash's little-endian word.
inline uint64_t PairWord(const uint32_t* bits, size_t e) {
  if (kHostIsLittleEndian) {
    uint64_t w;
    memcpy(&w, bits + e, 8);
    return w;
  }
  return static_cast<uint64_t>(bits[e]) | (static_cast<uint64_t>(bits[e + 1]) << 32);
}

inline void AddHashTerm(uint64_t w, uint64_t word_index, HashSums* sums) {
  const uint64_t x0 = (w + (word_index + 1) * kHashP0) * kHashQ0;
  const uint64_t x1 = (w + (word_index + 1) * kHashP1) * kHashQ1;
  sums->s0 += x0 ^ (x0 >> 31);
  sums->s1 += x1 ^ (x1 >> 31);
}

// A float32 block in one pass: the hash's terms (the block starts at an even element, so at word
// first_word) and, for blocks without NaN or infinity (almost every op output), the statistics.
// Lane k of the sums takes the elements with index k mod 32; min and max are taken on the integer
// line where floats are ordered as their values, and the extreme keys reveal NaN and infinity.
LOCKSTEP_TRACE_CLONES void FloatBlock(const float* p, size_t n, uint64_t first_word, BlockSummary* out) {
  const uint32_t* bits = reinterpret_cast<const uint32_t*>(p);
  constexpr size_t kWords = kLanes / 2;
  double sums[kLanes] = {}, squares[kLanes] = {};
  int32_t lo_keys[kLanes], hi_keys[kLanes];
  uint64_t h0[kWords] = {}, h1[kWords] = {}, step0[kWords], step1[kWords];
  for (size_t k = 0; k < kLanes; ++k) {
    lo_keys[k] = INT32_MAX;
    hi_keys[k] = INT32_MIN;
  }
  // (i + 1) * P for word i, as running sums (one multiply per word and hash lane).
  for (size_t j = 0; j < kWords; ++j) {
    step0[j] = (first_word + j + 1) * kHashP0;
    step1[j] = (first_word + j + 1) * kHashP1;
  }
  auto visit = [&](size_t k, size_t i) {
    const int32_t b = static_cast<int32_t>(bits[i]);
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
    for (size_t j = 0; j < kWords; ++j) {
      const uint64_t w = PairWord(bits, i + 2 * j);
      const uint64_t x0 = (w + step0[j]) * kHashQ0;
      const uint64_t x1 = (w + step1[j]) * kHashQ1;
      step0[j] += kWords * kHashP0;
      step1[j] += kWords * kHashP1;
      h0[j] += x0 ^ (x0 >> 31);
      h1[j] += x1 ^ (x1 >> 31);
    }
  }
  HashSums hash;
  for (size_t j = 0; j < kWords; ++j) hash.Add(HashSums{h0[j], h1[j]});
  // The tail: fewer than 32 elements; an odd last element is a word padded with zero bytes.
  const uint64_t tail_word = first_word + i / 2;
  for (size_t k = 0, e = i; e < n; ++k, ++e) visit(k, e);
  for (size_t e = i; e < n; e += 2) {
    const uint64_t w = e + 1 < n ? PairWord(bits, e) : static_cast<uint64_t>(bits[e]);
    AddHashTerm(w, tail_word + (e - i) / 2, &hash);
  }
  out->hash = hash;
  int32_t lo_key = INT32_MAX, hi_key = INT32_MIN;
  double sum = 0, sum_of_squares = 0;
  for (size_t k = 0; k < kLanes; ++k) {
    lo_key = lo_keys[k] < lo_key ? lo_keys[k] : lo_key;
    hi_key = hi_keys[k] > hi_key ? hi_keys[k] : hi_key;
    sum += sums[k];
    sum_of_squares += squares[k];
  }
  // +infinity and +NaN have the largest keys, -infinity and -NaN the smallest.
  out->special = hi_key >= 0x7F800000 || lo_key <= static_cast<int32_t>(0x807FFFFFu);
  if (out->special) return;
  auto from_key = [](int32_t key) {
    const int32_t b = key ^ ((key >> 31) & 0x7FFFFFFF);
    float f;
    memcpy(&f, &b, 4);
    return static_cast<double>(f);
  };
  out->sum = sum;
  out->sum_of_squares = sum_of_squares;
  out->finite = static_cast<long long>(n);
  out->lo = from_key(lo_key);
  out->hi = from_key(hi_key);
}

// The statistics of any block (integers, and floats with NaN or infinity), in the same order.
template <class T>
void GeneralBlockStatistics(const T* p, size_t n, BlockSummary* out) {
  double sums[kLanes] = {}, squares[kLanes] = {};
  long long nans = 0, infs = 0, finite = 0;
  double lo = __builtin_inf(), hi = -__builtin_inf();
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
  out->sum = sum;
  out->sum_of_squares = sum_of_squares;
  out->finite = finite;
  out->nans = nans;
  out->infs = infs;
  out->lo = lo;
  out->hi = hi;
}

// Block b of a tensor: its hash terms and statistics.
void SummariseBlock(DType dtype, const void* data, size_t n, size_t b, BlockSummary* out) {
  const size_t begin = b * kBlock, count = n - begin < kBlock ? n - begin : kBlock;
  const size_t size = DTypeSize(dtype);
  const uint64_t first_word = static_cast<uint64_t>(begin * size / 8);  // kBlock is even
  if (dtype == DType::kFloat32) {
    const float* p = static_cast<const float*>(data) + begin;
    FloatBlock(p, count, first_word, out);
    if (out->special) GeneralBlockStatistics(p, count, out);
    return;
  }
  const uint8_t* bytes = static_cast<const uint8_t*>(data) + begin * size;
  const LittleEndianBytes little(bytes, count, size);
  out->hash = BitsHashTerms(little.data(), little.size(), first_word);
  if (dtype == DType::kInt32) GeneralBlockStatistics(reinterpret_cast<const int32_t*>(bytes), count, out);
  else GeneralBlockStatistics(reinterpret_cast<const int64_t*>(bytes), count, out);
}

struct Summary {
  HashSums hash;
  Statistics stats;
};

Summary Summarise(DType dtype, const void* data, size_t n) {
  const size_t blocks = n == 0 ? 1 : (n + kBlock - 1) / kBlock;
  BlockSummary single;  // most outputs are one block: no allocation
  std::vector<BlockSummary> many(blocks > 1 ? blocks : 0);
  BlockSummary* parts = blocks > 1 ? many.data() : &single;
  if (n == 0) {
    // Nothing to read: the hash of no bytes, no finite element.
  } else if (blocks == 1) {
    SummariseBlock(dtype, data, n, 0, parts);
  } else {
    simd::DefaultThreadPool()->ParallelFor(
        blocks, [&](size_t b, size_t) { SummariseBlock(dtype, data, n, b, &parts[b]); });
  }
  Summary s;
  double sum = 0, sum_of_squares = 0, lo = __builtin_inf(), hi = -__builtin_inf();
  long long finite = 0, nans = 0, infs = 0;
  for (size_t b = 0; b < blocks; ++b) {
    const BlockSummary& part = parts[b];
    s.hash.Add(part.hash);
    sum += part.sum;
    sum_of_squares += part.sum_of_squares;
    finite += part.finite;
    nans += part.nans;
    infs += part.infs;
    lo = part.lo < lo ? part.lo : lo;
    hi = part.hi > hi ? part.hi : hi;
  }
  s.stats = finite == 0 ? Statistics{kNaN, kNaN, kNaN, kNaN, nans, infs}
                        : Statistics{lo, hi, sum / static_cast<double>(finite), __builtin_sqrt(sum_of_squares), nans,
                                     infs};
  return s;
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
#if defined(__cpp_lib_to_chars)
  // printf's "%.9g" digits (the standard defines them so), several times faster.
  const std::to_chars_result r = std::to_chars(text, text + sizeof text, v, std::chars_format::general, 9);
  out->append(text, r.ptr);
#else
  snprintf(text, sizeof text, "%.9g", v);
  *out += text;
#endif
}

}  // namespace

Statistics ComputeStatistics(DType dtype, const void* data, size_t n) { return Summarise(dtype, data, n).stats; }

std::string SummaryJson(DType dtype, const void* data, size_t n) {
  const Summary summary = Summarise(dtype, data, n);
  std::string text = ",\"hash\":\"" + FinishBitsHash(summary.hash, n * DTypeSize(dtype)) + "\"";
  const Statistics& s = summary.stats;
  AppendNumber("min", s.min, &text);
  AppendNumber("max", s.max, &text);
  AppendNumber("mean", s.mean, &text);
  AppendNumber("l2", s.l2, &text);
  text += ",\"nan\":" + std::to_string(s.nan) + ",\"inf\":" + std::to_string(s.inf);
  return text;
}

}  // namespace trace
}  // namespace lockstep
