// Loading: decode, check the graph's structure (names, order, cycles), sort initializers into
// parameters, buffers and constants, prepare every node through the operator table, fold what
// is constant, and plan the slots the run uses.
#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "core/autograd.h"
#include "core/error.h"
#include "core/io/files.h"
#include "onnx/conv_block.h"
#include "onnx/graph_check.h"
#include "onnx/model.h"
#include "onnx/prepare.h"
#include "onnx/proto.h"

namespace lockstep {
namespace onnx {

namespace {

[[noreturn]] void Unsupported(const std::string& message) { throw Error(message, ErrorKind::kUnavailable); }

IoInfo InfoOf(const ValueInfoProto& v, const std::string& what) {
  if (v.kind == TypeKind::kOther) {
    Unsupported(what + " '" + v.name + "' is a map, a sparse tensor or a nesting deeper than an optional sequence "
                "(lockstep holds tensors, sequences of tensors and optionals of either)");
  }
  IoInfo info;
  info.name = v.name;
  info.kind = v.kind;
  if (!ElemFromDataType(v.elem_type, &info.elem)) {
    Unsupported(what + " '" + v.name + "' has element type " + DataTypeName(v.elem_type) +
                "; lockstep computes with FLOAT, FLOAT16, BFLOAT16, BOOL and the 8- to 64-bit integer tensors");
  }
  info.has_shape = v.has_shape;
  info.dims = v.dims;
  info.dim_params = v.dim_params;
  return info;
}

std::string DimsString(const IoInfo& info) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < info.dims.size(); ++i) {
    s << (i ? ", " : "");
    if (info.dims[i] >= 0) {
      s << info.dims[i];
    } else {
      s << (info.dim_params[i].empty() ? "?" : info.dim_params[i]);
    }
  }
  return s.str() + "]";
}

// Throws unless value matches what info declares (kind, type, rank, fixed dimensions).
void RequireDeclared(const Value& value, const IoInfo& info, const char* what, ErrorKind kind) {
  bool kind_ok = false;
  switch (info.kind) {
    case TypeKind::kTensor: kind_ok = value.is_tensor() && !value.optional; break;
    case TypeKind::kSequence: kind_ok = value.is_sequence() && !value.optional; break;
    case TypeKind::kOptionalTensor: kind_ok = value.optional && value.items == nullptr; break;
    case TypeKind::kOptionalSequence: kind_ok = value.optional && value.items != nullptr; break;
    case TypeKind::kOther: break;
  }
  LOCKSTEP_REQUIRE_KIND(kind, kind_ok && value.elem == info.elem,
                        what << " '" << info.name << "' is declared " << TypeName(info) << ", got " << KindName(value));
  if (!info.has_shape || !value.is_tensor()) return;
  bool ok = value.shape().size() == info.dims.size();
  for (size_t i = 0; ok && i < info.dims.size(); ++i) ok = info.dims[i] < 0 || info.dims[i] == value.shape()[i];
  LOCKSTEP_REQUIRE_KIND(kind, ok, what << " '" << info.name << "' is declared " << DimsString(info) << ", got "
                                       << ShapeString(value.shape()));
}

}  // namespace

std::string TypeName(const IoInfo& info) {
  const std::string inner = ElemName(info.elem);
  switch (info.kind) {
    case TypeKind::kSequence: return "sequence of " + inner;
    case TypeKind::kOptionalTensor: return "optional " + inner;
    case TypeKind::kOptionalSequence: return "optional sequence of " + inner;
    default: return inner;
  }
}

class GraphBuilder {
 public:
  GraphBuilder(const ModelProto& proto, const LoadOptions& options, OnnxModel* model)
      : proto_(proto), options_(options), m_(*model) {}

