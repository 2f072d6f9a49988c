// Helpers shared by the op implementations and the backward rules (not part of the public API).
#ifndef LOCKSTEP_CORE_OPS_INTERNAL_H_
#define LOCKSTEP_CORE_OPS_INTERNAL_H_

#include <stdint.h>

#include <limits>

#include "core/backend/device.h"
#include "core/tensor.h"
#include "simd/elementwise.h"
#include "simd/fp_mode.h"
#include "simd/gemm.h"
#include "simd/math.h"

namespace lockstep {

// The current device's kernels with simd/'s signatures, throwing lockstep::Error when a device
// kernel fails. Every pointer given must be tensor data on the current device (ContiguousData
// checks inputs; outputs come from Tensor::Empty). While one exists, the calling thread computes
// in the contract's floating-point mode (simd/fp_mode.h), whatever mode the caller had set.
class Kernels {
 public:
  Kernels() : k_(CurrentKernels()) {}
  void Binary(simd::BinaryOp op, const float* a, const float* b, float* out, size_t n) const;
  void BinaryScalarRight(simd::BinaryOp op, const float* a, float s, float* out, size_t n) const;
  void BinaryScalarLeft(simd::BinaryOp op, float s, const float* b, float* out, size_t n) const;
  void Unary(simd::UnaryOp op, const float* a, float* out, size_t n) const;
  void Select(const float* cond, const float* a, const float* b, float* out, size_t n) const;
  void Math(simd::MathFn fn, const float* in, float* out, size_t n) const;
  void PowInt(const float* in, int exponent, float* out, size_t n) const;
  void GeluErfBackward(const float* x, const float* g, float* out, size_t n) const;
  void LayerNormRows(const float* x, const float* weight, const float* bias, float eps, size_t rows, size_t d,
                     float* xhat, float* rstd, float* out) const;
  void LayerNormRowsBackward(const float* g, const float* weight, const float* xhat, const float* rstd, size_t rows,
                             size_t d, float* dx) const;
  void SumAxis(const float* x, size_t outer, size_t len, size_t inner, float* out) const;
  void MeanAxis(const float* x, size_t outer, size_t len, size_t inner, float* out) const;
  void VarianceAxis(const float* x, size_t outer, size_t len, size_t inner, size_t correction,
                    float* out) const;
  void MaxAxis(const float* x, size_t outer, size_t len, size_t inner, float* out) const;
  void ArgmaxAxis(const float* x, size_t outer, size_t len, size_t inner, int64_t* out) const;
  void Gemm(const simd::GemmArgs& args) const;
  void GemmBatchGrouped(const simd::GemmArgs& args, size_t k_per_group) const;
  void Softmax(const float* x, size_t rows, size_t cols, float* out) const;
  void LogSoftmax(const float* x, size_t rows, size_t cols, float* out) const;
  void DropoutMask(uint64_t seed, uint64_t stream, uint64_t first, float p, float* out, size_t n) const;
  void BinaryBroadcast(simd::BinaryOp op, backend::BroadcastOperand a, backend::BroadcastOperand b,
                       float* out, size_t n) const;
  void StridedCopy(const backend::StridedCopyCall& call) const;
  void Im2Col(const backend::ConvCall& call, const float* x, float* cols) const;
  void Col2ImAdd(const backend::ConvCall& call, const float* cols, float* dx) const;
  void Conv2dForward(const backend::Conv2dCall& call, const float* x, const float* w, const float* bias,
                     float* y) const;
  void Conv2dInputGrad(const backend::Conv2dCall& call, const float* dy, const float* w, float* dx) const;
  void Conv2dWeightGrad(const backend::Conv2dCall& call, const float* dy, const float* x, float* dw) const;
  void MaxPoolForward(const backend::PoolCall& call, const float* x, float* out, int64_t* argmax) const;
  void MaxPoolBackward(const backend::PoolCall& call, const float* grad, const int64_t* argmax, float* dx) const;
  void GatherRows(const float* table, const int64_t* ids, size_t count, size_t dim, float* out) const;
  void ScatterAddRows(const int64_t* ids, size_t count, size_t dim, const float* grad, float* table_grad) const;
  void NllForward(const float* log_probs, const int64_t* targets, size_t n, size_t c, int64_t ignore_index,
                  float* losses) const;
  void NllBackward(const int64_t* targets, size_t n, size_t c, int64_t ignore_index, const float* grad,
                   size_t grad_step, float divisor, float* grad_log_probs) const;
  void AdamUpdate(const backend::AdamCall& call) const;
  void SgdUpdate(const backend::SgdCall& call) const;

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
// Combines count partial rows of `inner` floats (device memory) in place by the pairwise tree
// (result in row 0).
void CombinePairwise(float* partials, int64_t count, int64_t inner);
// A GEMM whose K dimension runs over batch samples: K is cut into groups of k_per_group, each
// group's product computed K-sequentially, and the group products combined by the pairwise tree.
void GemmBatchGrouped(const simd::GemmArgs& args, int64_t k_per_group);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_OPS_INTERNAL_H_
