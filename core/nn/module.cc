#include "core/nn/module.h"

#include <algorithm>
#include <map>

#include "core/error.h"

namespace lockstep {
namespace nn {

Tensor& Module::RegisterParameter(const std::string& name, Tensor value) {
  value.RequiresGrad(true);
  parameters_.emplace_back(name, value);
  return parameters_.back().second;
}

Tensor& Module::RegisterBuffer(const std::string& name, Tensor value) {
  buffers_.emplace_back(name, value);
  return buffers_.back().second;
}

void Module::Collect(const std::string& prefix, bool parameters, NamedTensors* out) const {
  for (const auto& [name, t] : parameters ? parameters_ : buffers_) out->emplace_back(prefix + name, t);
  for (const auto& [name, child] : children_) child->Collect(prefix + name + ".", parameters, out);
}

NamedTensors Module::NamedParameters() const {
  NamedTensors out;
  Collect("", true, &out);
  return out;
}

NamedTensors Module::NamedBuffers() const {
  NamedTensors out;
  Collect("", false, &out);
  return out;
}

Tensor Module::TracedForward(const Tensor& x) {
  struct Scope {  // leaves the module even when Forward throws
    const Module* module;
    Tensor out;
    ~Scope() { trace::LeaveModule(module, out); }
  } scope{this, Tensor()};
  trace::EnterModule(this);
  scope.out = Forward(x);
  return scope.out;
}

std::vector<std::pair<std::string, Module*>> Module::NamedModules() {
  std::vector<std::pair<std::string, Module*>> out{{"", this}};
  for (const auto& [name, child] : children_) {
    for (const auto& [path, module] : child->NamedModules()) {
      out.emplace_back(path.empty() ? name : name + "." + path, module);
    }
  }
  return out;
}

std::vector<Tensor> Module::Parameters() const {
  std::vector<Tensor> out;
  for (const auto& [name, t] : NamedParameters()) out.push_back(t);
  return out;
}

NamedTensors Module::StateDict() const {
  NamedTensors out = NamedParameters();
  const NamedTensors buffers = NamedBuffers();
  out.insert(out.end(), buffers.begin(), buffers.end());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

void Module::ValidateStateDict(const NamedTensors& state) const {
  std::map<std::string, Tensor> given(state.begin(), state.end());
  const NamedTensors mine = StateDict();
  for (const auto& [name, t] : mine) {
    auto it = given.find(name);
    LOCKSTEP_REQUIRE_FORMAT(it != given.end(), "load: the checkpoint has no tensor named '" << name << "'");
    LOCKSTEP_REQUIRE_FORMAT(it->second.shape() == t.shape() && it->second.dtype() == t.dtype(),
                     "load: tensor '" << name << "' is " << DTypeName(it->second.dtype()) << " "
                                      << ShapeString(it->second.shape()) << " in the checkpoint, expected "
                                      << DTypeName(t.dtype()) << " " << ShapeString(t.shape()));
  }
  for (const auto& entry : given) {
    const std::string& name = entry.first;
    const bool known = std::any_of(mine.begin(), mine.end(), [&](const auto& m) { return m.first == name; });
    LOCKSTEP_REQUIRE_FORMAT(known, "load: the checkpoint has an unexpected tensor '" << name << "'");
  }
}

void Module::LoadStateDict(const NamedTensors& state) {
  ValidateStateDict(state);
  std::map<std::string, Tensor> given(state.begin(), state.end());
  for (const auto& [name, t] : StateDict()) t.CopyFrom(given[name]);
}

void Module::Train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->Train(on);
}

void Module::ZeroGrad() {
  for (Tensor& t : Parameters()) t.ZeroGrad();
}

}  // namespace nn
}  // namespace lockstep