  void Build() {
    const GraphPlan plan = CheckGraph(proto_);
    m_.opset_ = plan.opset;
    m_.producer_ = proto_.producer_name + (proto_.producer_version.empty() ? "" : " " + proto_.producer_version);
    const GraphProto& g = proto_.graph;
    if (g.sparse_initializer_count > 0) Unsupported("sparse initializers are not supported");
    ClassifyInitializers(plan);
    for (const ValueInfoProto& v : g.input) {
      if (initializer_names_.count(v.name)) continue;  // an input with a default: the initializer
      m_.inputs_.push_back(InfoOf(v, "input"));
      input_names_.insert(v.name);
      m_.input_slots_.push_back(Slot(v.name));
    }
    for (const ValueInfoProto& v : g.output) {
      m_.outputs_.push_back(InfoOf(v, "output"));
      m_.output_slots_.push_back(Slot(v.name));
    }
    for (size_t index : plan.order) PrepareNode(g.node[index], plan.opset);
    for (const ValueInfoProto& v : g.value_info) {
      IoInfo info;
      if (v.kind != TypeKind::kTensor || !v.has_shape || !ElemFromDataType(v.elem_type, &info.elem)) continue;
      info = InfoOf(v, "value");
      auto it = slots_.find(v.name);
      if (it != slots_.end()) m_.declared_.emplace_back(it->second, info);
    }
    FuseConvBlocks(plan.opset);
    PlanReleases();
    m_.slot_count_ = slots_.size();
  }

 private:
  int Slot(const std::string& name) {
    auto it = slots_.find(name);
    if (it != slots_.end()) return it->second;
    const int slot = static_cast<int>(slots_.size());
    slots_[name] = slot;
    return slot;
  }

  // Parameters: float initializers that some node reads as data. Buffers: those read only as
  // state (running statistics). Everything else is a constant.
  void ClassifyInitializers(const GraphPlan& plan) {
    const GraphProto& g = proto_.graph;
    std::map<std::string, int> role;  // 0 constant, 1 buffer, 2 parameter
    for (size_t index : plan.order) {
      const NodeProto& node = g.node[index];
      const OpSpec* spec = FindOperator(node.op_type);
      for (size_t i = 0; i < node.input.size(); ++i) {
        int r = 2;
        if (spec != nullptr) {
          const int k = static_cast<int>(i);
          if (std::count(spec->config_inputs.begin(), spec->config_inputs.end(), k)) r = 0;
          if (std::count(spec->state_inputs.begin(), spec->state_inputs.end(), k)) r = 1;
        }
        int& current = role[node.input[i]];
        current = std::max(current, r);
      }
    }
    for (size_t i = 0; i < g.initializer.size(); ++i) {
      const TensorProto& t = g.initializer[i];
      Value value = ValueFromTensorProto(t, "initializer '" + t.name + "'");
      initializer_names_.insert(t.name);
      const int slot = Slot(t.name);
      const int r = value.elem == Elem::kFloat ? role[t.name] : 0;
      if (r == 2) {
        RegisterParameter(t.name, value.tensor);
      } else if (r == 1) {
        RegisterBuffer(t.name, value.tensor);
      } else {
        constants_[slot] = value;
        continue;
      }
      m_.fixed_.emplace_back(slot, value);
    }
  }

  void RegisterParameter(const std::string& name, Tensor t) { m_.RegisterParameter(name, t); }
  void RegisterBuffer(const std::string& name, Tensor t) { m_.RegisterBuffer(name, t); }

  void PrepareNode(const NodeProto& node, int64_t opset) {
    ++m_.op_counts_[node.op_type];
    // The constant values of the explicit inputs (for the entry's Prepare) and of the implicit ones
    // (a subgraph's outer names): a node folds at load only when all of them are known.
    std::vector<const Value*> constants, all;
    bool all_constant = node.op_type != "Dropout";
    const auto constant_of = [&](const std::string& name) { return ConstantOf(name); };
    for (const std::string& name : node.input) {
      constants.push_back(constant_of(name));
      if (!name.empty() && constants.back() == nullptr) all_constant = false;
    }
    all = constants;
    for (const std::string& name : node.implicit_input) {
      all.push_back(constant_of(name));
      if (all.back() == nullptr) all_constant = false;
    }
    const PreparedNode prepared = onnx::PrepareNode(node, opset, constants);
    const OpSpec* spec = prepared.spec;
    if (spec->value_dependent_shapes) m_.value_dependent_shapes_ = true;
    for (int k : spec->config_inputs) {
      const size_t i = static_cast<size_t>(k);
      if (i < node.input.size() && input_names_.count(node.input[i])) m_.input_configures_ = true;
    }
    OnnxModel::Step step;
    step.where = NodeWhere(node, opset);
    for (const std::string& name : node.input) step.inputs.push_back(name.empty() ? -1 : Slot(name));
    for (const std::string& name : node.implicit_input) step.inputs.push_back(Slot(name));
    for (const std::string& name : node.output) step.outputs.push_back(name.empty() ? -1 : Slot(name));
    if (all_constant) {
      Fold(step, prepared.kernel, all);
      return;
    }
    if (node.op_type == "Dropout") {
      const std::string name = node.name.empty() ? "dropout" + std::to_string(dropout_count_) : node.name;
      ++dropout_count_;
      step.dropout = std::make_shared<nn::Dropout>(0.0f, Generator(options_.seed, "onnx.dropout." + name));
      m_.RegisterModule(name, step.dropout);
    }
    step.kernel = prepared.kernel;
    m_.steps_.push_back(std::move(step));
    step_nodes_.push_back(&node);
  }

