// Operators that pick or place elements by index: GatherND, ScatterElements (and the older
// Scatter), ScatterND, OneHot, Compress, NonZero, TopK and ReverseSequence. The indices are
// integers, so where each element goes is computed exactly on the host; the float values move
// through lockstep's ops (the embedding op's gather, Where), which carry gradients, and a scatter
// that combines (add, mul, max, min) applies its updates one at a time in index order.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "onnx/host_rounding.h"
#include "onnx/op_helpers.h"
#include "onnx/op_registry.h"

namespace lockstep {
namespace onnx {

namespace {

const Value& IndexInput(const Values& in, size_t i, const char* op) {
  const Value& v = Input(in, i, op);
  LOCKSTEP_REQUIRE(v.is_int(), op << ": indices must be integers, got " << ElemName(v.elem));
  return v;
}

// An index in [-n, n) made non-negative, or an error naming the operator.
int64_t Wrapped(int64_t index, int64_t n, const char* op) {
  LOCKSTEP_REQUIRE(index >= -n && index < n, op << ": index " << index << " is out of range for extent " << n);
  return index < 0 ? index + n : index;
}

// The elements of x at these flat (row-major) positions, as a tensor of `shape`.
Value GatherFlat(const Value& x, const std::vector<int64_t>& positions, const Shape& shape, const char* op) {
  const Value column{x.tensor.Reshape({x.tensor.numel(), 1}), x.elem};
  const Value picked = Take(column, 0, positions, {static_cast<int64_t>(positions.size())}, op);
  return Value{picked.tensor.Reshape(shape), x.elem};
}

enum class Combine { kNone, kAdd, kMul, kMax, kMin };

Combine ReadReduction(const NodeView& node) {
  const std::string r = node.String("reduction", "none");
  if (r == "none") return Combine::kNone;
  if (r == "add") return Combine::kAdd;
  if (r == "mul") return Combine::kMul;
  if (r == "max") return Combine::kMax;
  if (r == "min") return Combine::kMin;
  node.Require(false, "reduction must be none, add, mul, max or min, got '" + r + "'");
  return Combine::kNone;
}

int64_t CombineInts(Combine c, int64_t a, int64_t b) {
  switch (c) {
    case Combine::kNone: return b;
    case Combine::kAdd: return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    case Combine::kMul: return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    case Combine::kMax: return std::max(a, b);
    case Combine::kMin: return std::min(a, b);
  }
  return b;
}

// data with update u written to flat position targets[u], in increasing u (a later write to the
// same position replaces, or combines with, the earlier result). Floats go by levels: level j holds
// the j-th update of each position, applied to all positions at once with Where, so that each
// position sees its updates in index order and a position without one keeps its bits.
Value ScatterFlat(const Value& data, const Value& updates, const std::vector<int64_t>& targets, Combine combine,
                  const char* op) {
  RequireSameElem(data, updates, op);
  LOCKSTEP_REQUIRE(static_cast<int64_t>(targets.size()) == updates.tensor.numel(),
                   op << ": " << updates.tensor.numel() << " updates for " << targets.size() << " positions");
  const int64_t n = data.tensor.numel();
  if (data.is_int()) {
    std::vector<int64_t> out = IntValues(data);
    const std::vector<int64_t> u = IntValues(updates);
    for (size_t i = 0; i < targets.size(); ++i) out[targets[i]] = CombineInts(combine, out[targets[i]], u[i]);
    return IntTensor(data.shape(), out, data.elem);
  }
  LOCKSTEP_REQUIRE(data.elem == Elem::kFloat, op << ": expected float or integer data, got " << ElemName(data.elem));
  std::vector<std::vector<int64_t>> levels;  // levels[j][p]: the j-th update at position p, or -1
  std::vector<int64_t> seen(static_cast<size_t>(n), 0);
  for (size_t i = 0; i < targets.size(); ++i) {
    const int64_t j = seen[targets[i]]++;
    if (static_cast<size_t>(j) == levels.size()) levels.emplace_back(static_cast<size_t>(n), -1);
    levels[j][targets[i]] = static_cast<int64_t>(i);
  }
  if (combine == Combine::kNone && levels.size() > 1) {  // only the last write of each position shows
    for (int64_t p = 0; p < n; ++p) {
      for (size_t j = levels.size() - 1; j > 0; --j) {
        if (levels[j][p] >= 0) {
          levels[0][p] = levels[j][p];
          break;
        }
      }
    }
    levels.resize(1);
  }
  Tensor out = data.tensor.Reshape({n});
  const Value flat_updates{updates.tensor.Reshape({updates.tensor.numel()}), updates.elem};
  for (const std::vector<int64_t>& level : levels) {
    std::vector<int64_t> pick(level.size());
    std::vector<float> mask(level.size());
    for (size_t p = 0; p < level.size(); ++p) {
      pick[p] = level[p] < 0 ? 0 : level[p];
      mask[p] = level[p] < 0 ? 0.0f : 1.0f;
    }
    const Tensor u = GatherFlat(flat_updates, pick, {n}, op).tensor;
    const Tensor m = Tensor::FromVector({n}, mask);
    Tensor combined;
    switch (combine) {
      case Combine::kNone: combined = u; break;
      case Combine::kAdd: combined = Add(out, u); break;
      case Combine::kMul: combined = Mul(out, u); break;
      case Combine::kMax: combined = Maximum(out, u); break;
      case Combine::kMin: combined = Minimum(out, u); break;
    }
    out = Where(m, combined, out);
  }
  return FloatValue(out.Reshape(data.shape()));
}

// The flat offset in a tensor of `shape` of the first element addressed by index tuple t of
// `indices` ([..., k]: the first batch_dims axes of data are those of indices), and the row-major
// count of the elements each tuple addresses.
struct TupleAddresses {
  std::vector<int64_t> base;
  int64_t slice = 1;
  Shape tuple_shape;  // indices.shape[:-1]
};

TupleAddresses Addresses(const Shape& data, const Value& indices, int64_t batch_dims, const char* op) {
  const Shape& is = indices.shape();
  LOCKSTEP_REQUIRE(!is.empty(), op << ": indices must have at least one dimension");
  const int64_t r = static_cast<int64_t>(data.size()), q = static_cast<int64_t>(is.size());
  const int64_t k = is.back();
  LOCKSTEP_REQUIRE(batch_dims >= 0 && batch_dims < q && batch_dims + k <= r && k >= 1,
                   op << ": indices " << ShapeString(is) << " (batch_dims " << batch_dims << ") do not fit data "
                      << ShapeString(data));
  for (int64_t d = 0; d < batch_dims; ++d) {
    LOCKSTEP_REQUIRE(is[d] == data[d], op << ": batch dimension " << d << " differs: data " << ShapeString(data)
                                          << ", indices " << ShapeString(is));
  }
  TupleAddresses a;
  a.tuple_shape.assign(is.begin(), is.end() - 1);
  for (int64_t d = batch_dims + k; d < r; ++d) a.slice *= data[d];
  const Shape strides = ContiguousStrides(data);
  const std::vector<int64_t> v = IntValues(indices);
  const int64_t tuples = static_cast<int64_t>(v.size()) / k;
  int64_t per_batch = 1;  // tuples per batch entry
  for (int64_t d = batch_dims; d < q - 1; ++d) per_batch *= is[d];
  a.base.resize(static_cast<size_t>(tuples));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t at = 0, batch = per_batch == 0 ? 0 : t / per_batch;
    for (int64_t d = batch_dims - 1; d >= 0; --d) {  // the batch coordinates of tuple t
      at += (batch % data[d]) * strides[d];
      batch /= data[d];
    }
    for (int64_t j = 0; j < k; ++j) at += Wrapped(v[t * k + j], data[batch_dims + j], op) * strides[batch_dims + j];
    a.base[t] = at;
  }
  return a;
}

std::vector<int64_t> Expand(const TupleAddresses& a) {
  std::vector<int64_t> positions;
  positions.reserve(a.base.size() * static_cast<size_t>(a.slice));
  for (int64_t b : a.base) {
    for (int64_t s = 0; s < a.slice; ++s) positions.push_back(b + s);
  }
  return positions;
}

Kernel GatherNDKernel(const NodeView& node) {
  node.RequireInputs(2, 2);
  const int64_t batch_dims = node.Int("batch_dims", 0);
  return [batch_dims](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "GatherND");
    const Value& idx = IndexInput(in, 1, "GatherND");
    const TupleAddresses a = Addresses(x.shape(), idx, batch_dims, "GatherND");
    Shape shape = a.tuple_shape;
    shape.insert(shape.end(), x.shape().begin() + batch_dims + idx.shape().back(), x.shape().end());
    return {GatherFlat(x, Expand(a), shape, "GatherND")};
  };
}

Kernel ScatterNDKernel(const NodeView& node) {
  node.RequireInputs(3, 3);
  const Combine combine = ReadReduction(node);
  return [combine](const Values& in, RunContext&) -> Values {
    const Value& data = Input(in, 0, "ScatterND");
    const TupleAddresses a = Addresses(data.shape(), IndexInput(in, 1, "ScatterND"), 0, "ScatterND");
    return {ScatterFlat(data, Input(in, 2, "ScatterND"), Expand(a), combine, "ScatterND")};
  };
}

// ScatterElements (and Scatter, its older name): updates[c] goes to data at c with c[axis]
// replaced by indices[c].
Kernel ScatterElementsKernel(const NodeView& node) {
  node.RequireInputs(3, 3);
  const int64_t axis_attr = node.Int("axis", 0);
  const Combine combine = node.proto().op_type == "Scatter" ? Combine::kNone : ReadReduction(node);
  const std::string where = node.Where();
  return [axis_attr, combine, where](const Values& in, RunContext&) -> Values {
    const Value& data = Input(in, 0, "ScatterElements");
    const Value& idx = IndexInput(in, 1, "ScatterElements");
    const Value& updates = Input(in, 2, "ScatterElements");
    const int64_t rank = static_cast<int64_t>(data.shape().size());
    const int64_t axis = Axis(axis_attr, rank, where);
    LOCKSTEP_REQUIRE(idx.shape() == updates.shape() && static_cast<int64_t>(idx.shape().size()) == rank,
                     "ScatterElements: indices " << ShapeString(idx.shape()) << " and updates "
                                                 << ShapeString(updates.shape()) << " must have one shape, of data's rank");
    const Shape strides = ContiguousStrides(data.shape());
    const std::vector<int64_t> v = IntValues(idx);
    std::vector<int64_t> targets(v.size()), coord(static_cast<size_t>(rank), 0);
    for (size_t i = 0; i < v.size(); ++i) {
      int64_t at = 0;
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t c = d == axis ? Wrapped(v[i], data.shape()[d], "ScatterElements") : coord[d];
        LOCKSTEP_REQUIRE(c < data.shape()[d], "ScatterElements: indices " << ShapeString(idx.shape())
                                                                          << " exceed data " << ShapeString(data.shape()));
        at += c * strides[d];
      }
      targets[i] = at;
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++coord[d] < idx.shape()[d]) break;
        coord[d] = 0;
      }
    }
    return {ScatterFlat(data, updates, targets, combine, "ScatterElements")};
  };
}

