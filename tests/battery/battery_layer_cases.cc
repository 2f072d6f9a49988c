// Golden section 2 of the kernel battery: the kernel-table entries that the battery of contract
// version 1 left out (broadcast arithmetic, copies and fills, the layers' forward and backward
// kernels, the optimizer updates), run through the table like the others, so on the CPU and on a
// device plugin alike. Each case is one row of battery_coverage.h, which names its entries.
//
// Inputs are Philox draws (battery_inputs.h) mixed with every special class, odd sizes, strides and
// offsets; output buffers start as a sentinel NaN with a payload where a kernel must leave elements
// alone (gaps between samples or rows, untouched momentum buffers), and those are fetched too.
#include <string.h>

#include <algorithm>
#include <vector>

#include "tests/battery/battery_inputs.h"
#include "tests/battery/battery_runner.h"

namespace lockstep {
namespace battery {
namespace {

namespace be = backend;

constexpr uint32_t kSentinel = 0x7FA5A5A5u;  // a NaN no kernel stores (kernels store 0x7FC00000)

float FromBits(uint32_t u) {
  float x;
  memcpy(&x, &u, 4);
  return x;
}

std::vector<float> Sentinels(size_t n) { return std::vector<float>(n, FromBits(kSentinel)); }

// Moderate values with the sign cleared (standard deviations, counts).
std::vector<float> PositiveInputs(size_t n, uint64_t stream) {
  std::vector<float> v = ModerateInputs(n, stream);
  for (float& x : v) x = x < 0.0f ? -x : x;
  return v;
}

// Deterministic words for indices and choices: the bits of moderate inputs (sign and mantissa are
// Philox bits, the exponent one of 16 values).
std::vector<uint32_t> Words(size_t n, uint64_t stream) {
  std::vector<uint32_t> words(n);
  const std::vector<float> moderate = ModerateInputs(n, stream);
  for (size_t i = 0; i < n; ++i) memcpy(&words[i], &moderate[i], 4);
  return words;
}

const be::BinaryOp kBinaryOps[] = {be::BinaryOp::kAdd, be::BinaryOp::kSub, be::BinaryOp::kMul, be::BinaryOp::kDiv,
                                   be::BinaryOp::kMax, be::BinaryOp::kMin, be::BinaryOp::kEq,  be::BinaryOp::kNe,
                                   be::BinaryOp::kLt,  be::BinaryOp::kLe,  be::BinaryOp::kGt,  be::BinaryOp::kGe};

// out[i] = a[(i / div) % mod] op b[...] over every form the core passes (whole, scalar, a trailing
// block repeated, one value per run of div) and the general ones the CPU expands.
void BroadcastCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const size_t length = 4096;
  const float* a = r.Upload(MixedInputs(length, 21)) + 1;  // misaligned
  const float* b = r.Upload(MixedInputs(length, 22)) + 2;
  float* out = r.Alloc<float>(length);
  struct Pattern {
    size_t a_div, a_mod, b_div, b_mod, n;  // mod 0: n (the whole operand)
  };
  const Pattern patterns[] = {
      {1, 0, 1, 0, 1},     {1, 0, 1, 0, 17},    {1, 0, 1, 0, 64},   {1, 0, 1, 0, 193},  {1, 0, 1, 0, 1000},
      {1, 0, 1, 1, 100},   {1, 1, 1, 0, 100},   {1, 1, 1, 1, 50},   {2, 1, 1, 0, 30},   {1, 0, 1, 35, 210},
      {1, 35, 1, 0, 210},  {1, 0, 1, 64, 640},  {1, 0, 1, 300, 3000}, {1, 0, 1, 7, 100}, {1, 0, 33, 5, 165},
      {33, 5, 1, 0, 165},  {1, 0, 4, 3, 72},    {4, 3, 1, 0, 72},   {1, 0, 4, 3, 70},   {5, 7, 1, 5, 175},
      {1, 43, 1, 0, 40},   {1, 0, 1, 0, 0}};
  KernelOutput k{"binary_broadcast", {}};
  for (be::BinaryOp op : kBinaryOps) {
    for (const Pattern& p : patterns) {
      const be::BroadcastOperand oa{a, p.a_div, p.a_mod == 0 ? p.n : p.a_mod};
      const be::BroadcastOperand ob{b, p.b_div, p.b_mod == 0 ? p.n : p.b_mod};
      r.Check(r.k.binary_broadcast(op, oa, ob, out, p.n), "binary_broadcast");
      r.Fetch(k, out, p.n);
    }
  }
  outputs.push_back(std::move(k));
}

// Copies of 32-bit words between strided layouts: every rank from 0 to kMaxCopyRank, transposes,
// zero (broadcast) source strides, an empty dimension, and copies large enough for the CPU's
// threads. The bits move unchanged (signalling NaNs and payloads included); the destination's
// other elements keep the sentinel.
void StridedCopyCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const size_t length = 90000;
  const std::vector<float> source = MixedInputs(length, 23);
  const float* src = r.Upload(source);
  float* dst = r.Alloc<float>(length);
  const std::vector<float> sentinels = Sentinels(length);
  struct Copy {
    std::vector<int64_t> shape, src_strides, dst_strides;
    size_t src_offset;
  };
  std::vector<Copy> copies = {
      {{}, {}, {}, 5},
      {{1000}, {1}, {1}, 1},
      {{333}, {3}, {1}, 0},
      {{100}, {0}, {1}, 7},
      {{100}, {1}, {2}, 3},
      {{37, 29}, {1, 37}, {29, 1}, 1},
      {{3, 5, 7}, {35, 7, 1}, {35, 1, 5}, 0},
      {{2, 1, 3, 4}, {12, 99, 0, 1}, {12, 12, 4, 1}, 2},
      {{4, 0, 3}, {3, 3, 1}, {3, 3, 1}, 0},
      {{50, 64}, {70, 1}, {64, 1}, 1},
      {{4, 20000}, {20003, 1}, {1, 4}, 0},
      {{3, 25000}, {25000, 1}, {25000, 1}, 1},
  };
  // Rank 8: a row-major source into a column-major destination.
  Copy eight{{2, 1, 3, 2, 1, 2, 3, 2}, {}, {}, 3};
  eight.src_strides.assign(8, 0);
  eight.dst_strides.assign(8, 0);
  for (int d = 7, s = 1; d >= 0; s *= static_cast<int>(eight.shape[d]), --d) eight.src_strides[d] = s;
  for (int d = 0, s = 1; d < 8; s *= static_cast<int>(eight.shape[d]), ++d) eight.dst_strides[d] = s;
  copies.push_back(eight);
  KernelOutput k{"strided_copy", {}};
  for (const Copy& c : copies) {
    be::StridedCopyCall call{};
    call.rank = static_cast<int32_t>(c.shape.size());
    int64_t extent = 1;  // of the destination: its last element written, plus one
    bool empty = false;
    for (size_t d = 0; d < c.shape.size(); ++d) {
      call.shape[d] = c.shape[d];
      call.src_strides[d] = c.src_strides[d];
      call.dst_strides[d] = c.dst_strides[d];
      extent += (c.shape[d] - 1) * c.dst_strides[d];
      empty = empty || c.shape[d] == 0;
    }
    if (empty) extent = 0;
    const size_t fetched = static_cast<size_t>(extent) + 3;
    r.Store(dst, sentinels, fetched);
    call.src = src + c.src_offset;
    call.dst = dst;
    r.Check(r.k.strided_copy(&call), "strided_copy");
    r.Fetch(k, dst, fetched);
  }
  outputs.push_back(std::move(k));
}

// The words of zeros and constants (any bits: -0, NaN payloads, all ones), at every small length
// and misaligned; the words after the last keep the sentinel.
void FillCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const size_t length = 4200;
  uint32_t* out = r.Alloc<uint32_t>(length);
  const std::vector<uint32_t> sentinels(length, kSentinel);
  const uint32_t words[] = {0x00000000u, 0x80000000u, 0x3F800000u, 0x7FC00001u, 0xFFFFFFFFu, 0x00000001u,
                            0xDEADBEEFu};
  const size_t lengths[] = {0, 1, 2, 3, 7, 15, 16, 17, 31, 64, 65, 255, 1000, 4097};
  KernelOutput k{"fill", {}};
  for (uint32_t word : words) {
    for (size_t n : lengths) {
      for (size_t offset : {size_t{0}, size_t{1}}) {
        r.Store(out, sentinels, n + offset + 3);
        r.Check(r.k.fill(word, out + offset, n), "fill");
        r.Fetch(k, out, n + offset + 3);
      }
    }
  }
  outputs.push_back(std::move(k));
}