  // The value of `name` when it is a constant at load, else nullptr.
  const Value* ConstantOf(const std::string& name) const {
    auto it = name.empty() ? slots_.end() : slots_.find(name);
    if (it == slots_.end()) return nullptr;
    auto k = constants_.find(it->second);
    return k == constants_.end() ? nullptr : &k->second;
  }

  // Conv -> BatchNormalization -> Relu/Clip/SiLU runs of consecutive steps, each node the only
  // reader of the one before (SiLU's input: its Sigmoid and Mul) and no value between them an
  // output of the graph, become one step (onnx/conv_block.h).
  void FuseConvBlocks(int64_t opset) {
    std::map<int, int> readers;
    for (const OnnxModel::Step& step : m_.steps_) {
      for (int s : step.inputs) {
        if (s >= 0) ++readers[s];
      }
    }
    const std::set<int> outputs(m_.output_slots_.begin(), m_.output_slots_.end());
    const auto feeds = [&](const OnnxModel::Step& from, const OnnxModel::Step& to) {
      const int slot = from.outputs.size() == 1 ? from.outputs[0] : -1;
      return slot >= 0 && !to.inputs.empty() && to.inputs[0] == slot && readers[slot] == 1 && !outputs.count(slot);
    };
    std::vector<OnnxModel::Step>& steps = m_.steps_;
    // SiLU as PyTorch exports it: Sigmoid(v), then Mul of v and it, v read by those two alone.
    const auto silu_at = [&](size_t j) {
      if (j + 1 >= steps.size() || step_nodes_[j]->op_type != "Sigmoid" || step_nodes_[j + 1]->op_type != "Mul") return false;
      const int v = steps[j - 1].outputs.size() == 1 ? steps[j - 1].outputs[0] : -1;
      const int s = steps[j].outputs.size() == 1 ? steps[j].outputs[0] : -1;
      const std::vector<int>& mul = steps[j + 1].inputs;
      return v >= 0 && s >= 0 && steps[j].inputs == std::vector<int>{v} && mul.size() == 2 &&
             ((mul[0] == v && mul[1] == s) || (mul[0] == s && mul[1] == v)) && readers[v] == 2 && readers[s] == 1 &&
             !outputs.count(v) && !outputs.count(s);
    };
    std::vector<OnnxModel::Step> fused;
    for (size_t i = 0; i < steps.size(); ++i) {
      size_t j = i + 1;
      ConvBlockNodes block;
      ConvNormActivation after;
      std::vector<int> inputs = steps[i].inputs;
      inputs.resize(3, -1);
      std::string names;
      if (step_nodes_[i]->op_type == "Conv") {
        block.conv = step_nodes_[i];
        if (j < steps.size() && BlockNormalization(*step_nodes_[j]) && feeds(steps[j - 1], steps[j])) {
          block.norm = step_nodes_[j];
          block.norm_kernel = steps[j].kernel;
          inputs.insert(inputs.end(), steps[j].inputs.begin() + 1, steps[j].inputs.end());
          names = "BatchNormalization";
          ++j;
        }
        if (silu_at(j)) {
          block.activation = step_nodes_[j];
          block.activation_kernel =
              SiluKernel(steps[j].kernel, steps[j + 1].kernel, steps[j + 1].inputs[0] != steps[j].outputs[0]);
          after.activation = ConvNormActivation::Activation::kSilu;
          names += std::string(names.empty() ? "" : ", ") + "Sigmoid and Mul (SiLU)";
          j += 2;
        } else if (j < steps.size() && feeds(steps[j - 1], steps[j])) {
          std::vector<const Value*> constants;
          for (const std::string& name : step_nodes_[j]->input) constants.push_back(ConstantOf(name));
          if (BlockActivation(*step_nodes_[j], opset, constants, &after)) {
            block.activation = step_nodes_[j];
            block.activation_kernel = steps[j].kernel;
            block.activation_inputs = steps[j].inputs.size() - 1;
            inputs.insert(inputs.end(), steps[j].inputs.begin() + 1, steps[j].inputs.end());
            names += std::string(names.empty() ? "" : " and ") + step_nodes_[j]->op_type;
            ++j;
          }
        }
      }
      if (j == i + 1) {
        fused.push_back(std::move(steps[i]));
        continue;
      }
      block.opset = opset;
      block.conv_kernel = steps[i].kernel;
      OnnxModel::Step step;
      step.where = steps[i].where + " with the " + names + " after it";
      step.inputs = std::move(inputs);
      step.outputs = steps[j - 1].outputs;
      step.kernel = ConvBlockKernel(block, after);
      fused.push_back(std::move(step));
      ++m_.fused_blocks_;
      i = j - 1;
    }
    steps = std::move(fused);
    step_nodes_.clear();
  }