// OneHot(indices, depth, values = [off, on]): on where the class along `axis` is the index
// (negative indices count from depth), off elsewhere, in the type of values.
Kernel OneHotKernel(const NodeView& node) {
  node.RequireInputs(3, 3);
  const int64_t axis_attr = node.Int("axis", -1);
  const std::string where = node.Where();
  return [axis_attr, where](const Values& in, RunContext&) -> Values {
    const Value& idx = Input(in, 0, "OneHot");
    const Value& depth_value = Input(in, 1, "OneHot");
    const Value& values = Input(in, 2, "OneHot");
    LOCKSTEP_REQUIRE(depth_value.tensor.numel() == 1 && values.tensor.numel() == 2,
                     "OneHot: depth must be one value and values two ([off, on])");
    const int64_t depth = depth_value.is_int() ? IntValues(depth_value)[0]
                                               : ClampedIndex(depth_value.tensor.ToVector()[0]);
    LOCKSTEP_REQUIRE(depth >= 1 && depth <= (int64_t{1} << 24), "OneHot: depth must be in [1, 2^24], got " << depth);
    const std::vector<int64_t> v = idx.is_int() ? IntValues(idx) : IntValues(CastValue(idx, Elem::kInt64));
    const int64_t rank = static_cast<int64_t>(idx.shape().size()) + 1;
    const int64_t axis = Axis(axis_attr, rank, where);
    Shape shape = idx.shape();
    shape.insert(shape.begin() + axis, depth);
    int64_t inner = 1;
    for (int64_t d = axis; d < rank - 1; ++d) inner *= idx.shape()[d];
    const int64_t count = NumElements(shape);
    std::vector<float> mask(static_cast<size_t>(count), 0.0f);
    for (size_t i = 0; i < v.size(); ++i) {
      const int64_t cls = v[i] < 0 ? v[i] + depth : v[i];
      if (cls < 0 || cls >= depth) continue;  // ONNX: out of range gives off everywhere
      const int64_t outer = static_cast<int64_t>(i) / inner, rest = static_cast<int64_t>(i) % inner;
      mask[(outer * depth + cls) * inner + rest] = 1.0f;
    }
    const Tensor m = Tensor::FromVector(shape, mask);
    if (values.is_int()) {
      const std::vector<int64_t> off_on = IntValues(values);
      std::vector<int64_t> out(mask.size());
      for (size_t i = 0; i < mask.size(); ++i) out[i] = mask[i] != 0.0f ? off_on[1] : off_on[0];
      return {IntTensor(shape, out, values.elem)};
    }
    const Tensor flat = values.tensor.Reshape({2});
    return {Value{Where(m, flat.Select(0, 1), flat.Select(0, 0)), values.elem}};
  };
}