// GELU's gradient at every battery length and offsets, over mixed and moderate inputs (erf and exp
// saturate, underflow and see every special), then in place over x and over g.
void GeluBackwardCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const size_t longest = 12345 + 8;
  const std::vector<float> mixed_host = MixedInputs(longest, 24), moderate_host = ModerateInputs(longest, 25);
  const float* mixed = r.Upload(mixed_host);
  const float* moderate = r.Upload(moderate_host);
  const float* gradient = r.Upload(MixedInputs(longest, 26));
  float* out = r.Alloc<float>(longest);
  KernelOutput k{"gelu_erf_backward", {}};
  for (size_t n : BatteryLengths()) {
    for (size_t offset : {size_t{0}, size_t{3}}) {
      r.Check(r.k.gelu_erf_backward(mixed + offset, moderate + 1, out, n), "gelu_erf_backward");
      r.Fetch(k, out, n);
      r.Check(r.k.gelu_erf_backward(moderate + offset, gradient + 2, out, n), "gelu_erf_backward");
      r.Fetch(k, out, n);
      r.Check(r.k.gelu_erf_backward(moderate + offset, moderate + 5, out, n), "gelu_erf_backward");
      r.Fetch(k, out, n);
    }
  }
  float* work = r.Alloc<float>(longest);
  for (size_t n : {size_t{1}, size_t{17}, size_t{1000}, size_t{4097}}) {
    r.Store(work, mixed_host, n);  // out aliases x
    r.Check(r.k.gelu_erf_backward(work, moderate, work, n), "gelu_erf_backward");
    r.Fetch(k, work, n);
    r.Store(work, moderate_host, n);  // out aliases g
    r.Check(r.k.gelu_erf_backward(mixed, work, work, n), "gelu_erf_backward");
    r.Fetch(k, work, n);
  }
  outputs.push_back(std::move(k));
}

// Rows whose statistics are extreme: constant (variance 0: rstd = rsqrt(eps), or inf for eps 0),
// signed zeros, subnormals, squares that overflow, a NaN, an infinity.
std::vector<float> SpecialRows(size_t rows, size_t d) {
  std::vector<float> x = ModerateInputs(rows * d, 27);
  for (size_t j = 0; j < d; ++j) {
    x[0 * d + j] = 3.0f;
    x[1 * d + j] = j % 2 == 0 ? 0.0f : -0.0f;
    x[2 * d + j] = FromBits(static_cast<uint32_t>(j + 1) | (j % 3 == 0 ? 0x80000000u : 0u));
    x[3 * d + j] = (j % 2 == 0 ? 1.0f : -1.0f) * 1e30f * static_cast<float>(j + 1);
    x[4 * d + j] = static_cast<float>(j);
  }
  x[5 * d + d / 2] = FromBits(0x7F800001u);
  x[6 * d + 1] = FromBits(0xFF800000u);
  return x;
}

void LayerNormCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const size_t size = 2 * 4097 + 64;
  const float* moderate = r.Upload(ModerateInputs(size, 28));
  const float* mixed = r.Upload(MixedInputs(size, 29));
  const float* weight = r.Upload(ModerateInputs(4097, 30));
  const float* bias = r.Upload(MixedInputs(4097, 31));
  const float* gradient_moderate = r.Upload(ModerateInputs(size, 32));
  const float* gradient_mixed = r.Upload(MixedInputs(size, 33));
  const float* xhat_in = r.Upload(ModerateInputs(size, 34));
  const float* rstd_in = r.Upload(PositiveInputs(64, 35));
  float* xhat = r.Alloc<float>(size);
  float* rstd = r.Alloc<float>(64);
  float* out = r.Alloc<float>(size);
  const size_t shapes[][2] = {{1, 1}, {3, 7}, {2, 64}, {5, 65}, {4, 100}, {2, 257}, {1, 1000}, {2, 4097}, {0, 5}};
  KernelOutput forward{"layer_norm_rows", {}}, backward{"layer_norm_rows_backward", {}};
  for (const auto& s : shapes) {
    const size_t rows = s[0], d = s[1];
    for (const float* x : {moderate + 1, mixed}) {
      for (int affine = 0; affine < 4; ++affine) {
        const float* w = affine & 1 ? weight : nullptr;
        const float* b = affine & 2 ? bias : nullptr;
        r.Check(r.k.layer_norm_rows(x, w, b, 1e-5f, rows, d, xhat, rstd, out), "layer_norm_rows");
        r.Fetch(forward, xhat, rows * d);
        r.Fetch(forward, rstd, rows);
        r.Fetch(forward, out, rows * d);
      }
    }
    for (const float* g : {gradient_moderate, gradient_mixed + 3}) {
      for (const float* w : {weight, static_cast<const float*>(nullptr)}) {
        r.Check(r.k.layer_norm_rows_backward(g, w, xhat_in, rstd_in, rows, d, out), "layer_norm_rows_backward");
        r.Fetch(backward, out, rows * d);
      }
    }
  }
  // The special rows, forward with eps 1e-5 and 0, then backward from what the forward saved.
  const size_t rows = 7, d = 33;
  const float* special = r.Upload(SpecialRows(rows, d));
  for (float eps : {1e-5f, 0.0f}) {
    for (int affine = 0; affine < 4; affine += 3) {
      const float* w = affine & 1 ? weight : nullptr;
      const float* b = affine & 2 ? bias : nullptr;
      r.Check(r.k.layer_norm_rows(special, w, b, eps, rows, d, xhat, rstd, out), "layer_norm_rows");
      r.Fetch(forward, xhat, rows * d);
      r.Fetch(forward, rstd, rows);
      r.Fetch(forward, out, rows * d);
      for (const float* g : {gradient_moderate, gradient_mixed}) {
        r.Check(r.k.layer_norm_rows_backward(g, w, xhat, rstd, rows, d, out), "layer_norm_rows_backward");
        r.Fetch(backward, out, rows * d);
      }
    }
  }
  outputs.push_back(std::move(forward));
  outputs.push_back(std::move(backward));
}

void ChannelNormCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const size_t size = 8 * 16 * 1024 + 64;
  const float* moderate = r.Upload(ModerateInputs(size, 36));
  const float* mixed = r.Upload(MixedInputs(size, 37));
  const float* xhat_in = r.Upload(ModerateInputs(size, 38));
  const float* mean_moderate = r.Upload(ModerateInputs(64, 39));
  const float* mean_mixed = r.Upload(MixedInputs(64, 40));
  const float* rstd_positive = r.Upload(PositiveInputs(64, 41));
  const float* rstd_mixed = r.Upload(MixedInputs(64, 42));
  const float* weight = r.Upload(ModerateInputs(64, 43));
  const float* bias = r.Upload(ModerateInputs(64, 44));
  const float* sums = r.Upload(ModerateInputs(128, 45));
  float* xhat = r.Alloc<float>(size);
  float* out = r.Alloc<float>(size);
  const size_t shapes[][3] = {{1, 1, 1},  {2, 3, 5},  {4, 1, 1},     {3, 7, 64}, {2, 5, 65},
                              {2, 2, 1000}, {5, 4, 1}, {8, 16, 1024}, {0, 3, 4},  {2, 3, 0}};
  KernelOutput forward{"channel_normalize", {}}, backward{"channel_normalize_backward", {}};
  for (const auto& s : shapes) {
    const size_t n = s[0] * s[1] * s[2];
    for (int variant = 0; variant < 4; ++variant) {
      be::ChannelNormCall c{};
      c.outer = s[0];
      c.channels = s[1];
      c.inner = s[2];
      c.x = variant == 1 ? mixed : moderate + variant;
      c.mean = variant == 1 ? mean_mixed : mean_moderate;
      c.rstd = variant == 1 ? rstd_mixed : rstd_positive;
      c.weight = variant == 0 || variant == 2 ? weight : nullptr;
      c.bias = variant == 0 || variant == 3 ? bias : nullptr;
      c.xhat_out = xhat;
      c.out = out;
      r.Check(r.k.channel_normalize(&c), "channel_normalize");
      r.Fetch(forward, xhat, n);
      r.Fetch(forward, out, n);
      be::ChannelNormCall g{};
      g.outer = s[0];
      g.channels = s[1];
      g.inner = s[2];
      g.x = variant == 1 ? mixed + 1 : moderate + 2;  // the gradient of xhat
      g.xhat = variant == 1 ? mixed + 5 : xhat_in + variant;
      g.rstd = variant == 1 ? rstd_mixed : rstd_positive;
      g.sum_x = variant == 1 ? mean_mixed : sums;
      g.sum_x_xhat = sums + 64;
      g.count = variant == 2 ? 3.0f : static_cast<float>(s[0] * s[2]);
      g.out = out;
      r.Check(r.k.channel_normalize_backward(&g), "channel_normalize_backward");
      r.Fetch(backward, out, n);
    }
  }
  // Signed zeros: x == mean gives +-0; a null bias adds +0, so -0 * 1 + 0 is +0.
  std::vector<float> zeros(24);
  for (size_t i = 0; i < zeros.size(); ++i) zeros[i] = i % 2 == 0 ? 0.0f : -0.0f;
  const float* x = r.Upload(zeros);
  const float* mean = r.Upload(std::vector<float>{0.0f, -0.0f, 1.0f});
  const float* rstd = r.Upload(std::vector<float>{1.0f, 2.0f, FromBits(0x7F800000u)});
  const float* negative = r.Upload(std::vector<float>{-1.0f, -0.0f, 0.5f});
  for (const float* w : {static_cast<const float*>(nullptr), negative}) {
    be::ChannelNormCall c{};
    c.outer = 2;
    c.channels = 3;
    c.inner = 4;
    c.x = x;
    c.mean = mean;
    c.rstd = rstd;
    c.weight = w;
    c.xhat_out = xhat;
    c.out = out;
    r.Check(r.k.channel_normalize(&c), "channel_normalize");
    r.Fetch(forward, xhat, 24);
    r.Fetch(forward, out, 24);
  }
  outputs.push_back(std::move(forward));
  outputs.push_back(std::move(backward));
}

// The reductions the first battery ran at outer = inner = 1 only (min) or with correction 1 only
// (variance): over the middle axis of [outer, len, inner] views, signed zeros and lengths at or
// below the correction included.
void ReductionCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const size_t size = 12000;
  const float* moderate = r.Upload(ModerateInputs(size, 46));
  const float* mixed = r.Upload(MixedInputs(size, 47));
  std::vector<float> zeros(12);
  for (size_t i = 0; i < zeros.size(); ++i) zeros[i] = (i * 7) % 3 == 0 ? 0.0f : -0.0f;
  const float* signed_zeros = r.Upload(zeros);
  float* result = r.Alloc<float>(size);
  const size_t shapes[][3] = {{1, 7, 3}, {4, 10, 1}, {3, 65, 9}, {2, 129, 17}, {1, 5000, 2},
                              {2, 3, 70}, {1, 9000, 1}, {2, 1, 5}, {3, 2, 4}, {5, 0, 3}};
  KernelOutput min{"min_axis", {}}, variance{"variance_axis_corrections", {}};
  for (const auto& s : shapes) {
    const size_t count = s[0] * s[2];
    for (const float* x : {moderate, mixed + 1}) {
      r.Check(r.k.min_axis(x, s[0], s[1], s[2], result), "min_axis");
      r.Fetch(min, result, count);
      for (size_t correction : {0, 2, 7, 10}) {
        r.Check(r.k.variance_axis(x, s[0], s[1], s[2], correction, result), "variance_axis");
        r.Fetch(variance, result, count);
      }
    }
  }
  for (const auto& s : {std::vector<size_t>{1, 12, 1}, std::vector<size_t>{2, 3, 2}, std::vector<size_t>{1, 6, 2}}) {
    r.Check(r.k.min_axis(signed_zeros, s[0], s[1], s[2], result), "min_axis");
    r.Fetch(min, result, s[0] * s[2]);
    r.Check(r.k.variance_axis(signed_zeros, s[0], s[1], s[2], 0, result), "variance_axis");
    r.Fetch(variance, result, s[0] * s[2]);
  }
  outputs.push_back(std::move(min));
  outputs.push_back(std::move(variance));
}

