// Sequences and optionals: SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceAt,
// SequenceErase, SequenceLength, SplitToSequence, ConcatFromSequence, Optional,
// OptionalHasElement, OptionalGetElement. A sequence is a list of lockstep tensors (Value::items),
// so taking one apart or putting tensors together is lockstep's slicing and concatenation, and
// gradients flow through them; positions are integers on the host.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "onnx/op_helpers.h"
#include "onnx/sequences.h"

namespace lockstep {
namespace onnx {

namespace {

const char* const kSequenceOperators[] = {"Identity",         "SequenceEmpty",      "SequenceConstruct",
                                          "SequenceInsert",   "SequenceAt",         "SequenceErase",
                                          "SequenceLength",   "SplitToSequence",    "ConcatFromSequence",
                                          "Optional",         "OptionalHasElement", "OptionalGetElement",
                                          "If",               "Loop",               "Scan",
                                          "SequenceMap"};

const Value& SequenceInput(const Values& in, size_t i, const char* op) {
  const Value& v = Input(in, i, op);
  LOCKSTEP_REQUIRE(v.is_sequence(), op << ": input " << i << " should be a sequence, got a " << KindName(v));
  return v;
}

// A position input (a scalar or [1] integer) in [-n, n - 1], or [-n, n] where `end_allowed`.
int64_t Position(const Value& p, int64_t n, bool end_allowed, const char* op) {
  LOCKSTEP_REQUIRE(p.is_tensor() && p.is_int() && p.tensor.numel() == 1,
                   op << ": the position should be one int32 or int64, got a " << KindName(p));
  int64_t k = IntValues(p)[0];
  const int64_t hi = end_allowed ? n : n - 1;
  LOCKSTEP_REQUIRE(k >= -n && k <= hi, op << ": position " << k << " is outside [" << -n << ", " << hi
                                          << "] for a sequence of " << n);
  return k < 0 ? k + n : k;
}

Kernel SequenceEmptyKernel(const NodeView& node) {
  node.RequireInputs(0, 0);
  Elem elem = Elem::kFloat;
  if (node.Has("dtype") && !ElemFromDataType(static_cast<int32_t>(node.Int("dtype", 1)), &elem)) {
    node.Unsupported("a sequence of " + DataTypeName(static_cast<int32_t>(node.Int("dtype", 1))));
  }
  return [elem](const Values&, RunContext&) -> Values { return {SequenceValue({}, elem)}; };
}

Kernel SequenceConstructKernel(const NodeView& node) {
  node.Require(node.inputs() >= 1, "expected at least one input");
  return [](const Values& in, RunContext&) -> Values {
    std::vector<Value> items;
    for (size_t i = 0; i < in.size(); ++i) {
      const Value& v = Input(in, i, "SequenceConstruct");
      LOCKSTEP_REQUIRE(v.is_tensor() && !v.optional, "SequenceConstruct: input " << i << " is a " << KindName(v));
      RequireSameElem(in[0], v, "SequenceConstruct");
      items.push_back(v);
    }
    return {SequenceValue(std::move(items), in[0].elem)};
  };
}

Kernel SequenceInsertKernel(const NodeView& node) {
  node.RequireInputs(2, 3);
  return [](const Values& in, RunContext&) -> Values {
    const Value& s = SequenceInput(in, 0, "SequenceInsert");
    const Value& t = Input(in, 1, "SequenceInsert");
    LOCKSTEP_REQUIRE(t.is_tensor() && t.elem == s.elem, "SequenceInsert: inserting a " << KindName(t) << " into a "
                                                                                        << KindName(s));
    std::vector<Value> items = *s.items;
    const int64_t n = static_cast<int64_t>(items.size());
    const int64_t at = in.size() > 2 && in[2].defined() ? Position(in[2], n, true, "SequenceInsert") : n;
    items.insert(items.begin() + at, t);
    return {SequenceValue(std::move(items), s.elem)};
  };
}

Kernel SequenceAtKernel(const NodeView& node) {
  node.RequireInputs(2, 2);
  return [](const Values& in, RunContext&) -> Values {
    const Value& s = SequenceInput(in, 0, "SequenceAt");
    const int64_t n = static_cast<int64_t>(s.items->size());
    return {(*s.items)[static_cast<size_t>(Position(Input(in, 1, "SequenceAt"), n, false, "SequenceAt"))]};
  };
}

Kernel SequenceEraseKernel(const NodeView& node) {
  node.RequireInputs(1, 2);
  return [](const Values& in, RunContext&) -> Values {
    const Value& s = SequenceInput(in, 0, "SequenceErase");
    std::vector<Value> items = *s.items;
    const int64_t n = static_cast<int64_t>(items.size());
    LOCKSTEP_REQUIRE(n > 0, "SequenceErase: the sequence is empty");
    const int64_t at = in.size() > 1 && in[1].defined() ? Position(in[1], n, false, "SequenceErase") : n - 1;
    items.erase(items.begin() + at);
    return {SequenceValue(std::move(items), s.elem)};
  };
}

Kernel SequenceLengthKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  return [](const Values& in, RunContext&) -> Values {
    const Value& s = SequenceInput(in, 0, "SequenceLength");
    return {IntTensor({}, {static_cast<int64_t>(s.items->size())})};
  };
}

// SplitToSequence: pieces of the given lengths (a 1-D split), of one length (a scalar split; the
// last piece shorter), or of length 1 with the axis dropped unless keepdims (no split).
Kernel SplitToSequenceKernel(const NodeView& node) {
  node.RequireInputs(1, 2);
  const int64_t axis_attr = node.Int("axis", 0);
  const bool keepdims = node.Int("keepdims", 1) != 0;
  const std::string where = node.Where();
  return [axis_attr, keepdims, where](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "SplitToSequence");
    LOCKSTEP_REQUIRE(x.is_tensor(), "SplitToSequence: input 0 is a " << KindName(x));
    const int64_t rank = static_cast<int64_t>(x.shape().size());
    const int64_t axis = Axis(axis_attr, rank, where), n = x.shape()[axis];
    std::vector<int64_t> lengths;
    const bool by_split = in.size() > 1 && in[1].defined();
    if (!by_split) {
      lengths.assign(static_cast<size_t>(n), 1);
    } else {
      const Value& split = in[1];
      LOCKSTEP_REQUIRE(split.is_tensor() && split.is_int() && split.shape().size() <= 1,
                       "SplitToSequence: split should be an integer scalar or 1-D tensor");
      const std::vector<int64_t> s = IntValues(split);
      if (split.shape().empty()) {
        LOCKSTEP_REQUIRE(s[0] > 0, "SplitToSequence: a split length of " << s[0]);
        for (int64_t start = 0; start < n; start += s[0]) lengths.push_back(std::min(s[0], n - start));
      } else {
        int64_t total = 0;
        for (int64_t l : s) {
          LOCKSTEP_REQUIRE(l >= 0, "SplitToSequence: a negative split length " << l);
          total += l;
        }
        LOCKSTEP_REQUIRE(total == n, "SplitToSequence: the split lengths add up to " << total << ", the axis has " << n);
        lengths = s;
      }
    }
    std::vector<Value> items;
    int64_t start = 0;
    for (int64_t l : lengths) {
      Tensor piece = x.tensor.Slice(axis, start, start + l);
      if (!by_split && !keepdims) piece = piece.Squeeze(axis);
      items.push_back(Value{piece, x.elem});
      start += l;
    }
    return {SequenceValue(std::move(items), x.elem)};
  };
}

// ConcatFromSequence: the tensors concatenated along the axis, or stacked on a new one (new_axis).
Kernel ConcatFromSequenceKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  node.Require(node.Has("axis"), "attribute 'axis' is required");
  const int64_t axis_attr = node.Int("axis", 0);
  const bool new_axis = node.Int("new_axis", 0) != 0;
  const std::string where = node.Where();
  return [axis_attr, new_axis, where](const Values& in, RunContext&) -> Values {
    const Value& s = SequenceInput(in, 0, "ConcatFromSequence");
    LOCKSTEP_REQUIRE(!s.items->empty(), "ConcatFromSequence: the sequence is empty");
    const int64_t rank = static_cast<int64_t>((*s.items)[0].shape().size()) + (new_axis ? 1 : 0);
    const int64_t axis = Axis(axis_attr, rank, where);
    std::vector<Tensor> parts;
    for (const Value& v : *s.items) parts.push_back(new_axis ? v.tensor.Unsqueeze(axis) : v.tensor);
    return {Value{parts.size() == 1 ? parts[0] : Concat(parts, axis), s.elem}};
  };
}

