// The vectorised max pooling (simd/pool.h: 2x2, and any window, stride and padding) against the
// row-major scan of the contract: the same values (canonical NaN) and argmax on every target, for
// odd and even sizes, ties, NaNs and signed zeros, and for 1, 2 and 3 threads; without argmax
// (inference) the same values.
#include <doctest/doctest.h>

#include <vector>

#include "simd/pool.h"
#include "simd/thread_pool.h"
#include "tests/unit/float_bits.h"
#include "tests/unit/for_each_target.h"

namespace lockstep {
namespace {

using testing::Bits;

bool After(float a, float b) {
  if (a != a || b != b) return a != a && b == b;
  if (a == b) return a == 0.0f && !__builtin_signbit(a) && __builtin_signbit(b);
  return a > b;
}

// The window's first maximum in row-major order.
void Reference(const std::vector<float>& x, size_t planes, size_t h, size_t w, std::vector<float>* out,
               std::vector<int64_t>* argmax) {
  const size_t ho = h / 2, wo = w / 2;
  out->assign(planes * ho * wo, 0.0f);
  argmax->assign(planes * ho * wo, -1);
  for (size_t p = 0; p < planes; ++p) {
    for (size_t oy = 0; oy < ho; ++oy) {
      for (size_t ox = 0; ox < wo; ++ox) {
        size_t best = 2 * oy * w + 2 * ox;
        for (size_t i = 0; i < 2; ++i) {
          for (size_t j = 0; j < 2; ++j) {
            const size_t at = (2 * oy + i) * w + 2 * ox + j;
            if (After(x[p * h * w + at], x[p * h * w + best])) best = at;
          }
        }
        const float v = x[p * h * w + best];
        (*out)[(p * ho + oy) * wo + ox] = v != v ? testing::FromBits(0x7FC00000u) : v;
        (*argmax)[(p * ho + oy) * wo + ox] = static_cast<int64_t>(best);
      }
    }
  }
}

// Few distinct values, so windows hold ties, NaNs of any payload and zeros of both signs.
std::vector<float> TieHeavy(size_t n, uint32_t seed) {
  static const uint32_t kValues[] = {0x00000000u, 0x80000000u, 0x3F800000u, 0xBF800000u, 0x7FC00000u,
                                     0xFFC00001u, 0x7F800000u, 0xFF800000u, 0x40000000u, 0x00000001u};
  std::vector<float> out(n);
  uint32_t state = seed * 2654435761u + 99u;
  for (size_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    out[i] = testing::FromBits(kValues[(state >> 16) % 10]);
  }
  return out;
}

void Check(size_t planes, size_t h, size_t w, uint32_t seed, simd::ThreadPool* pool) {
  const std::vector<float> x = TieHeavy(planes * h * w, seed);
  std::vector<float> want;
  std::vector<int64_t> want_argmax;
  Reference(x, planes, h, w, &want, &want_argmax);
  std::vector<float> got(want.size() + 1, 5.0f);  // one sentinel past the end
  std::vector<int64_t> got_argmax(want.size() + 1, 7);
  simd::MaxPool2x2(x.data(), planes, h, w, h / 2, w / 2, got.data(), got_argmax.data(), pool);
  INFO("planes " << planes << " h " << h << " w " << w);
  for (size_t i = 0; i < want.size(); ++i) {
    REQUIRE(Bits(got[i]) == Bits(want[i]));
    REQUIRE(got_argmax[i] == want_argmax[i]);
  }
  CHECK(got.back() == 5.0f);
  CHECK(got_argmax.back() == 7);
  std::vector<float> alone(want.size() + 1, 5.0f);  // no argmax
  simd::MaxPool2x2(x.data(), planes, h, w, h / 2, w / 2, alone.data(), nullptr, pool);
  for (size_t i = 0; i < want.size(); ++i) REQUIRE(Bits(alone[i]) == Bits(want[i]));
  CHECK(alone.back() == 5.0f);
}

TEST_CASE("2x2 max pooling equals the row-major scan on every target") {
  testing::ForEachTarget([&](const simd::Target&) {
    const size_t sizes[][3] = {{3, 28, 28}, {5, 10, 10}, {2, 7, 9}, {1, 2, 2}, {4, 3, 70}, {2, 66, 5}, {1, 1, 8}};
    uint32_t seed = 1;
    for (const auto& s : sizes) Check(s[0], s[1], s[2], seed++, nullptr);
  });
}

TEST_CASE("2x2 max pooling gives the same bits for 1, 2 and 3 threads") {
  for (size_t threads : {1, 2, 3}) {
    simd::ThreadPool pool(threads);
    INFO("threads " << threads);
    Check(600, 28, 28, 11, &pool);
    Check(37, 10, 11, 12, &pool);
    Check(1600, 8, 8, 13, &pool);  // LeNet-5's second pool: split above 2^16 elements
  }
}

// Any window: the taps inside the input, row-major, the first maximum kept.
void GeneralReference(const std::vector<float>& x, const simd::MaxPoolShape& s, std::vector<float>* out,
                      std::vector<int64_t>* argmax) {
  out->assign(s.planes * s.h_out * s.w_out, 0.0f);
  argmax->assign(out->size(), -1);
  for (size_t p = 0; p < s.planes; ++p) {
    const float* plane = x.data() + p * s.h * s.w;
    for (size_t oy = 0; oy < s.h_out; ++oy) {
      for (size_t ox = 0; ox < s.w_out; ++ox) {
        long best = -1;
        for (size_t i = 0; i < s.kh; ++i) {
          for (size_t j = 0; j < s.kw; ++j) {
            const long y = static_cast<long>(oy * s.stride_h + i) - static_cast<long>(s.pad_h);
            const long xx = static_cast<long>(ox * s.stride_w + j) - static_cast<long>(s.pad_w);
            if (y < 0 || xx < 0 || y >= static_cast<long>(s.h) || xx >= static_cast<long>(s.w)) continue;
            const long at = y * static_cast<long>(s.w) + xx;
            if (best < 0 || After(plane[at], plane[best])) best = at;
          }
        }
        const float v = plane[best];
        (*out)[(p * s.h_out + oy) * s.w_out + ox] = v != v ? testing::FromBits(0x7FC00000u) : v;
        (*argmax)[(p * s.h_out + oy) * s.w_out + ox] = best;
      }
    }
  }
}

// planes, h, w, kernel, stride, padding, ceil_mode (one more output where a window starts inside).
void CheckGeneral(size_t planes, size_t h, size_t w, size_t kernel, size_t stride, size_t pad, bool ceil_mode,
                  uint32_t seed, simd::ThreadPool* pool) {
  simd::MaxPoolShape s;
  s.planes = planes; s.h = h; s.w = w; s.kh = s.kw = kernel; s.stride_h = s.stride_w = stride; s.pad_h = s.pad_w = pad;
  s.h_out = (h + 2 * pad - kernel + (ceil_mode ? stride - 1 : 0)) / stride + 1;
  s.w_out = (w + 2 * pad - kernel + (ceil_mode ? stride - 1 : 0)) / stride + 1;
  if (ceil_mode && (s.h_out - 1) * stride >= h + pad) --s.h_out;  // the last window must start inside
  if (ceil_mode && (s.w_out - 1) * stride >= w + pad) --s.w_out;
  const std::vector<float> x = TieHeavy(planes * h * w, seed);
  std::vector<float> want;
  std::vector<int64_t> want_argmax;
  GeneralReference(x, s, &want, &want_argmax);
  std::vector<float> got(want.size() + 1, 5.0f);  // one sentinel past the end
  std::vector<int64_t> got_argmax(want.size() + 1, 7);
  simd::MaxPool(s, x.data(), got.data(), got_argmax.data(), pool);
  INFO("planes " << planes << " " << h << "x" << w << " kernel " << kernel << " stride " << stride << " pad " << pad
                 << (ceil_mode ? " ceil" : ""));
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("output " << i);
    REQUIRE(Bits(got[i]) == Bits(want[i]));
    REQUIRE(got_argmax[i] == want_argmax[i]);
  }
  CHECK(got.back() == 5.0f);
  CHECK(got_argmax.back() == 7);
  std::vector<float> alone(want.size() + 1, 5.0f);  // no argmax
  simd::MaxPool(s, x.data(), alone.data(), nullptr, pool);
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("output " << i << " without argmax");
    REQUIRE(Bits(alone[i]) == Bits(want[i]));
  }
  CHECK(alone.back() == 5.0f);
}

