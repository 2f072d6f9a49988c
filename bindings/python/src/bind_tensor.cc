// lockstep._C.Tensor: the engine's Tensor (a shared view; copies share data and history, like
// Python references to one torch.Tensor), its properties, views, arithmetic operators and autograd
// entry points, and the creation functions. The pure-Python layer (lockstep/_tensor.py) adds
// indexing, printing and PyTorch's argument conventions on top.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings/python/src/bindings.h"
#include "bindings/python/src/engine.h"
#include "bindings/python/src/numpy_bridge.h"
#include "core/autograd.h"
#include "core/error.h"
#include "core/nn/init.h"
#include "core/ops.h"

namespace lockstep {
namespace python {

namespace {

int64_t Work(const Tensor& a, const Tensor& b) { return a.numel() + b.numel(); }

// `a op b` for tensors and Python numbers on either side; numbers round to float32 once, as
// PyTorch rounds a Python scalar to a float32 tensor's type. The scalar forms are exact rewrites
// (a - s is a + (-s); s - a is (-a) + s), so they give the same bits as the tensor forms.
template <class Cls>
void BindArithmetic(Cls& cls) {
  using T = const Tensor&;
  auto scalar = [](double s) { return Tensor::Scalar(static_cast<float>(s)); };
  cls.def("__add__", [](T a, T b) { return Sized(Work(a, b), [&] { return Add(a, b); }); }, py::is_operator())
      .def("__add__", [](T a, double s) { return Sized(a.numel(), [&] { return AddScalar(a, static_cast<float>(s)); }); },
           py::is_operator())
      .def("__radd__", [](T a, double s) { return Sized(a.numel(), [&] { return AddScalar(a, static_cast<float>(s)); }); },
           py::is_operator())
      .def("__sub__", [](T a, T b) { return Sized(Work(a, b), [&] { return Sub(a, b); }); }, py::is_operator())
      .def("__sub__", [](T a, double s) { return Sized(a.numel(), [&] { return AddScalar(a, -static_cast<float>(s)); }); },
           py::is_operator())
      .def("__rsub__",
           [](T a, double s) { return Sized(a.numel(), [&] { return AddScalar(Neg(a), static_cast<float>(s)); }); },
           py::is_operator())
      .def("__mul__", [](T a, T b) { return Sized(Work(a, b), [&] { return Mul(a, b); }); }, py::is_operator())
      .def("__mul__", [](T a, double s) { return Sized(a.numel(), [&] { return MulScalar(a, static_cast<float>(s)); }); },
           py::is_operator())
      .def("__rmul__", [](T a, double s) { return Sized(a.numel(), [&] { return MulScalar(a, static_cast<float>(s)); }); },
           py::is_operator())
      .def("__truediv__", [](T a, T b) { return Sized(Work(a, b), [&] { return Div(a, b); }); }, py::is_operator())
      .def("__truediv__", [scalar](T a, double s) { return Sized(a.numel(), [&] { return Div(a, scalar(s)); }); },
           py::is_operator())
      .def("__rtruediv__", [scalar](T a, double s) { return Sized(a.numel(), [&] { return Div(scalar(s), a); }); },
           py::is_operator())
      .def("__neg__", [](T a) { return Sized(a.numel(), [&] { return Neg(a); }); })
      .def("__pow__", [](T a, double e) { return Sized(a.numel(), [&] { return Pow(a, e); }); }, py::is_operator())
      .def("__matmul__", [](T a, T b) { return Long([&] { return Matmul(a, b); }); }, py::is_operator())
      // Comparisons give 1.0 / 0.0 (float32), as lockstep's Equal and Greater do.
      .def("__eq__", [](T a, T b) { return Sized(Work(a, b), [&] { return Equal(a, b); }); }, py::is_operator())
      .def("__eq__", [scalar](T a, double s) { return Sized(a.numel(), [&] { return Equal(a, scalar(s)); }); },
           py::is_operator())
      .def("__ne__", [](T a, T b) { return Sized(Work(a, b), [&] { return AddScalar(Neg(Equal(a, b)), 1.0f); }); },
           py::is_operator())
      .def("__ne__",
           [scalar](T a, double s) { return Sized(a.numel(), [&] { return AddScalar(Neg(Equal(a, scalar(s))), 1.0f); }); },
           py::is_operator())
      .def("__gt__", [](T a, T b) { return Sized(Work(a, b), [&] { return Greater(a, b); }); }, py::is_operator())
      .def("__gt__", [scalar](T a, double s) { return Sized(a.numel(), [&] { return Greater(a, scalar(s)); }); },
           py::is_operator())
      .def("__lt__", [](T a, T b) { return Sized(Work(a, b), [&] { return Greater(b, a); }); }, py::is_operator())
      .def("__lt__", [scalar](T a, double s) { return Sized(a.numel(), [&] { return Greater(scalar(s), a); }); },
           py::is_operator())
      .def("__hash__", [](const py::object& self) { return py::hash(py::int_(reinterpret_cast<uintptr_t>(self.ptr()))); });
}

py::object Item(const Tensor& t) {
  ShortCall call;
  LOCKSTEP_REQUIRE(t.numel() == 1, "item: expected a tensor with one element, got " << ShapeString(t.shape()));
  if (t.dtype() == DType::kFloat32) return py::float_(t.ToVector()[0]);
  return py::int_(t.ToInt64Vector()[0]);
}

// In place, outside autograd (as PyTorch's in-place updates of leaves inside no_grad): refused when
// history is being recorded for a tensor that takes part in it.
void CopyInto(const Tensor& dst, const Tensor& src) {
  LOCKSTEP_REQUIRE_STATE(!GradEnabled() || (!dst.requires_grad() && !src.requires_grad()),
                         "copy_: an in-place write into a tensor that requires grad (or from one) would escape "
                         "autograd; do it inside lockstep.no_grad()");
  Sized(dst.numel(), [&] { dst.CopyFrom(src); });
}

Tensor Random(const Shape& shape, Generator* gen, bool normal) {
  return Sized(NumElements(shape), [&] {
    Tensor t = Tensor::Zeros(shape);
    Generator& g = gen ? *gen : DefaultGenerator("init");
    if (normal) {
      nn::NormalInit(t, 0.0f, 1.0f, g);
    } else {
      nn::UniformInit(t, 0.0f, 1.0f, g);
    }
    return t;
  });
}

}  // namespace

void BindTensor(py::module_& m) {
  py::enum_<DType>(m, "dtype", "A tensor's element type: float32 (values), int32 and int64 (indices).")
      .value("float32", DType::kFloat32)
      .value("int32", DType::kInt32)
      .value("int64", DType::kInt64);

  py::class_<Node, std::shared_ptr<Node>>(m, "Node", "The autograd node that computed a tensor (its grad_fn).")
      .def("name", [](const Node& n) { return std::string(OpKindName(n.kind)); }, "The op's name.")
      .def("__repr__", [](const Node& n) { return "<" + std::string(OpKindName(n.kind)) + " backward>"; });

  py::class_<Tensor> cls(m, "Tensor", "A float32, int32 or int64 tensor: a strided view of shared storage.");
  cls.def(py::init([](const Tensor& t) { return t; }), py::arg("other"), "Another reference to the same tensor.")
      .def_property_readonly("shape", [](const Tensor& t) { return ShapeTuple(t.shape()); })
      .def_property_readonly("dtype", &Tensor::dtype)
      .def_property_readonly("ndim", &Tensor::dim)
      .def_property_readonly("device", [](const Tensor& t) { return t.device().ToString(); })
      .def("dim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("stride", [](const Tensor& t) { return ShapeTuple(t.strides()); })
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("item", &Item, "The single element as a Python number.")
      .def("_numpy_view", [](const Tensor& t) { return Short([&] { return ArrayView(t); }); })
      .def("_same", [](const Tensor& a, const Tensor& b) { return a.same(b); })
      .def("_storage_id", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.impl()->storage.get()); })
      // Views and copies.
      .def("contiguous", [](const Tensor& t) { return Sized(t.numel(), [&] { return t.Contiguous(); }); })
      .def("clone", [](const Tensor& t) { return Sized(t.numel(), [&] { return t.Clone(); }); })
      .def("detach", [](const Tensor& t) { return Short([&] { return t.Detach(); }); })
      .def("_reshape", [](const Tensor& t, const Shape& s) { return Sized(t.numel(), [&] { return t.Reshape(s); }); })
      .def("_view", [](const Tensor& t, const Shape& s) { return Short([&] { return t.View(s); }); })
      .def("transpose", [](const Tensor& t, int64_t a, int64_t b) { return Short([&] { return t.Transpose(a, b); }); },
           py::arg("dim0"), py::arg("dim1"))
      .def("_permute", [](const Tensor& t, const std::vector<int64_t>& d) { return Short([&] { return t.Permute(d); }); })
      .def("_slice",
           [](const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step) {
             return Short([&] { return t.Slice(dim, start, end, step); });
           })
      .def("_expand", [](const Tensor& t, const Shape& s) { return Short([&] { return t.Expand(s); }); })
      .def("flatten", [](const Tensor& t, int64_t s, int64_t e) { return Sized(t.numel(), [&] { return t.Flatten(s, e); }); },
           py::arg("start_dim") = 0, py::arg("end_dim") = -1)
      .def("_to_dtype", [](const Tensor& t, DType d) { return Sized(t.numel(), [&] { return t.To(d); }); })
      .def("_to_device",
           [](const Tensor& t, const std::string& d) { return Long([&] { return t.ToDevice(Device::Parse(d)); }); })
      .def("_copy_from", &CopyInto)
      // Autograd.
      .def_property(
          "requires_grad", &Tensor::requires_grad,
          [](Tensor& t, bool on) { Short([&] { t.RequiresGrad(on); }); })
      .def_property(
          "grad",
          [](const Tensor& t) -> py::object {
            const Tensor g = Short([&] { return t.grad(); });
            return g.defined() ? py::cast(g) : py::none();
          },
          [](Tensor& t, const py::object& g) {
            if (g.is_none()) return Short([&] { t.ZeroGrad(); });
            const Tensor grad = g.cast<Tensor>();
            Short([&] {
              LOCKSTEP_REQUIRE(grad.shape() == t.shape() && grad.dtype() == t.dtype(),
                               "grad: expected a " << DTypeString(t.dtype()) << " tensor of shape " << ShapeString(t.shape())
                                                   << ", got " << DTypeString(grad.dtype()) << " "
                                                   << ShapeString(grad.shape()));
              t.SetGrad(grad);
            });
          })
      .def_property_readonly("grad_fn",
                             [](const Tensor& t) -> py::object {
                               if (!t.grad_fn()) return py::none();
                               return py::cast(t.grad_fn());
                             })
      .def_property_readonly("is_leaf", [](const Tensor& t) { return !t.grad_fn(); })
      .def(
          "_backward",
          [](const Tensor& t, const py::object& gradient, bool retain_graph) {
            const Tensor g = gradient.is_none() ? Tensor() : gradient.cast<Tensor>();
            Long([&] { t.Backward(g, retain_graph); });
          },
          py::arg("gradient"), py::arg("retain_graph"));
  BindArithmetic(cls);

  m.def("from_numpy", &TensorFromArray, py::arg("array"),
        "A tensor holding a copy of a float32, int32 or int64 NumPy array (any strides; read-only arrays too).");
  m.def("_zeros", [](const Shape& s, DType d) { return Sized(NumElements(s), [&] { return Tensor::Zeros(s, d); }); });
  m.def("_ones", [](const Shape& s) { return Sized(NumElements(s), [&] { return Tensor::Ones(s); }); });
  m.def("_full", [](const Shape& s, double v) {
    return Sized(NumElements(s), [&] { return Tensor::Full(s, static_cast<float>(v)); });
  });
  m.def("_arange", [](int64_t end, DType d) { return Sized(end, [&] { return Tensor::Arange(end, d); }); });
  m.def("_randn", [](const Shape& s, Generator* g) { return Random(s, g, true); }, py::arg("shape"),
        py::arg("generator").none(true));
  m.def("_rand", [](const Shape& s, Generator* g) { return Random(s, g, false); }, py::arg("shape"),
        py::arg("generator").none(true));
}

}  // namespace python
}  // namespace lockstep