// Compress(input, condition, axis): the slices along axis (or the flattened elements) where the
// condition is true; a condition shorter than the axis selects nothing past its end.
Kernel CompressKernel(const NodeView& node) {
  node.RequireInputs(2, 2);
  const bool has_axis = node.Has("axis");
  const int64_t axis_attr = node.Int("axis", 0);
  const std::string where = node.Where();
  return [has_axis, axis_attr, where](const Values& in, RunContext&) -> Values {
    Value x = Input(in, 0, "Compress");
    const Value& cond = Input(in, 1, "Compress");
    LOCKSTEP_REQUIRE(cond.shape().size() == 1, "Compress: condition must be 1-D, got " << ShapeString(cond.shape()));
    const std::vector<int64_t> c = IntValues(CastValue(cond, Elem::kInt64));
    if (!has_axis) x = Value{x.tensor.Reshape({x.tensor.numel()}), x.elem};
    const int64_t axis = has_axis ? Axis(axis_attr, static_cast<int64_t>(x.shape().size()), where) : 0;
    LOCKSTEP_REQUIRE(static_cast<int64_t>(c.size()) <= x.shape()[axis],
                     "Compress: condition of " << c.size() << " for an axis of " << x.shape()[axis]);
    std::vector<int64_t> kept;
    for (size_t i = 0; i < c.size(); ++i) {
      if (c[i] != 0) kept.push_back(static_cast<int64_t>(i));
    }
    return {Take(x, axis, kept, {static_cast<int64_t>(kept.size())}, "Compress")};
  };
}