// The GEMM's bias (gemm with GemmCall::bias, as Linear calls it; next_a / next_b set, which must
// not change a bit) and the batch-grouped GEMM of weight gradients: one group, groups of every
// parity, empty dimensions, every transpose, leading dimensions past the row (C's gaps keep the
// sentinel).
void GemmCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const float* a = r.Upload(ModerateInputs(300 * 260 + 16, 48));
  const float* b = r.Upload(ModerateInputs(300 * 260 + 16, 49));
  const float* a_mixed = r.Upload(MixedInputs(64 * 64, 50));
  const float* bias = r.Upload(ModerateInputs(300, 51));
  const float* bias_mixed = r.Upload(MixedInputs(300, 52));
  float* c = r.Alloc<float>(300 * 310);
  const std::vector<float> sentinels = Sentinels(300 * 310);
  KernelOutput with_bias{"gemm_bias", {}}, grouped{"gemm_batch_grouped", {}};
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    const size_t bias_shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {6, 16, 33}, {13, 31, 64}, {50, 70, 300}, {7, 3, 0}};
    for (const auto& s : bias_shapes) {
      be::GemmCall g{};
      g.trans_a = ta; g.trans_b = tb;
      g.m = s[0]; g.n = s[1]; g.k = s[2];
      g.lda = (ta ? g.m : g.k) + 1;
      g.ldb = (tb ? g.k : g.n) + 2;
      g.ldc = g.n;
      g.a = a + 1;
      g.b = b + 3;
      g.c = c;
      g.next_a = a;
      g.next_b = b;
      g.bias = bias + 1;
      r.Check(r.k.gemm(&g), "gemm");
      r.Fetch(with_bias, c, g.m * g.n);
    }
    be::GemmCall g{};
    g.trans_a = ta; g.trans_b = tb;
    g.m = 20; g.n = 20; g.k = 20;
    g.lda = g.ldb = g.ldc = 20;
    g.a = a_mixed;
    g.b = a_mixed + 400;
    g.c = c;
    g.bias = bias_mixed;
    r.Check(r.k.gemm(&g), "gemm");
    r.Fetch(with_bias, c, 400);

    const size_t grouped_shapes[][4] = {{3, 5, 7, 0},      {3, 5, 7, 7},        {3, 5, 7, 3},     {4, 6, 20, 3},
                                        {6, 16, 64, 16},   {13, 31, 100, 20},   {48, 70, 300, 64}, {1, 1, 9, 2},
                                        {0, 5, 10, 3},     {5, 0, 10, 3},       {7, 3, 0, 4},     {2, 33, 96, 32},
                                        {100, 120, 250, 32}};
    for (const auto& s : grouped_shapes) {
      be::GemmCall q{};
      q.trans_a = ta; q.trans_b = tb;
      q.m = s[0]; q.n = s[1]; q.k = s[2];
      q.lda = (ta ? q.m : q.k) + 1;
      q.ldb = (tb ? q.k : q.n) + 2;
      q.ldc = q.n + 3;
      q.a = a + 2;
      q.b = b + 1;
      q.c = c;
      r.Store(c, sentinels, q.m * q.ldc);
      r.Check(r.k.gemm_batch_grouped(&q, s[3]), "gemm_batch_grouped");
      r.Fetch(grouped, c, q.m * q.ldc);
    }
    be::GemmCall q{};
    q.trans_a = ta; q.trans_b = tb;
    q.m = 20; q.n = 20; q.k = 20;
    q.lda = q.ldb = q.ldc = 20;
    q.a = a_mixed + 7;
    q.b = a_mixed + 1000;
    q.c = c;
    r.Check(r.k.gemm_batch_grouped(&q, 6), "gemm_batch_grouped");
    r.Fetch(grouped, c, 400);
  }
  outputs.push_back(std::move(with_bias));
  outputs.push_back(std::move(grouped));
}

struct ConvGeometry {
  int64_t c_in, h, w, c_out, kh, kw, stride_h, stride_w, padding_h, padding_w, dilation_h, dilation_w;
  int64_t samples, x_gap, y_gap, samples_per_group;  // gaps: floats between samples (other groups)
};

// Convolution geometries: 1x1, strides, padding, dilation, kernels wider than the input, more
// output channels than a vector has lanes, no samples.
const ConvGeometry kConvGeometries[] = {
    {1, 5, 5, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 1},
    {2, 6, 5, 3, 3, 2, 1, 2, 1, 0, 1, 1, 2, 7, 5, 1},
    {3, 7, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 3, 0, 3, 1},
    {2, 7, 7, 2, 2, 2, 1, 1, 1, 1, 2, 2, 2, 11, 0, 2},
    {1, 28, 28, 6, 5, 5, 1, 1, 2, 2, 1, 1, 2, 0, 0, 32},
    {4, 9, 11, 5, 3, 3, 2, 2, 1, 1, 1, 1, 5, 3, 2, 2},
    {2, 3, 3, 2, 5, 5, 1, 1, 2, 2, 1, 1, 2, 0, 1, 1},
    {3, 10, 4, 7, 1, 3, 3, 1, 0, 1, 1, 2, 4, 1, 1, 3},
    {16, 8, 8, 17, 3, 3, 1, 1, 1, 1, 1, 1, 9, 64, 0, 4},
    {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1},
};

