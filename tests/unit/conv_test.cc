// The convolution kernels (simd/conv.h) against the contract's im2col + GEMM definition, written
// here one output at a time: bit-identical on many shapes (padding, dilation, strides for the
// weight gradient, channel counts around every tile size, batches across group boundaries), on
// every target and for 1, 2 and 3 threads, by both paths: the direct kernels and the lowering to
// the GEMM (simd/conv_gemm.h), each forced on every shape.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "simd/conv.h"
#include "simd/conv_gemm.h"
#include "simd/thread_pool.h"
#include "tests/unit/conv_shape.h"
#include "tests/unit/float_bits.h"
#include "tests/unit/for_each_target.h"

namespace lockstep {
namespace {

using testing::Bits;

float Canonical(float v) { return v != v ? __builtin_nanf("") : v; }

// Values of varied magnitude and sign (so that another summation order changes the bits), with
// some zeros of both signs; `specials` adds infinities and NaNs.
std::vector<float> Values(size_t n, uint32_t seed, bool specials = false) {
  std::vector<float> out(n);
  uint32_t state = seed * 2654435761u + 777u;
  for (size_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    const uint32_t pick = (state >> 24) % 64;
    if (pick == 0) {
      out[i] = (state & 1) ? -0.0f : 0.0f;
    } else if (specials && pick == 1) {
      out[i] = (state & 2) ? __builtin_inff() : -__builtin_inff();
    } else if (specials && pick == 2) {
      out[i] = testing::FromBits(0xFFC00001u);
    } else {
      const uint32_t exponent = 120 + ((state >> 4) % 12);
      out[i] = testing::FromBits(((state >> 31) << 31) | (exponent << 23) | ((state * 2246822519u) >> 9));
    }
  }
  return out;
}

struct Case {
  size_t n, c_in, h, w, c_out, kh, kw, stride, pad_h, pad_w, dilation;
};

simd::ConvShape ShapeOf(const Case& c) {
  return testing::ConvShapeOf(c.n, c.c_in, c.h, c.w, c.c_out, c.kh, c.kw, c.stride, c.pad_h, c.pad_w, c.dilation);
}

// The input element under tap (i, j) at output (oy, ox), or -1 in the padding.
long InputIndex(const simd::ConvShape& s, size_t c, size_t i, size_t j, size_t oy, size_t ox) {
  const long y = static_cast<long>(oy * s.stride_h + i * s.dilation_h) - static_cast<long>(s.pad_h);
  const long x = static_cast<long>(ox * s.stride_w + j * s.dilation_w) - static_cast<long>(s.pad_w);
  if (y < 0 || x < 0 || y >= static_cast<long>(s.h) || x >= static_cast<long>(s.w)) return -1;
  return static_cast<long>((c * s.h + static_cast<size_t>(y)) * s.w + static_cast<size_t>(x));
}

// im2col (padding as +0.0) then the GEMM's K-sequential sum from -0.0, then the bias.
std::vector<float> ForwardReference(const simd::ConvShape& s, const std::vector<float>& x, const std::vector<float>& w,
                                    const float* bias) {
  const size_t k = s.c_in * s.kh * s.kw, p = s.h_out * s.w_out;
  std::vector<float> y(s.samples * s.y_sample_stride);
  for (size_t n = 0; n < s.samples; ++n) {
    for (size_t co = 0; co < s.c_out; ++co) {
      for (size_t q = 0; q < p; ++q) {
        float acc = -0.0f;
        for (size_t t = 0; t < k; ++t) {
          const size_t c = t / (s.kh * s.kw), i = (t / s.kw) % s.kh, j = t % s.kw;
          const long at = InputIndex(s, c, i, j, q / s.w_out, q % s.w_out);
          const float xv = at < 0 ? 0.0f : x[n * s.x_sample_stride + static_cast<size_t>(at)];
          const float product = w[co * k + t] * xv;
          acc = acc + product;
        }
        acc = Canonical(acc);
        y[n * s.y_sample_stride + co * p + q] = bias != nullptr ? Canonical(acc + bias[co]) : acc;
      }
    }
  }
  return y;
}

// Columns W^T dY (K = output channels from -0.0), then each input element from +0.0 adds its
// column entries in increasing (c, i, j, oy, ox) order.
std::vector<float> InputGradReference(const simd::ConvShape& s, const std::vector<float>& dy,
                                      const std::vector<float>& w) {
  const size_t k = s.c_in * s.kh * s.kw, p = s.h_out * s.w_out;
  std::vector<float> dx(s.samples * s.x_sample_stride, 0.0f);
  for (size_t n = 0; n < s.samples; ++n) {
    for (size_t t = 0; t < k; ++t) {
      const size_t c = t / (s.kh * s.kw), i = (t / s.kw) % s.kh, j = t % s.kw;
      for (size_t q = 0; q < p; ++q) {
        float col = -0.0f;
        for (size_t co = 0; co < s.c_out; ++co) {
          const float product = w[co * k + t] * dy[n * s.y_sample_stride + co * p + q];
          col = col + product;
        }
        const long at = InputIndex(s, c, i, j, q / s.w_out, q % s.w_out);
        if (at < 0) continue;
        float& target = dx[n * s.x_sample_stride + static_cast<size_t>(at)];
        target = Canonical(target + Canonical(col));
      }
    }
  }
  return dx;
}

// Per group of samples: sum over (sample, oy, ox) from -0.0; groups combined pairwise.
std::vector<float> WeightGradReference(const simd::ConvShape& s, const std::vector<float>& dy,
                                       const std::vector<float>& x, size_t per_group) {
  const size_t k = s.c_in * s.kh * s.kw, p = s.h_out * s.w_out;
  const size_t groups = (s.samples + per_group - 1) / per_group;
  std::vector<std::vector<float>> partials(groups, std::vector<float>(s.c_out * k));
  for (size_t g = 0; g < groups; ++g) {
    for (size_t co = 0; co < s.c_out; ++co) {
      for (size_t t = 0; t < k; ++t) {
        const size_t c = t / (s.kh * s.kw), i = (t / s.kw) % s.kh, j = t % s.kw;
        float acc = -0.0f;
        for (size_t n = g * per_group; n < s.samples && n < (g + 1) * per_group; ++n) {
          for (size_t q = 0; q < p; ++q) {
            const long at = InputIndex(s, c, i, j, q / s.w_out, q % s.w_out);
            const float xv = at < 0 ? 0.0f : x[n * s.x_sample_stride + static_cast<size_t>(at)];
            const float product = dy[n * s.y_sample_stride + co * p + q] * xv;
            acc = acc + product;
          }
        }
        partials[g][co * k + t] = Canonical(acc);
      }
    }
  }
  for (size_t count = groups; count > 1;) {
    size_t next = 0;
    for (size_t i = 0; i + 1 < count; i += 2, ++next) {
      for (size_t e = 0; e < s.c_out * k; ++e) partials[next][e] = Canonical(partials[i][e] + partials[i + 1][e]);
    }
    if (count % 2 == 1) partials[next++] = partials[count - 1];
    count = next;
  }
  return partials[0];
}

void ExpectSameBits(const std::vector<float>& got, const std::vector<float>& want, const std::string& what,
                    const Case& c) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (Bits(got[i]) != Bits(want[i])) {
      std::ostringstream m;
      m << what << " n=" << c.n << " c_in=" << c.c_in << " " << c.h << "x" << c.w << " c_out=" << c.c_out << " k="
        << c.kh << "x" << c.kw << " stride=" << c.stride << " pad=" << c.pad_h << "," << c.pad_w
        << " dilation=" << c.dilation << ": element " << i << " is " << got[i] << " (0x" << std::hex
        << Bits(got[i]) << "), want " << want[i] << " (0x" << Bits(want[i]) << ")";
      FAIL(m.str());
    }
  }
}

