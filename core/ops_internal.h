// Helpers shared by the op implementations and the backward rules (not part of the public API).
#ifndef LOCKSTEP_CORE_OPS_INTERNAL_H_
#define LOCKSTEP_CORE_OPS_INTERNAL_H_

#include <stdint.h>

#include <limits>

#include "core/backend/device.h"
#include "core/ops.h"
#include "core/tensor.h"
#include "simd/fp_mode.h"

namespace lockstep {

// The current device's kernels (core/backend/kernel_list.h), throwing lockstep::Error when a
// device kernel fails. Every pointer given must be tensor data on the current device (ContiguousData
// checks inputs; outputs come from Tensor::Empty). While one exists, the calling thread computes
// in the contract's floating-point mode (simd/fp_mode.h), whatever mode the caller had set.
class Kernels {
 public:
  Kernels() : k_(CurrentKernels()) {}
  // One accessor per kernel of core/backend/kernel_list.h, with the table's signature.
#define LOCKSTEP_KERNEL_ACCESSOR(name, Name, label, parameters, arguments) \
  void Name parameters const { CheckKernel(k_, k_.name arguments, label); }
  LOCKSTEP_KERNELS(LOCKSTEP_KERNEL_ACCESSOR)
#undef LOCKSTEP_KERNEL_ACCESSOR

 private:
  const simd::ContractFloatingPointScope fp_mode_;
  const backend::KernelTable& k_;
};

// The contract's NaN (0x7FC00000) for any NaN, other values unchanged. Host arithmetic that can
// make a NaN (inf - inf, 0 / 0) stores through this, as the kernels do: x86 makes 0xFFC00000 and
// WebAssembly leaves the payload unspecified.
inline float CanonicalNaN(float v) { return v != v ? std::numeric_limits<float>::quiet_NaN() : v; }

// Broadcast operands over an [rows, d] array of n = rows * d elements: the whole array, one value
// per row, one row repeated.
inline backend::BroadcastOperand WholeOperand(const Tensor& t) {
  return {t.data_f32(), 1, static_cast<size_t>(t.numel())};
}
inline backend::BroadcastOperand PerRowOperand(const Tensor& t, int64_t d) {
  return {t.data_f32(), static_cast<size_t>(d), static_cast<size_t>(t.numel())};
}
inline backend::BroadcastOperand RepeatedRowOperand(const Tensor& t) {
  return {t.data_f32(), 1, static_cast<size_t>(t.numel())};
}

// The masked_fill mask's period: the number of trailing elements of x over which the mask (which
// broadcasts to x) is laid out as it is, repeated over the leading dimensions; all of x when it
// broadcasts inside (then it is expanded).
int64_t MaskPeriod(const Shape& x, const Shape& mask);
// out = cond ? a : b over n elements, cond and a repeating every `period` elements (one Select
// per period).
void SelectRepeated(const float* cond, const float* a, const float* b, float* out, size_t n, size_t period);

// Sums the rows of a contiguous [rows, inner] tensor: groups of rows_per_group rows each in the
// canonical order, the group results combined by the pairwise tree -> [inner].
Tensor BatchGroupedSumRows(const Tensor& x2d, int64_t rows_per_group);
// Per-channel sums of a [N, C, P] tensor over (sample, position), batch-grouped -> [C]: the rows
// (sample, position) of [N * P, C] in groups of kBatchGroup samples, each group's column a
// canonical sum, the groups combined pairwise (BatchGroupedSumRows). Each group is copied
// channel-major first ([C, samples * P], runs of P floats): a channel's sequence is then a
// contiguous row, summed at full vector width, and one call sums every channel of the group.
Tensor ChannelSums(const Tensor& t, int64_t n, int64_t c, int64_t p);
// ChannelSums of (t - mean[c]) * (t - mean[c]), each operation rounded (batch normalisation's
// variance), formed as the values are read.
Tensor ChannelDeviationSquareSums(const Tensor& t, const Tensor& mean, int64_t n, int64_t c, int64_t p);
// Batch normalisation's gradient sums over [N, C, P] g and xhat, batch-grouped as ChannelSums:
// dxhat = g * weight (weight undefined: 1), and [C] sums of dxhat and dxhat * xhat (dx_sums), of
// g * xhat (g_xhat) and of g (g_sum); in one pass over g and xhat (channel_norm_backward_sums),
// or as the separate products and ChannelSums across ranks. Unrequested fields stay undefined.
// With an activation, g is first its gradient at y = xhat * weight + bias (Relu's, Clip's or, with
// the forward pass's sigmoid(y), SiLU's rule).
struct BatchNormGradSums {
  Tensor dxhat, sum_dxhat, sum_dxhat_xhat, sum_g_xhat, sum_g;
};
BatchNormGradSums BatchNormGradSumsOf(const Tensor& g, const Tensor& xhat, const Tensor& weight, int64_t n, int64_t c,
                                      int64_t p, bool dxhat, bool dx_sums, bool g_xhat, bool g_sum,
                                      const Tensor& bias = Tensor(), const BatchNormActivation& after = {},
                                      const Tensor& sigmoid = Tensor());
// The kernel table's number for a BatchNormActivation kind (kConvNoActivation ... kConvSilu), and back.
int32_t KernelActivation(BatchNormActivation::Kind kind);
BatchNormActivation::Kind ActivationKind(int32_t kernel_activation);
// Batch normalisation's rstd [C] = rsqrt(var + eps) (the contract's rsqrt), var contiguous [C]:
// one definition for BatchNorm and the fused convolution block, so both give the same bits.
Tensor BatchNormRstd(const Tensor& var, float eps);
// Copies n floats between device allocations of the current device (the ranges do not overlap).
void CopyFloats(const float* from, float* to, size_t n);
// Combines count partial rows of `inner` floats (device memory) in place by the pairwise tree
// (result in row 0).
void CombinePairwise(float* partials, int64_t count, int64_t inner);
// A GEMM whose K dimension runs over batch samples: K is cut into groups of k_per_group, each
// group's product computed K-sequentially, and the group products combined by the pairwise tree.
void GemmBatchGrouped(const backend::GemmCall& call, int64_t k_per_group);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_OPS_INTERNAL_H_
