// lockstep._C.optim: SGD, Adam and AdamW over named parameter groups (core/optim/optimizer.h).
// lockstep/optim/__init__.py turns PyTorch's arguments (an iterable of tensors, of (name, tensor)
// pairs or of group dicts; betas as a pair) into the groups taken here.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bindings/python/src/bindings.h"
#include "bindings/python/src/engine.h"
#include "core/error.h"
#include "core/optim/optimizer.h"

namespace lockstep {
namespace python {

namespace {

using Groups = std::vector<std::pair<std::vector<std::pair<std::string, Tensor>>, double>>;

std::vector<optim::ParamGroup> ToGroups(const Groups& groups) {
  std::vector<optim::ParamGroup> out;
  for (const auto& [params, weight_decay] : groups) out.push_back({params, static_cast<float>(weight_decay)});
  return out;
}

}  // namespace

void BindOptim(py::module_& m) {
  py::class_<optim::Optimizer, std::shared_ptr<optim::Optimizer>>(m, "Optimizer", "Base class of the optimizers.")
      .def("_step", [](optim::Optimizer& o) { Long([&] { o.Step(); }); })
      .def("_zero_grad", [](optim::Optimizer& o) { Short([&] { o.ZeroGrad(); }); })
      .def_property("lr", &optim::Optimizer::lr, [](optim::Optimizer& o, double lr) {
        Short([&] {
          const float v = static_cast<float>(lr);
          LOCKSTEP_REQUIRE(v == v && v - v == 0.0f && v >= 0.0f, "optimizer: lr must be a finite number >= 0, got " << lr);
          o.set_lr(v);
        });
      }, "The learning rate (float32), one for every group.")
      .def_property_readonly("step_count", &optim::Optimizer::step_count, "Steps taken so far.")
      .def("_state", [](const optim::Optimizer& o) {
        py::list out;
        for (const auto& [name, t] : Short([&] { return o.State(); })) out.append(py::make_tuple(name, t));
        return out;
      })
      .def("_load_state", [](optim::Optimizer& o, const std::vector<std::pair<std::string, Tensor>>& state, int64_t step) {
        Long([&] { o.LoadState(state, step); });
      })
      .def("_require_parameters_of", [](const optim::Optimizer& o, const nn::Module& model) {
        Short([&] { o.RequireParametersOf(model, "optimizer"); });
      });

  py::class_<optim::Sgd, optim::Optimizer, std::shared_ptr<optim::Sgd>>(m, "SGD")
      .def(py::init([](const Groups& groups, double lr, double momentum, double dampening, bool nesterov) {
        return Short([&] {
          optim::SgdOptions o;
          o.lr = static_cast<float>(lr), o.momentum = static_cast<float>(momentum);
          o.dampening = static_cast<float>(dampening), o.nesterov = nesterov;
          return std::make_shared<optim::Sgd>(ToGroups(groups), o);
        });
      }), py::arg("groups"), py::arg("lr"), py::arg("momentum"), py::arg("dampening"), py::arg("nesterov"));
  py::class_<optim::Adam, optim::Optimizer, std::shared_ptr<optim::Adam>>(m, "Adam")
      .def(py::init([](const Groups& groups, double lr, double beta1, double beta2, double eps, bool decoupled) {
        return Short([&] {
          optim::AdamOptions o;
          o.lr = static_cast<float>(lr), o.beta1 = static_cast<float>(beta1), o.beta2 = static_cast<float>(beta2);
          o.eps = static_cast<float>(eps), o.decoupled_weight_decay = decoupled;
          return std::make_shared<optim::Adam>(ToGroups(groups), o);
        });
      }), py::arg("groups"), py::arg("lr"), py::arg("beta1"), py::arg("beta2"), py::arg("eps"), py::arg("decoupled"));
}

}  // namespace python
}  // namespace lockstep
