// Reductions and arg-reductions. Several axes are reduced as one canonical sequence: the reduced
// axes are moved last and flattened, so each output is one reduction in row-major order over its
// elements (docs/numerics.md, rule 3), never a chain of per-axis reductions.
#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "onnx/float64.h"
#include "onnx/op_helpers.h"
#include "onnx/op_registry.h"

namespace lockstep {
namespace onnx {

namespace {

enum class Reduce { kSum, kMean, kMax, kMin, kSumSquare, kL1, kL2, kLogSum, kLogSumExp, kProd };

struct ReduceSpec {
  const char* name;
  Reduce kind;
  int64_t axes_input_since;  // the opset from which axes is an input, not an attribute
};

// x with the reduced axes moved last and merged: [kept..., reduced].
Value Gathered(const Value& x, const std::vector<int64_t>& axes, Shape* kept_shape, Shape* keepdims_shape) {
  const int64_t rank = static_cast<int64_t>(x.shape().size());
  std::vector<int64_t> perm;
  int64_t reduced = 1;
  *kept_shape = {};
  *keepdims_shape = x.shape();
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) {
      perm.push_back(d);
      kept_shape->push_back(x.shape()[d]);
    }
  }
  for (int64_t d : axes) {
    perm.push_back(d);
    reduced *= x.shape()[d];
    (*keepdims_shape)[d] = 1;
  }
  Shape merged = *kept_shape;
  merged.push_back(reduced);
  return Value{x.tensor.Permute(perm).Reshape(merged), x.elem};
}

Value IntReduce(Reduce kind, const Value& rows, const char* name) {
  LOCKSTEP_REQUIRE(kind == Reduce::kSum || kind == Reduce::kMax || kind == Reduce::kMin || kind == Reduce::kProd,
                   name << ": integer inputs are reduced by ReduceSum, ReduceProd, ReduceMax and ReduceMin only");
  const Shape& s = rows.shape();
  const int64_t len = s.back(), count = len == 0 ? NumElements(Shape(s.begin(), s.end() - 1)) : rows.tensor.numel() / len;
  LOCKSTEP_REQUIRE(len > 0 || kind == Reduce::kSum, name << ": cannot take the maximum or minimum of nothing");
  const std::vector<int64_t> v = IntValues(rows);
  std::vector<int64_t> out(static_cast<size_t>(count));
  for (int64_t r = 0; r < count; ++r) {
    int64_t acc = kind == Reduce::kSum ? 0 : kind == Reduce::kProd ? 1 : v[r * len];
    for (int64_t i = 0; i < len; ++i) {
      const uint64_t a = static_cast<uint64_t>(acc), e = static_cast<uint64_t>(v[r * len + i]);
      acc = kind == Reduce::kSum    ? static_cast<int64_t>(a + e)
            : kind == Reduce::kProd ? static_cast<int64_t>(a * e)
            : kind == Reduce::kMax  ? std::max(acc, v[r * len + i])
                                    : std::min(acc, v[r * len + i]);
    }
    out[r] = WrapToElem(rows.elem, acc);
  }
  return IntTensor(Shape(s.begin(), s.end() - 1), out, rows.elem);
}

Tensor FloatReduce(Reduce kind, const Tensor& rows, const char* name) {
  switch (kind) {
    case Reduce::kSum: return Sum(rows, -1);
    case Reduce::kMean: return Mean(rows, -1);
    case Reduce::kMax:
      RequireNoGrad({rows}, name);
      return Max(rows, -1);
    case Reduce::kMin:  // min(x) = -max(-x) exactly (negation is exact, and -0 < +0 either way)
      RequireNoGrad({rows}, name);
      return Neg(Max(Neg(rows), -1));
    case Reduce::kSumSquare: return Sum(Mul(rows, rows), -1);
    case Reduce::kL1: return Sum(Abs(rows), -1);
    case Reduce::kL2: return Sqrt(Sum(Mul(rows, rows), -1));
    case Reduce::kLogSum: return Log(Sum(rows, -1));
    case Reduce::kLogSumExp: return Log(Sum(Exp(rows), -1));  // ONNX's definition, without a shift
    case Reduce::kProd: {  // in row-major order, one rounded product after another (a chain, not a tree)
      const int64_t n = rows.size(-1);
      if (n == 0) return Tensor::Ones(Shape(rows.shape().begin(), rows.shape().end() - 1));
      Tensor acc = rows.Select(-1, 0);
      for (int64_t i = 1; i < n; ++i) acc = Mul(acc, rows.Select(-1, i));
      return acc;
    }
  }
  return Tensor();
}

OpSpec ReduceOp(ReduceSpec spec) {
  return {spec.name, 1,
          [spec](const NodeView& node) -> Kernel {
            const bool axes_from_input = node.opset() >= spec.axes_input_since;
            node.RequireInputs(1, axes_from_input ? 2 : 1);
            const std::vector<int64_t> axes_attr = axes_from_input ? std::vector<int64_t>() : node.Ints("axes", {});
            const bool keepdims = node.Int("keepdims", 1) != 0;
            const bool noop_empty = node.Int("noop_with_empty_axes", 0) != 0;
            const std::string where = node.Where();
            return [spec, axes_attr, keepdims, noop_empty, where](const Values& in, RunContext&) -> Values {
              const Value& x = Input(in, 0, spec.name);
              const int64_t rank = static_cast<int64_t>(x.shape().size());
              std::vector<int64_t> axes = axes_attr;
              if (in.size() > 1 && in[1].defined()) axes = IntValues(in[1]);
              if (axes.empty() && noop_empty) return {x};
              if (axes.empty()) {
                for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
              }
              for (int64_t& a : axes) a = Axis(a, rank, where);
              std::sort(axes.begin(), axes.end());
              axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
              Shape kept, keep_shape;
              const Value rows = Gathered(x, axes, &kept, &keep_shape);
              Value y = x.is_int() ? IntReduce(spec.kind, rows, spec.name)
                                   : FloatValue(FloatReduce(spec.kind, FloatInput(rows, spec.name), spec.name));
              return {Value{y.tensor.Reshape(keepdims ? keep_shape : kept), y.elem}};
            };
          },
          {1}};
}

OpSpec ArgOp(const char* name, bool min) {
  return {name, 1, [name, min](const NodeView& node) -> Kernel {
            node.RequireInputs(1, 1);
            const int64_t axis_attr = node.Int("axis", 0);
            const bool keepdims = node.Int("keepdims", 1) != 0;
            const bool last = node.Int("select_last_index", 0) != 0;
            const std::string where = node.Where();
            return [name, min, axis_attr, keepdims, last, where](const Values& in, RunContext&) -> Values {
              Value x = Input(in, 0, name);
              const int64_t axis = Axis(axis_attr, static_cast<int64_t>(x.shape().size()), where);
              const int64_t n = x.shape()[axis];
              LOCKSTEP_REQUIRE(n > 0, name << ": dimension " << axis << " is empty");
              if (x.is_int()) x = CastValue(x, Elem::kFloat);  // exact for |x| < 2^24
              if (last) {  // the first match of the reversed axis is the last of the original
                std::vector<int64_t> reversed;
                for (int64_t i = n - 1; i >= 0; --i) reversed.push_back(i);
                x = Take(x, axis, reversed, {n}, name);
              }
              const Tensor values = min ? Neg(x.tensor) : x.tensor;
              Tensor idx = Argmax(values, axis, keepdims);  // lowest index among equals
              if (last) idx = IntBinary(IntOp::kSub, IntTensor({}, {n - 1}), Int64Value(idx), name).tensor;
              return {Int64Value(idx)};
            };
          }};
}

// CumSum: output k is the sum of inputs 0..k along the axis (exclusive: 0..k-1; reverse: from the
// last), added one at a time in that order, as a running sum does: float32 by lockstep's Add on
// slices (so it trains), float64 and the integers on the host (integers wrapped into their type).
Kernel CumSumKernel(const NodeView& node) {
  node.RequireInputs(2, 2);
  const bool exclusive = node.Int("exclusive", 0) != 0, reverse = node.Int("reverse", 0) != 0;
  const std::string where = node.Where();
  return [exclusive, reverse, where](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "CumSum");
    const Value& axis_value = Input(in, 1, "CumSum");
    LOCKSTEP_REQUIRE(axis_value.is_int() && axis_value.tensor.numel() == 1 && axis_value.shape().size() <= 1,
                     "CumSum: the axis must be one int32 or int64, got " << ElemName(axis_value.elem) << " of shape "
                                                                          << ShapeString(axis_value.shape()));
    const int64_t rank = static_cast<int64_t>(x.shape().size());
    LOCKSTEP_REQUIRE(rank >= 1, "CumSum: expected an input of rank 1 or more, got a scalar");
    const int64_t axis = Axis(IntValues(axis_value)[0], rank, where);
    if (x.is_float64()) return {Float64CumSum(x, axis, exclusive, reverse)};
    const int64_t n = x.shape()[axis];
    if (x.is_int()) {
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[d];
      for (int64_t d = axis + 1; d < rank; ++d) inner *= x.shape()[d];
      const std::vector<int64_t> v = IntValues(x);
      std::vector<int64_t> out(v.size());
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          uint64_t sum = 0;  // unsigned: wraps without undefined behaviour
          for (int64_t step = 0; step < n; ++step) {
            const size_t at = static_cast<size_t>((o * n + (reverse ? n - 1 - step : step)) * inner + i);
            if (exclusive) out[at] = static_cast<int64_t>(sum);
            sum += static_cast<uint64_t>(v[at]);
            if (!exclusive) out[at] = static_cast<int64_t>(sum);
          }
        }
      }
      return {IntTensor(x.shape(), out, x.elem)};
    }
    const Tensor t = FloatInput(x, "CumSum");
    if (n == 0) return {x};
    std::vector<Tensor> parts(static_cast<size_t>(n));
    Tensor sum;
    for (int64_t step = 0; step < n; ++step) {
      const int64_t k = reverse ? n - 1 - step : step;
      const Tensor slice = t.Slice(axis, k, k + 1);
      if (exclusive) parts[k] = sum.defined() ? sum : Tensor::Zeros(slice.shape());
      sum = sum.defined() ? Add(sum, slice) : slice;
      if (!exclusive) parts[k] = sum;
    }
    return {FloatValue(n == 1 ? parts[0] : Concat(parts, axis))};
  };
}

}  // namespace

