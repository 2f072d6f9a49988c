#include "core/nn/layers.h"

#include "core/error.h"
#include "core/nn/init.h"
#include "core/parallel/data_parallel.h"

namespace lockstep {
namespace nn {

Linear::Linear(int64_t in, int64_t out, bool has_bias, Generator& gen) {
  LOCKSTEP_REQUIRE(in > 0 && out > 0, "Linear: sizes must be positive, got " << in << " -> " << out);
  weight = Tensor::Empty({out, in});
  KaimingUniformDefault(weight, in, gen);
  RegisterParameter("weight", weight);
  if (has_bias) {
    bias = Tensor::Empty({out});
    BiasUniformDefault(bias, in, gen);
    RegisterParameter("bias", bias);
  }
}

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel, Generator& gen,
               int64_t stride, int64_t padding, int64_t dilation, int64_t groups, bool has_bias)
    : options{stride, stride, padding, padding, dilation, dilation, groups} {
  LOCKSTEP_REQUIRE(in_channels > 0 && out_channels > 0 && kernel > 0 && groups > 0 &&
                       in_channels % groups == 0 && out_channels % groups == 0,
                   "Conv2d: invalid configuration in=" << in_channels << " out=" << out_channels
                                                       << " kernel=" << kernel << " groups=" << groups);
  const int64_t fan_in = in_channels / groups * kernel * kernel;
  weight = Tensor::Empty({out_channels, in_channels / groups, kernel, kernel});
  KaimingUniformDefault(weight, fan_in, gen);
  RegisterParameter("weight", weight);
  if (has_bias) {
    bias = Tensor::Empty({out_channels});
    BiasUniformDefault(bias, fan_in, gen);
    RegisterParameter("bias", bias);
  }
}

ConvTranspose2d::ConvTranspose2d(int64_t in_channels, int64_t out_channels, int64_t kernel, Generator& gen,
                                 int64_t stride, int64_t padding, int64_t output_padding, int64_t groups,
                                 bool has_bias, int64_t dilation) {
  LOCKSTEP_REQUIRE(in_channels > 0 && out_channels > 0 && kernel > 0 && groups > 0 && in_channels % groups == 0 &&
                       out_channels % groups == 0 && stride > 0 && dilation > 0 && padding >= 0 &&
                       output_padding >= 0 && (output_padding < stride || output_padding < dilation),
                   "ConvTranspose2d: invalid configuration in=" << in_channels << " out=" << out_channels << " kernel="
                                                                << kernel << " stride=" << stride << " padding=" << padding
                                                                << " output_padding=" << output_padding
                                                                << " groups=" << groups << " dilation=" << dilation);
  options.stride_h = options.stride_w = stride;
  options.padding_h = options.padding_w = padding;
  options.output_padding_h = options.output_padding_w = output_padding;
  options.dilation_h = options.dilation_w = dilation;
  options.groups = groups;
  const int64_t fan_in = out_channels / groups * kernel * kernel;
  weight = Tensor::Empty({in_channels, out_channels / groups, kernel, kernel});
  KaimingUniformDefault(weight, fan_in, gen);
  RegisterParameter("weight", weight);
  if (has_bias) {
    bias = Tensor::Empty({out_channels});
    BiasUniformDefault(bias, fan_in, gen);
    RegisterParameter("bias", bias);
  }
}

Tensor Dropout::Forward(const Tensor& x) {
  if (!training() || p_ == 0.0f) return x;
  // The whole batch's words, also when this process computes a data-parallel share of it.
  uint64_t words = static_cast<uint64_t>(x.numel());
  if (parallel::CurrentBatch() != nullptr && x.dim() > 0 && x.size(0) > 0) {
    words = words / static_cast<uint64_t>(x.size(0)) * static_cast<uint64_t>(parallel::GlobalSamples(x.size(0), "dropout"));
  }
  const uint64_t offset = gen_.Take(words);
  return lockstep::Dropout(x, p_, true, gen_.seed, gen_.stream, offset);
}

StochasticDepth::StochasticDepth(float p, bool row_mode, Generator gen) : Dropout(p, gen), row_mode_(row_mode) {
  LOCKSTEP_REQUIRE(p >= 0.0f && p <= 1.0f, "StochasticDepth: p must be in [0, 1], got " << p);
}

Tensor StochasticDepth::Forward(const Tensor& x) {
  if (!training() || p_ == 0.0f) return x;
  LOCKSTEP_REQUIRE(x.dim() >= 1, "StochasticDepth: expected an input of rank >= 1, got " << ShapeString(x.shape()));
  // One word per sample of the whole batch (also when this process computes a share of it), or one.
  uint64_t words = 1;
  if (row_mode_) {
    const bool shared = parallel::CurrentBatch() != nullptr && x.size(0) > 0;
    words = static_cast<uint64_t>(shared ? parallel::GlobalSamples(x.size(0), "stochastic_depth") : x.size(0));
  }
  const uint64_t offset = gen_.Take(words);
  return lockstep::StochasticDepth(x, p_, row_mode_, true, gen_.seed, gen_.stream, offset);
}

Tensor AdaptiveAvgPool2d::Forward(const Tensor& x) {
  LOCKSTEP_REQUIRE(x.dim() == 3 || x.dim() == 4,
                   "AdaptiveAvgPool2d: expected input [N, C, H, W] or [C, H, W], got " << ShapeString(x.shape()));
  return lockstep::AdaptiveAvgPool2d(x, out_h_ ? out_h_ : x.size(-2), out_w_ ? out_w_ : x.size(-1));
}

Sequential& Sequential::Add(std::shared_ptr<Module> module) {
  RegisterModule(std::to_string(children().size()), std::move(module));
  return *this;
}

Tensor Sequential::Forward(const Tensor& x) {
  Tensor y = x;
  for (const auto& [name, child] : children()) y = (*child)(y);
  return y;
}

LayerNorm::LayerNorm(int64_t features, float eps, bool affine, bool has_bias) : eps_(eps) {
  if (affine) {
    weight = RegisterParameter("weight", Tensor::Ones({features}));
    if (has_bias) bias = RegisterParameter("bias", Tensor::Zeros({features}));
  }
}

BatchNorm::BatchNorm(int64_t features, int rank, float eps, float momentum)
    : rank_(rank), eps_(eps), momentum_(momentum) {
  weight = RegisterParameter("weight", Tensor::Ones({features}));
  bias = RegisterParameter("bias", Tensor::Zeros({features}));
  running_mean = RegisterBuffer("running_mean", Tensor::Zeros({features}));
  running_var = RegisterBuffer("running_var", Tensor::Ones({features}));
  num_batches_tracked = RegisterBuffer("num_batches_tracked", Tensor::Zeros({}, DType::kInt64));
}

Tensor BatchNorm::Forward(const Tensor& x) {
  LOCKSTEP_REQUIRE(x.dim() == rank_, Name() << ": expected a rank-" << rank_ << " input, got "
                                            << ShapeString(x.shape()));
  if (training()) num_batches_tracked.CopyFrom(Tensor::FromInt64({}, {num_batches_tracked.ToInt64Vector()[0] + 1}));
  return lockstep::BatchNorm(x, running_mean, running_var, weight, bias, training(), momentum_, eps_);
}

Embedding::Embedding(int64_t num, int64_t dim, Generator& gen) {
  weight = Tensor::Empty({num, dim});
  NormalInit(weight, 0.0f, 1.0f, gen);
  RegisterParameter("weight", weight);
}

}  // namespace nn
}  // namespace lockstep