// fn() with each path forced in turn, then the choice by shape again.
template <class Fn>
void ForEachPath(const Fn& fn) {
  struct Path {
    simd::ConvPath path;
    const char* name;
  };
  for (const Path& p : {Path{simd::ConvPath::kDirect, "direct"}, Path{simd::ConvPath::kGemm, "gemm"}}) {
    simd::SetConvPath(p.path);
    INFO("path " << p.name);
    fn();
  }
  simd::SetConvPath(simd::ConvPath::kByShape);
}

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      // n, c_in, h, w, c_out, kh, kw, stride, pad_h, pad_w, dilation
      {3, 1, 28, 28, 6, 5, 5, 1, 2, 2, 1},    // LeNet-5's first convolution
      {3, 6, 14, 14, 16, 5, 5, 1, 0, 0, 1},   // and its second
      {2, 3, 7, 9, 1, 3, 3, 1, 1, 1, 1},
      {2, 2, 6, 5, 7, 3, 2, 1, 0, 1, 1},
      {1, 4, 9, 9, 9, 3, 3, 1, 2, 2, 2},      // dilation
      {2, 5, 4, 4, 13, 1, 1, 1, 0, 0, 1},     // 1x1
      {1, 2, 5, 11, 17, 5, 3, 1, 2, 1, 1},
      {2, 3, 3, 3, 8, 3, 3, 1, 1, 1, 1},
      {1, 1, 1, 1, 3, 1, 1, 1, 0, 0, 1},
      {2, 3, 5, 6, 4, 3, 1, 1, 1, 1, 1},      // padding wider than the kernel's reach
      {1, 2, 4, 7, 5, 2, 2, 1, 1, 2, 1},
      {2, 27, 6, 6, 5, 2, 2, 1, 0, 0, 1},     // many taps per tile
      {1, 3, 20, 3, 4, 3, 3, 1, 0, 1, 1},
      {3, 40, 4, 4, 37, 3, 3, 1, 1, 1, 1},    // a late stage: few positions, many channels
      {2, 70, 2, 2, 19, 3, 3, 1, 1, 1, 1},
      // Taps enough that the forward pass's tiles of channels run in groups (3 or 4 tiles, then
      // the rest) within its weight budget (simd/conv.cc, kForwardGroupWeights).
      {1, 300, 4, 4, 37, 3, 3, 1, 1, 1, 1},
      // A plane's last one to four positions past a whole vector summed as vectors of channels
      // (on AVX-512: 14 x 14, 209 positions, one past 13 vectors; 3 x 6, 20, four past one; 11 x
      // 11, 131, three past eight, and a last tile of four channels).
      {1, 4, 14, 14, 8, 3, 3, 1, 1, 1, 1},
      {2, 3, 3, 6, 8, 3, 3, 1, 1, 1, 1},
      {1, 5, 11, 11, 20, 3, 3, 1, 1, 1, 1},
      // Few columns against many channels (the weights as A, simd/conv_columns.h): 49 columns,
      // one past three vectors of 16, and a last tile of four channels; 2 x 25; 19 and 23 (three
      // and seven past a vector); 4 (fewer than a vector).
      {1, 64, 7, 7, 100, 3, 3, 1, 1, 1, 1},
      {2, 32, 5, 5, 112, 3, 3, 1, 1, 1, 1},
      {1, 8, 19, 1, 40, 3, 1, 1, 1, 0, 1},
      {1, 8, 23, 1, 48, 3, 1, 1, 1, 0, 1},
      {1, 16, 2, 2, 8, 3, 3, 1, 1, 1, 1},
      // Columns past the few-column product's block (simd/conv_columns.cc, kColumnBlock), so each
      // sum runs in two blocks of steps: 49 columns over 1,440 taps; 23 over 2,880.
      {1, 160, 7, 7, 100, 3, 3, 1, 1, 1, 1},
      {1, 960, 23, 1, 48, 3, 1, 1, 1, 0, 1},
  };
  return cases;
}

