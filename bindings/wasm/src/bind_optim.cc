// Optimizers for JavaScript: SGD and Adam/AdamW over a list of parameter tensors. The tensors share
// storage with the module's parameters, so each step updates the module in place.
#include <emscripten/bind.h>

#include <memory>
#include <string>

#include "bindings/wasm/src/js_boundary.h"
#include "core/error.h"
#include "core/optim/optimizer.h"

namespace lockstep {
namespace wasm {
namespace {

using emscripten::val;
using OptimizerPtr = std::shared_ptr<optim::Optimizer>;

// The parameters in the order given, each a tensor (named "0", "1", ...) or a [name, tensor] pair
// (a module's parameters, named as the module names them: the optimizer state, and so a training
// state or receipt, then has the names the native trainers give it). The names label optimizer state.
nn::NamedTensors ParamsFromJs(const val& params, const char* what) {
  const val is_array = val::global("Array")["isArray"];
  LOCKSTEP_REQUIRE(is_array(params).as<bool>(), what << ": expected an array of tensors");
  nn::NamedTensors named;
  const size_t n = params["length"].as<size_t>();
  LOCKSTEP_REQUIRE(n > 0, what << ": the parameter list is empty");
  for (size_t i = 0; i < n; ++i) {
    const bool pair = is_array(params[i]).as<bool>();
    const Tensor t = pair ? params[i][1].as<Tensor>() : params[i].as<Tensor>();
    LOCKSTEP_REQUIRE(t.dtype() == DType::kFloat32, what << ": parameter " << i << " is not float32");
    LOCKSTEP_REQUIRE(t.requires_grad(), what << ": parameter " << i << " does not require gradients");
    named.emplace_back(pair ? params[i][0].as<std::string>() : std::to_string(i), t);
  }
  return named;
}

float PositiveRate(double lr, const char* what) {
  LOCKSTEP_REQUIRE(lr >= 0 && lr < 1e30, what << ": learning rate must be a finite number >= 0, got " << lr);
  return static_cast<float>(lr);
}

OptimizerPtr MakeSgd(const val& params, double lr, double momentum, double dampening, double weight_decay,
                     bool nesterov) {
  return JsBoundary([&]() -> OptimizerPtr {
    optim::SgdOptions o;
    o.lr = PositiveRate(lr, "SGD");
    o.momentum = FiniteFromJs(momentum, "SGD momentum");
    o.dampening = FiniteFromJs(dampening, "SGD dampening");
    o.weight_decay = FiniteFromJs(weight_decay, "SGD weightDecay");
    o.nesterov = nesterov;
    return std::make_shared<optim::Sgd>(ParamsFromJs(params, "SGD"), o);
  });
}

OptimizerPtr MakeAdam(const val& params, double lr, double beta1, double beta2, double eps, double weight_decay,
                      bool decoupled) {
  return JsBoundary([&]() -> OptimizerPtr {
    const char* what = decoupled ? "AdamW" : "Adam";
    optim::AdamOptions o;
    o.lr = PositiveRate(lr, what);
    LOCKSTEP_REQUIRE(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1,
                     what << ": betas must be in [0, 1), got [" << beta1 << ", " << beta2 << "]");
    o.beta1 = static_cast<float>(beta1);
    o.beta2 = static_cast<float>(beta2);
    o.eps = FiniteFromJs(eps, "eps");
    o.weight_decay = FiniteFromJs(weight_decay, "weightDecay");
    o.decoupled_weight_decay = decoupled;
    return std::make_shared<optim::Adam>(ParamsFromJs(params, what), o);
  });
}

void Step(const OptimizerPtr& o) { JsBoundary([&] { o->Step(); }); }
void ZeroGrad(const OptimizerPtr& o) { o->ZeroGrad(); }
double Lr(const OptimizerPtr& o) { return o->lr(); }
void SetLr(const OptimizerPtr& o, double lr) { JsBoundary([&] { o->set_lr(PositiveRate(lr, "lr")); }); }
double StepCount(const OptimizerPtr& o) { return static_cast<double>(o->step_count()); }

}  // namespace

EMSCRIPTEN_BINDINGS(lockstep_optim) {
  emscripten::class_<optim::Optimizer>("Optimizer")
      .smart_ptr<OptimizerPtr>("OptimizerPtr")
      .function("step", &Step)
      .function("zeroGrad", &ZeroGrad)
      .function("lr", &Lr)
      .function("setLr", &SetLr)
      .function("stepCount", &StepCount);
  emscripten::function("makeSgd", &MakeSgd);
  emscripten::function("makeAdam", &MakeAdam);
}

}  // namespace wasm
}  // namespace lockstep
