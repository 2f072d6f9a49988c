// The layers: PyTorch's torch.nn modules with the same parameter names and default initialisation.
// Layers with parameters take the Generator their initial values are drawn from.
#ifndef LOCKSTEP_CORE_NN_LAYERS_H_
#define LOCKSTEP_CORE_NN_LAYERS_H_

#include <memory>
#include <string>
#include <vector>

#include "core/nn/module.h"
#include "core/ops.h"
#include "core/random.h"

namespace lockstep {
namespace nn {

class Linear : public Module {
 public:
  Linear(int64_t in, int64_t out, bool bias, Generator& gen);
  Tensor Forward(const Tensor& x) override { return lockstep::Linear(x, weight, bias); }
  std::string Name() const override { return "Linear"; }
  Tensor weight, bias;
};

class Conv2d : public Module {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel, Generator& gen, int64_t stride = 1,
         int64_t padding = 0, int64_t dilation = 1, int64_t groups = 1, bool bias = true);
  Tensor Forward(const Tensor& x) override { return lockstep::Conv2d(x, weight, bias, options); }
  std::string Name() const override { return "Conv2d"; }
  Tensor weight, bias;
  Conv2dOptions options;
};

// PyTorch's ConvTranspose2d: weight [in, out / groups, k, k], bias [out]; initialised as PyTorch
// does (its fan-in is the weight's second dimension times the kernel's area).
class ConvTranspose2d : public Module {
 public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, int64_t kernel, Generator& gen, int64_t stride = 1,
                  int64_t padding = 0, int64_t output_padding = 0, int64_t groups = 1, bool bias = true,
                  int64_t dilation = 1);
  Tensor Forward(const Tensor& x) override { return lockstep::ConvTranspose2d(x, weight, bias, options); }
  std::string Name() const override { return "ConvTranspose2d"; }
  Tensor weight, bias;
  ConvTranspose2dOptions options;
};

class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(int64_t kernel, int64_t stride = 0, int64_t padding = 0, bool ceil_mode = false)
      : options{kernel, kernel, stride ? stride : kernel, stride ? stride : kernel, padding, padding} {
    options.ceil_mode = ceil_mode;
  }
  Tensor Forward(const Tensor& x) override { return lockstep::MaxPool2d(x, options); }
  std::string Name() const override { return "MaxPool2d"; }
  Pool2dOptions options;
};

class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(int64_t kernel, int64_t stride = 0, int64_t padding = 0)
      : options{kernel, kernel, stride ? stride : kernel, stride ? stride : kernel, padding, padding} {}
  Tensor Forward(const Tensor& x) override { return lockstep::AvgPool2d(x, options); }
  std::string Name() const override { return "AvgPool2d"; }
  Pool2dOptions options;
};

class ReLU : public Module {
 public:
  Tensor Forward(const Tensor& x) override { return Relu(x); }
  std::string Name() const override { return "ReLU"; }
};

class GELU : public Module {
 public:
  explicit GELU(bool tanh_approximation = false) : tanh_(tanh_approximation) {}
  Tensor Forward(const Tensor& x) override { return tanh_ ? GeluTanh(x) : GeluErf(x); }
  std::string Name() const override { return "GELU"; }

 private:
  bool tanh_;
};

// min(max(x, min_val), max_val), gradient 0 at and beyond the bounds (PyTorch's).
class Hardtanh : public Module {
 public:
  explicit Hardtanh(float min_val = -1.0f, float max_val = 1.0f) : min_(min_val), max_(max_val) {}
  Tensor Forward(const Tensor& x) override { return lockstep::Hardtanh(x, min_, max_); }
  std::string Name() const override { return "Hardtanh"; }

 private:
  float min_, max_;
};

class ReLU6 : public Module {
 public:
  Tensor Forward(const Tensor& x) override { return Relu6(x); }
  std::string Name() const override { return "ReLU6"; }
};

class SiLU : public Module {
 public:
  Tensor Forward(const Tensor& x) override { return Silu(x); }
  std::string Name() const override { return "SiLU"; }
};

class Hardsigmoid : public Module {
 public:
  Tensor Forward(const Tensor& x) override { return lockstep::Hardsigmoid(x); }
  std::string Name() const override { return "Hardsigmoid"; }
};

class Hardswish : public Module {
 public:
  Tensor Forward(const Tensor& x) override { return lockstep::Hardswish(x); }
  std::string Name() const override { return "Hardswish"; }
};