// Stride 1 (the direct paths) and other strides (the columns paths).
std::vector<Case> AllCases() {
  std::vector<Case> cases = Cases();
  cases.push_back({5, 3, 9, 8, 6, 3, 3, 2, 1, 0, 1});    // stride 2
  cases.push_back({3, 2, 11, 11, 4, 3, 2, 3, 1, 1, 2});  // stride 3, dilation 2
  cases.push_back({2, 4, 8, 8, 9, 2, 2, 2, 0, 0, 1});
  cases.push_back({3, 33, 4, 4, 21, 1, 1, 2, 0, 0, 1});  // a 1x1 downsampling
  // Rows wide enough for the vector split of stride 2 into column phases on every target (16
  // lanes: 32 columns and more), odd and even widths and paddings.
  cases.push_back({1, 2, 5, 37, 3, 3, 3, 2, 1, 1, 1});
  cases.push_back({2, 3, 4, 70, 2, 3, 3, 2, 0, 2, 1});
  // Taps that read some phases only, which alone are filled (1x1 at stride 2 reads one of four;
  // a padding of 1 puts the odd rows and columns there); rows wide enough for the vector split.
  cases.push_back({1, 3, 6, 70, 5, 1, 1, 2, 1, 1, 1});
  cases.push_back({2, 5, 9, 41, 4, 1, 1, 2, 0, 0, 1});
  cases.push_back({1, 2, 10, 50, 3, 1, 1, 3, 0, 0, 1});
  return cases;
}