be::Conv2dCall CallOf(const ConvGeometry& g) {
  be::Conv2dCall call{};
  be::ConvCall& c = call.conv;
  c.c_in_group = g.c_in;
  c.h = g.h;
  c.w = g.w;
  c.kh = g.kh;
  c.kw = g.kw;
  c.h_out = (g.h + 2 * g.padding_h - g.dilation_h * (g.kh - 1) - 1) / g.stride_h + 1;
  c.w_out = (g.w + 2 * g.padding_w - g.dilation_w * (g.kw - 1) - 1) / g.stride_w + 1;
  c.stride_h = g.stride_h;
  c.stride_w = g.stride_w;
  c.padding_h = g.padding_h;
  c.padding_w = g.padding_w;
  c.dilation_h = g.dilation_h;
  c.dilation_w = g.dilation_w;
  c.samples = g.samples;
  c.sample_stride = g.c_in * g.h * g.w + g.x_gap;
  c.ld = g.samples * c.h_out * c.w_out + 3;
  call.c_out_group = g.c_out;
  call.out_sample_stride = g.c_out * c.h_out * c.w_out + g.y_gap;
  call.samples_per_group = g.samples_per_group;
  call.groups = 1;
  return call;
}

void ConvCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const size_t size = 100000;
  const std::vector<float> moderate_host = ModerateInputs(size, 53);
  const float* moderate = r.Upload(moderate_host);
  const float* moderate2 = r.Upload(ModerateInputs(size, 54));
  const float* mixed = r.Upload(MixedInputs(size, 55));
  const float* mixed2 = r.Upload(MixedInputs(size, 56));
  const float* negative_zeros = r.Upload(std::vector<float>(4096, -0.0f));
  float* work = r.Alloc<float>(size);
  const std::vector<float> sentinels = Sentinels(size);
  KernelOutput im2col{"im2col", {}}, col2im{"col2im_add", {}}, forward{"conv2d_forward", {}},
      input_grad{"conv2d_input_grad", {}}, weight_grad{"conv2d_weight_grad", {}};
  for (size_t gi = 0; gi < sizeof(kConvGeometries) / sizeof(kConvGeometries[0]); ++gi) {
    const ConvGeometry& geo = kConvGeometries[gi];
    const be::Conv2dCall call = CallOf(geo);
    const be::ConvCall& conv = call.conv;
    const size_t k = static_cast<size_t>(geo.c_in * geo.kh * geo.kw);
    const size_t x_floats = static_cast<size_t>(geo.samples * conv.sample_stride);
    const size_t y_floats = static_cast<size_t>(geo.samples * call.out_sample_stride);
    const size_t w_floats = static_cast<size_t>(geo.c_out) * k;
    const size_t col_floats = k * static_cast<size_t>(conv.ld);
    struct Operands {
      const float *x, *w, *dy;
    };
    std::vector<Operands> operands = {{moderate + 1, moderate2, moderate2 + 3}};
    if (gi == 1 || gi == 2 || gi == 5) operands.push_back({mixed, mixed2 + 1, mixed2 + 2});  // specials
    if (gi == 2) operands.push_back({negative_zeros, moderate2 + 5, moderate + 7});          // sums of -0
    for (const Operands& o : operands) {
      r.Store(work, sentinels, col_floats);
      r.Check(r.k.im2col(&conv, o.x, work), "im2col");
      r.Fetch(im2col, work, col_floats);

      r.Store(work, moderate_host, x_floats);  // col2im adds into what dx holds
      r.Check(r.k.col2im_add(&conv, o.dy, work), "col2im_add");
      r.Fetch(col2im, work, x_floats);

      for (const float* bias : {static_cast<const float*>(nullptr), o.w + 11}) {
        r.Store(work, sentinels, y_floats);
        r.Check(r.k.conv2d_forward(&call, o.x, o.w, bias, work), "conv2d_forward");
        r.Fetch(forward, work, y_floats);
      }

      r.Store(work, sentinels, x_floats);
      r.Check(r.k.conv2d_input_grad(&call, o.dy, o.w, work), "conv2d_input_grad");
      r.Fetch(input_grad, work, x_floats);

      r.Store(work, sentinels, w_floats + 2);
      r.Check(r.k.conv2d_weight_grad(&call, o.dy, o.x, work), "conv2d_weight_grad");
      r.Fetch(weight_grad, work, w_floats + 2);
    }
  }
  for (KernelOutput* k : {&im2col, &col2im, &forward, &input_grad, &weight_grad}) outputs.push_back(std::move(*k));
}

// Grouped convolutions, every group in one call (Conv2dCall.groups): depthwise layers at stride 1
// and 2 (more groups than a vector has lanes, one sample), two groups of several channels, and
// EfficientNet's 5x5 stride-2 depthwise shape. ConvGeometry's channels are a group's.
void GroupedConvCases(Runner& r, std::vector<KernelOutput>& outputs) {
  struct Grouped {
    ConvGeometry geo;
    int64_t groups;
  };
  const Grouped cases[] = {
      {{1, 9, 9, 1, 3, 3, 1, 1, 1, 1, 1, 1, 2, 0, 0, 2}, 12},
      {{1, 10, 9, 1, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 0, 1}, 20},
      {{2, 6, 7, 3, 3, 2, 1, 1, 0, 1, 1, 1, 3, 0, 0, 2}, 2},
      {{1, 11, 11, 1, 5, 5, 2, 2, 2, 2, 1, 1, 2, 0, 0, 1}, 3},
  };
  const size_t size = 8192;
  const float* moderate = r.Upload(ModerateInputs(size, 62));
  const float* moderate2 = r.Upload(ModerateInputs(size, 63));
  const float* mixed = r.Upload(MixedInputs(size, 64));
  float* work = r.Alloc<float>(size);
  const std::vector<float> sentinels = Sentinels(size);
  KernelOutput grouped{"conv2d_grouped", {}};
  for (const Grouped& c : cases) {
    be::Conv2dCall call = CallOf(c.geo);
    const int64_t positions = call.conv.h_out * call.conv.w_out;
    call.groups = c.groups;
    call.conv.sample_stride = c.groups * c.geo.c_in * c.geo.h * c.geo.w;
    call.out_sample_stride = c.groups * c.geo.c_out * positions;
    const size_t x_floats = static_cast<size_t>(c.geo.samples * call.conv.sample_stride);
    const size_t y_floats = static_cast<size_t>(c.geo.samples * call.out_sample_stride);
    const size_t w_floats = static_cast<size_t>(c.groups * c.geo.c_out * c.geo.c_in * c.geo.kh * c.geo.kw);
    for (const float* x : {moderate + 1, mixed}) {
      for (const float* bias : {static_cast<const float*>(nullptr), moderate2 + 11}) {
        r.Store(work, sentinels, y_floats);
        r.Check(r.k.conv2d_forward(&call, x, moderate2, bias, work), "conv2d_forward");
        r.Fetch(grouped, work, y_floats);
      }
      r.Store(work, sentinels, x_floats);
      r.Check(r.k.conv2d_input_grad(&call, x, moderate2 + 3, work), "conv2d_input_grad");
      r.Fetch(grouped, work, x_floats);
      r.Store(work, sentinels, w_floats + 2);
      r.Check(r.k.conv2d_weight_grad(&call, moderate2 + 5, x, work), "conv2d_weight_grad");
      r.Fetch(grouped, work, w_floats + 2);
    }
  }
  outputs.push_back(std::move(grouped));
}

