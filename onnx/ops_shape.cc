// Data movement: reshapes, transposes, concatenation, splits, slices, padding and tiling. Views
// where lockstep has them (differentiable), copies otherwise; no arithmetic.
#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "onnx/op_helpers.h"
#include "onnx/op_registry.h"

namespace lockstep {
namespace onnx {

namespace {

Value WithTensor(const Value& v, Tensor t) { return Value{std::move(t), v.elem}; }

Kernel ReshapeKernel(const NodeView& node) {
  const bool from_attribute = node.opset() < 5;
  node.RequireInputs(from_attribute ? 1 : 2, from_attribute ? 1 : 2);
  const std::vector<int64_t> shape_attr = node.Ints("shape", {});
  const bool allow_zero = node.Int("allowzero", 0) != 0;
  return [allow_zero, from_attribute, shape_attr](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "Reshape");
    std::vector<int64_t> shape = from_attribute ? shape_attr : IntValues(Input(in, 1, "Reshape"));
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] == 0 && !allow_zero) {
        LOCKSTEP_REQUIRE(i < x.shape().size(), "Reshape: a 0 at position " << i << " copies a dimension that "
                                                                            << ShapeString(x.shape()) << " lacks");
        shape[i] = x.shape()[i];
      }
    }
    return {WithTensor(x, x.tensor.Reshape(shape))};
  };
}

Kernel FlattenKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  const int64_t axis_attr = node.Int("axis", 1);
  const std::string where = node.Where();
  return [axis_attr, where](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "Flatten");
    const int64_t rank = static_cast<int64_t>(x.shape().size());
    LOCKSTEP_REQUIRE_FORMAT(axis_attr >= -rank && axis_attr <= rank, where << ": axis " << axis_attr
                                                                           << " is out of range for rank " << rank);
    const int64_t axis = axis_attr < 0 ? axis_attr + rank : axis_attr;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= x.shape()[d];
    return {WithTensor(x, x.tensor.Reshape({outer, inner}))};
  };
}

Kernel TransposeKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  const std::vector<int64_t> perm_attr = node.Ints("perm", {});
  const std::string where = node.Where();
  return [perm_attr, where](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "Transpose");
    const int64_t rank = static_cast<int64_t>(x.shape().size());
    std::vector<int64_t> perm = perm_attr;
    if (perm.empty()) {
      for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
    }
    LOCKSTEP_REQUIRE_FORMAT(static_cast<int64_t>(perm.size()) == rank,
                            where << ": perm has " << perm.size() << " entries for an input of rank " << rank);
    return {WithTensor(x, x.tensor.Permute(perm))};
  };
}

// Axes from an attribute (older opsets) or a constant input (newer), normalised and checked.
std::vector<int64_t> AxesOf(const Values& in, size_t input, const std::vector<int64_t>& attr, int64_t rank,
                            const std::string& where) {
  std::vector<int64_t> axes = attr;
  if (input < in.size() && in[input].defined()) axes = IntValues(in[input]);
  for (int64_t& a : axes) a = Axis(a, rank, where);
  std::vector<int64_t> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  LOCKSTEP_REQUIRE_FORMAT(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(),
                          where << ": axes repeat an axis");
  return axes;
}

Kernel SqueezeKernel(const NodeView& node) {
  node.RequireInputs(1, 2);
  const std::vector<int64_t> attr = node.opset() < 13 ? node.Ints("axes", {}) : std::vector<int64_t>();
  const std::string where = node.Where();
  return [attr, where](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "Squeeze");
    const int64_t rank = static_cast<int64_t>(x.shape().size());
    std::vector<int64_t> axes = AxesOf(in, 1, attr, rank, where);
    Shape out;
    for (int64_t d = 0; d < rank; ++d) {
      const bool listed = std::find(axes.begin(), axes.end(), d) != axes.end();
      if (listed) {
        LOCKSTEP_REQUIRE_FORMAT(x.shape()[d] == 1, where << ": cannot squeeze dimension " << d << " of "
                                                         << ShapeString(x.shape()));
      }
      if ((axes.empty() && x.shape()[d] == 1) || listed) continue;
      out.push_back(x.shape()[d]);
    }
    return {WithTensor(x, x.tensor.Reshape(out))};
  };
}

