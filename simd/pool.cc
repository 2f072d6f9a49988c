// Max pooling, vectorised over the output columns of one row. 2x2 windows: the two input rows are
// read as even and odd columns, the window's first maximum is found by a tree that prefers the
// earlier candidate (for a total preorder the same as the row-major scan), and its index is
// carried alongside. Other windows (ResNet's 3x3 at stride 2): the row-major scan itself, one
// vector of columns per tap, a tap replacing the best only when strictly after it.
#include "simd/pool.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/pool.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "simd/contract-inl.h"

#include <string.h>

#include <algorithm>
#include <memory>

#include "simd/thread_pool.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace {

// True where x comes after best in the contract's order: larger, a NaN over a number, or +0 over
// -0.
template <class D, class V>
HWY_INLINE hn::Mask<D> After(D d, V x, V best) {
  const hn::RebindToUnsigned<D> du;
  const auto plus_zero = hn::Eq(hn::BitCast(du, x), hn::Zero(du));
  const auto minus_zero = hn::Eq(hn::BitCast(du, best), hn::Set(du, 0x80000000u));
  const auto zeros = hn::RebindMask(d, hn::And(plus_zero, minus_zero));
  return hn::Or(hn::Or(hn::Gt(x, best), hn::AndNot(IsNaNMask(d, best), IsNaNMask(d, x))), zeros);
}

// An int32 key whose order is the contract's for numbers (+0 above -0): a float's bits, the
// magnitude's bits flipped where the sign is set. Its own inverse.
template <class VI>
HWY_INLINE VI OrderKey(VI bits) {
  const hn::DFromV<VI> di;
  return hn::Xor(bits, hn::And(hn::ShiftRight<31>(bits), hn::Set(di, 0x7FFFFFFF)));
}

// The scalar definition, for the columns and rows the vectors leave.
bool AfterScalar(float a, float b) {
  if (a != a || b != b) return a != a && b == b;
  if (a == b) return a == 0.0f && !__builtin_signbit(a) && __builtin_signbit(b);
  return a > b;
}

void ScalarWindow(const float* plane, size_t w, size_t oy, size_t ox, float* out, int64_t* argmax) {
  const size_t first = 2 * oy * w + 2 * ox;
  const size_t order[4] = {first, first + 1, first + w, first + w + 1};
  size_t best = order[0];
  for (size_t i = 1; i < 4; ++i) {
    if (AfterScalar(plane[order[i]], plane[best])) best = order[i];
  }
  const float v = plane[best];
  *out = v != v ? __builtin_nanf("") : v;
  if (argmax != nullptr) *argmax = static_cast<int64_t>(best);
}

// run(first, count) over chunks of planes: on the pool in many small chunks (a faster core takes
// more of them, as conv.cc's sample chunks do), or on the caller when the planes are few or small.
// (LeNet-5's second pool, 100 x 16 planes of 8 x 8, is worth splitting: alone on the caller it
// was 3% of the WebAssembly step on 2 threads.)
template <class Run>
void ForPlaneChunks(size_t planes, size_t floats_per_plane, ThreadPool* pool, const Run& run) {
  const size_t threads = pool == nullptr ? 1 : pool->num_threads();
  if (threads < 2 || planes < 2 || planes * floats_per_plane < (size_t{1} << 16)) {
    run(0, planes);
    return;
  }
  const size_t chunks = planes < 16 * threads ? planes : 16 * threads;
  const size_t per_chunk = (planes + chunks - 1) / chunks;
  pool->ParallelFor((planes + per_chunk - 1) / per_chunk, [&](size_t chunk, size_t /*worker*/) {
    const size_t first = chunk * per_chunk;
    run(first, planes - first < per_chunk ? planes - first : per_chunk);
  });
}

}  // namespace

