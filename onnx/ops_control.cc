// Control flow: If, Loop, Scan and SequenceMap run their subgraphs (onnx/subgraph.h) with lockstep's
// ops, so gradients flow through the branch taken and every iteration. Conditions, trip counts and
// positions are read on the host.
#include <memory>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "onnx/op_helpers.h"
#include "onnx/subgraph.h"

namespace lockstep {
namespace onnx {

namespace {

std::shared_ptr<const Subgraph> Body(const NodeView& node, const char* attribute) {
  const GraphProto* g = node.Graph(attribute);
  node.Require(g != nullptr, std::string("attribute '") + attribute + "' is required");
  return std::make_shared<const Subgraph>(*g, node.opset(), node.Where() + ": " + attribute);
}

// A scalar (or one-element) bool or integer condition, as the host reads it.
bool Condition(const Value& v, const char* op) {
  LOCKSTEP_REQUIRE(v.is_tensor() && v.tensor.numel() == 1 && (v.elem == Elem::kBool || v.is_int()),
                   op << ": the condition should be one bool, got a " << KindName(v));
  NoGradGuard no_grad;
  return v.is_int() ? IntValues(v)[0] != 0 : v.tensor.Contiguous().ToVector()[0] != 0.0f;
}

// Tensors of one iteration each, stacked on a new axis (at `axis`, in order or reversed).
Value Stack(const std::vector<Value>& parts, int64_t axis, bool reverse, Elem empty_elem, const std::string& where) {
  if (parts.empty()) return Value{Tensor::Zeros({0}, IsIntElem(empty_elem) ? DType::kInt64 : DType::kFloat32), empty_elem};
  LOCKSTEP_REQUIRE(parts[0].is_tensor(), where << ": a scan output is a " << KindName(parts[0]));
  const int64_t a = Axis(axis, static_cast<int64_t>(parts[0].shape().size()) + 1, where);
  std::vector<Tensor> t;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Value& v = parts[reverse ? parts.size() - 1 - i : i];
    LOCKSTEP_REQUIRE(v.is_tensor() && v.elem == parts[0].elem && v.shape() == parts[0].shape(),
                     where << ": a scan output changes its type or shape between iterations");
    t.push_back(v.tensor.Unsqueeze(a));
  }
  return Value{t.size() == 1 ? t[0] : Concat(t, a), parts[0].elem};
}

Kernel IfKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  const auto then_branch = Body(node, "then_branch"), else_branch = Body(node, "else_branch");
  const std::vector<std::string> implicit = node.proto().implicit_input;
  return [then_branch, else_branch, implicit](const Values& in, RunContext& context) -> Values {
    const bool take_then = Condition(Input(in, 0, "If"), "If");
    return (take_then ? then_branch : else_branch)->Run({}, OuterValues(implicit, in), context);
  };
}

// Loop: while (no trip count or i < M) and (no condition or the condition holds): the body maps
// (i, condition, carried...) to (condition, carried..., scan outputs...). Its outputs: the final
// carried values, then each scan output stacked over the iterations.
Kernel LoopKernel(const NodeView& node) {
  node.Require(node.inputs() >= 2, "expected at least the trip count and condition inputs (either may be empty)");
  const auto body = Body(node, "body");
  const size_t carried = node.inputs() - 2;
  node.Require(body->input_count() == carried + 2, "the body takes " + std::to_string(body->input_count()) +
                                                       " inputs, the node gives it " + std::to_string(carried + 2));
  node.Require(body->output_count() >= carried + 1, "the body gives fewer outputs than its condition and carried values");
  const size_t scans = body->output_count() - 1 - carried;
  const std::vector<std::string> implicit = node.proto().implicit_input;
  const std::string where = node.Where();
  return [body, carried, scans, implicit, where](const Values& in, RunContext& context) -> Values {
    const bool has_trips = in[0].defined(), has_condition = in[1].defined();
    LOCKSTEP_REQUIRE(has_trips || has_condition, "Loop: neither a trip count nor a condition: it would never end");
    int64_t trips = 0;
    if (has_trips) {
      LOCKSTEP_REQUIRE(in[0].is_tensor() && in[0].is_int() && in[0].tensor.numel() == 1,
                       "Loop: the trip count should be one integer, got a " << KindName(in[0]));
      trips = IntValues(in[0])[0];
    }
    bool condition = has_condition ? Condition(in[1], "Loop") : true;
    const std::map<std::string, Value> outer = OuterValues(implicit, in);
    Values state(in.begin() + 2, in.begin() + 2 + static_cast<int64_t>(carried));
    std::vector<std::vector<Value>> scanned(scans);
    for (int64_t i = 0; (!has_trips || i < trips) && condition; ++i) {
      Values formal{IntTensor({}, {i}), BoolValue(Tensor::Scalar(condition ? 1.0f : 0.0f))};
      formal.insert(formal.end(), state.begin(), state.end());
      const Values out = body->Run(formal, outer, context);
      condition = Condition(out[0], "Loop");
      for (size_t k = 0; k < carried; ++k) state[k] = out[1 + k];
      for (size_t k = 0; k < scans; ++k) scanned[k].push_back(out[1 + carried + k]);
    }
    Values result = state;
    for (size_t k = 0; k < scans; ++k) {
      result.push_back(Stack(scanned[k], 0, false, body->OutputElem(1 + carried + k), where));
    }
    return result;
  };
}

// Scan (opset 9): N state values and M scan inputs; each iteration takes one slice of every scan
// input along its axis (forward or reversed) and maps (state..., slices...) to (state..., outputs...);
// the outputs are stacked along their axes (in order or reversed).
Kernel ScanKernel(const NodeView& node) {
  const auto body = Body(node, "body");
  const int64_t m = node.Int("num_scan_inputs", 0);
  node.Require(m >= 1 && static_cast<size_t>(m) <= node.inputs(), "num_scan_inputs must be in [1, inputs]");
  const size_t n = node.inputs() - static_cast<size_t>(m);
  node.Require(body->input_count() == node.inputs(), "the body's inputs do not match the node's");
  node.Require(body->output_count() >= n, "the body gives fewer outputs than the state values");
  const size_t k = body->output_count() - n;
  std::vector<int64_t> in_axes = node.Ints("scan_input_axes", std::vector<int64_t>(static_cast<size_t>(m), 0));
  std::vector<int64_t> in_dirs = node.Ints("scan_input_directions", std::vector<int64_t>(static_cast<size_t>(m), 0));
  std::vector<int64_t> out_axes = node.Ints("scan_output_axes", std::vector<int64_t>(k, 0));
  std::vector<int64_t> out_dirs = node.Ints("scan_output_directions", std::vector<int64_t>(k, 0));
  node.Require(in_axes.size() == static_cast<size_t>(m) && in_dirs.size() == static_cast<size_t>(m) &&
                   out_axes.size() == k && out_dirs.size() == k,
               "the scan axes and directions must have one entry per scan input and output");
  const std::vector<std::string> implicit = node.proto().implicit_input;
  const std::string where = node.Where();
  return [=](const Values& in, RunContext& context) -> Values {
    const std::map<std::string, Value> outer = OuterValues(implicit, in);
    Values state(in.begin(), in.begin() + static_cast<int64_t>(n));
    int64_t steps = -1;
    std::vector<int64_t> axes(static_cast<size_t>(m));
    for (size_t j = 0; j < static_cast<size_t>(m); ++j) {
      const Value& x = Input(in, n + j, "Scan");
      LOCKSTEP_REQUIRE(x.is_tensor(), "Scan: scan input " << j << " is a " << KindName(x));
      axes[j] = Axis(in_axes[j], static_cast<int64_t>(x.shape().size()), where);
      const int64_t len = x.shape()[axes[j]];
      LOCKSTEP_REQUIRE(steps < 0 || steps == len, "Scan: scan inputs of different lengths (" << steps << " and " << len << ")");
      steps = len;
    }
    std::vector<std::vector<Value>> scanned(k);
    for (int64_t t = 0; t < steps; ++t) {
      Values formal = state;
      for (size_t j = 0; j < static_cast<size_t>(m); ++j) {
        const Value& x = in[n + j];
        formal.push_back(Value{x.tensor.Select(axes[j], in_dirs[j] ? steps - 1 - t : t), x.elem});
      }
      const Values out = body->Run(formal, outer, context);
      for (size_t s = 0; s < n; ++s) state[s] = out[s];
      for (size_t s = 0; s < k; ++s) scanned[s].push_back(out[n + s]);
    }
    Values result = state;
    for (size_t s = 0; s < k; ++s) {
      result.push_back(Stack(scanned[s], out_axes[s], out_dirs[s] != 0, body->OutputElem(n + s), where));
    }
    return result;
  };
}

// SequenceMap: the body on element i of the input sequence and of every other sequence input (a
// tensor input is given whole each time); each body output gathered into a sequence.
Kernel SequenceMapKernel(const NodeView& node) {
  node.Require(node.inputs() >= 1, "expected an input sequence");
  const auto body = Body(node, "body");
  const size_t explicit_inputs = node.inputs();
  node.Require(body->input_count() == explicit_inputs, "the body's inputs do not match the node's");
  const std::vector<std::string> implicit = node.proto().implicit_input;
  return [body, explicit_inputs, implicit](const Values& in, RunContext& context) -> Values {
    const Value& first = Input(in, 0, "SequenceMap");
    LOCKSTEP_REQUIRE(first.is_sequence(), "SequenceMap: input 0 should be a sequence, got a " << KindName(first));
    const size_t count = first.items->size();
    for (size_t j = 1; j < explicit_inputs; ++j) {
      const Value& v = Input(in, j, "SequenceMap");
      LOCKSTEP_REQUIRE(!v.is_sequence() || v.items->size() == count,
                       "SequenceMap: sequence input " << j << " has " << v.items->size() << " tensors, input 0 " << count);
    }
    const std::map<std::string, Value> outer = OuterValues(implicit, in);
    std::vector<std::vector<Value>> outputs(body->output_count());
    for (size_t i = 0; i < count; ++i) {
      Values formal;
      for (size_t j = 0; j < explicit_inputs; ++j) formal.push_back(in[j].is_sequence() ? (*in[j].items)[i] : in[j]);
      const Values out = body->Run(formal, outer, context);
      for (size_t o = 0; o < out.size(); ++o) outputs[o].push_back(out[o]);
    }
    Values result;
    for (size_t o = 0; o < outputs.size(); ++o) {
      const Elem elem = outputs[o].empty() ? body->OutputElem(o) : outputs[o][0].elem;
      result.push_back(SequenceValue(std::move(outputs[o]), elem));
    }
    return result;
  };
}

}  // namespace

void AddControlOps(std::vector<OpSpec>* t) {
  // Which branch runs and how often the body does depend on values: shapes too.
  t->push_back(OpSpec{"If", 1, IfKernel, {}, {}, true}.Reads({"else_branch", "then_branch"}));
  t->push_back(OpSpec{"Loop", 1, LoopKernel, {}, {}, true}.Reads({"body"}));
  t->push_back(OpSpec{"Scan", 9, ScanKernel}
                   .Reads({"body", "num_scan_inputs", "scan_input_axes", "scan_input_directions", "scan_output_axes",
                           "scan_output_directions"}));
  t->push_back(OpSpec{"SequenceMap", 17, SequenceMapKernel}.Reads({"body"}));
}

}  // namespace onnx
}  // namespace lockstep
