// The CPU's layer kernels of the backend interface (kernel_list.h: broadcast arithmetic, strided
// copies, im2col / col2im, convolution, pooling, batch normalisation, embedding rows, NLL), on top
// of simd/.
#ifndef LOCKSTEP_CORE_BACKEND_CPU_LAYERS_H_
#define LOCKSTEP_CORE_BACKEND_CPU_LAYERS_H_

#include "core/backend/kernel_table.h"

namespace lockstep {
namespace cpu_layers {

void BinaryBroadcast(backend::BinaryOp op, backend::BroadcastOperand a, backend::BroadcastOperand b,
                     float* out, size_t n);
void StridedCopy(const backend::StridedCopyCall& call);
void Im2Col(const backend::ConvCall& call, const float* x, float* cols);
void Col2ImAdd(const backend::ConvCall& call, const float* cols, float* dx);
void Conv2dForward(const backend::Conv2dCall& call, const float* x, const float* w, const float* bias, float* y);
void Conv2dInputGrad(const backend::Conv2dCall& call, const float* dy, const float* w, float* dx);
void Conv2dWeightGrad(const backend::Conv2dCall& call, const float* dy, const float* x, float* dw);
void MaxPoolForward(const backend::PoolCall& call, const float* x, float* out, int64_t* argmax);
void MaxPoolBackward(const backend::PoolCall& call, const float* grad, const int64_t* argmax, float* dx);
void AvgPoolForward(const backend::PoolCall& call, const float* x, float* out);
void AvgPoolBackward(const backend::PoolCall& call, const float* grad, float* dx);
void ChannelNormalize(const backend::ChannelNormCall& call);
void ChannelNormalizeBackward(const backend::ChannelNormCall& call);
void GatherRows(const float* table, const int64_t* ids, size_t count, size_t dim, float* out);
void ScatterAddRows(const int64_t* ids, size_t count, size_t dim, const float* grad, float* table_grad);
void NllForward(const float* log_probs, const int64_t* targets, size_t n, size_t c, int64_t ignore_index,
                float* losses);
void NllBackward(const int64_t* targets, size_t n, size_t c, int64_t ignore_index, const float* grad,
                 size_t grad_step, float divisor, float* grad_log_probs);

}  // namespace cpu_layers
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_BACKEND_CPU_LAYERS_H_