void MaxPool2x2Target(const float* x, size_t planes, size_t h, size_t w, size_t h_out, size_t w_out, float* out,
                      int64_t* argmax, ThreadPool* pool) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const hn::Half<decltype(di)> dh;
  const hn::Rebind<int64_t, decltype(dh)> d64;
  const size_t N = hn::Lanes(d), half = hn::Lanes(dh);
  const float* const x_end = x + planes * h * w;
  const bool small_planes = h * w < (size_t{1} << 30);
  auto run = [&](size_t first_plane, size_t count) {
    float* const out_end = out + (first_plane + count) * h_out * w_out;
    HWY_ALIGN float values[hn::MaxLanes(d)];
    HWY_ALIGN int64_t indices[hn::MaxLanes(d)];
    for (size_t p = first_plane; p < first_plane + count; ++p) {
      const float* plane = x + p * h * w;
      for (size_t oy = 0; oy < h_out; ++oy) {
        const float* top = plane + 2 * oy * w;
        float* o = out + (p * h_out + oy) * w_out;
        int64_t* a = argmax != nullptr ? argmax + (p * h_out + oy) * w_out : nullptr;
        size_t ox = 0;
        // Each vector reads 2N floats of both rows (past the row's end only within the input);
        // indices are int32 inside the vectors.
        for (; ox < w_out && small_planes && top + w + 2 * (ox + N) <= x_end; ox += N) {
          hn::Vec<decltype(d)> a0, b0, c0, e0;
          hn::LoadInterleaved2(d, top + 2 * ox, a0, b0);
          hn::LoadInterleaved2(d, top + w + 2 * ox, c0, e0);
          const auto ia = hn::Add(hn::ShiftLeft<1>(hn::Iota(di, 0)), hn::Set(di, static_cast<int32_t>(2 * oy * w + 2 * ox)));
          const auto one = hn::Set(di, 1), row = hn::Set(di, static_cast<int32_t>(w));
          const auto m_top = After(d, b0, a0);
          const auto v_top = hn::IfThenElse(m_top, b0, a0);
          const auto i_top = hn::IfThenElse(hn::RebindMask(di, m_top), hn::Add(ia, one), ia);
          const auto m_bottom = After(d, e0, c0);
          const auto v_bottom = hn::IfThenElse(m_bottom, e0, c0);
          const auto i_c = hn::Add(ia, row);
          const auto i_bottom = hn::IfThenElse(hn::RebindMask(di, m_bottom), hn::Add(i_c, one), i_c);
          const auto m = After(d, v_bottom, v_top);
          const auto v = Canonicalize(d, hn::IfThenElse(m, v_bottom, v_top));
          const auto idx = hn::IfThenElse(hn::RebindMask(di, m), i_bottom, i_top);
          const auto lo = hn::PromoteTo(d64, hn::LowerHalf(dh, idx));
          const auto hi = hn::PromoteTo(d64, hn::UpperHalf(dh, idx));
          const size_t valid = w_out - ox < N ? w_out - ox : N;
          if (o + ox + N <= out_end) {  // lanes past the row land in the next row, written later
            hn::StoreU(v, d, o + ox);
            if (a != nullptr) {
              hn::StoreU(lo, d64, a + ox);
              hn::StoreU(hi, d64, a + ox + half);
            }
          } else {
            hn::Store(v, d, values);
            hn::Store(lo, d64, indices);
            hn::Store(hi, d64, indices + half);
            memcpy(o + ox, values, valid * sizeof(float));
            if (a != nullptr) memcpy(a + ox, indices, valid * sizeof(int64_t));
          }
        }
        for (; ox < w_out; ++ox) ScalarWindow(plane, w, oy, ox, o + ox, a != nullptr ? a + ox : nullptr);
      }
    }
  };
  ForPlaneChunks(planes, h * w, pool, run);
}

namespace {

// The definition for one output: the window's taps inside the input, row-major, the first
// maximum kept.
void ScalarGeneralWindow(const MaxPoolShape& s, const float* plane, size_t oy, size_t ox, float* out,
                         int64_t* argmax) {
  int64_t best = -1;
  for (size_t i = 0; i < s.kh; ++i) {
    const int64_t y = static_cast<int64_t>(oy * s.stride_h + i) - static_cast<int64_t>(s.pad_h);
    if (y < 0 || y >= static_cast<int64_t>(s.h)) continue;
    for (size_t j = 0; j < s.kw; ++j) {
      const int64_t x = static_cast<int64_t>(ox * s.stride_w + j) - static_cast<int64_t>(s.pad_w);
      if (x < 0 || x >= static_cast<int64_t>(s.w)) continue;
      const int64_t at = y * static_cast<int64_t>(s.w) + x;
      if (best < 0 || AfterScalar(plane[at], plane[best])) best = at;
    }
  }
  const float v = plane[best];
  *out = v != v ? __builtin_nanf("") : v;
  if (argmax != nullptr) *argmax = best;
}

}  // namespace