// NonZero: the coordinates of the nonzero elements in row-major order, [rank, count] int64.
Kernel NonZeroKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  return [](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "NonZero");
    const Shape& shape = x.shape();
    const int64_t rank = static_cast<int64_t>(shape.size());
    std::vector<bool> nonzero;
    if (x.is_int()) {
      for (int64_t v : IntValues(x)) nonzero.push_back(v != 0);
    } else {
      for (float v : x.tensor.Contiguous().ToVector()) nonzero.push_back(v != 0.0f);
    }
    std::vector<std::vector<int64_t>> coords(static_cast<size_t>(rank));
    std::vector<int64_t> c(static_cast<size_t>(rank), 0);
    int64_t count = 0;
    for (size_t i = 0; i < nonzero.size(); ++i) {
      if (nonzero[i]) {
        for (int64_t d = 0; d < rank; ++d) coords[d].push_back(c[d]);
        ++count;
      }
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++c[d] < shape[d]) break;
        c[d] = 0;
      }
    }
    std::vector<int64_t> out;
    for (const auto& row : coords) out.insert(out.end(), row.begin(), row.end());
    return {IntTensor({rank, count}, out)};
  };
}

// Whether float a comes before b in TopK's order for `largest` (NaN above every number, as the
// contract's maximum; equal values keep their index order, so the sort is stable).
bool Before(float a, float b, bool largest) {
  const bool a_nan = a != a, b_nan = b != b;
  if (a_nan || b_nan) return largest ? a_nan && !b_nan : b_nan && !a_nan;
  return largest ? a > b : a < b;
}

