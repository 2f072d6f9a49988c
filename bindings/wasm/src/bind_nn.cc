// Modules for JavaScript: the layers of core/nn, Sequential, the reference models by name, and
// checkpoints as bytes (canonical safetensors; a model's hash is the SHA-256 of those bytes).
#include <emscripten/bind.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings/wasm/src/js_boundary.h"
#include "core/checkpoint.h"
#include "core/error.h"
#include "core/models/by_name.h"
#include "core/nn/attention.h"
#include "core/nn/layers.h"
#include "core/nn/recurrent.h"
#include "core/ops.h"
#include "core/random.h"

namespace lockstep {
namespace wasm {
namespace {

using emscripten::val;
using ModulePtr = std::shared_ptr<nn::Module>;

int64_t Dim(double v, const char* what) {
  LOCKSTEP_REQUIRE(v >= 0 && v <= 2147483647.0 && v == static_cast<double>(static_cast<int64_t>(v)),
                   what << ": expected an integer >= 0, got " << v);
  return static_cast<int64_t>(v);
}
int64_t Positive(double v, const char* what) {
  LOCKSTEP_REQUIRE(v >= 1, what << ": expected an integer >= 1, got " << v);
  return Dim(v, what);
}

ModulePtr MakeLinear(double in, double out, bool bias, Generator& gen) {
  return JsBoundary([&]() -> ModulePtr {
    return std::make_shared<nn::Linear>(Positive(in, "Linear inFeatures"), Positive(out, "Linear outFeatures"), bias,
                                        gen);
  });
}
ModulePtr MakeConv2d(double in, double out, double kernel, double stride, double padding, double dilation,
                     double groups, bool bias, Generator& gen) {
  return JsBoundary([&]() -> ModulePtr {
    return std::make_shared<nn::Conv2d>(Positive(in, "Conv2d inChannels"), Positive(out, "Conv2d outChannels"),
                                        Positive(kernel, "Conv2d kernelSize"), gen, Positive(stride, "Conv2d stride"),
                                        Dim(padding, "Conv2d padding"), Positive(dilation, "Conv2d dilation"),
                                        Positive(groups, "Conv2d groups"), bias);
  });
}
ModulePtr MakeConvTranspose2d(double in, double out, double kernel, double stride, double padding,
                              double output_padding, double groups, bool bias, double dilation, Generator& gen) {
  return JsBoundary([&]() -> ModulePtr {
    const char* w = "ConvTranspose2d";
    return std::make_shared<nn::ConvTranspose2d>(
        Positive(in, "ConvTranspose2d inChannels"), Positive(out, "ConvTranspose2d outChannels"),
        Positive(kernel, "ConvTranspose2d kernelSize"), gen, Positive(stride, "ConvTranspose2d stride"),
        Dim(padding, "ConvTranspose2d padding"), Dim(output_padding, "ConvTranspose2d outputPadding"),
        Positive(groups, w), bias, Positive(dilation, "ConvTranspose2d dilation"));
  });
}
ModulePtr MakeMaxPool2d(double kernel, double stride, double padding, bool ceil_mode) {
  return JsBoundary([&]() -> ModulePtr {
    return std::make_shared<nn::MaxPool2d>(Positive(kernel, "MaxPool2d kernelSize"), Dim(stride, "MaxPool2d stride"),
                                           Dim(padding, "MaxPool2d padding"), ceil_mode);
  });
}
// Output sizes; 0 keeps the input's size (PyTorch's None).
ModulePtr MakeAdaptiveAvgPool2d(double h, double w) {
  return JsBoundary([&]() -> ModulePtr {
    return std::make_shared<nn::AdaptiveAvgPool2d>(Dim(h, "AdaptiveAvgPool2d outputSize"),
                                                   Dim(w, "AdaptiveAvgPool2d outputSize"));
  });
}
ModulePtr MakeChannelShuffle(double groups) {
  return JsBoundary([&]() -> ModulePtr {
    return std::make_shared<nn::ChannelShuffle>(Positive(groups, "ChannelShuffle groups"));
  });
}
ModulePtr MakeHardtanh(double lo, double hi) {
  return JsBoundary([&]() -> ModulePtr {
    const float min_val = FiniteFromJs(lo, "Hardtanh minVal"), max_val = FiniteFromJs(hi, "Hardtanh maxVal");
    LOCKSTEP_REQUIRE(min_val <= max_val, "Hardtanh: minVal " << min_val << " is above maxVal " << max_val);
    return std::make_shared<nn::Hardtanh>(min_val, max_val);
  });
}
ModulePtr MakeStochasticDepth(double p, bool row_mode, Generator& gen) {
  return JsBoundary([&]() -> ModulePtr {
    LOCKSTEP_REQUIRE(p >= 0 && p <= 1, "StochasticDepth: p must be in [0, 1], got " << p);
    return std::make_shared<nn::StochasticDepth>(static_cast<float>(p), row_mode, gen);
  });
}
// The path rule of Python's from_torch_module: every Dropout of the tree draws from
// "dropout/<module path>" under the seed (an exported model then trains with its masks).
void SeedDropoutStreamsJs(nn::Module& model, double seed) {
  JsBoundary([&] { nn::SeedDropoutStreams(model, SeedFromJs(seed, "nn.seedDropoutStreams seed")); });
}
ModulePtr MakeAvgPool2d(double kernel, double stride, double padding) {
  return JsBoundary([&]() -> ModulePtr {
    return std::make_shared<nn::AvgPool2d>(Positive(kernel, "AvgPool2d kernelSize"), Dim(stride, "AvgPool2d stride"),
                                           Dim(padding, "AvgPool2d padding"));
  });
}
ModulePtr MakeActivation(const std::string& kind) {
  return JsBoundary([&]() -> ModulePtr {
    if (kind == "relu") return std::make_shared<nn::ReLU>();
    if (kind == "gelu") return std::make_shared<nn::GELU>(false);
    if (kind == "geluTanh") return std::make_shared<nn::GELU>(true);
    if (kind == "tanh") return std::make_shared<nn::Tanh>();
    if (kind == "sigmoid") return std::make_shared<nn::Sigmoid>();
    if (kind == "relu6") return std::make_shared<nn::ReLU6>();
    if (kind == "silu") return std::make_shared<nn::SiLU>();
    if (kind == "hardsigmoid") return std::make_shared<nn::Hardsigmoid>();
    if (kind == "hardswish") return std::make_shared<nn::Hardswish>();
    LOCKSTEP_REQUIRE(false, "unknown activation '" << kind << "'");
    return nullptr;
  });
}
ModulePtr MakeSoftmax(int dim, bool log) {
  if (log) return std::make_shared<nn::LogSoftmax>(dim);
  return std::make_shared<nn::Softmax>(dim);
}
ModulePtr MakeFlatten(int start, int end) { return std::make_shared<nn::Flatten>(start, end); }
ModulePtr MakeDropout(double p, Generator& gen) {
  return JsBoundary([&]() -> ModulePtr {
    LOCKSTEP_REQUIRE(p >= 0 && p < 1, "Dropout: p must be in [0, 1), got " << p);
    return std::make_shared<nn::Dropout>(static_cast<float>(p), gen);
  });
}
ModulePtr MakeLayerNorm(double features, double eps, bool affine, bool bias) {
  return JsBoundary([&]() -> ModulePtr {
    return std::make_shared<nn::LayerNorm>(Positive(features, "LayerNorm normalizedShape"),
                                           FiniteFromJs(eps, "LayerNorm eps"), affine, bias);
  });
}
ModulePtr MakeEmbedding(double num, double dim, Generator& gen) {
  return JsBoundary([&]() -> ModulePtr {
    return std::make_shared<nn::Embedding>(Positive(num, "Embedding numEmbeddings"), Positive(dim, "Embedding embeddingDim"),
                                           gen);
  });
}
ModulePtr MakeSequential() { return std::make_shared<nn::Sequential>(); }
void SequentialAdd(const ModulePtr& sequential, const ModulePtr& child) {
  JsBoundary([&] {
    auto* seq = dynamic_cast<nn::Sequential*>(sequential.get());
    LOCKSTEP_REQUIRE(seq != nullptr, "add: only a Sequential takes children, this is a " << sequential->Name());
    LOCKSTEP_REQUIRE(child != nullptr, "add: expected a module");
    seq->Add(child);
  });
}
ModulePtr MakeModel(const std::string& arch, double seed) {
  return JsBoundary([&]() -> ModulePtr {
    ModulePtr model = models::MakeModelByName(arch, SeedFromJs(seed, "model seed"));
    if (!model) {
      std::string names;
      for (const std::string& n : models::ModelNames()) names += (names.empty() ? "" : ", ") + n;
      LOCKSTEP_REQUIRE(false, "unknown model '" << arch << "'; expected one of " << names);
    }
    return model;
  });
}

// The functions of nn.functional that are not a module's forward (js/nn.js makes those from a module).
std::vector<int64_t> DimsFromJs(const val& dims, const char* what) {
  std::vector<int64_t> out;
  for (double d : emscripten::convertJSArrayToNumberVector<double>(dims)) {
    LOCKSTEP_REQUIRE(d == static_cast<double>(static_cast<int64_t>(d)), what << ": dims must be integers, got " << d);
    out.push_back(static_cast<int64_t>(d));
  }
  return out;
}
Tensor MeanDims(const Tensor& x, const val& dims, bool keepdim) {
  return JsBoundary([&] { return Mean(x, DimsFromJs(dims, "mean"), keepdim); });
}
Tensor Cat(const val& tensors, int dim) {
  return JsBoundary([&] {
    std::vector<Tensor> list;
    const int n = tensors["length"].as<int>();
    for (int i = 0; i < n; ++i) list.push_back(tensors[i].as<Tensor>());
    return Concat(list, dim);
  });
}
// kind: "rnn_tanh", "rnn_relu", "lstm" or "gru".
ModulePtr MakeRecurrent(const std::string& kind, double in, double hidden, double layers, bool bias, bool batch_first,
                        bool bidirectional, Generator& gen) {
  return JsBoundary([&]() -> ModulePtr {
    nn::RecurrentOptions o;
    o.input_size = Positive(in, "inputSize"), o.hidden_size = Positive(hidden, "hiddenSize");
    o.num_layers = Positive(layers, "numLayers"), o.bias = bias, o.batch_first = batch_first;
    o.bidirectional = bidirectional;
    const nn::RecurrentCell cell = kind == "lstm"       ? nn::RecurrentCell::kLstm
                                   : kind == "gru"      ? nn::RecurrentCell::kGru
                                   : kind == "rnn_relu" ? nn::RecurrentCell::kRnnRelu
                                                        : nn::RecurrentCell::kRnnTanh;
    return std::make_shared<nn::Recurrent>(cell, o, gen);
  });
}
// [output, h_n, c_n (LSTM) or null]; h0 and c0 null for zeros.
val RecurrentRun(const ModulePtr& m, const Tensor& x, const val& h0, const val& c0) {
  return JsBoundary([&]() -> val {
    auto* r = dynamic_cast<nn::Recurrent*>(m.get());
    LOCKSTEP_REQUIRE(r != nullptr, "forwardWithState: " << m->Name() << " is not a recurrent module");
    const auto tensor = [](const val& v) { return v.isNull() || v.isUndefined() ? Tensor() : v.as<Tensor>(); };
    const std::vector<Tensor> out = r->ForwardWithState(x, tensor(h0), tensor(c0));
    val result = val::array();
    result.call<void>("push", val(out[0]));
    result.call<void>("push", val(out[1]));
    result.call<void>("push", out[2].defined() ? val(out[2]) : val::null());
    return result;
  });
}
Tensor Forward(const ModulePtr& m, const Tensor& x) { return JsBoundary([&] { return (*m)(x); }); }
std::string NameOf(const ModulePtr& m) { return m->Name(); }
void SetTraining(const ModulePtr& m, bool on) { m->Train(on); }
bool IsTraining(const ModulePtr& m) { return m->training(); }
void ZeroGradOf(const ModulePtr& m) { m->ZeroGrad(); }

val NamedList(const nn::NamedTensors& named) {
  val out = val::array();
  for (const auto& [name, tensor] : named) {
    val pair = val::array();
    pair.call<void>("push", val(name));
    pair.call<void>("push", val(tensor));
    out.call<void>("push", pair);
  }
  return out;
}
val NamedParameters(const ModulePtr& m) { return NamedList(m->NamedParameters()); }
val StateDict(const ModulePtr& m) { return NamedList(m->StateDict()); }

val SaveBytes(const ModulePtr& m) { return JsBoundary([&] { return BytesToJs(EncodeModel(*m)); }); }
void LoadBytes(const ModulePtr& m, const val& bytes) {
  JsBoundary([&] { LoadModelFromBytes(BytesFromJs(bytes, "load"), "checkpoint", *m); });
}
std::string HashOf(const ModulePtr& m) { return JsBoundary([&] { return ModelHash(*m); }); }

}  // namespace

EMSCRIPTEN_BINDINGS(lockstep_nn) {
  using emscripten::class_;
  using emscripten::function;
  class_<nn::Module>("Module")
      .smart_ptr<ModulePtr>("ModulePtr")
      .function("forward", &Forward)
      .function("name", &NameOf)
      .function("setTraining", &SetTraining)
      .function("isTraining", &IsTraining)
      .function("zeroGrad", &ZeroGradOf)
      .function("namedParameters", &NamedParameters)
      .function("stateDict", &StateDict)
      .function("save", &SaveBytes)
      .function("load", &LoadBytes)
      .function("hash", &HashOf)
      .function("add", &SequentialAdd);
  function("makeLinear", &MakeLinear);
  function("makeConv2d", &MakeConv2d);
  function("makeConvTranspose2d", &MakeConvTranspose2d);
  function("makeRecurrent", &MakeRecurrent);
  function("recurrentRun", &RecurrentRun);
  function("makeMaxPool2d", &MakeMaxPool2d);
  function("makeAvgPool2d", &MakeAvgPool2d);
  function("makeActivation", &MakeActivation);
  function("makeAdaptiveAvgPool2d", &MakeAdaptiveAvgPool2d);
  function("makeChannelShuffle", &MakeChannelShuffle);
  function("makeHardtanh", &MakeHardtanh);
  function("makeStochasticDepth", &MakeStochasticDepth);
  function("seedDropoutStreams", &SeedDropoutStreamsJs);
  function("meanDims", &MeanDims);
  function("cat", &Cat);
  function("makeSoftmax", &MakeSoftmax);
  function("makeFlatten", &MakeFlatten);
  function("makeDropout", &MakeDropout);
  function("makeLayerNorm", &MakeLayerNorm);
  function("makeEmbedding", &MakeEmbedding);
  function("makeSequential", &MakeSequential);
  function("makeModel", &MakeModel);
}

}  // namespace wasm
}  // namespace lockstep