Kernel UnsqueezeKernel(const NodeView& node) {
  node.RequireInputs(1, 2);
  const std::vector<int64_t> attr = node.opset() < 13 ? node.Ints("axes", {}) : std::vector<int64_t>();
  const std::string where = node.Where();
  return [attr, where](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "Unsqueeze");
    std::vector<int64_t> raw = attr;
    if (in.size() > 1 && in[1].defined()) raw = IntValues(in[1]);
    const int64_t rank = static_cast<int64_t>(x.shape().size() + raw.size());
    const std::vector<int64_t> axes = AxesOf({}, 0, raw, rank, where);
    Shape out;
    size_t from = 0;
    for (int64_t d = 0; d < rank; ++d) {
      if (std::find(axes.begin(), axes.end(), d) != axes.end()) {
        out.push_back(1);
      } else {
        out.push_back(x.shape()[from++]);
      }
    }
    return {WithTensor(x, x.tensor.Reshape(out))};
  };
}

Kernel ExpandKernel(const NodeView& node) {
  node.RequireInputs(2, 2);
  return [](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "Expand");
    const std::vector<int64_t> shape = IntValues(Input(in, 1, "Expand"));
    const Shape out = BroadcastShapes(x.shape(), shape, "Expand");
    return {WithTensor(x, x.tensor.Expand(out))};
  };
}

Kernel TileKernel(const NodeView& node) {
  node.RequireInputs(2, 2);
  return [](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "Tile");
    const std::vector<int64_t> repeats = IntValues(Input(in, 1, "Tile"));
    LOCKSTEP_REQUIRE(repeats.size() == x.shape().size(), "Tile: " << repeats.size() << " repeats for rank "
                                                                  << x.shape().size());
    // Output position k * d + j along each dimension: [1, d] expanded to [r, d], then merged.
    Shape spread, expanded, out;
    for (size_t i = 0; i < repeats.size(); ++i) {
      LOCKSTEP_REQUIRE(repeats[i] >= 0, "Tile: negative repeat " << repeats[i]);
      spread.insert(spread.end(), {1, x.shape()[i]});
      expanded.insert(expanded.end(), {repeats[i], x.shape()[i]});
      out.push_back(repeats[i] * x.shape()[i]);
    }
    return {WithTensor(x, x.tensor.Reshape(spread).Expand(expanded).Reshape(out))};
  };
}

Kernel ConcatKernel(const NodeView& node) {
  node.Require(node.inputs() >= 1 && (node.Has("axis") || node.opset() < 4), "expected inputs and an axis");
  const int64_t axis = node.Int("axis", 1);  // before opset 4 the axis defaults to 1
  const std::string where = node.Where();
  return [axis, where](const Values& in, RunContext&) -> Values {
    const Value& first = Input(in, 0, "Concat");
    std::vector<Tensor> parts;
    for (size_t i = 0; i < in.size(); ++i) {
      RequireSameElem(first, Input(in, i, "Concat"), "Concat");
      parts.push_back(in[i].tensor);
    }
    const int64_t a = Axis(axis, static_cast<int64_t>(first.shape().size()), where);
    return {WithTensor(first, Concat(parts, a))};
  };
}

Kernel SplitKernel(const NodeView& node) {
  node.RequireInputs(1, 2);
  const int64_t axis_attr = node.Int("axis", 0);
  const std::vector<int64_t> split_attr = node.opset() < 13 ? node.Ints("split", {}) : std::vector<int64_t>();
  const int64_t num_outputs = node.Int("num_outputs", 0);
  const size_t outputs = node.outputs();
  const std::string where = node.Where();
  return [axis_attr, split_attr, num_outputs, outputs, where](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "Split");
    const int64_t axis = Axis(axis_attr, static_cast<int64_t>(x.shape().size()), where);
    const int64_t extent = x.shape()[axis];
    std::vector<int64_t> split = split_attr;
    if (in.size() > 1 && in[1].defined()) split = IntValues(in[1]);
    if (split.empty()) {
      // Equal parts; with num_outputs (opset 18) the last may be smaller.
      const int64_t n = static_cast<int64_t>(outputs);
      const int64_t part = num_outputs > 0 ? (extent + n - 1) / n : extent / n;
      LOCKSTEP_REQUIRE_FORMAT(num_outputs > 0 || extent % n == 0,
                              where << ": dimension " << extent << " does not split into " << n << " equal parts");
      for (int64_t i = 0; i < n; ++i) split.push_back(std::min(part, extent - i * part));
    }
    LOCKSTEP_REQUIRE_FORMAT(split.size() == outputs, where << ": " << split.size() << " split sizes for " << outputs << " outputs");
    Values out;
    int64_t at = 0;
    for (int64_t s : split) {
      LOCKSTEP_REQUIRE_FORMAT(s >= 0 && at + s <= extent, where << ": split sizes exceed dimension " << extent);
      out.push_back(WithTensor(x, x.tensor.Slice(axis, at, at + s)));
      at += s;
    }
    LOCKSTEP_REQUIRE_FORMAT(at == extent, where << ": split sizes sum to " << at << ", the dimension is " << extent);
    return out;
  };
}