be::PoolCall Pool(int64_t planes, int64_t h, int64_t w, int64_t h_out, int64_t w_out, int64_t kh, int64_t kw,
                  int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t ph_end, int64_t pw_end, int32_t count_pad) {
  return be::PoolCall{planes, h, w, h_out, w_out, kh, kw, sh, sw, ph, pw, ph_end, pw_end, count_pad};
}

// Values with many ties under the contract's order (+-0, equal values, NaNs of several payloads,
// -inf), for the first-maximum rule.
std::vector<float> TiedInputs(size_t n, uint64_t stream) {
  const uint32_t values[] = {0xBF800000u, 0x80000000u, 0x00000000u, 0x3F800000u, 0x3F800000u, 0x00000000u,
                             0x80000000u, 0xFF800000u, 0xBF800000u, 0x3F800000u, 0x80000000u, 0x00000000u,
                             0x3F800000u, 0x7F800001u, 0xFFFFFFFFu, 0x7FC00000u};
  const std::vector<uint32_t> words = Words(n, stream);
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = FromBits(values[(words[i] >> 7) % 16]);
  return out;
}

void PoolCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const size_t size = 64 * 16 * 16 + 64;
  const float* mixed = r.Upload(MixedInputs(size, 57));
  const float* moderate = r.Upload(ModerateInputs(size, 58));
  const float* tied = r.Upload(TiedInputs(size, 59));
  const float* gradient = r.Upload(ModerateInputs(size, 60));
  const float* gradient_mixed = r.Upload(MixedInputs(size, 61));
  float* out = r.Alloc<float>(size);
  float* dx = r.Alloc<float>(size);
  int64_t* argmax = r.Alloc<int64_t>(size);
  // Max pooling pads both sides alike; every window holds at least one input element.
  const be::PoolCall max_pools[] = {
      Pool(3, 4, 6, 2, 3, 2, 2, 2, 2, 0, 0, 0, 0, 0),     Pool(2, 5, 7, 2, 3, 2, 2, 2, 2, 0, 0, 0, 0, 0),
      Pool(2, 28, 28, 14, 14, 2, 2, 2, 2, 0, 0, 0, 0, 0), Pool(2, 9, 9, 3, 3, 2, 2, 2, 2, 0, 0, 0, 0, 0),
      Pool(2, 5, 5, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 0),     Pool(3, 6, 7, 6, 3, 3, 2, 1, 2, 1, 0, 1, 0, 0),
      Pool(1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0),     Pool(4, 9, 9, 3, 3, 3, 3, 3, 3, 0, 0, 0, 0, 0),
      Pool(2, 7, 6, 8, 7, 4, 4, 1, 1, 2, 2, 2, 2, 0),     Pool(64, 16, 16, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0, 0),
      Pool(5, 12, 10, 6, 5, 3, 3, 2, 2, 1, 1, 1, 1, 0)};
  KernelOutput max_forward{"max_pool_forward", {}}, max_backward{"max_pool_backward", {}};
  for (const be::PoolCall& p : max_pools) {
    const size_t in = static_cast<size_t>(p.planes * p.h * p.w), n = static_cast<size_t>(p.planes * p.h_out * p.w_out);
    for (const float* x : {mixed, moderate + 1, tied}) {
      r.Check(r.k.max_pool_forward(&p, x, out, argmax), "max_pool_forward");
      r.Fetch(max_forward, out, n);
      r.Fetch(max_forward, argmax, n);
      for (const float* g : {gradient, gradient_mixed + 1}) {
        r.Check(r.k.max_pool_backward(&p, g, argmax, dx), "max_pool_backward");
        r.Fetch(max_backward, dx, in);
      }
    }
  }
  // Average pooling: end padding (ceil mode), padding counted in the divisor or not.
  const be::PoolCall avg_pools[] = {
      Pool(3, 4, 6, 2, 3, 2, 2, 2, 2, 0, 0, 0, 0, 1),     Pool(1, 5, 5, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1),
      Pool(1, 5, 5, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 0),     Pool(2, 5, 4, 2, 4, 3, 2, 2, 1, 0, 1, 1, 0, 0),
      Pool(2, 5, 4, 2, 4, 3, 2, 2, 1, 0, 1, 1, 0, 1),     Pool(2, 5, 5, 3, 3, 2, 2, 2, 2, 0, 0, 1, 1, 0),
      Pool(2, 5, 5, 3, 3, 2, 2, 2, 2, 0, 0, 1, 1, 1),     Pool(64, 16, 16, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0, 1),
      Pool(3, 7, 6, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1, 0),     Pool(1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1),
      Pool(2, 13, 11, 5, 4, 5, 4, 3, 3, 2, 1, 2, 1, 1)};
  KernelOutput avg_forward{"avg_pool_forward", {}}, avg_backward{"avg_pool_backward", {}};
  for (const be::PoolCall& p : avg_pools) {
    const size_t in = static_cast<size_t>(p.planes * p.h * p.w), n = static_cast<size_t>(p.planes * p.h_out * p.w_out);
    for (const float* x : {mixed + 2, moderate}) {
      r.Check(r.k.avg_pool_forward(&p, x, out), "avg_pool_forward");
      r.Fetch(avg_forward, out, n);
    }
    for (const float* g : {gradient + 1, gradient_mixed}) {
      r.Check(r.k.avg_pool_backward(&p, g, dx), "avg_pool_backward");
      r.Fetch(avg_backward, dx, in);
    }
  }
  for (KernelOutput* k : {&max_forward, &max_backward, &avg_forward, &avg_backward}) outputs.push_back(std::move(*k));
}