TEST_CASE("convolution forward equals im2col + GEMM + bias, every target, both paths") {
  ForEachPath([&] { testing::ForEachTarget([&](const simd::Target&) {
    for (const Case& c : AllCases()) {
      const simd::ConvShape s = ShapeOf(c);
      const std::vector<float> x = Values(s.samples * s.x_sample_stride, 1, true);
      const std::vector<float> w = Values(s.c_out * s.c_in * s.kh * s.kw, 2, true);
      const std::vector<float> bias = Values(s.c_out, 3);
      std::vector<float> y(s.samples * s.y_sample_stride, 123.0f);
      simd::ConvForward(s, x.data(), w.data(), bias.data(), y.data());
      ExpectSameBits(y, ForwardReference(s, x, w, bias.data()), "forward", c);
      simd::ConvForward(s, x.data(), w.data(), nullptr, y.data());
      ExpectSameBits(y, ForwardReference(s, x, w, nullptr), "forward without bias", c);
    }
  }); });
}

TEST_CASE("convolution input gradient equals W^T dY + col2im, every target, both paths") {
  ForEachPath([&] { testing::ForEachTarget([&](const simd::Target&) {
    for (const Case& c : AllCases()) {
      const simd::ConvShape s = ShapeOf(c);
      const std::vector<float> dy = Values(s.samples * s.y_sample_stride, 4, true);
      // Finite weights (the padded-frame path at stride 1), then infinities and NaNs (columns).
      for (bool specials : {false, true}) {
        const std::vector<float> w = Values(s.c_out * s.c_in * s.kh * s.kw, 5, specials);
        std::vector<float> dx(s.samples * s.x_sample_stride, 123.0f);
        simd::ConvInputGrad(s, dy.data(), w.data(), dx.data());
        ExpectSameBits(dx, InputGradReference(s, dy, w), specials ? "input gradient, weights not finite" : "input gradient", c);
      }
    }
  }); });
}

TEST_CASE("the input gradient keeps the columns' bits where an infinite weight meets an empty tap") {
  ForEachPath([&] {
  // 3x3 input, 3x3 kernel, no padding: one output position; the corner input element is reached
  // only by tap (0, 0). An infinite weight at tap (2, 2) must not reach it (Inf * 0 is NaN).
  simd::ConvShape s = ShapeOf({1, 1, 3, 3, 1, 3, 3, 1, 0, 0, 1});
  std::vector<float> w(9, 1.0f), dy(1, 2.0f), dx(9, 0.0f);
  w[8] = __builtin_inff();
  simd::ConvInputGrad(s, dy.data(), w.data(), dx.data());
  CHECK(dx[0] == 2.0f);
  CHECK(dx[8] == __builtin_inff());
  s = ShapeOf({1, 1, 4, 4, 1, 3, 3, 1, 0, 0, 1});  // four output positions; dx[0] only from (0, 0)
  std::vector<float> dy4(4, 1.0f), dx4(16, 0.0f);
  simd::ConvInputGrad(s, dy4.data(), w.data(), dx4.data());
  CHECK(dx4[0] == 1.0f);
  CHECK(dx4[15] == __builtin_inff());
  });
}

