#include "simd/gelu_backward.h"

#include <vector>

#include "simd/elementwise.h"
#include "simd/math.h"
#include "simd/thread_pool.h"

namespace lockstep {
namespace simd {

void GeluErfBackward(const float* x, const float* g, float* out, size_t n) {
  // Chunks of 2048 (two 8 KiB buffers stay in L1) run the definition's steps with the elementwise
  // and math kernels, each call below their thread-pool threshold; the chunks themselves are
  // spread over the pool.
  constexpr size_t kChunk = 2048;
  ForEachChunk(n, kChunk, [&](size_t first, size_t count) {
    thread_local std::vector<float> buffers;
    buffers.resize(2 * kChunk);
    for (size_t at = first; at < first + count; at += kChunk) {
      const size_t m = first + count - at < kChunk ? first + count - at : kChunk;
      const float* xs = x + at;
      float* cdf = buffers.data();
      float* pdf = cdf + kChunk;
      BinaryScalarRight(BinaryOp::kMul, xs, kGeluInvSqrt2, cdf, m);
      Math(MathFn::kErf, cdf, cdf, m);
      BinaryScalarRight(BinaryOp::kAdd, cdf, 1.0f, cdf, m);
      BinaryScalarRight(BinaryOp::kMul, cdf, 0.5f, cdf, m);
      Binary(BinaryOp::kMul, xs, xs, pdf, m);
      BinaryScalarRight(BinaryOp::kMul, pdf, -0.5f, pdf, m);
      Math(MathFn::kExp, pdf, pdf, m);
      BinaryScalarRight(BinaryOp::kMul, pdf, kGeluInvSqrt2Pi, pdf, m);
      Binary(BinaryOp::kMul, xs, pdf, pdf, m);
      Binary(BinaryOp::kAdd, cdf, pdf, cdf, m);
      Binary(BinaryOp::kMul, g + at, cdf, out + at, m);
    }
  });
}

}  // namespace simd
}  // namespace lockstep