// Output columns [col_begin, col_end) of row oy (every window inside the input's columns) in
// vectors of d's lanes (at most col_end - col_begin), the last overlapping its neighbour rather
// than run past col_end (the overlapped outputs are written twice with the same values). Returns
// the first column not written: col_end, or less where a vector would read past x_end.
template <bool kIndices, class D>
HWY_INLINE size_t VectorWindows(D d, const MaxPoolShape& s, const float* plane, const float* x_end, size_t oy,
                                size_t col_begin, size_t col_end, float* o, int64_t* a) {
  const hn::RebindToSigned<D> di;
  const hn::Half<decltype(di)> dh;
  const hn::Rebind<int64_t, decltype(dh)> d64;
  const size_t N = hn::Lanes(d), half = hn::Lanes(dh), sw = s.stride_w;
  const auto lane_step = hn::Mul(hn::Iota(di, 0), hn::Set(di, static_cast<int32_t>(sw)));
  size_t done = col_begin;
  for (size_t v0 = col_begin; v0 < col_end; v0 += N) {
    const size_t start = v0 + N <= col_end ? v0 : col_end - N;
    const float* first_tap = plane + start * sw - s.pad_w;
    bool inside = true;  // a vector reads N * sw floats from its first tap (2N for stride 2's pairs)
    for (size_t i = 0; i < s.kh; ++i) {
      const int64_t y = static_cast<int64_t>(oy * s.stride_h + i) - static_cast<int64_t>(s.pad_h);
      if (y < 0 || y >= static_cast<int64_t>(s.h)) continue;
      inside = inside && first_tap + y * s.w + s.kw - 1 + N * sw + 1 <= x_end;
    }
    if (!inside) return done;  // the plane's last vectors: the caller's scan
    auto best = hn::Zero(d);
    auto best_at = hn::Zero(di);
    // Without indices only the value counts: the largest in an order of int32 keys that is the
    // contract's for numbers (+0 over -0), NaN if any tap is one. Four integer operations and a
    // maximum a tap instead of After's nine.
    auto best_key = hn::Zero(di);
    auto nan_bits = hn::Zero(di);  // the largest magnitude's bits: above +inf's where a tap is NaN
    bool any = false;
    for (size_t i = 0; i < s.kh; ++i) {
      const int64_t y = static_cast<int64_t>(oy * s.stride_h + i) - static_cast<int64_t>(s.pad_h);
      if (y < 0 || y >= static_cast<int64_t>(s.h)) continue;
      const float* row = first_tap + y * s.w;
      const int32_t row_at = static_cast<int32_t>(row - plane);
      for (size_t j = 0; j < s.kw; ++j) {
        hn::Vec<D> v;
        if (sw == 1) {
          v = hn::LoadU(d, row + j);
        } else {
          hn::Vec<D> even, odd;
          hn::LoadInterleaved2(d, row + (j & ~size_t{1}), even, odd);
          v = (j & 1) ? odd : even;
        }
        if constexpr (!kIndices) {
          const auto bits = hn::BitCast(di, v);
          const auto key = OrderKey(bits);
          const auto magnitude = hn::And(bits, hn::Set(di, 0x7FFFFFFF));
          best_key = any ? hn::Max(best_key, key) : key;
          nan_bits = any ? hn::Max(nan_bits, magnitude) : magnitude;
          any = true;
          continue;
        }
        const auto at = hn::Add(lane_step, hn::Set(di, row_at + static_cast<int32_t>(j)));
        if (!any) {
          best = v;
          if constexpr (kIndices) best_at = at;
          any = true;
          continue;
        }
        const auto m = After(d, v, best);
        best = hn::IfThenElse(m, v, best);
        if constexpr (kIndices) best_at = hn::IfThenElse(hn::RebindMask(di, m), at, best_at);
      }
    }
    if constexpr (!kIndices) {
      const auto bits = OrderKey(best_key);
      const auto nan = hn::RebindMask(d, hn::Gt(nan_bits, hn::Set(di, 0x7F800000)));
      best = hn::IfThenElse(nan, hn::BitCast(d, hn::Set(di, 0x7FC00000)), hn::BitCast(d, bits));
    }
    hn::StoreU(Canonicalize(d, best), d, o + start);
    if constexpr (kIndices) {
      hn::StoreU(hn::PromoteTo(d64, hn::LowerHalf(dh, best_at)), d64, a + start);
      hn::StoreU(hn::PromoteTo(d64, hn::UpperHalf(dh, best_at)), d64, a + start + half);
    }
    done = start + N;
  }
  return done;
}

