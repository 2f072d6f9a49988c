// lockstep._C.nn attention modules (core/nn/attention.h) and the dropout-stream rule.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>

#include "bindings/python/src/bindings.h"
#include "bindings/python/src/engine.h"
#include "core/nn/attention.h"

namespace lockstep {
namespace python {

namespace {

using OptT = const std::optional<Tensor>&;

nn::AttentionMasks Masks(OptT attn_mask, OptT key_padding_mask) {
  nn::AttentionMasks masks;
  if (attn_mask) masks.attn_mask = *attn_mask;
  if (key_padding_mask) masks.key_padding_mask = *key_padding_mask;
  return masks;
}

// The dropout streams of a module built here: with a generator, the path rule under its seed
// ("dropout/<path within the module>"); without, the next default streams "dropout/k", as every
// Dropout made from Python without a generator.
template <class M>
std::shared_ptr<M> WithDropouts(std::shared_ptr<M> module, const Generator* g) {
  if (g) {
    nn::SeedDropoutStreams(*module, g->seed);
    return module;
  }
  for (const auto& [path, child] : module->NamedModules()) {
    if (auto* d = dynamic_cast<nn::Dropout*>(child)) d->generator() = NextDropoutGenerator();
  }
  return module;
}

}  // namespace

void BindAttention(py::module_& m) {
  py::class_<nn::MultiheadAttention, nn::Module, std::shared_ptr<nn::MultiheadAttention>>(
      m, "MultiheadAttention", py::dynamic_attr(), "torch.nn.MultiheadAttention's computation and parameter names.")
      .def(py::init([](int64_t embed_dim, int64_t num_heads, double dropout, bool bias, bool batch_first,
                       Generator* g) {
             return Short([&] {
               nn::MultiheadAttentionOptions o;
               o.embed_dim = embed_dim, o.num_heads = num_heads, o.dropout = static_cast<float>(dropout);
               o.bias = bias, o.batch_first = batch_first;
               return WithDropouts(std::make_shared<nn::MultiheadAttention>(o, g ? *g : DefaultGenerator("init")), g);
             });
           }),
           py::arg("embed_dim"), py::arg("num_heads"), py::arg("dropout"), py::arg("bias"), py::arg("batch_first"),
           py::arg("generator").none(true))
      .def("_attend",
           [](nn::MultiheadAttention& self, const Tensor& q, const Tensor& k, const Tensor& v, OptT key_padding_mask,
              bool need_weights, OptT attn_mask, bool average) {
             const auto r = Long([&] { return self.Attend(q, k, v, Masks(attn_mask, key_padding_mask), need_weights, average); });
             return py::make_tuple(r.output, r.weights.defined() ? py::cast(r.weights) : py::none());
           })
      .def("_options", [](const nn::MultiheadAttention& self) {
        const auto& o = self.options();
        return py::make_tuple(o.embed_dim, o.num_heads, o.dropout, o.bias, o.batch_first);
      });

  py::class_<nn::TransformerEncoderLayer, nn::Module, std::shared_ptr<nn::TransformerEncoderLayer>>(
      m, "TransformerEncoderLayer", py::dynamic_attr(),
      "torch.nn.TransformerEncoderLayer's computation and parameter names.")
      .def(py::init([](int64_t d_model, int64_t nhead, int64_t dim_feedforward, double dropout, bool gelu, double eps,
                       bool batch_first, bool norm_first, Generator* g) {
             return Short([&] {
               nn::TransformerEncoderLayerOptions o;
               o.d_model = d_model, o.nhead = nhead, o.dim_feedforward = dim_feedforward;
               o.dropout = static_cast<float>(dropout), o.gelu = gelu, o.layer_norm_eps = static_cast<float>(eps);
               o.batch_first = batch_first, o.norm_first = norm_first;
               return WithDropouts(std::make_shared<nn::TransformerEncoderLayer>(o, g ? *g : DefaultGenerator("init")),
                                   g);
             });
           }),
           py::arg("d_model"), py::arg("nhead"), py::arg("dim_feedforward"), py::arg("dropout"), py::arg("gelu"),
           py::arg("layer_norm_eps"), py::arg("batch_first"), py::arg("norm_first"), py::arg("generator").none(true))
      .def("_encode",
           [](nn::TransformerEncoderLayer& self, const Tensor& src, OptT mask, OptT key_padding_mask) {
             return Long([&] { return self.Encode(src, Masks(mask, key_padding_mask)); });
           })
      .def("_options", [](const nn::TransformerEncoderLayer& self) {
        const auto& o = self.options();
        return py::make_tuple(o.d_model, o.nhead, o.dim_feedforward, o.dropout, o.gelu ? "gelu" : "relu",
                              o.layer_norm_eps, o.batch_first, o.norm_first);
      });

  py::class_<nn::TransformerEncoder, nn::Module, std::shared_ptr<nn::TransformerEncoder>>(
      m, "TransformerEncoder", py::dynamic_attr(), "torch.nn.TransformerEncoder: layers.0, layers.1, ..., and norm.")
      .def(py::init([](const std::shared_ptr<nn::Sequential>& layers, const std::shared_ptr<nn::LayerNorm>& norm) {
             return Short([&] { return std::make_shared<nn::TransformerEncoder>(layers, norm); });
           }),
           py::arg("layers"), py::arg("norm").none(true))
      .def("_encode", [](nn::TransformerEncoder& self, const Tensor& src, OptT mask, OptT key_padding_mask) {
        return Long([&] { return self.Encode(src, Masks(mask, key_padding_mask)); });
      });

  m.def("seed_dropout_streams", [](nn::Module& model, uint64_t seed) { Short([&] { nn::SeedDropoutStreams(model, seed); }); },
        py::arg("model"), py::arg("seed"),
        "Points every Dropout of the model at the Philox stream 'dropout/<its module path>' under seed, offset 0: "
        "the rule lockstep.from_torch_module and the C++ builders follow, so they draw the same masks.");
}

}  // namespace python
}  // namespace lockstep