// Embedding rows: gathers copy bits (payload NaNs survive); scatters add repeated ids in index
// order, into zeros and into values already there.
void EmbeddingCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const int64_t rows = 11;
  const size_t dims[] = {1, 3, 16, 65, 300}, counts[] = {0, 1, 8, 50, 200};
  std::vector<int64_t> ids_host(200);
  const std::vector<uint32_t> words = Words(200, 62);
  for (size_t i = 0; i < ids_host.size(); ++i) ids_host[i] = static_cast<int64_t>((words[i] >> 5) % rows);
  const int64_t first_ids[] = {0, 10, 3, 3, 7, 0, 10, 10};  // repeats, the first and the last row
  for (size_t i = 0; i < 8; ++i) ids_host[i] = first_ids[i];
  const int64_t* ids = r.Upload(ids_host);
  const float* table = r.Upload(MixedInputs(rows * 300, 63));
  const std::vector<float> table_grad_mixed = MixedInputs(rows * 300, 64);
  const float* gradient = r.Upload(ModerateInputs(200 * 300, 65));
  const float* gradient_mixed = r.Upload(MixedInputs(200 * 300, 66));
  float* out = r.Alloc<float>(200 * 300);
  float* table_grad = r.Alloc<float>(rows * 300);
  const std::vector<float> zeros(rows * 300, 0.0f);
  KernelOutput gather{"gather_rows", {}}, scatter{"scatter_add_rows", {}};
  for (size_t dim : dims) {
    for (size_t count : counts) {
      if (count * dim > 200 * 300) continue;
      r.Check(r.k.gather_rows(table, ids, count, dim, out), "gather_rows");
      r.Fetch(gather, out, count * dim);
      for (const float* g : {gradient, gradient_mixed}) {
        for (const std::vector<float>* start : {&zeros, &table_grad_mixed}) {
          r.Store(table_grad, *start, rows * dim);
          r.Check(r.k.scatter_add_rows(ids, count, dim, g, table_grad), "scatter_add_rows");
          r.Fetch(scatter, table_grad, rows * dim);
        }
      }
    }
  }
  outputs.push_back(std::move(gather));
  outputs.push_back(std::move(scatter));
}

// Negative log-likelihood: specials in the log-probabilities (-inf, -0, NaN payloads), ignored
// rows (ignore_index -100, and a valid class ignored), one gradient per row or one for all, the
// mean's divisor (0 included). The backward pass writes only the targets' elements.
void NllCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const size_t shapes[][2] = {{1, 1}, {4, 3}, {7, 10}, {100, 10}, {33, 1000}, {0, 5}};
  const float* log_probs = r.Upload(MixedInputs(33 * 1000 + 8, 67));
  const float* gradient = r.Upload(MixedInputs(128, 68));
  const float* gradient_moderate = r.Upload(ModerateInputs(128, 69));
  float* losses = r.Alloc<float>(128);
  float* grad_log_probs = r.Alloc<float>(33 * 1000 + 8);
  const std::vector<float> sentinels = Sentinels(33 * 1000 + 8);
  const std::vector<uint32_t> words = Words(128, 70);
  KernelOutput forward{"nll_forward", {}}, backward{"nll_backward", {}};
  for (const auto& s : shapes) {
    const size_t n = s[0], c = s[1];
    for (int64_t ignore_index : {int64_t{-100}, int64_t{1}}) {
      std::vector<int64_t> targets_host(n + 1);
      for (size_t i = 0; i < n; ++i) {
        targets_host[i] = static_cast<int64_t>((words[i] >> 3) % c);
        if (i % 5 == 3 && ignore_index == -100) targets_host[i] = -100;
      }
      const int64_t* targets = r.Upload(targets_host);
      r.Check(r.k.nll_forward(log_probs + 1, targets, n, c, ignore_index, losses), "nll_forward");
      r.Fetch(forward, losses, n);
      struct Reduction {
        const float* grad;
        size_t step;
        float divisor;
      };
      const Reduction reductions[] = {
          {gradient, 1, 1.0f}, {gradient_moderate + 2, 0, 3.0f}, {gradient + 5, 1, 0.0f}, {gradient + 9, 0, 7.5f}};
      for (const Reduction& red : reductions) {
        r.Store(grad_log_probs, sentinels, n * c);
        r.Check(r.k.nll_backward(targets, n, c, ignore_index, red.grad, red.step, red.divisor, grad_log_probs),
                "nll_backward");
        r.Fetch(backward, grad_log_probs, n * c);
      }
    }
  }
  outputs.push_back(std::move(forward));
  outputs.push_back(std::move(backward));
}

// beta^t, 1 - beta^t and its square root in float64 (exact IEEE operations, the same everywhere),
// as the optimizers compute their step's scalars.
double PowerOf(double beta, int t) {
  double p = 1.0;
  for (int i = 0; i < t; ++i) p *= beta;
  return p;
}

// Three steps of each optimizer configuration over moderate values and over specials, the state
// carried from step to step; every step's parameters and state are fetched.
void OptimizerCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const size_t longest = 20000;
  const size_t lengths[] = {0, 1, 7, 64, 1000, longest};
  const std::vector<float> moderate_param = ModerateInputs(longest, 71), mixed_param = MixedInputs(longest, 72);
  const std::vector<float> mixed_state = MixedInputs(longest, 73), zeros(longest, 0.0f);
  const std::vector<float> sentinels = Sentinels(longest);
  const float* moderate_grad = r.Upload(ModerateInputs(longest + 16, 74));
  const float* mixed_grad = r.Upload(MixedInputs(longest + 16, 75));
  float* param = r.Alloc<float>(longest);
  float* m = r.Alloc<float>(longest);
  float* v = r.Alloc<float>(longest);

  struct Adam {
    float lr, beta1, beta2, eps, weight_decay;
    int32_t decoupled;
  };
  const Adam adams[] = {{1e-3f, 0.9f, 0.999f, 1e-8f, 0.0f, 0},
                        {1e-3f, 0.9f, 0.999f, 1e-8f, 1e-2f, 0},
                        {1e-2f, 0.9f, 0.95f, 1e-6f, 0.1f, 1}};
  KernelOutput adam{"adam_update", {}};
  for (const Adam& config : adams) {
    for (size_t n : lengths) {
      for (int specials = 0; specials < 2; ++specials) {
        r.Store(param, specials ? mixed_param : moderate_param, n);
        r.Store(m, specials ? mixed_state : zeros, n);
        r.Store(v, specials ? mixed_state : zeros, n);  // negative second moments: sqrt gives NaN
        for (int t = 1; t <= 3; ++t) {
          be::AdamCall call{};
          call.param = param;
          call.grad = (specials ? mixed_grad : moderate_grad) + t;
          call.exp_avg = m;
          call.exp_avg_sq = v;
          call.n = n;
          call.lr = config.lr;
          call.beta1 = config.beta1;
          call.beta2 = config.beta2;
          call.eps = config.eps;
          call.weight_decay = config.weight_decay;
          call.decoupled = config.decoupled;
          call.step_size = static_cast<float>(config.lr / (1.0 - PowerOf(config.beta1, t)));
          call.sqrt_bias_correction2 = static_cast<float>(__builtin_sqrt(1.0 - PowerOf(config.beta2, t)));
          r.Check(r.k.adam_update(&call), "adam_update");
          r.Fetch(adam, param, n);
          r.Fetch(adam, m, n);
          r.Fetch(adam, v, n);
        }
      }
    }
  }
  outputs.push_back(std::move(adam));

  struct Sgd {
    float lr, momentum, dampening, weight_decay;
    int32_t nesterov;
  };
  const Sgd sgds[] = {{0.1f, 0.0f, 0.0f, 0.0f, 0},
                      {0.01f, 0.9f, 0.0f, 0.0f, 0},
                      {0.01f, 0.9f, 0.1f, 1e-4f, 1},
                      {0.05f, 0.5f, 0.0f, 1e-2f, 0}};
  KernelOutput sgd{"sgd_update", {}};
  for (const Sgd& config : sgds) {
    for (size_t n : lengths) {
      for (int specials = 0; specials < 2; ++specials) {
        r.Store(param, specials ? mixed_param : moderate_param, n);
        r.Store(m, sentinels, n);  // the momentum buffer: written on the first step, kept without momentum
        for (int t = 0; t < 3; ++t) {
          be::SgdCall call{};
          call.param = param;
          call.grad = (specials ? mixed_grad : moderate_grad) + t;
          call.momentum_buffer = m;
          call.n = n;
          call.lr = config.lr;
          call.momentum = config.momentum;
          call.dampening = config.dampening;
          call.weight_decay = config.weight_decay;
          call.nesterov = config.nesterov;
          call.first_step = t == 0;
          r.Check(r.k.sgd_update(&call), "sgd_update");
          r.Fetch(sgd, param, n);
          r.Fetch(sgd, m, n);
        }
      }
    }
  }
  outputs.push_back(std::move(sgd));
}