void MaxPoolTarget(const MaxPoolShape& s, const float* x, float* out, int64_t* argmax, ThreadPool* pool) {
  const hn::ScalableTag<float> d;
  const hn::Half<decltype(d)> d_half;  // for rows narrower than a whole vector (AVX-512: 15 of 16)
  const size_t N = hn::Lanes(d);
  const size_t sw = s.stride_w;
  // Output columns whose windows lie inside the input's columns: [col_begin, col_end).
  const size_t col_begin = (s.pad_w + sw - 1) / sw;
  const size_t col_end = s.w + s.pad_w >= s.kw ? std::min(s.w_out, (s.w + s.pad_w - s.kw) / sw + 1) : 0;
  const size_t inner = col_end > col_begin ? col_end - col_begin : 0;
  const bool vectors = (sw == 1 || sw == 2) && s.h * s.w < (size_t{1} << 30);
  const float* const x_end = x + s.planes * s.h * s.w;
  ForPlaneChunks(s.planes, s.h * s.w, pool, [&](size_t first_plane, size_t count) {
    for (size_t p = first_plane; p < first_plane + count; ++p) {
      const float* plane = x + p * s.h * s.w;
      for (size_t oy = 0; oy < s.h_out; ++oy) {
        float* o = out + (p * s.h_out + oy) * s.w_out;
        int64_t* a = argmax != nullptr ? argmax + (p * s.h_out + oy) * s.w_out : nullptr;
        const auto at = [a](size_t ox) { return a != nullptr ? a + ox : nullptr; };
        size_t ox = 0;
        for (; ox < col_begin && ox < s.w_out; ++ox) ScalarGeneralWindow(s, plane, oy, ox, o + ox, at(ox));
        if (vectors && inner >= N) {
          ox = a != nullptr ? VectorWindows<true>(d, s, plane, x_end, oy, col_begin, col_end, o, a)
                            : VectorWindows<false>(d, s, plane, x_end, oy, col_begin, col_end, o, a);
        } else if (vectors && N >= 8 && inner >= N / 2) {
          ox = a != nullptr ? VectorWindows<true>(d_half, s, plane, x_end, oy, col_begin, col_end, o, a)
                            : VectorWindows<false>(d_half, s, plane, x_end, oy, col_begin, col_end, o, a);
        }
        for (; ox < s.w_out; ++ox) ScalarGeneralWindow(s, plane, oy, ox, o + ox, at(ox));
      }
    }
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lockstep {
namespace simd {

HWY_EXPORT(MaxPool2x2Target);
HWY_EXPORT(MaxPoolTarget);

void MaxPool2x2(const float* x, size_t planes, size_t h, size_t w, size_t h_out, size_t w_out, float* out,
                int64_t* argmax, ThreadPool* pool) {
  if (planes == 0 || h_out == 0 || w_out == 0) return;
  if (pool != nullptr) return HWY_DYNAMIC_DISPATCH(MaxPool2x2Target)(x, planes, h, w, h_out, w_out, out, argmax, pool);
  const std::shared_ptr<ThreadPool> held = DefaultThreadPool();
  HWY_DYNAMIC_DISPATCH(MaxPool2x2Target)(x, planes, h, w, h_out, w_out, out, argmax, held.get());
}

void MaxPool(const MaxPoolShape& s, const float* x, float* out, int64_t* argmax, ThreadPool* pool) {
  if (s.planes == 0 || s.h_out == 0 || s.w_out == 0) return;
  if (pool != nullptr) return HWY_DYNAMIC_DISPATCH(MaxPoolTarget)(s, x, out, argmax, pool);
  const std::shared_ptr<ThreadPool> held = DefaultThreadPool();
  HWY_DYNAMIC_DISPATCH(MaxPoolTarget)(s, x, out, argmax, held.get());
}

}  // namespace simd
}  // namespace lockstep
#endif  // HWY_ONCE
