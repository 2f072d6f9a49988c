// The functional API (core/ops.h) for lockstep.nn.functional and the tensor methods: each op runs
// under the engine lock, without the GIL when it is large (engine.h).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "bindings/python/src/bindings.h"
#include "bindings/python/src/engine.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/optim/optimizer.h"

namespace lockstep {
namespace python {

namespace {

using T = const Tensor&;
using OptT = const std::optional<Tensor>&;
using Pair = std::pair<int64_t, int64_t>;

Tensor Or(OptT t) { return t ? *t : Tensor(); }

Reduction ReductionOf(const std::string& r, const char* op) {
  if (r == "mean") return Reduction::kMean;
  if (r == "sum") return Reduction::kSum;
  if (r == "none") return Reduction::kNone;
  LOCKSTEP_REQUIRE(false, op << ": reduction must be 'mean', 'sum' or 'none', got '" << r << "'");
  return Reduction::kMean;
}

template <Tensor (*F)(const Tensor&)>
Tensor Unary(T a) {
  return Sized(a.numel(), [&] { return F(a); });
}

template <Tensor (*F)(const Tensor&, const Tensor&)>
Tensor Binary(T a, T b) {
  return Sized(a.numel() + b.numel(), [&] { return F(a, b); });
}

}  // namespace

void BindOps(py::module_& m) {
  m.def("relu", &Unary<Relu>, "max(x, 0); relu(-0) is +0 (contract rule 6).");
  m.def("tanh", &Unary<Tanh>, "tanh, correctly rounded.");
  m.def("sigmoid", &Unary<Sigmoid>, "1 / (1 + exp(-x)), correctly rounded.");
  m.def("exp", &Unary<Exp>, "exp, correctly rounded.");
  m.def("log", &Unary<Log>, "Natural logarithm, correctly rounded.");
  m.def("floor", &Unary<Floor>, "Rounds toward -inf (exact; not differentiable).");
  m.def("ceil", &Unary<Ceil>, "Rounds toward +inf (exact; not differentiable).");
  m.def("round", &Unary<Round>, "Rounds to the nearest integer, ties to even (exact; not differentiable).");
  m.def("sin", &Unary<Sin>, "Sine (radians), correctly rounded.");
  m.def("cos", &Unary<Cos>, "Cosine (radians), correctly rounded.");
  m.def("tan", &Unary<Tan>, "Tangent (radians), correctly rounded.");
  m.def("asin", &Unary<Asin>, "Inverse sine, correctly rounded.");
  m.def("acos", &Unary<Acos>, "Inverse cosine, correctly rounded.");
  m.def("atan", &Unary<Atan>, "Inverse tangent, correctly rounded.");
  m.def("sinh", &Unary<Sinh>, "Hyperbolic sine, correctly rounded.");
  m.def("cosh", &Unary<Cosh>, "Hyperbolic cosine, correctly rounded.");
  m.def("asinh", &Unary<Asinh>, "Inverse hyperbolic sine, correctly rounded.");
  m.def("acosh", &Unary<Acosh>, "Inverse hyperbolic cosine, correctly rounded.");
  m.def("atanh", &Unary<Atanh>, "Inverse hyperbolic tangent, correctly rounded.");
  m.def("sqrt", &Unary<Sqrt>, "Square root (IEEE).");
  m.def("neg", &Unary<Neg>, "-x.");
  m.def("gelu", [](T a, const std::string& approximate) {
    LOCKSTEP_REQUIRE(approximate == "none" || approximate == "tanh",
                     "gelu: approximate must be 'none' or 'tanh', got '" << approximate << "'");
    return Sized(a.numel(), [&] { return approximate == "tanh" ? GeluTanh(a) : GeluErf(a); });
  }, py::arg("input"), py::arg("approximate") = "none");
  m.def("add", &Binary<Add>, "a + b with NumPy broadcasting.");
  m.def("sub", &Binary<Sub>, "a - b with NumPy broadcasting.");
  m.def("mul", &Binary<Mul>, "a * b with NumPy broadcasting.");
  m.def("div", &Binary<Div>, "a / b with NumPy broadcasting.");
  m.def("fmod", &Binary<Fmod>, "The remainder of a / b with a's sign (torch.fmod), exact; NumPy broadcasting.");
  m.def("remainder", &Binary<Remainder>,
        "The remainder of a / b with b's sign (torch.remainder, Python's %): fmod plus b where the signs differ.");
  m.def("maximum", &Binary<Maximum>, "Elementwise maximum (NaN propagates, -0 < +0); not differentiable.");
  m.def("minimum", &Binary<Minimum>, "Elementwise minimum (NaN propagates, -0 < +0); not differentiable.");
  m.def("eq", &Binary<Equal>, "1.0 where a == b, else 0.0 (float32); not differentiable.");
  m.def("gt", &Binary<Greater>, "1.0 where a > b, else 0.0 (float32); not differentiable.");
  m.def("pow", [](T a, double e) { return Sized(a.numel(), [&] { return Pow(a, e); }); }, py::arg("input"),
        py::arg("exponent"), "x ** exponent for the exponents computed correctly rounded: -4..4 and 0.5.");
  m.def("masked_fill", [](T x, T mask, double v) {
    return Sized(x.numel(), [&] { return MaskedFill(x, mask, static_cast<float>(v)); });
  });
  m.def("clamp", [](T x, double lo, double hi) {
    return Sized(x.numel(), [&] { return Clamp(x, static_cast<float>(lo), static_cast<float>(hi)); });
  }, py::arg("input"), py::arg("min"), py::arg("max"),
        "x < min ? min : x, then > max ? max : it, in one pass (torch.clamp's values and gradient; NaN kept; "
        "+-inf for no bound).");

  m.def("sum", [](T a, std::optional<int64_t> dim, bool keepdim) {
    return Sized(a.numel(), [&] { return dim ? Sum(a, *dim, keepdim) : Sum(a); });
  }, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false,
        "Sum of every element, or along dim, in the canonical order (contract rule 3).");
  m.def("mean", [](T a, const std::optional<std::variant<int64_t, std::vector<int64_t>>>& dim, bool keepdim) {
    return Sized(a.numel(), [&] {
      if (!dim) return Mean(a);
      if (const int64_t* d = std::get_if<int64_t>(&*dim)) return Mean(a, *d, keepdim);
      return Mean(a, std::get<std::vector<int64_t>>(*dim), keepdim);
    });
  }, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false,
        "Mean of every element, or along dim (an int, or a list of dims: merged last, then one canonical mean): "
        "the canonical sum divided by the count.");
  m.def("var", [](T a, int64_t dim, int64_t correction, bool keepdim) {
    return Sized(a.numel(), [&] { return Variance(a, dim, correction, keepdim); });
  }, py::arg("input"), py::arg("dim"), py::arg("correction") = 1, py::arg("keepdim") = false,
        "Variance along dim (two passes); not differentiable.");
  m.def("amax", [](T a, int64_t dim, bool keepdim) { return Sized(a.numel(), [&] { return Max(a, dim, keepdim); }); },
        py::arg("input"), py::arg("dim"), py::arg("keepdim") = false, "Maximum along dim; not differentiable.");
  m.def("argmax", [](T a, int64_t dim, bool keepdim) { return Sized(a.numel(), [&] { return Argmax(a, dim, keepdim); }); },
        py::arg("input"), py::arg("dim"), py::arg("keepdim") = false,
        "Index (int64) of the first maximum along dim (NaN first if any).");

  m.def("matmul", [](T a, T b) { return Long([&] { return Matmul(a, b); }); }, py::arg("input"), py::arg("other"),
        "[..., m, k] @ [..., k, n] (equal batch dimensions) or @ [k, n]: each output sums in increasing k.");
  m.def("linear", [](T x, T w, OptT b) { return Long([&] { return Linear(x, w, Or(b)); }); }, py::arg("input"),
        py::arg("weight"), py::arg("bias") = py::none());
  m.def("cat", [](const std::vector<Tensor>& ts, int64_t dim) {
    int64_t n = 0;
    for (const Tensor& t : ts) n += t.numel();
    return Sized(n, [&] { return Concat(ts, dim); });
  }, py::arg("tensors"), py::arg("dim") = 0, "Tensors joined along an existing dimension.");
  m.def("softmax", [](T x, int64_t dim) { return Sized(x.numel(), [&] { return Softmax(x, dim); }); }, py::arg("input"),
        py::arg("dim"), "softmax along dim: exp(x - max) / sum (contract rule 5).");
  m.def("log_softmax", [](T x, int64_t dim) { return Sized(x.numel(), [&] { return LogSoftmax(x, dim); }); },
        py::arg("input"), py::arg("dim"), "log-softmax along dim: (x - max) - log(sum(exp(x - max))).");

  m.def("conv2d", [](T x, T w, OptT b, Pair stride, Pair padding, Pair dilation, int64_t groups) {
    Conv2dOptions o{stride.first, stride.second, padding.first, padding.second, dilation.first, dilation.second, groups};
    return Long([&] { return Conv2d(x, w, Or(b), o); });
  });
  m.def("conv_transpose2d", [](T x, T w, OptT b, Pair stride, Pair padding, Pair output_padding, int64_t groups,
                               Pair dilation) {
    ConvTranspose2dOptions o;
    o.stride_h = stride.first, o.stride_w = stride.second, o.padding_h = padding.first, o.padding_w = padding.second;
    o.output_padding_h = output_padding.first, o.output_padding_w = output_padding.second;
    o.dilation_h = dilation.first, o.dilation_w = dilation.second, o.groups = groups;
    return Long([&] { return ConvTranspose2d(x, w, Or(b), o); });
  });
  m.def("max_pool2d", [](T x, Pair kernel, Pair stride, Pair padding, bool ceil_mode) {
    Pool2dOptions o{kernel.first, kernel.second, stride.first, stride.second, padding.first, padding.second};
    o.ceil_mode = ceil_mode;
    return Sized(x.numel(), [&] { return MaxPool2d(x, o); });
  }, py::arg("input"), py::arg("kernel"), py::arg("stride"), py::arg("padding"), py::arg("ceil_mode") = false);
  m.def("adaptive_avg_pool2d", [](T x, int64_t h, int64_t w) {
    return Sized(x.numel(), [&] { return AdaptiveAvgPool2d(x, h, w); });
  }, py::arg("input"), py::arg("out_h"), py::arg("out_w"),
        "PyTorch's adaptive average pooling windows, each the mean of its elements.");
  m.def("channel_shuffle", [](T x, int64_t groups) { return Sized(x.numel(), [&] { return ChannelShuffle(x, groups); }); },
        py::arg("input"), py::arg("groups"));
  m.def("hardtanh", [](T x, double lo, double hi) {
    return Sized(x.numel(), [&] { return Hardtanh(x, static_cast<float>(lo), static_cast<float>(hi)); });
  }, py::arg("input"), py::arg("min_val") = -1.0, py::arg("max_val") = 1.0,
        "min(max(x, min_val), max_val); gradient 0 at and beyond the bounds (PyTorch's).");
  m.def("relu6", &Unary<Relu6>, "hardtanh(x, 0, 6).");
  m.def("silu", &Unary<Silu>, "x * sigmoid(x).");
  m.def("hardsigmoid", &Unary<Hardsigmoid>, "min(max(x + 3, 0), 6) / 6.");
  m.def("hardswish", &Unary<Hardswish>, "x * min(max(x + 3, 0), 6) / 6.");
  // Without a generator: the default stream "dropout" under manual_seed's seed (as dropout).
  m.def("stochastic_depth", [](T x, double p, const std::string& mode, bool training, Generator* g) {
    return Sized(x.numel(), [&] {
      LOCKSTEP_REQUIRE(p >= 0 && p <= 1, "stochastic_depth: p must be in [0, 1], got " << p);
      LOCKSTEP_REQUIRE(mode == "row" || mode == "batch", "stochastic_depth: mode must be 'row' or 'batch', got '" << mode << "'");
      LOCKSTEP_REQUIRE(x.dim() >= 1, "stochastic_depth: expected an input of rank >= 1");
      if (!training || p == 0) return x;
      Generator& gen = g ? *g : DefaultGenerator("dropout");
      const uint64_t offset = gen.Take(mode == "row" ? static_cast<uint64_t>(x.size(0)) : 1);
      return StochasticDepth(x, static_cast<float>(p), mode == "row", true, gen.seed, gen.stream, offset);
    });
  }, py::arg("input"), py::arg("p"), py::arg("mode"), py::arg("training"), py::arg("generator").none(true));
  m.def("avg_pool2d", [](T x, Pair kernel, Pair stride, Pair padding) {
    Pool2dOptions o{kernel.first, kernel.second, stride.first, stride.second, padding.first, padding.second};
    return Sized(x.numel(), [&] { return AvgPool2d(x, o); });
  });
  // Without a generator: the default stream "dropout" under manual_seed's seed.
  m.def("dropout", [](T x, double p, bool training, Generator* g) {
    return Sized(x.numel(), [&] {
      LOCKSTEP_REQUIRE(p >= 0 && p < 1, "dropout: p must be in [0, 1), got " << p);
      if (!training || p == 0) return x;
      Generator& gen = g ? *g : DefaultGenerator("dropout");
      const uint64_t offset = gen.Take(static_cast<uint64_t>(x.numel()));
      return Dropout(x, static_cast<float>(p), true, gen.seed, gen.stream, offset);
    });
  }, py::arg("input"), py::arg("p"), py::arg("training"), py::arg("generator").none(true));
  m.def("layer_norm", [](T x, int64_t dims, OptT w, OptT b, double eps) {
    return Sized(x.numel(), [&] { return LayerNorm(x, dims, Or(w), Or(b), static_cast<float>(eps)); });
  });
  // activation: "relu", "clamp", "silu" or "hardtanh" (min_val, max_val: the bounds) applied inside
  // the normalisation's passes, the bits of the op after it (core/ops.h); "" for none.
  m.def("batch_norm", [](T x, OptT rm, OptT rv, OptT w, OptT b, bool training, double momentum, double eps,
                         const std::string& activation, double min_val, double max_val) {
    BatchNormActivation after;
    using Kind = BatchNormActivation::Kind;
    const std::pair<const char*, Kind> kinds[] = {{"", Kind::kNone},      {"relu", Kind::kRelu}, {"clamp", Kind::kClamp},
                                                  {"silu", Kind::kSilu}, {"hardtanh", Kind::kHardtanh}};
    bool known = false;
    for (const auto& [name, kind] : kinds) {
      if (activation == name) {
        after.kind = kind;
        known = true;
      }
    }
    LOCKSTEP_REQUIRE_KIND(ErrorKind::kArgument, known, "batch_norm: activation must be '', 'relu', 'clamp', 'silu' or "
                                                       "'hardtanh', got '" << activation << "'");
    after.lo = static_cast<float>(min_val);
    after.hi = static_cast<float>(max_val);
    return Sized(x.numel(), [&] {
      return BatchNorm(x, Or(rm), Or(rv), Or(w), Or(b), training, static_cast<float>(momentum), static_cast<float>(eps),
                       after);
    });
  }, py::arg("input"), py::arg("running_mean").none(true), py::arg("running_var").none(true),
        py::arg("weight").none(true), py::arg("bias").none(true), py::arg("training"), py::arg("momentum"),
        py::arg("eps"), py::arg("activation") = "", py::arg("min_val") = 0.0, py::arg("max_val") = 0.0);
  m.def("embedding", [](T idx, T w) { return Sized(idx.numel() * (w.dim() == 2 ? w.size(1) : 1), [&] { return Embedding(idx, w); }); });
  m.def("nll_loss", [](T logp, T target, const std::string& reduction, int64_t ignore_index) {
    return Sized(logp.numel(), [&] { return NllLoss(logp, target, ReductionOf(reduction, "nll_loss"), ignore_index); });
  }, py::arg("input"), py::arg("target"), py::arg("reduction") = "mean", py::arg("ignore_index") = -100);
  m.def("cross_entropy",
        [](T logits, T target, const std::string& reduction, int64_t ignore_index, double smoothing) {
          return Sized(logits.numel(), [&] {
            return CrossEntropy(logits, target, ReductionOf(reduction, "cross_entropy"), ignore_index,
                                static_cast<float>(smoothing));
          });
        },
        py::arg("input"), py::arg("target"), py::arg("reduction") = "mean", py::arg("ignore_index") = -100,
        py::arg("label_smoothing") = 0.0);
  m.def("mse_loss", [](T input, T target, const std::string& reduction) {
    return Sized(input.numel(), [&] { return MseLoss(input, target, ReductionOf(reduction, "mse_loss")); });
  }, py::arg("input"), py::arg("target"), py::arg("reduction") = "mean");

  m.def("clip_grad_norm", [](const std::vector<Tensor>& params, double max_norm) {
    return Long([&] { return optim::ClipGradNorm(params, static_cast<float>(max_norm)); });
  }, py::arg("parameters"), py::arg("max_norm"));
  m.def("step_lr", &optim::StepLr, py::arg("base_lr"), py::arg("epoch"), py::arg("step_size"), py::arg("gamma"));
  m.def("cosine_with_warmup", &optim::CosineWithWarmup, py::arg("base_lr"), py::arg("min_lr"), py::arg("step"),
        py::arg("warmup"), py::arg("decay_steps"));
}

}  // namespace python
}  // namespace lockstep