// TopK(X, K): the K largest (or smallest) along axis, sorted, ties to the lower index; values by a
// gather (so with gradients), indices int64.
Kernel TopKKernel(const NodeView& node) {
  node.RequireInputs(2, 2);
  const int64_t axis_attr = node.Int("axis", -1);
  const bool largest = node.Int("largest", 1) != 0;
  node.Int("sorted", 1);  // the output is always sorted, which sorted = 0 (any order) permits
  const std::string where = node.Where();
  return [axis_attr, largest, where](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "TopK");
    const std::vector<int64_t> kv = IntValues(IndexInput(in, 1, "TopK"));
    LOCKSTEP_REQUIRE(kv.size() == 1, "TopK: K must be one value");
    const Shape& shape = x.shape();
    const int64_t axis = Axis(axis_attr, static_cast<int64_t>(shape.size()), where);
    const int64_t n = shape[axis], k = kv[0];
    LOCKSTEP_REQUIRE(k >= 0 && k <= n, "TopK: K = " << k << " for an axis of " << n);
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
    const int64_t outer = n == 0 ? 0 : x.tensor.numel() / (n * inner);
    std::vector<float> f;
    std::vector<int64_t> iv;
    if (x.is_int()) {
      iv = IntValues(x);
    } else {
      f = x.tensor.Contiguous().ToVector();
    }
    Shape out_shape = shape;
    out_shape[axis] = k;
    std::vector<int64_t> positions, indices;  // per [outer, inner]: the k picked, in order
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t r = 0; r < inner; ++r) {
        const int64_t base = o * n * inner + r;
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
          if (!iv.empty()) return largest ? iv[base + a * inner] > iv[base + b * inner] : iv[base + a * inner] < iv[base + b * inner];
          return Before(f[base + a * inner], f[base + b * inner], largest);
        });
        for (int64_t j = 0; j < k; ++j) indices.push_back(order[j]);
      }
    }
    // Reorder from [outer, inner, k] to out_shape's [outer, k, inner].
    std::vector<int64_t> idx(indices.size());
    positions.resize(indices.size());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t r = 0; r < inner; ++r) {
        for (int64_t j = 0; j < k; ++j) {
          const int64_t from = (o * inner + r) * k + j, to = (o * k + j) * inner + r;
          idx[to] = indices[from];
          positions[to] = (o * n + indices[from]) * inner + r;
        }
      }
    }
    return {GatherFlat(x, positions, out_shape, "TopK"), IntTensor(out_shape, idx)};
  };
}

// ReverseSequence: for each batch entry b, its first sequence_lens[b] steps along time_axis in
// reverse order, the rest as they are.
Kernel ReverseSequenceKernel(const NodeView& node) {
  node.RequireInputs(2, 2);
  const int64_t batch_axis = node.Int("batch_axis", 1), time_axis = node.Int("time_axis", 0);
  node.Require((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0),
               "batch_axis and time_axis must be 0 and 1 (in either order)");
  return [batch_axis, time_axis](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "ReverseSequence");
    const std::vector<int64_t> lens = IntValues(IndexInput(in, 1, "ReverseSequence"));
    const Shape& shape = x.shape();
    LOCKSTEP_REQUIRE(shape.size() >= 2 && static_cast<int64_t>(lens.size()) == shape[batch_axis],
                     "ReverseSequence: " << lens.size() << " sequence lengths for input " << ShapeString(shape));
    const Shape strides = ContiguousStrides(shape);
    const int64_t inner = strides[1];
    std::vector<int64_t> positions(static_cast<size_t>(x.tensor.numel()));
    for (int64_t i = 0; i < shape[0]; ++i) {
      for (int64_t j = 0; j < shape[1]; ++j) {
        const int64_t b = batch_axis == 0 ? i : j, t = time_axis == 0 ? i : j;
        LOCKSTEP_REQUIRE(lens[b] >= 0 && lens[b] <= shape[time_axis],
                         "ReverseSequence: sequence length " << lens[b] << " for " << shape[time_axis] << " steps");
        const int64_t src_t = t < lens[b] ? lens[b] - 1 - t : t;
        const int64_t si = time_axis == 0 ? src_t : i, sj = time_axis == 0 ? j : src_t;
        for (int64_t r = 0; r < inner; ++r) positions[(i * shape[1] + j) * inner + r] = (si * shape[1] + sj) * inner + r;
      }
    }
    return {GatherFlat(x, positions, shape, "ReverseSequence")};
  };
}

