// nn::Module: a layer or model with named parameters (and buffers, such as running statistics),
// child modules, and a training flag. Names are PyTorch's ("0.weight", "features.3.bias"), in
// registration order, so checkpoints are interchangeable with PyTorch state dicts.
#ifndef LOCKSTEP_CORE_NN_MODULE_H_
#define LOCKSTEP_CORE_NN_MODULE_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "core/trace/trace.h"

namespace lockstep {
namespace nn {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class Module {
 public:
  virtual ~Module() = default;
  virtual Tensor Forward(const Tensor& x) = 0;
  // Forward, recorded in the open trace (core/trace/trace.h) when there is one.
  Tensor operator()(const Tensor& x) { return trace::Active() ? TracedForward(x) : Forward(x); }
  virtual std::string Name() const = 0;

  NamedTensors NamedParameters() const;
  NamedTensors NamedBuffers() const;
  std::vector<Tensor> Parameters() const;
  // Every module of the tree with its PyTorch path ("" for this one, "features.0", ...), in
  // registration order, parents before children (torch.nn.Module.named_modules).
  std::vector<std::pair<std::string, Module*>> NamedModules();
  // Parameters and buffers, sorted by name: what a checkpoint holds.
  NamedTensors StateDict() const;
  // Copies values from a state dict; names, shapes and dtypes must match exactly. Everything is
  // checked (ValidateStateDict) before anything changes.
  void LoadStateDict(const NamedTensors& state);
  void ValidateStateDict(const NamedTensors& state) const;

  void Train(bool on = true);
  void Eval() { Train(false); }
  bool training() const { return training_; }
  void ZeroGrad();

 protected:
  Tensor& RegisterParameter(const std::string& name, Tensor value);
  Tensor& RegisterBuffer(const std::string& name, Tensor value);
  template <class M>
  std::shared_ptr<M> RegisterModule(const std::string& name, std::shared_ptr<M> module) {
    children_.emplace_back(name, module);
    return module;
  }
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& children() const { return children_; }

 private:
  void Collect(const std::string& prefix, bool parameters, NamedTensors* out) const;
  Tensor TracedForward(const Tensor& x);
  NamedTensors parameters_, buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

}  // namespace nn
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_NN_MODULE_H_