  // Runs a node whose inputs are all constants once, at load; its outputs become constants.
  void Fold(const OnnxModel::Step& step, const Kernel& kernel, const std::vector<const Value*>& constants) {
    Values in;
    for (const Value* c : constants) in.push_back(c ? *c : Value());
    Values out;
    try {
      NoGradGuard no_grad;
      RunContext context;
      out = kernel(in, context);
    } catch (const Error& e) {
      throw Error(step.where + ": " + e.what(), e.kind());
    }
    for (size_t i = 0; i < step.outputs.size() && i < out.size(); ++i) {
      if (step.outputs[i] >= 0) constants_[step.outputs[i]] = out[i];
    }
    ++m_.folded_;
  }

  // Constants become fixed slots; each step frees the slots it reads for the last time.
  void PlanReleases() {
    for (auto& [slot, value] : constants_) m_.fixed_.emplace_back(slot, value);
    std::set<int> kept(m_.output_slots_.begin(), m_.output_slots_.end());
    for (const auto& [slot, value] : m_.fixed_) kept.insert(slot);
    std::map<int, size_t> last_use;
    for (size_t i = 0; i < m_.steps_.size(); ++i) {
      for (int s : m_.steps_[i].inputs) {
        if (s >= 0) last_use[s] = i;
      }
    }
    for (const auto& [slot, step] : last_use) {
      if (!kept.count(slot)) m_.steps_[step].release.push_back(slot);
    }
  }

  const ModelProto& proto_;
  const LoadOptions& options_;
  OnnxModel& m_;
  std::map<std::string, int> slots_;
  std::map<int, Value> constants_;
  std::set<std::string> initializer_names_, input_names_;
  int dropout_count_ = 0;
  std::vector<const NodeProto*> step_nodes_;  // each step's node, until FuseConvBlocks
};