TEST_CASE("the input gradient starts each element at +0: all products -0 give +0, both paths") {
  // Positive weights times a gradient of -0: every column entry is -0, every input element +0.
  ForEachPath([&] {
    for (const Case& c : {Case{2, 3, 4, 4, 5, 1, 1, 1, 0, 0, 1}, Case{2, 3, 4, 4, 5, 3, 3, 1, 1, 1, 1}}) {
      const simd::ConvShape s = ShapeOf(c);
      const std::vector<float> w(s.c_out * s.c_in * s.kh * s.kw, 0.5f), dy(s.samples * s.y_sample_stride, -0.0f);
      std::vector<float> dx(s.samples * s.x_sample_stride, 123.0f);
      simd::ConvInputGrad(s, dy.data(), w.data(), dx.data());
      ExpectSameBits(dx, InputGradReference(s, dy, w), "input gradient of -0 products", c);
      CHECK(Bits(dx[0]) == 0u);
    }
  });
}

TEST_CASE("convolution weight gradient equals the batch-grouped GEMM, every target and stride, both paths") {
  std::vector<Case> cases = AllCases();
  cases.push_back({9, 1, 28, 28, 6, 5, 5, 1, 2, 2, 1});  // groups of 4: 4, 4, 1
  cases.push_back({9, 24, 3, 3, 17, 3, 3, 1, 1, 1, 1});
  ForEachPath([&] { testing::ForEachTarget([&](const simd::Target&) {
    for (const Case& c : cases) {
      const simd::ConvShape s = ShapeOf(c);
      const std::vector<float> dy = Values(s.samples * s.y_sample_stride, 6, true);
      const std::vector<float> x = Values(s.samples * s.x_sample_stride, 7, true);
      for (size_t per_group : {size_t{1}, size_t{2}, size_t{4}, size_t{32}}) {
        std::vector<float> dw(s.c_out * s.c_in * s.kh * s.kw, 123.0f);
        simd::ConvWeightGrad(s, dy.data(), x.data(), per_group, dw.data());
        ExpectSameBits(dw, WeightGradReference(s, dy, x, per_group), "weight gradient", c);
      }
    }
  }); });
}

TEST_CASE("convolution gives the same bits for 1, 2 and 3 threads, both paths") {
  // A middle-sized plane (the direct kernels by shape), a late stage's (the GEMM by shape), and a
  // batch of one on a late stage (the GEMM with the weights as A, its transposed columns built by
  // blocks of channels over the pool).
  for (const Case& c : {Case{40, 6, 14, 14, 16, 5, 5, 1, 0, 0, 1}, Case{40, 64, 4, 4, 48, 3, 3, 1, 1, 1, 1},
                        Case{1, 150, 7, 7, 100, 3, 3, 1, 1, 1, 1}}) {
    const simd::ConvShape s = ShapeOf(c);
    const std::vector<float> x = Values(s.samples * s.x_sample_stride, 8);
    const std::vector<float> w = Values(s.c_out * s.c_in * s.kh * s.kw, 9);
    const std::vector<float> dy = Values(s.samples * s.y_sample_stride, 10);
    const std::vector<float> bias = Values(s.c_out, 11);
    const std::vector<float> y_want = ForwardReference(s, x, w, bias.data());
    const std::vector<float> dx_want = InputGradReference(s, dy, w);
    const std::vector<float> dw_want = WeightGradReference(s, dy, x, 32);
    ForEachPath([&] {
      for (size_t threads : {1, 2, 3}) {
        simd::ThreadPool pool(threads);
        INFO("threads " << threads);
        std::vector<float> y(y_want.size()), dx(dx_want.size()), dw(dw_want.size());
        simd::ConvForward(s, x.data(), w.data(), bias.data(), y.data(), &pool);
        simd::ConvInputGrad(s, dy.data(), w.data(), dx.data(), &pool);
        simd::ConvWeightGrad(s, dy.data(), x.data(), 32, dw.data(), &pool);
        ExpectSameBits(y, y_want, "forward", c);
        ExpectSameBits(dx, dx_want, "input gradient", c);
        ExpectSameBits(dw, dw_want, "weight gradient", c);
      }
    });
  }
}

