// lockstep._C.nn: nn::Module (subclassable from Python through a trampoline) and the layers of
// core/nn/layers.h. The constructors here take settled arguments; lockstep/nn/modules.py gives
// them PyTorch's signatures (ints or pairs, padding='same', defaults) and checks them first.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bindings/python/src/bindings.h"
#include "bindings/python/src/engine.h"
#include "bindings/python/src/module_access.h"
#include "core/error.h"
#include "core/nn/layers.h"

namespace lockstep {
namespace python {

namespace {

using ModulePtr = std::shared_ptr<nn::Module>;
using Pair = std::pair<int64_t, int64_t>;

Generator& InitGenerator(Generator* g) { return g ? *g : DefaultGenerator("init"); }

py::list Named(const nn::NamedTensors& named) {
  py::list out;
  for (const auto& [name, t] : named) out.append(py::make_tuple(name, t));
  return out;
}

// A name Python may register: not empty, no dot (dots separate the path), not taken.
void RequireFreeName(const nn::Module& m, const std::string& name) {
  LOCKSTEP_REQUIRE(!name.empty() && name.find('.') == std::string::npos,
                   "register: a name must be non-empty and without '.', got '" << name << "'");
  for (const auto& [n, t] : m.NamedParameters()) {
    LOCKSTEP_REQUIRE(n != name, "register: '" << name << "' is already a parameter of this " << m.Name()
                                              << " (change its values with copy_ inside lockstep.no_grad())");
  }
  for (const auto& [n, t] : m.NamedBuffers()) {
    LOCKSTEP_REQUIRE(n != name, "register: '" << name << "' is already a buffer of this " << m.Name());
  }
  for (const auto& [n, c] : ModuleAccess::ChildrenOf(m)) {
    LOCKSTEP_REQUIRE(n != name, "register: '" << name << "' is already a submodule of this " << m.Name());
  }
}

PyModule& RequirePython(nn::Module& m, const char* what) {
  auto* p = dynamic_cast<PyModule*>(&m);
  LOCKSTEP_REQUIRE(p != nullptr, what << ": a built-in " << m.Name()
                                      << " has a fixed set of parameters; subclass lockstep.nn.Module to add your own");
  return *p;
}

// One of the module's own tensors (not its children's) by name, or undefined.
Tensor OwnTensor(const nn::Module& m, const std::string& name) {
  for (const nn::NamedTensors& list : {m.NamedParameters(), m.NamedBuffers()}) {
    for (const auto& [n, t] : list) {
      if (n == name) return t;
    }
  }
  return Tensor();
}

void BindModuleBase(py::module_& m) {
  py::class_<nn::Module, PyModule, ModulePtr>(m, "Module", py::dynamic_attr(),
                                              "Base class of every layer and model (torch.nn.Module's counterpart).")
      .def(py::init_alias<>())
      .def("_call", [](nn::Module& self, const Tensor& x) { return Sized(x.numel(), [&] { return self(x); }); })
      .def("forward", [](nn::Module& self, const Tensor& x) { return Sized(x.numel(), [&] { return self.Forward(x); }); })
      .def("_name", [](const nn::Module& self) { return self.Name(); })
      .def("_set_training", [](nn::Module& self, bool on) { Short([&] { self.Train(on); }); })
      .def_property_readonly("training", &nn::Module::training)
      .def("_zero_grad", [](nn::Module& self) { Short([&] { self.ZeroGrad(); }); })
      .def("_named_parameters", [](const nn::Module& self) { return Named(Short([&] { return self.NamedParameters(); })); })
      .def("_named_buffers", [](const nn::Module& self) { return Named(Short([&] { return self.NamedBuffers(); })); })
      .def("_state_dict", [](const nn::Module& self) { return Named(Short([&] { return self.StateDict(); })); })
      .def("_load_state_dict",
           [](nn::Module& self, const std::vector<std::pair<std::string, Tensor>>& state) {
             Long([&] { self.LoadStateDict(state); });
           })
      .def("_children",
           [](const nn::Module& self) {
             py::list out;
             for (const auto& [name, child] : Short([&] { return ModuleAccess::ChildrenOf(self); })) {
               out.append(py::make_tuple(name, child));
             }
             return out;
           })
      .def("_own_tensor",
           [](const nn::Module& self, const std::string& name) -> py::object {
             const Tensor t = Short([&] { return OwnTensor(self, name); });
             return t.defined() ? py::cast(t) : py::none();
           })
      .def("_register_parameter",
           [](nn::Module& self, const std::string& name, const Tensor& t) {
             Short([&] {
               RequireFreeName(self, name);
               LOCKSTEP_REQUIRE(t.dtype() == DType::kFloat32 && t.is_contiguous(),
                                "register_parameter: '" << name << "' must be a contiguous float32 tensor, got "
                                                        << DTypeString(t.dtype()) << " " << ShapeString(t.shape()));
               ModuleAccess::AddParameter(RequirePython(self, "register_parameter"), name, t);
             });
           })
      .def("_register_buffer",
           [](nn::Module& self, const std::string& name, const Tensor& t) {
             Short([&] {
               RequireFreeName(self, name);
               ModuleAccess::AddBuffer(RequirePython(self, "register_buffer"), name, t);
             });
           })
      .def("_register_module", [](nn::Module& self, const std::string& name, const ModulePtr& child) {
        Short([&] {
          LOCKSTEP_REQUIRE(child != nullptr, "register_module: expected a module");
          RequireFreeName(self, name);
          const bool container = dynamic_cast<PyModule*>(&self) || dynamic_cast<nn::Sequential*>(&self) ||
                                 dynamic_cast<ModuleList*>(&self);
          LOCKSTEP_REQUIRE(container, "register_module: a built-in " << self.Name()
                                                                     << " has fixed submodules; subclass lockstep.nn.Module");
          ModuleAccess::AddModule(self, name, child);
        });
      });
}

template <class M>
py::class_<M, nn::Module, std::shared_ptr<M>> Layer(py::module_& m, const char* name, const char* doc) {
  return py::class_<M, nn::Module, std::shared_ptr<M>>(m, name, py::dynamic_attr(), doc);
}

}  // namespace

// BatchNorm1d and BatchNorm2d as two Python classes over the one C++ BatchNorm.
struct BatchNorm1d : nn::BatchNorm {
  BatchNorm1d(int64_t f, float eps, float momentum) : nn::BatchNorm(f, 2, eps, momentum) {}
};
struct BatchNorm2d : nn::BatchNorm {
  BatchNorm2d(int64_t f, float eps, float momentum) : nn::BatchNorm(f, 4, eps, momentum) {}
};

void BindNn(py::module_& m) {
  BindModuleBase(m);
  Layer<nn::Sequential>(m, "Sequential", "Modules applied in order; children named '0', '1', ... (or as given).")
      .def(py::init<>())
      .def("_append", [](nn::Sequential& self, const ModulePtr& child) {
        Short([&] {
          LOCKSTEP_REQUIRE(child != nullptr, "Sequential.append: expected a module");
          self.Add(child);
        });
      })
      .def("__len__", &nn::Sequential::size);
  Layer<ModuleList>(m, "ModuleList", "A list of modules that its owner calls (not callable itself).").def(py::init<>());
  Layer<Identity>(m, "Identity", "Returns its input.").def(py::init<>());
  Layer<nn::Linear>(m, "Linear", "y = x W^T + b over the last dimension (any rank).")
      .def(py::init([](int64_t in, int64_t out, bool bias, Generator* g) {
             return Short([&] { return std::make_shared<nn::Linear>(in, out, bias, InitGenerator(g)); });
           }),
           py::arg("in_features"), py::arg("out_features"), py::arg("bias"), py::arg("generator").none(true));
  Layer<nn::Conv2d>(m, "Conv2d", "2-D convolution over [N, C, H, W] (square kernels).")
      .def(py::init([](int64_t in, int64_t out, int64_t k, Pair stride, Pair padding, Pair dilation, int64_t groups,
                       bool bias, Generator* g) {
             return Short([&] {
               auto conv = std::make_shared<nn::Conv2d>(in, out, k, InitGenerator(g), 1, 0, 1, groups, bias);
               LOCKSTEP_REQUIRE(stride.first > 0 && stride.second > 0 && dilation.first > 0 && dilation.second > 0 &&
                                    padding.first >= 0 && padding.second >= 0,
                                "Conv2d: stride and dilation must be >= 1 and padding >= 0");
               conv->options.stride_h = stride.first, conv->options.stride_w = stride.second;
               conv->options.padding_h = padding.first, conv->options.padding_w = padding.second;
               conv->options.dilation_h = dilation.first, conv->options.dilation_w = dilation.second;
               return conv;
             });
           }),
           py::arg("in_channels"), py::arg("out_channels"), py::arg("kernel_size"), py::arg("stride"),
           py::arg("padding"), py::arg("dilation"), py::arg("groups"), py::arg("bias"), py::arg("generator").none(true))
      .def("_options", [](const nn::Conv2d& c) {
        const Conv2dOptions& o = c.options;
        return py::make_tuple(py::make_tuple(o.stride_h, o.stride_w), py::make_tuple(o.padding_h, o.padding_w),
                              py::make_tuple(o.dilation_h, o.dilation_w), o.groups);
      });
  Layer<nn::ConvTranspose2d>(m, "ConvTranspose2d", "2-D transposed convolution over [N, C, H, W] (square kernels).")
      .def(py::init([](int64_t in, int64_t out, int64_t k, Pair stride, Pair padding, Pair output_padding,
                       int64_t groups, bool bias, Pair dilation, Generator* g) {
             return Short([&] {
               auto conv = std::make_shared<nn::ConvTranspose2d>(in, out, k, InitGenerator(g), 1, 0, 0, groups, bias, 1);
               ConvTranspose2dOptions& o = conv->options;
               o.stride_h = stride.first, o.stride_w = stride.second, o.padding_h = padding.first;
               o.padding_w = padding.second, o.output_padding_h = output_padding.first;
               o.output_padding_w = output_padding.second, o.dilation_h = dilation.first, o.dilation_w = dilation.second;
               LOCKSTEP_REQUIRE(o.stride_h > 0 && o.stride_w > 0 && o.dilation_h > 0 && o.dilation_w > 0 &&
                                    o.padding_h >= 0 && o.padding_w >= 0 && o.output_padding_h >= 0 &&
                                    o.output_padding_w >= 0 &&
                                    (o.output_padding_h < o.stride_h || o.output_padding_h < o.dilation_h) &&
                                    (o.output_padding_w < o.stride_w || o.output_padding_w < o.dilation_w),
                                "ConvTranspose2d: stride and dilation must be >= 1, padding >= 0, output_padding "
                                "smaller than the stride or the dilation");
               return conv;
             });
           }),
           py::arg("in_channels"), py::arg("out_channels"), py::arg("kernel_size"), py::arg("stride"),
           py::arg("padding"), py::arg("output_padding"), py::arg("groups"), py::arg("bias"), py::arg("dilation"),
           py::arg("generator").none(true))
      .def("_options", [](const nn::ConvTranspose2d& c) {
        const ConvTranspose2dOptions& o = c.options;
        return py::make_tuple(py::make_tuple(o.stride_h, o.stride_w), py::make_tuple(o.padding_h, o.padding_w),
                              py::make_tuple(o.output_padding_h, o.output_padding_w), o.groups,
                              py::make_tuple(o.dilation_h, o.dilation_w));
      });
  auto pool_options = [](const Pool2dOptions& o) {
    return py::make_tuple(py::make_tuple(o.kernel_h, o.kernel_w), py::make_tuple(o.stride_h, o.stride_w),
                          py::make_tuple(o.padding_h, o.padding_w));
  };
  auto make_pool = [](auto tag, Pair k, Pair s, Pair p) {
    using P = typename decltype(tag)::type;
    LOCKSTEP_REQUIRE(k.first > 0 && k.second > 0 && s.first > 0 && s.second > 0 && p.first >= 0 && p.second >= 0,
                     "pooling: kernel and stride must be >= 1 and padding >= 0");
    auto pool = std::make_shared<P>(k.first);
    pool->options = Pool2dOptions{k.first, k.second, s.first, s.second, p.first, p.second};
    return pool;
  };
  struct MaxTag { using type = nn::MaxPool2d; };
  struct AvgTag { using type = nn::AvgPool2d; };
  Layer<nn::MaxPool2d>(m, "MaxPool2d", "Max pooling over [N, C, H, W].")
      .def(py::init([make_pool](Pair k, Pair s, Pair p, bool ceil_mode) {
             auto pool = make_pool(MaxTag{}, k, s, p);
             pool->options.ceil_mode = ceil_mode;
             return pool;
           }),
           py::arg("kernel_size"), py::arg("stride"), py::arg("padding"), py::arg("ceil_mode") = false)
      .def("_options", [pool_options](const nn::MaxPool2d& p) { return pool_options(p.options); })
      .def_property_readonly("ceil_mode", [](const nn::MaxPool2d& p) { return p.options.ceil_mode; });
  Layer<nn::AdaptiveAvgPool2d>(m, "AdaptiveAvgPool2d",
                               "Average pooling to a fixed output size with PyTorch's windows (0: the input's size).")
      .def(py::init([](int64_t h, int64_t w) {
             return Short([&] {
               LOCKSTEP_REQUIRE(h >= 0 && w >= 0, "AdaptiveAvgPool2d: output sizes must be >= 1 (or None), got "
                                                      << h << "x" << w);
               return std::make_shared<nn::AdaptiveAvgPool2d>(h, w);
             });
           }),
           py::arg("out_h"), py::arg("out_w"))
      .def("_output_size", [](const nn::AdaptiveAvgPool2d& p) { return py::make_tuple(p.out_h(), p.out_w()); });
  Layer<nn::ChannelShuffle>(m, "ChannelShuffle", "Channels regrouped: [N, g, C / g, ...] transposed to [N, C / g, g, ...].")
      .def(py::init([](int64_t groups) {
             return Short([&] {
               LOCKSTEP_REQUIRE(groups >= 1, "ChannelShuffle: groups must be >= 1, got " << groups);
               return std::make_shared<nn::ChannelShuffle>(groups);
             });
           }),
           py::arg("groups"))
      .def_property_readonly("groups", &nn::ChannelShuffle::groups);
  Layer<nn::AvgPool2d>(m, "AvgPool2d", "Average pooling over [N, C, H, W] (padding counted, as PyTorch's default).")
      .def(py::init([make_pool](Pair k, Pair s, Pair p) { return make_pool(AvgTag{}, k, s, p); }))
      .def("_options", [pool_options](const nn::AvgPool2d& p) { return pool_options(p.options); });
  Layer<nn::ReLU>(m, "ReLU", "max(x, 0) (contract rule 6: relu(-0) is +0).").def(py::init<>());
  Layer<nn::GELU>(m, "GELU", "GELU, the exact erf form or the tanh approximation.")
      .def(py::init<bool>(), py::arg("tanh_approximation"));
  Layer<nn::Hardtanh>(m, "Hardtanh", "min(max(x, min_val), max_val); gradient 0 at and beyond the bounds.")
      .def(py::init<float, float>(), py::arg("min_val"), py::arg("max_val"));
  Layer<nn::ReLU6>(m, "ReLU6", "min(max(x, 0), 6); gradient 0 at and beyond 0 and 6 (PyTorch's).").def(py::init<>());
  Layer<nn::SiLU>(m, "SiLU", "x * sigmoid(x).").def(py::init<>());
  Layer<nn::Hardsigmoid>(m, "Hardsigmoid", "min(max(x + 3, 0), 6) / 6.").def(py::init<>());
  Layer<nn::Hardswish>(m, "Hardswish", "x * min(max(x + 3, 0), 6) / 6.").def(py::init<>());
  Layer<nn::Tanh>(m, "Tanh", "tanh, correctly rounded.").def(py::init<>());
  Layer<nn::Sigmoid>(m, "Sigmoid", "1 / (1 + exp(-x)), correctly rounded.").def(py::init<>());
  Layer<nn::Softmax>(m, "Softmax", "softmax over a dimension.").def(py::init<int64_t>(), py::arg("dim"));
  Layer<nn::LogSoftmax>(m, "LogSoftmax", "log-softmax over a dimension.").def(py::init<int64_t>(), py::arg("dim"));
  Layer<nn::Flatten>(m, "Flatten", "Flattens dimensions start_dim..end_dim.")
      .def(py::init<int64_t, int64_t>(), py::arg("start_dim"), py::arg("end_dim"));
  Layer<nn::Dropout>(m, "Dropout", "Inverted dropout with Philox masks from a named stream (docs/python.md).")
      .def(py::init([](double p, Generator* g) {
             return Short([&] {
               LOCKSTEP_REQUIRE(p >= 0 && p < 1, "Dropout: p must be in [0, 1), got " << p);
               return std::make_shared<nn::Dropout>(static_cast<float>(p), g ? *g : NextDropoutGenerator());
             });
           }),
           py::arg("p"), py::arg("generator").none(true))
      .def_property_readonly("generator", [](nn::Dropout& d) { return d.generator(); },
                             "A copy of the generator its masks come from (seed, stream, offset).");
  Layer<nn::StochasticDepth>(m, "StochasticDepth",
                             "torchvision's stochastic depth: rows (or the batch) dropped with Philox masks from a "
                             "Dropout's stream (docs/python.md).")
      .def(py::init([](double p, const std::string& mode, Generator* g) {
             return Short([&] {
               LOCKSTEP_REQUIRE(p >= 0 && p <= 1, "StochasticDepth: p must be in [0, 1], got " << p);
               LOCKSTEP_REQUIRE(mode == "row" || mode == "batch",
                                "StochasticDepth: mode must be 'row' or 'batch', got '" << mode << "'");
               return std::make_shared<nn::StochasticDepth>(static_cast<float>(p), mode == "row",
                                                            g ? *g : NextDropoutGenerator());
             });
           }),
           py::arg("p"), py::arg("mode"), py::arg("generator").none(true))
      .def_property_readonly("generator", [](nn::StochasticDepth& d) { return d.generator(); },
                             "A copy of the generator its masks come from (seed, stream, offset).");
  Layer<nn::LayerNorm>(m, "LayerNorm", "Layer normalisation over the last dimension.")
      .def(py::init<int64_t, float, bool, bool>(), py::arg("features"), py::arg("eps"), py::arg("affine"),
           py::arg("bias"));
  py::class_<nn::BatchNorm, nn::Module, std::shared_ptr<nn::BatchNorm>>(m, "_BatchNorm", py::dynamic_attr());
  py::class_<BatchNorm1d, nn::BatchNorm, std::shared_ptr<BatchNorm1d>>(m, "BatchNorm1d", py::dynamic_attr(),
                                                                       "Batch normalisation of [N, C].")
      .def(py::init<int64_t, float, float>(), py::arg("num_features"), py::arg("eps"), py::arg("momentum"));
  py::class_<BatchNorm2d, nn::BatchNorm, std::shared_ptr<BatchNorm2d>>(m, "BatchNorm2d", py::dynamic_attr(),
                                                                       "Batch normalisation of [N, C, H, W].")
      .def(py::init<int64_t, float, float>(), py::arg("num_features"), py::arg("eps"), py::arg("momentum"));
  Layer<nn::Embedding>(m, "Embedding", "A lookup table: int64 indices [...] -> [..., embedding_dim].")
      .def(py::init([](int64_t num, int64_t dim, Generator* g) {
             return Short([&] {
               LOCKSTEP_REQUIRE(num > 0 && dim > 0, "Embedding: sizes must be positive, got " << num << " x " << dim);
               return std::make_shared<nn::Embedding>(num, dim, InitGenerator(g));
             });
           }),
           py::arg("num_embeddings"), py::arg("embedding_dim"), py::arg("generator").none(true));
}

}  // namespace python
}  // namespace lockstep