int64_t Clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

Kernel SliceKernel(const NodeView& node) {
  const bool from_attributes = node.opset() < 10;
  if (from_attributes) {
    node.RequireInputs(1, 1);
  } else {
    node.RequireInputs(3, 5);
  }
  const std::vector<int64_t> starts_attr = node.Ints("starts", {}), ends_attr = node.Ints("ends", {});
  const std::vector<int64_t> axes_attr = node.Ints("axes", {});
  const std::string where = node.Where();
  return [from_attributes, starts_attr, ends_attr, axes_attr, where](const Values& in, RunContext&) -> Values {
    Value x = Input(in, 0, "Slice");
    const int64_t rank = static_cast<int64_t>(x.shape().size());
    std::vector<int64_t> starts = starts_attr, ends = ends_attr, axes = axes_attr, steps;
    if (!from_attributes) {
      starts = IntValues(Input(in, 1, "Slice"));
      ends = IntValues(Input(in, 2, "Slice"));
      axes = in.size() > 3 && in[3].defined() ? IntValues(in[3]) : std::vector<int64_t>();
      if (in.size() > 4 && in[4].defined()) steps = IntValues(in[4]);
    }
    if (axes.empty()) {
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    }
    if (steps.empty()) steps.assign(starts.size(), 1);
    LOCKSTEP_REQUIRE_FORMAT(ends.size() == starts.size() && axes.size() == starts.size() && steps.size() == starts.size(),
                            where << ": starts, ends, axes and steps differ in length");
    axes = AxesOf({}, 0, axes, rank, where);
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t d = axes[i], n = x.shape()[d], step = steps[i];
      LOCKSTEP_REQUIRE_FORMAT(step != 0, where << ": a step is 0");
      int64_t start = starts[i], end = ends[i];
      if (start < 0) start = start < -n ? -1 : start + n;  // (INT64_MIN stays below 0)
      if (end < 0) end = end < -n ? -1 : end + n;
      if (step > 0) {
        start = Clamp(start, 0, n);
        end = Clamp(end, 0, n);
        x = WithTensor(x, x.tensor.Slice(d, start, std::max(start, end), step));
      } else {
        // Backwards: indices start, start + step, ... while > end.
        start = Clamp(start, 0, n - 1);
        end = Clamp(end, -1, n - 1);
        std::vector<int64_t> picks;
        for (int64_t k = start; k > end; k += step) picks.push_back(k);
        if (n == 0) picks.clear();
        x = Take(x, d, picks, {static_cast<int64_t>(picks.size())}, "Slice");
      }
    }
    return {x};
  };
}

// Indices that pad one axis of extent n by (before, after) in reflect or edge mode.
std::vector<int64_t> PadIndices(int64_t n, int64_t before, int64_t after, bool reflect, const std::string& where) {
  LOCKSTEP_REQUIRE_FORMAT(n > 0 && (!reflect || (n > 1 && before < n && after < n)),
                          where << ": cannot pad an axis of extent " << n << " by " << before << " and " << after
                                << (reflect ? " in reflect mode" : " in edge mode"));
  std::vector<int64_t> idx;
  for (int64_t i = -before; i < n + after; ++i) {
    int64_t k = i;
    if (reflect) {
      k = k < 0 ? -k : k >= n ? 2 * (n - 1) - k : k;
    } else {
      k = Clamp(k, 0, n - 1);
    }
    idx.push_back(k);
  }
  return idx;
}

