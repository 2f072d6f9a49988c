// Conv2dNormActivation (core/ops.h): inference's Conv -> BatchNorm -> Relu/Clamp as one kernel-table
// call whose epilogue (kernel_table.h, ConvEpilogue) holds the other two ops' per-element steps.
// The running statistics' rstd is BatchNorm's own (BatchNormRstd), so the fused output and the
// three ops' output are the same bits.
#include "core/autograd.h"
#include "core/conv_internal.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/ops_internal.h"
#include "core/trace/trace.h"

namespace lockstep {

namespace {

// The three ops one after another: where a gradient is needed, and the reference the fused path
// equals.
Tensor Unfused(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dOptions& o,
               const ConvNormActivation& a) {
  Tensor y = Conv2d(x, weight, bias, o);
  if (a.normalize) y = BatchNorm(y, a.running_mean, a.running_var, a.weight, a.bias, false, 0.0f, a.eps);
  if (a.activation == ConvNormActivation::Activation::kRelu) y = Relu(y);
  if (a.activation == ConvNormActivation::Activation::kClamp) y = Clamp(y, a.lo, a.hi);
  if (a.activation == ConvNormActivation::Activation::kSilu) y = Mul(y, Sigmoid(y));
  return y;
}

}  // namespace

Tensor Conv2dNormActivation(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dOptions& o,
                            const ConvNormActivation& a) {
  if (NeedsGrad({x, weight, bias, a.weight, a.bias})) return Unfused(x, weight, bias, o, a);
  return trace::Op("conv2d_norm_activation", [&]() -> Tensor {
    backend::ConvEpilogue epilogue;
    Tensor mean, rstd, scale, shift;
    if (a.normalize) {
      LOCKSTEP_REQUIRE(a.running_mean.defined() && a.running_var.defined(),
                       "conv2d_norm_activation: batch normalisation needs running statistics");
      LOCKSTEP_REQUIRE(weight.dim() == 4, "conv2d: expected weight [C_out, C_in/groups, kh, kw], got "
                                              << ShapeString(weight.shape()));
      const int64_t c = weight.size(0);
      for (const Tensor* p : {&a.running_mean, &a.running_var, &a.weight, &a.bias}) {
        LOCKSTEP_REQUIRE(!p->defined() || p->shape() == Shape{c}, "batch_norm: parameter shape "
                                                                      << ShapeString(p->shape()) << " does not match "
                                                                      << c << " channels");
      }
      mean = ContiguousData(a.running_mean, "batch_norm");
      rstd = BatchNormRstd(ContiguousData(a.running_var, "batch_norm"), a.eps);
      epilogue.mean = mean.data_f32();
      epilogue.rstd = rstd.data_f32();
      if (a.weight.defined()) {
        scale = ContiguousData(a.weight, "batch_norm");
        epilogue.weight = scale.data_f32();
      }
      if (a.bias.defined()) {
        shift = ContiguousData(a.bias, "batch_norm");
        epilogue.bias = shift.data_f32();
      }
    }
    if (a.activation == ConvNormActivation::Activation::kRelu) epilogue.activation = backend::kConvRelu;
    if (a.activation == ConvNormActivation::Activation::kSilu) epilogue.activation = backend::kConvSilu;
    if (a.activation == ConvNormActivation::Activation::kClamp) {
      epilogue.activation = backend::kConvClamp;
      epilogue.lo = a.lo;
      epilogue.hi = a.hi;
    }
    return Conv2dWith(x, weight, bias, o, epilogue);
  });
}

}  // namespace lockstep