Kernel OptionalKernel(const NodeView& node) {
  node.RequireInputs(0, 1);
  if (!node.HasInput(0)) node.Unsupported("an empty Optional made from its type attribute (lockstep reads no TypeProto)");
  return [](const Values& in, RunContext&) -> Values {
    Value v = Input(in, 0, "Optional");
    LOCKSTEP_REQUIRE(!v.optional, "Optional: its input is already an optional");
    v.optional = true;
    return {v};
  };
}

// From opset 18 these take a tensor or a sequence too: a present value.
Kernel OptionalHasElementKernel(const NodeView& node) {
  node.RequireInputs(0, 1);
  return [](const Values& in, RunContext&) -> Values {
    const bool has = !in.empty() && in[0].defined() && !in[0].none;
    return {BoolValue(Tensor::Scalar(has ? 1.0f : 0.0f))};
  };
}

Kernel OptionalGetElementKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  return [](const Values& in, RunContext&) -> Values {
    Value v = Input(in, 0, "OptionalGetElement");
    LOCKSTEP_REQUIRE(!v.none, "OptionalGetElement: the optional is empty");
    v.optional = false;
    return {v};
  };
}

}  // namespace

bool IsSequenceOperator(const std::string& op_type) {
  return std::find(std::begin(kSequenceOperators), std::end(kSequenceOperators), op_type) != std::end(kSequenceOperators);
}