TEST_CASE("max pooling over any window equals the row-major scan on every target") {
  testing::ForEachTarget([&](const simd::Target&) {
    uint32_t seed = 20;
    for (bool ceil_mode : {false, true}) {
      CheckGeneral(3, 32, 32, 3, 2, 1, ceil_mode, seed++, nullptr);   // ResNet's stem pool
      CheckGeneral(2, 17, 41, 3, 2, 1, ceil_mode, seed++, nullptr);
      CheckGeneral(2, 9, 70, 3, 1, 1, ceil_mode, seed++, nullptr);
      CheckGeneral(2, 12, 37, 2, 1, 0, ceil_mode, seed++, nullptr);
      CheckGeneral(2, 20, 66, 4, 2, 2, ceil_mode, seed++, nullptr);
      CheckGeneral(2, 11, 50, 5, 3, 2, ceil_mode, seed++, nullptr);   // stride 3: one output at a time
      CheckGeneral(1, 5, 5, 3, 2, 1, ceil_mode, seed++, nullptr);     // narrower than a vector
      CheckGeneral(4, 3, 33, 1, 1, 0, ceil_mode, seed++, nullptr);
      // Inner columns between half a vector and a vector, for vectors of 8 to 64 lanes: the
      // half-width path.
      for (size_t w : {7, 14, 22, 42}) CheckGeneral(2, 6, w, 3, 1, 1, ceil_mode, seed++, nullptr);
      for (size_t w : {13, 27, 43, 83}) CheckGeneral(2, 7, w, 3, 2, 1, ceil_mode, seed++, nullptr);
    }
  });
}

TEST_CASE("max pooling over any window gives the same bits for 1, 2 and 3 threads") {
  for (size_t threads : {1, 2, 3}) {
    simd::ThreadPool pool(threads);
    INFO("threads " << threads);
    CheckGeneral(160, 32, 32, 3, 2, 1, false, 30, &pool);
    CheckGeneral(37, 19, 21, 3, 1, 1, true, 31, &pool);
  }
}

}  // namespace
}  // namespace lockstep