TEST_CASE("a batch smaller than the pool splits the forward pass over channel blocks, the same bits") {
  // 37 output channels: several tiles and a partial one; rows of 13 outputs, so the epilogue's
  // vectors run past a row's end next to another block's channels. A single image at stride 1 and
  // 2 and unpadded (1x1), where every thread builds the input's frame for its own blocks.
  for (const Case& c : {Case{1, 8, 13, 13, 37, 3, 3, 1, 1, 1, 1}, Case{2, 8, 15, 13, 37, 3, 3, 2, 1, 1, 1},
                        Case{1, 8, 15, 13, 37, 3, 3, 2, 1, 1, 1}, Case{1, 8, 9, 9, 37, 1, 1, 1, 0, 0, 1}}) {
    const simd::ConvShape s = ShapeOf(c);
    const std::vector<float> x = Values(s.samples * s.x_sample_stride, 12);
    const std::vector<float> w = Values(s.c_out * s.c_in * s.kh * s.kw, 13);
    const std::vector<float> bias = Values(s.c_out, 14);
    const std::vector<float> y_want = ForwardReference(s, x, w, bias.data());
    for (size_t threads : {1, 2, 3}) {
      simd::ThreadPool pool(threads);
      INFO("threads " << threads);
      std::vector<float> y(y_want.size());
      simd::ConvForward(s, x.data(), w.data(), bias.data(), y.data(), &pool);
      ExpectSameBits(y, y_want, "forward", c);
    }
  }
}

TEST_CASE("the forward pass of every group in one call equals one call per group") {
  // Depthwise at stride 1 and 2, and three groups of 2 -> 3 channels; one sample and two.
  for (const Case& c : {Case{1, 1, 12, 11, 1, 3, 3, 1, 1, 1, 1}, Case{2, 1, 13, 9, 1, 5, 5, 2, 2, 2, 1},
                        Case{2, 2, 7, 6, 3, 3, 2, 1, 0, 1, 1}}) {
    for (const size_t groups : {size_t{3}, size_t{20}}) {
      simd::ConvShape s = ShapeOf(c);
      const size_t x_group = s.c_in * s.h * s.w, y_group = s.c_out * s.h_out * s.w_out;
      const size_t w_group = s.c_out * s.c_in * s.kh * s.kw;
      s.x_sample_stride = groups * x_group;
      s.y_sample_stride = groups * y_group;
      const std::vector<float> x = Values(s.samples * s.x_sample_stride, 15, true);
      const std::vector<float> w = Values(groups * w_group, 16, true);
      const std::vector<float> bias = Values(groups * s.c_out, 17);
      std::vector<float> want(s.samples * s.y_sample_stride);
      for (size_t g = 0; g < groups; ++g) {
        simd::ConvForward(s, x.data() + g * x_group, w.data() + g * w_group, bias.data() + g * s.c_out,
                          want.data() + g * y_group);
      }
      s.groups = groups;
      for (size_t threads : {1, 2, 3}) {
        simd::ThreadPool pool(threads);
        INFO("groups " << groups << " threads " << threads);
        std::vector<float> got(want.size());
        simd::ConvForward(s, x.data(), w.data(), bias.data(), got.data(), &pool);
        ExpectSameBits(got, want, "grouped forward", c);
      }
    }
  }
}

}  // namespace
}  // namespace lockstep