// Unique: the distinct elements (or slices along axis) of X, sorted ascending (slices
// lexicographically) or in order of first occurrence; with the first occurrence of each, each
// element's unique index and the counts. Equal means equal values (-0 equals +0).
Kernel UniqueKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  const bool has_axis = node.Has("axis");
  const int64_t axis_attr = node.Int("axis", 0);
  const bool sorted = node.Int("sorted", 1) != 0;
  const std::string where = node.Where();
  return [has_axis, axis_attr, sorted, where](const Values& in, RunContext&) -> Values {
    Value x = Input(in, 0, "Unique");
    if (!has_axis) x = Value{x.tensor.Reshape({x.tensor.numel()}), x.elem};
    const int64_t axis = has_axis ? Axis(axis_attr, static_cast<int64_t>(x.shape().size()), where) : 0;
    const int64_t n = x.shape()[axis];
    // Each slice along axis as a row of doubles (exact for float32 and for integers up to 2^53).
    const Tensor moved = x.tensor.Transpose(0, axis).Contiguous();
    const int64_t width = n == 0 ? 0 : moved.numel() / n;
    std::vector<double> rows(static_cast<size_t>(moved.numel()));
    if (x.is_int()) {
      const std::vector<int64_t> v = moved.ToInt64Vector();
      for (size_t i = 0; i < v.size(); ++i) rows[i] = static_cast<double>(v[i]);
    } else {
      const std::vector<float> v = moved.ToVector();
      for (size_t i = 0; i < v.size(); ++i) rows[i] = v[i];
    }
    const auto less = [&](int64_t a, int64_t b) {
      for (int64_t j = 0; j < width; ++j) {
        if (rows[a * width + j] != rows[b * width + j]) return rows[a * width + j] < rows[b * width + j];
      }
      return false;
    };
    const auto equal = [&](int64_t a, int64_t b) { return !less(a, b) && !less(b, a); };
    std::vector<int64_t> first;  // the first occurrence of each distinct slice, in output order
    std::vector<int64_t> inverse(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      int64_t found = -1;
      for (size_t u = 0; u < first.size() && found < 0; ++u) {
        if (equal(first[u], i)) found = static_cast<int64_t>(u);
      }
      if (found < 0) first.push_back(i);
    }
    if (sorted) std::stable_sort(first.begin(), first.end(), less);
    std::vector<int64_t> counts(first.size(), 0);
    for (int64_t i = 0; i < n; ++i) {
      for (size_t u = 0; u < first.size(); ++u) {
        if (equal(first[u], i)) {
          inverse[i] = static_cast<int64_t>(u);
          ++counts[u];
          break;
        }
      }
    }
    const int64_t k = static_cast<int64_t>(first.size());
    return {Take(x, axis, first, {k}, "Unique"), IntTensor({k}, first), IntTensor({n}, inverse), IntTensor({k}, counts)};
  };
}