// Output size out_h x out_w; 0 keeps that input size (PyTorch's None).
class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(int64_t out_h, int64_t out_w = -1) : out_h_(out_h), out_w_(out_w < 0 ? out_h : out_w) {}
  Tensor Forward(const Tensor& x) override;
  std::string Name() const override { return "AdaptiveAvgPool2d"; }
  int64_t out_h() const { return out_h_; }
  int64_t out_w() const { return out_w_; }

 private:
  int64_t out_h_, out_w_;
};

class ChannelShuffle : public Module {
 public:
  explicit ChannelShuffle(int64_t groups) : groups_(groups) {}
  Tensor Forward(const Tensor& x) override { return lockstep::ChannelShuffle(x, groups_); }
  std::string Name() const override { return "ChannelShuffle"; }
  int64_t groups() const { return groups_; }

 private:
  int64_t groups_;
};

class Tanh : public Module {
 public:
  Tensor Forward(const Tensor& x) override { return lockstep::Tanh(x); }
  std::string Name() const override { return "Tanh"; }
};

class Sigmoid : public Module {
 public:
  Tensor Forward(const Tensor& x) override { return lockstep::Sigmoid(x); }
  std::string Name() const override { return "Sigmoid"; }
};

class Softmax : public Module {
 public:
  explicit Softmax(int64_t dim = -1) : dim_(dim) {}
  Tensor Forward(const Tensor& x) override { return lockstep::Softmax(x, dim_); }
  std::string Name() const override { return "Softmax"; }

 private:
  int64_t dim_;
};

class LogSoftmax : public Module {
 public:
  explicit LogSoftmax(int64_t dim = -1) : dim_(dim) {}
  Tensor Forward(const Tensor& x) override { return lockstep::LogSoftmax(x, dim_); }
  std::string Name() const override { return "LogSoftmax"; }

 private:
  int64_t dim_;
};

// Inverted dropout; each call draws x.numel() mask words from its generator in training mode.
class Dropout : public Module {
 public:
  Dropout(float p, Generator gen) : p_(p), gen_(gen) {}
  Tensor Forward(const Tensor& x) override;
  std::string Name() const override { return "Dropout"; }
  Generator& generator() { return gen_; }
  float p() const { return p_; }

 protected:
  float p_;
  Generator gen_;
};

// torchvision.ops.StochasticDepth: in training, each sample (mode "row") or the whole batch
// (mode "batch") is dropped with probability p and the rest scaled by 1 / (1 - p). A Dropout as
// far as streams go: its masks come from its generator (words: one per sample, or one per call),
// SeedDropoutStreams names its stream "dropout/<path>", and checkpoints keep its offset.
class StochasticDepth : public Dropout {
 public:
  StochasticDepth(float p, bool row_mode, Generator gen);
  Tensor Forward(const Tensor& x) override;
  std::string Name() const override { return "StochasticDepth"; }
  bool row_mode() const { return row_mode_; }

 private:
  bool row_mode_;
};

class Flatten : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1) : start_(start_dim), end_(end_dim) {}
  Tensor Forward(const Tensor& x) override { return x.Flatten(start_, end_); }
  std::string Name() const override { return "Flatten"; }

 private:
  int64_t start_, end_;
};

class Sequential : public Module {
 public:
  Sequential() = default;
  // Children are named "0", "1", ... as in PyTorch.
  Sequential& Add(std::shared_ptr<Module> module);
  Tensor Forward(const Tensor& x) override;
  std::string Name() const override { return "Sequential"; }
  size_t size() const { return children().size(); }
  Module& operator[](size_t i) { return *children()[i].second; }
};

class LayerNorm : public Module {
 public:
  explicit LayerNorm(int64_t features, float eps = 1e-5f, bool affine = true, bool bias = true);
  Tensor Forward(const Tensor& x) override { return lockstep::LayerNorm(x, 1, weight, bias, eps_); }
  std::string Name() const override { return "LayerNorm"; }
  Tensor weight, bias;

 private:
  float eps_;
};

// BatchNorm1d ([N, C]) and BatchNorm2d ([N, C, H, W]): running statistics in buffers
// running_mean, running_var and num_batches_tracked (int64).
class BatchNorm : public Module {
 public:
  BatchNorm(int64_t features, int rank, float eps = 1e-5f, float momentum = 0.1f);
  Tensor Forward(const Tensor& x) override;
  std::string Name() const override { return rank_ == 2 ? "BatchNorm1d" : "BatchNorm2d"; }
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 private:
  int rank_;
  float eps_, momentum_;
};

class Embedding : public Module {
 public:
  Embedding(int64_t num, int64_t dim, Generator& gen);  // normal(0, 1) as PyTorch
  Tensor Forward(const Tensor& indices) override { return lockstep::Embedding(indices, weight); }
  std::string Name() const override { return "Embedding"; }
  Tensor weight;
};

}  // namespace nn
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_NN_LAYERS_H_