std::vector<Value> OnnxModel::Execute(const std::vector<Value>& inputs, bool check_declared) {
  LOCKSTEP_REQUIRE(inputs.size() == inputs_.size(),
                   "onnx: the model takes " << inputs_.size() << " inputs, got " << inputs.size());
  std::vector<Value> slots(slot_count_);
  for (const auto& [slot, value] : fixed_) slots[slot] = value;
  for (size_t i = 0; i < inputs.size(); ++i) {
    LOCKSTEP_REQUIRE(inputs[i].defined(), "onnx: input '" << inputs_[i].name << "' is undefined");
    RequireDeclared(inputs[i], inputs_[i], "onnx: input", ErrorKind::kArgument);
    slots[input_slots_[i]] = inputs[i];
  }
  std::vector<const IoInfo*> declared(slot_count_, nullptr);
  if (check_declared) {
    for (const auto& [slot, info] : declared_) declared[slot] = &info;
  }
  RunContext context;
  context.training = training();
  Values in;
  for (Step& step : steps_) {
    in.clear();
    for (int s : step.inputs) in.push_back(s >= 0 ? slots[s] : Value());
    context.dropout = step.dropout ? &step.dropout->generator() : nullptr;
    try {
      Values out = step.kernel(in, context);
      for (size_t i = 0; i < step.outputs.size(); ++i) {
        const int s = step.outputs[i];
        if (s < 0) continue;
        LOCKSTEP_REQUIRE(i < out.size(), "output " << i << " is not produced");
        if (declared[s] != nullptr) RequireDeclared(out[i], *declared[s], "value", ErrorKind::kFormat);
        slots[s] = std::move(out[i]);
      }
    } catch (const Error& e) {
      throw Error("onnx: " + step.where + ": " + e.what(), e.kind());
    }
    for (int s : step.release) slots[s] = Value();
  }
  std::vector<Value> result;
  for (size_t i = 0; i < output_slots_.size(); ++i) {
    const Value& v = slots[output_slots_[i]];
    LOCKSTEP_REQUIRE_FORMAT(v.defined(), "onnx: output '" << outputs_[i].name << "' is never computed");
    RequireDeclared(v, outputs_[i], "onnx: output", ErrorKind::kFormat);
    result.push_back(v);
  }
  return result;
}

std::vector<Value> OnnxModel::Run(const std::vector<Value>& inputs) { return Execute(inputs, false); }

Tensor OnnxModel::Forward(const Tensor& x) {
  LOCKSTEP_REQUIRE(inputs_.size() == 1, "onnx: Forward takes the one input of a one-input graph; this graph has "
                                            << inputs_.size() << " inputs (use Run)");
  return CallerTensor(Run({InputValue(0, x)})[0]);
}

Value OnnxModel::InputValue(size_t i, const Tensor& t) const {
  if (i >= inputs_.size()) return ValueForDeclared(t, Elem::kFloat, "input " + std::to_string(i));
  LOCKSTEP_REQUIRE_KIND(ErrorKind::kUnavailable, inputs_[i].kind == TypeKind::kTensor,
                        "onnx: input '" << inputs_[i].name << "' is a " << TypeName(inputs_[i])
                                        << "; this interface takes tensors (C++'s Run takes every kind)");
  return ValueForDeclared(t, inputs_[i].elem, "input '" + inputs_[i].name + "'");
}

std::shared_ptr<OnnxModel> LoadOnnx(const uint8_t* data, size_t size, const LoadOptions& options) {
  const ModelProto proto = DecodeModel(data, size);
  auto model = std::make_shared<OnnxModel>();
  GraphBuilder(proto, options, model.get()).Build();
  model->Eval();
  if (options.validate) {
    // One run on zeros when every input is a float tensor of fixed shape, so that shape
    // contradictions surface now. (Integer inputs may be shapes or axes, for which zeros mean
    // nothing, as for outputs whose shapes depend on values; such graphs are checked at their
    // first run, errors naming the node.)
    bool fixed = !model->input_configures_ && !model->value_dependent_shapes_;
    std::vector<Value> zeros;
    for (const IoInfo& info : model->inputs()) {
      fixed = fixed && info.kind == TypeKind::kTensor && info.elem == Elem::kFloat && info.has_shape &&
              std::all_of(info.dims.begin(), info.dims.end(), [](int64_t d) { return d >= 0; });
      if (!fixed) break;
      const Shape shape(info.dims.begin(), info.dims.end());
      ValidateShape(shape, "onnx: input");
      zeros.push_back(FloatValue(Tensor::Zeros(shape)));
    }
    if (fixed) {
      NoGradGuard no_grad;
      model->Execute(zeros, true);
    }
  }
  return model;
}

std::shared_ptr<OnnxModel> LoadOnnxFile(const std::string& path, const LoadOptions& options) {
  const std::vector<uint8_t> bytes = ReadWholeFile(path, kMaxOnnxBytes);
  try {
    return LoadOnnx(bytes.data(), bytes.size(), options);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what(), e.kind());
  }
}

}  // namespace onnx
}  // namespace lockstep