Kernel PadKernel(const NodeView& node) {
  const bool from_attributes = node.opset() < 11;
  node.RequireInputs(1, from_attributes ? 1 : 4);
  const std::string mode = node.String("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") {
    node.Unsupported("mode '" + mode + "'; lockstep pads in constant, reflect and edge modes");
  }
  const std::vector<int64_t> pads_attr = node.Ints(node.opset() < 2 ? "paddings" : "pads", {});
  const float value_attr = node.Float("value", 0.0f);
  const std::string where = node.Where();
  return [from_attributes, mode, pads_attr, value_attr, where](const Values& in, RunContext&) -> Values {
    Value x = Input(in, 0, "Pad");
    const int64_t rank = static_cast<int64_t>(x.shape().size());
    const std::vector<int64_t> pads = from_attributes ? pads_attr : IntValues(Input(in, 1, "Pad"));
    std::vector<int64_t> axes;
    if (!from_attributes && in.size() > 3 && in[3].defined()) {
      axes = AxesOf(in, 3, {}, rank, where);
    } else {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
    const int64_t k = static_cast<int64_t>(axes.size());
    LOCKSTEP_REQUIRE_FORMAT(static_cast<int64_t>(pads.size()) == 2 * k,
                            where << ": " << pads.size() << " pads for " << k << " axes (expected " << 2 * k << ")");
    Value fill;
    if (!from_attributes && in.size() > 2 && in[2].defined()) {
      fill = in[2];
      RequireSameElem(x, fill, "Pad");
    } else {
      fill = x.is_int() ? IntTensor({}, {static_cast<int64_t>(value_attr)}, x.elem) : Value{Tensor::Scalar(value_attr), x.elem};
    }
    for (int64_t i = 0; i < k; ++i) {
      const int64_t d = axes[i];
      int64_t before = pads[i], after = pads[i + k];
      // Negative pads crop.
      if (before < 0 || after < 0) {
        const int64_t n = x.shape()[d];
        const int64_t from = before < 0 ? -before : 0, to = after < 0 ? n + after : n;
        LOCKSTEP_REQUIRE_FORMAT(from <= to, where << ": negative pads remove more than dimension " << d << " holds");
        x = WithTensor(x, x.tensor.Slice(d, from, to));
        before = std::max<int64_t>(before, 0);
        after = std::max<int64_t>(after, 0);
      }
      if (before == 0 && after == 0) continue;
      if (mode == "constant") {
        std::vector<Tensor> parts;
        for (int64_t extent : {before, int64_t{0}, after}) {
          if (extent == 0) {
            parts.push_back(x.tensor);
            continue;
          }
          Shape block = x.shape();
          block[d] = extent;
          parts.push_back(fill.tensor.Reshape({}).Expand(block).Contiguous());
        }
        if (before == 0) parts.erase(parts.begin());
        if (after == 0) parts.pop_back();
        x = WithTensor(x, Concat(parts, d));
      } else {
        const std::vector<int64_t> idx = PadIndices(x.shape()[d], before, after, mode == "reflect", where);
        x = Take(x, d, idx, {static_cast<int64_t>(idx.size())}, "Pad");
      }
    }
    return {x};
  };
}

// Upper (j - i >= k) or lower (j - i <= k) triangle of the last two dimensions; zeros elsewhere.
Kernel TriluKernel(const NodeView& node) {
  node.RequireInputs(1, 2);
  const bool upper = node.Int("upper", 1) != 0;
  return [upper](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "Trilu");
    LOCKSTEP_REQUIRE(x.shape().size() >= 2, "Trilu: expected a tensor of rank >= 2, got " << ShapeString(x.shape()));
    int64_t k = 0;
    if (in.size() > 1 && in[1].defined()) {
      const std::vector<int64_t> kv = IntValues(in[1]);
      LOCKSTEP_REQUIRE(kv.size() == 1, "Trilu: k must be a scalar");
      k = kv[0];
    }
    const int64_t rows = x.shape()[x.shape().size() - 2], cols = x.shape().back();
    std::vector<float> mask(static_cast<size_t>(rows * cols));
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) mask[i * cols + j] = (upper ? j - i >= k : j - i <= k) ? 1.0f : 0.0f;
    }
    const Value keep = BoolValue(Tensor::FromVector({rows, cols}, mask));
    if (x.is_int()) return {IntWhere(keep, x, IntTensor({}, {0}, x.elem))};
    return {Value{Where(keep.tensor, x.tensor, Tensor::Scalar(0.0f)), x.elem}};
  };
}