// Batch normalisation's per-channel sums of [samples, channels, positions], read in place: planes
// of a few positions and of many, channels whose values cross the reduction's blocks, NaNs and
// infinities, no positions at all (golden section 6).
void ChannelSumsCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const size_t length = 32 * 3 * 300 + 16;
  const float* moderate = r.Upload(ModerateInputs(length, 41)) + 1;  // misaligned
  const float* mixed = r.Upload(MixedInputs(length, 42)) + 3;
  float* out = r.Alloc<float>(64);
  const size_t shapes[][3] = {{32, 40, 4}, {3, 5, 7}, {2, 3, 4097}, {32, 3, 300}, {1, 64, 1}, {5, 2, 33}, {4, 6, 0}};
  KernelOutput k{"channel_sums", {}};
  for (const auto& s : shapes) {
    for (const float* x : {moderate, mixed}) {
      r.Check(r.k.channel_sums(x, s[0], s[1], s[2], out), "channel_sums");
      r.Fetch(k, out, s[1]);
    }
  }
  outputs.push_back(std::move(k));
}

// The forward convolution's epilogue (Conv2dCall.epilogue: inference's batch normalisation and
// Relu, Clip or SiLU applied as each output is stored): batch normalisation with and without its
// affine parameters, each activation, clamp bounds of -0 and infinity, statistics with special values,
// on layers through the direct kernels and the GEMM, and depthwise groups in one call (golden
// section 7).
void ConvEpilogueCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const size_t size = 40000;
  const float* moderate = r.Upload(ModerateInputs(size, 71));
  const float* moderate2 = r.Upload(ModerateInputs(size, 72));
  const float* mixed = r.Upload(MixedInputs(512, 73));
  float* work = r.Alloc<float>(size);
  const std::vector<float> sentinels = Sentinels(size);
  struct Layer {
    ConvGeometry geo;
    int64_t groups;
  };
  const Layer layers[] = {
      {kConvGeometries[1], 1},  // 3x3, stride 2 across, padding
      {kConvGeometries[4], 1},  // 5x5 on 28x28, 32 per group of samples
      {kConvGeometries[8], 1},  // 17 channels, 8x8 planes: the GEMM
      {{1, 9, 9, 1, 3, 3, 2, 2, 1, 1, 1, 1, 2, 0, 0, 2}, 24},  // depthwise stride 2
  };
  const float inf = __builtin_inff();
  struct Variant {
    bool normalize, affine;
    int32_t activation;
    float lo, hi;
  };
  const Variant variants[] = {
      {true, true, be::kConvRelu, 0.0f, 0.0f},   {true, false, be::kConvClamp, 0.0f, 6.0f},
      {false, false, be::kConvClamp, -0.0f, inf}, {true, true, be::kConvNoActivation, 0.0f, 0.0f},
      {false, false, be::kConvRelu, 0.0f, 0.0f},  {true, true, be::kConvSilu, 0.0f, 0.0f},
      {false, false, be::kConvSilu, 0.0f, 0.0f},
  };
  KernelOutput k{"conv2d_epilogue", {}};
  for (const Layer& l : layers) {
    be::Conv2dCall call = CallOf(l.geo);
    const int64_t positions = call.conv.h_out * call.conv.w_out;
    call.groups = l.groups;
    call.conv.sample_stride = l.groups * l.geo.c_in * l.geo.h * l.geo.w + l.geo.x_gap;
    call.out_sample_stride = l.groups * l.geo.c_out * positions + l.geo.y_gap;
    const size_t y_floats = static_cast<size_t>(l.geo.samples * call.out_sample_stride);
    for (const Variant& v : variants) {
      be::ConvEpilogue& e = call.epilogue;
      e = be::ConvEpilogue{};
      if (v.normalize) {
        e.mean = mixed + 5;     // specials among the channels' statistics
        e.rstd = moderate + 7;
        e.weight = v.affine ? mixed + 101 : nullptr;
        e.bias = v.affine ? moderate2 + 13 : nullptr;
      }
      e.activation = v.activation;
      e.lo = v.lo;
      e.hi = v.hi;
      for (const float* bias : {static_cast<const float*>(nullptr), moderate2 + 11}) {
        r.Store(work, sentinels, y_floats);
        r.Check(r.k.conv2d_forward(&call, moderate + 1, moderate2, bias, work), "conv2d_forward");
        r.Fetch(k, work, y_floats);
      }
    }
  }
  outputs.push_back(std::move(k));
}

}  // namespace

void LayerCases(Runner& r, std::vector<KernelOutput>& outputs) {
  BroadcastCases(r, outputs);
  StridedCopyCases(r, outputs);
  FillCases(r, outputs);
  GeluBackwardCases(r, outputs);
  LayerNormCases(r, outputs);
  ChannelNormCases(r, outputs);
  ReductionCases(r, outputs);
  GemmCases(r, outputs);
  ConvCases(r, outputs);
  GroupedConvCases(r, outputs);
  PoolCases(r, outputs);
  EmbeddingCases(r, outputs);
  NllCases(r, outputs);
  OptimizerCases(r, outputs);
  ChannelSumsCases(r, outputs);
  ConvEpilogueCases(r, outputs);
}

}  // namespace battery
}  // namespace lockstep