Kernel RefusingNonTensors(const std::string& op_type, Kernel kernel) {
  if (IsSequenceOperator(op_type)) return kernel;
  return [op_type, kernel = std::move(kernel)](const Values& in, RunContext& context) -> Values {
    for (size_t i = 0; i < in.size(); ++i) {
      LOCKSTEP_REQUIRE(!in[i].defined() || (in[i].is_tensor() && !in[i].optional),
                       op_type << ": input " << i << " is a " << KindName(in[i]) << "; " << op_type << " takes tensors");
    }
    return kernel(in, context);
  };
}

void AddSequenceOps(std::vector<OpSpec>* t) {
  t->push_back(OpSpec{"SequenceEmpty", 11, SequenceEmptyKernel}.Reads({"dtype"}));
  t->push_back({"SequenceConstruct", 11, SequenceConstructKernel});
  t->push_back({"SequenceInsert", 11, SequenceInsertKernel});
  t->push_back({"SequenceAt", 11, SequenceAtKernel});
  t->push_back({"SequenceErase", 11, SequenceEraseKernel});
  t->push_back({"SequenceLength", 11, SequenceLengthKernel});
  t->push_back(OpSpec{"SplitToSequence", 11, SplitToSequenceKernel, {1}}.Reads({"axis", "keepdims"}));
  t->push_back(OpSpec{"ConcatFromSequence", 11, ConcatFromSequenceKernel}.Reads({"axis", "new_axis"}));
  t->push_back(OpSpec{"Optional", 15, OptionalKernel}.Reads({"type"}).Scope("made from its input (not from `type` alone)"));
  t->push_back({"OptionalHasElement", 15, OptionalHasElementKernel});
  t->push_back({"OptionalGetElement", 15, OptionalGetElementKernel});
}

}  // namespace onnx
}  // namespace lockstep