void AddReduceOps(std::vector<OpSpec>* t) {
  t->push_back(ReduceOp({"ReduceSum", Reduce::kSum, 13}).Reads({"axes", "keepdims", "noop_with_empty_axes"}));
  t->push_back(ReduceOp({"ReduceMean", Reduce::kMean, 18})
                   .Reads({"axes", "keepdims", "noop_with_empty_axes"}));
  t->push_back(ReduceOp({"ReduceMax", Reduce::kMax, 18})
                   .Reads({"axes", "keepdims", "noop_with_empty_axes"})
                   .Scope("no gradient"));
  t->push_back(ReduceOp({"ReduceMin", Reduce::kMin, 18})
                   .Reads({"axes", "keepdims", "noop_with_empty_axes"})
                   .Scope("no gradient"));
  t->push_back(ReduceOp({"ReduceSumSquare", Reduce::kSumSquare, 18})
                   .Reads({"axes", "keepdims", "noop_with_empty_axes"}));
  t->push_back(ReduceOp({"ReduceL1", Reduce::kL1, 18}).Reads({"axes", "keepdims", "noop_with_empty_axes"}));
  t->push_back(ReduceOp({"ReduceL2", Reduce::kL2, 18}).Reads({"axes", "keepdims", "noop_with_empty_axes"}));
  t->push_back(ReduceOp({"ReduceLogSum", Reduce::kLogSum, 18})
                   .Reads({"axes", "keepdims", "noop_with_empty_axes"}));
  t->push_back(ReduceOp({"ReduceLogSumExp", Reduce::kLogSumExp, 18})
                   .Reads({"axes", "keepdims", "noop_with_empty_axes"}));
  t->push_back(ReduceOp({"ReduceProd", Reduce::kProd, 18})
                   .Reads({"axes", "keepdims", "noop_with_empty_axes"}));
  t->push_back(OpSpec{"CumSum", 11, CumSumKernel, {1}}
                   .Reads({"exclusive", "reverse"})
                   .Scope("float32 trains; integers and float64 on the host"));
  t->push_back(ArgOp("ArgMax", false).Reads({"axis", "keepdims", "select_last_index"}));
  t->push_back(ArgOp("ArgMin", true).Reads({"axis", "keepdims", "select_last_index"}));
}

}  // namespace onnx
}  // namespace lockstep