// DepthToSpace (DCR or CRD) and SpaceToDepth: a reshape, a transpose and a reshape.
Kernel DepthSpaceKernel(const NodeView& node, bool to_space) {
  node.RequireInputs(1, 1);
  const int64_t b = node.Int("blocksize", 0);
  node.Require(b >= 1, "blocksize must be >= 1");
  const std::string mode = node.String("mode", "DCR");
  node.Require(mode == "DCR" || mode == "CRD", "mode must be DCR or CRD, got '" + mode + "'");
  return [b, mode, to_space](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, to_space ? "DepthToSpace" : "SpaceToDepth");
    LOCKSTEP_REQUIRE(x.shape().size() == 4, "DepthToSpace/SpaceToDepth: expected [N, C, H, W], got " << ShapeString(x.shape()));
    const int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
    if (to_space) {
      LOCKSTEP_REQUIRE(c % (b * b) == 0, "DepthToSpace: " << c << " channels do not divide by blocksize^2 = " << b * b);
      const int64_t cb = c / (b * b);
      const Tensor t = mode == "DCR" ? x.tensor.Reshape({n, b, b, cb, h, w}).Permute({0, 3, 4, 1, 5, 2})
                                     : x.tensor.Reshape({n, cb, b, b, h, w}).Permute({0, 1, 4, 2, 5, 3});
      return {WithTensor(x, t.Reshape({n, cb, h * b, w * b}))};
    }
    LOCKSTEP_REQUIRE(h % b == 0 && w % b == 0, "SpaceToDepth: " << h << "x" << w << " does not divide by blocksize " << b);
    const Tensor t = x.tensor.Reshape({n, c, h / b, b, w / b, b}).Permute({0, 3, 5, 1, 2, 4});
    return {WithTensor(x, t.Reshape({n, c * b * b, h / b, w / b}))};
  };
}

Kernel IdentityKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  return [](const Values& in, RunContext&) -> Values { return {Input(in, 0, "Identity")}; };
}

}  // namespace

void AddShapeOps(std::vector<OpSpec>* t) {
  t->push_back(OpSpec{"Reshape", 1, ReshapeKernel, {1}}.Reads({"allowzero", "shape"}));
  t->push_back(OpSpec{"Flatten", 1, FlattenKernel}.Reads({"axis"}));
  t->push_back(OpSpec{"Transpose", 1, TransposeKernel}.Reads({"perm"}));
  t->push_back(OpSpec{"Squeeze", 1, SqueezeKernel, {1}}.Reads({"axes"}));
  t->push_back(OpSpec{"Unsqueeze", 1, UnsqueezeKernel, {1}}.Reads({"axes"}));
  t->push_back({"Expand", 8, ExpandKernel, {1}});
  t->push_back({"Tile", 6, TileKernel, {1}});
  t->push_back(OpSpec{"Concat", 1, ConcatKernel}.Reads({"axis"}));
  t->push_back(OpSpec{"Split", 1, SplitKernel, {1}}.Reads({"axis", "num_outputs", "split"}));
  t->push_back(OpSpec{"Slice", 1, SliceKernel, {1, 2, 3, 4}}
                   .Reads({"axes", "ends", "starts"})
                   .Scope("negative steps too"));
  t->push_back(OpSpec{"Pad", 1, PadKernel, {1, 2, 3}}
                   .Reads({"mode", "pads", "value"})
                   .Scope("constant, reflect, edge"));
  t->push_back({"Identity", 1, IdentityKernel});
  t->push_back(OpSpec{"Trilu", 14, TriluKernel, {1}}.Reads({"upper"}));
  t->push_back(OpSpec{"DepthToSpace", 1, [](const NodeView& n) { return DepthSpaceKernel(n, true); }}
                   .Reads({"blocksize", "mode"}));
  t->push_back(OpSpec{"SpaceToDepth", 1, [](const NodeView& n) { return DepthSpaceKernel(n, false); }}
                   .Reads({"blocksize", "mode"}));
}

}  // namespace onnx
}  // namespace lockstep
