// Canonical reductions (docs/numerics.md, rule 3). The result depends only on the data, never on
// the SIMD width or the thread count:
//   - element i of a sequence goes to virtual lane i mod kReduceLanes; each lane adds its elements
//     in increasing i starting from -0.0 (the exact additive identity);
//   - the lanes are folded by a halving tree: lane l += lane l + w for w = L/2, L/4, ..., 1;
//   - a sequence longer than kReduceBlock is cut into blocks, each reduced as above, and the block
//     results are combined by a pairwise tree over adjacent blocks (an odd last one moves up).
// The sum of an empty sequence is +0.0.
//
// Tensors are viewed as [outer, len, inner] (row-major) and reduced over the middle axis into
// out[outer, inner]; inner == 1 is the last axis.
#ifndef LOCKSTEP_SIMD_REDUCE_H_
#define LOCKSTEP_SIMD_REDUCE_H_

#include <stddef.h>
#include <stdint.h>

#include "simd/elementwise.h"

namespace lockstep {
namespace simd {

constexpr size_t kReduceLanes = 64;
constexpr size_t kReduceBlock = 4096;

// Canonical sum of x[0], x[stride], ..., x[(n-1)*stride]: the plain scalar definition, used as the
// reference by tests and for strided leftovers.
float CanonicalSumReference(const float* x, size_t n, size_t stride);

// Combines block results in place by the pairwise tree over adjacent blocks; returns the total.
float CombineBlocksPairwise(float* partials, size_t count);

float Sum(const float* x, size_t n);
void SumAxis(const float* x, size_t outer, size_t len, size_t inner, float* out);
// Per-channel sums of [samples, channels, positions] (batch normalisation's statistics): out[c]
// is the canonical sum of channel c's values in (sample, position) order, the bits of SumAxis on
// the channel's values copied out in that order, without the copy.
void ChannelSums(const float* x, size_t samples, size_t channels, size_t positions, float* out);
// ChannelSums of (x - mean[c]) * (x - mean[c]), each operation rounded (batch normalisation's
// variance): the bits of the broadcast subtraction, the square and ChannelSums one after another,
// without the squares' tensor.
void ChannelDeviationSquareSums(const float* x, const float* mean, size_t samples, size_t channels, size_t positions,
                                float* out);
// Batch normalisation's gradient sums in one pass (core/backend/kernel_table.h,
// ChannelNormSumsCall): dxhat = g * weight[c] (null weight: g), and per channel the sums, as
// ChannelSums sums them, of dxhat, dxhat * xhat, g * xhat and g, each product one rounded
// multiplication; null outputs are skipped. With an activation (the forward pass's), g is first its
// gradient at y = xhat * weight[c] + bias[c]: g * (y > 0 ? 1 : 0) for kRelu, y < lo or y > hi ? +0
// : g for kClamp, y <= lo or y >= hi ? +0 : g for kHardtanh, g * s + ((g * y) * (-s + 1)) * s for
// kSilu (s = sigmoid[i]), canonical (the bits of those ops' backward rules).
struct ChannelNormSums {
  size_t samples = 0, channels = 0, positions = 0;
  const float* g = nullptr;
  const float* xhat = nullptr;
  const float* weight = nullptr;
  const float* bias = nullptr;     // null: +0
  const float* sigmoid = nullptr;  // kSilu: the forward pass's sigmoid(y), laid out as g
  NormActivation activation;
  float* dxhat_out = nullptr;
  float* sum_dxhat = nullptr;
  float* sum_dxhat_xhat = nullptr;
  float* sum_g_xhat = nullptr;
  float* sum_g = nullptr;
};
void ChannelNormBackwardSums(const ChannelNormSums& a);
// sum / len, one float division (len converted to float, exact below 2^24).
void MeanAxis(const float* x, size_t outer, size_t len, size_t inner, float* out);
// Two passes: m = mean; var = sum((x - m) * (x - m)) / (len - correction). When
// len - correction <= 0 the divisor is 0, as in PyTorch: +inf, or NaN when every deviation is 0.
void VarianceAxis(const float* x, size_t outer, size_t len, size_t inner, size_t correction,
                  float* out);
// max/min by the contract (NaN propagates, -0 < +0); -inf / +inf for an empty axis.
void MaxAxis(const float* x, size_t outer, size_t len, size_t inner, float* out);
void MinAxis(const float* x, size_t outer, size_t len, size_t inner, float* out);
// Index of the maximum in the same order as MaxAxis (the first NaN if any; +0 beats -0); the
// lowest index among equals. 0 for an empty axis.
void ArgmaxAxis(const float* x, size_t outer, size_t len, size_t inner, int64_t* out);

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_REDUCE_H_