// MaxUnpool(X, I[, output_shape]): zeros of the unpooled shape ((in - 1) * stride + kernel - pads
// per spatial axis) with X's values placed at the flat indices I (MaxPool's Indices), then, for a
// larger output_shape, zeros appended at the end of each spatial axis (as ONNX's reference).
Kernel MaxUnpoolKernel(const NodeView& node) {
  node.RequireInputs(2, 3);
  const std::vector<int64_t> kernel = node.Ints("kernel_shape", {});
  node.Require(!kernel.empty(), "kernel_shape is required");
  const size_t k = kernel.size();
  const std::vector<int64_t> strides = node.Ints("strides", std::vector<int64_t>(k, 1));
  const std::vector<int64_t> pads = node.Ints("pads", std::vector<int64_t>(2 * k, 0));
  node.Require(strides.size() == k && pads.size() == 2 * k, "strides and pads do not match kernel_shape");
  return [kernel, strides, pads, k](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "MaxUnpool");
    const Value& idx = IndexInput(in, 1, "MaxUnpool");
    LOCKSTEP_REQUIRE(x.shape().size() == k + 2 && idx.shape() == x.shape(),
                     "MaxUnpool: X and I must have one shape [N, C, spatial...], got " << ShapeString(x.shape())
                                                                                     << " and " << ShapeString(idx.shape()));
    Shape shape{x.shape()[0], x.shape()[1]}, wanted;
    for (size_t i = 0; i < k; ++i) shape.push_back((x.shape()[2 + i] - 1) * strides[i] + kernel[i] - pads[i] - pads[i + k]);
    ValidateShape(shape, "MaxUnpool");
    if (in.size() > 2 && in[2].defined()) {
      const std::vector<int64_t> s = IntValues(in[2]);
      wanted.assign(s.begin(), s.end());
      bool fits = wanted.size() == k + 2;
      for (size_t d = 0; fits && d < k + 2; ++d) fits = d < 2 ? wanted[d] == shape[d] : wanted[d] >= shape[d];
      LOCKSTEP_REQUIRE(fits, "MaxUnpool: output_shape " << ShapeString(wanted) << " is smaller than the unpooled "
                                                        << ShapeString(shape) << " or differs in N or C");
    }
    const int64_t total = NumElements(shape);
    std::vector<int64_t> targets = IntValues(idx);
    for (int64_t& t : targets) LOCKSTEP_REQUIRE(t >= 0 && t < total, "MaxUnpool: index " << t << " outside the output");
    const Value zeros = x.is_int() ? IntTensor(shape, std::vector<int64_t>(static_cast<size_t>(total), 0), x.elem)
                                   : FloatValue(Tensor::Zeros(shape));
    Value y = ScatterFlat(zeros, x, targets, Combine::kNone, "MaxUnpool");
    for (size_t d = 2; d < wanted.size(); ++d) {
      const int64_t extra = wanted[d] - shape[d];
      if (extra == 0) continue;
      Shape block = y.shape();
      block[d] = extra;
      const Value tail = y.is_int() ? IntTensor(block, std::vector<int64_t>(static_cast<size_t>(NumElements(block)), 0), y.elem)
                                    : FloatValue(Tensor::Zeros(block));
      y = Value{Concat({y.tensor, tail.tensor}, static_cast<int64_t>(d)), y.elem};
    }
    return {y};
  };
}

}  // namespace

void AddIndexOps(std::vector<OpSpec>* t) {
  t->push_back(OpSpec{"MaxUnpool", 9, MaxUnpoolKernel, {2}}.Reads({"kernel_shape", "pads", "strides"}));
  t->push_back(OpSpec{"Unique", 11, UniqueKernel, {}, {}, true}.Reads({"axis", "sorted"}));
  t->push_back(OpSpec{"GatherND", 11, GatherNDKernel}.Reads({"batch_dims"}));
  t->push_back(OpSpec{"ScatterND", 11, ScatterNDKernel}
                   .Reads({"reduction"})
                   .Scope("reduction none, add, mul, max, min (in index order)"));
  t->push_back(OpSpec{"ScatterElements", 11, ScatterElementsKernel}
                   .Reads({"axis", "reduction"})
                   .Scope("reduction none, add, mul, max, min (in index order)"));
  t->push_back(OpSpec{"Scatter", 9, ScatterElementsKernel}.Reads({"axis"}));
  t->push_back(OpSpec{"OneHot", 9, OneHotKernel, {1}}.Reads({"axis"}));
  t->push_back(OpSpec{"Compress", 9, CompressKernel, {}, {}, true}.Reads({"axis"}));
  t->push_back({"NonZero", 9, NonZeroKernel, {}, {}, true});
  t->push_back(OpSpec{"TopK", 10, TopKKernel, {1}}.Reads({"axis", "largest", "sorted"}));
  t->push_back(OpSpec{"ReverseSequence", 10, ReverseSequenceKernel}.Reads({"batch_axis", "time_axis"}));
}

}  // namespace onnx
}  // namespace lockstep
