// Operators that make or pick values: Constant, Shape, Size, ConstantOfShape, Range, Cast,
// CastLike, Gather, GatherElements and Dropout.
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "onnx/op_helpers.h"
#include "onnx/op_registry.h"

namespace lockstep {
namespace onnx {

namespace {

Kernel ConstantKernel(const NodeView& node) {
  node.RequireInputs(0, 0);
  Value value;
  int found = 0;
  if (const TensorProto* t = node.TensorAttr("value")) {
    value = ValueFromTensorProto(*t, node.Where());
    ++found;
  }
  if (node.Has("value_float")) {
    value = FloatValue(Tensor::Scalar(node.Float("value_float", 0)));
    ++found;
  }
  if (node.Has("value_floats")) {
    const std::vector<float> v = node.Floats("value_floats");
    value = FloatValue(Tensor::FromVector({static_cast<int64_t>(v.size())}, v));
    ++found;
  }
  if (node.Has("value_int")) {
    value = IntTensor({}, {node.Int("value_int", 0)});
    ++found;
  }
  if (node.Has("value_ints")) {
    const std::vector<int64_t> v = node.Ints("value_ints", {});
    value = IntTensor({static_cast<int64_t>(v.size())}, v);
    ++found;
  }
  for (const char* other : {"value_string", "value_strings", "sparse_value"}) {
    if (node.Has(other)) node.Unsupported(std::string("attribute '") + other + "'; lockstep holds no strings or sparse tensors");
  }
  node.Require(found == 1, "expected exactly one value attribute, got " + std::to_string(found));
  return [value](const Values&, RunContext&) -> Values { return {value}; };
}

Kernel ShapeKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  const int64_t start_attr = node.Int("start", 0);
  const bool has_end = node.Has("end");
  const int64_t end_attr = node.Int("end", 0);
  return [start_attr, has_end, end_attr](const Values& in, RunContext&) -> Values {
    const Shape& s = Input(in, 0, "Shape").shape();
    const int64_t rank = static_cast<int64_t>(s.size());
    auto clamp = [rank](int64_t v) {
      if (v < 0) v += rank;
      return v < 0 ? 0 : v > rank ? rank : v;
    };
    const int64_t start = clamp(start_attr), end = has_end ? clamp(end_attr) : rank;
    std::vector<int64_t> dims;
    for (int64_t d = start; d < end; ++d) dims.push_back(s[d]);
    return {IntTensor({static_cast<int64_t>(dims.size())}, dims)};
  };
}

Kernel SizeKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  return [](const Values& in, RunContext&) -> Values { return {IntTensor({}, {Input(in, 0, "Size").tensor.numel()})}; };
}

Kernel ConstantOfShapeKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  Value fill = FloatValue(Tensor::Scalar(0.0f));
  if (const TensorProto* t = node.TensorAttr("value")) {
    fill = ValueFromTensorProto(*t, node.Where());
    node.Require(fill.tensor.numel() == 1, "value must hold one element");
    fill = Value{fill.tensor.Reshape({}), fill.elem};
  }
  return [fill](const Values& in, RunContext&) -> Values {
    const std::vector<int64_t> shape = IntValues(Input(in, 0, "ConstantOfShape"));
    for (int64_t d : shape) LOCKSTEP_REQUIRE(d >= 0, "ConstantOfShape: negative dimension " << d);
    ValidateShape(shape, "ConstantOfShape");
    return {Value{fill.tensor.Expand(shape).Contiguous(), fill.elem}};
  };
}

Kernel RangeKernel(const NodeView& node) {
  node.RequireInputs(3, 3);
  return [](const Values& in, RunContext&) -> Values {
    const Value& start = Input(in, 0, "Range");
    const Value& limit = Input(in, 1, "Range");
    const Value& delta = Input(in, 2, "Range");
    RequireSameElem(start, limit, "Range");
    RequireSameElem(start, delta, "Range");
    LOCKSTEP_REQUIRE(start.tensor.numel() == 1 && limit.tensor.numel() == 1 && delta.tensor.numel() == 1,
                     "Range: start, limit and delta must be scalars");
    if (start.is_int()) {
      const int64_t s = IntValues(start)[0], l = IntValues(limit)[0], d = IntValues(delta)[0];
      LOCKSTEP_REQUIRE(d != 0, "Range: delta is 0");
      std::vector<int64_t> v;
      for (int64_t x = s; d > 0 ? x < l : x > l; x += d) {
        v.push_back(x);
        LOCKSTEP_REQUIRE(v.size() <= (size_t{1} << 28), "Range: more than 2^28 elements");
      }
      return {IntTensor({static_cast<int64_t>(v.size())}, v, start.elem)};
    }
    const float s = start.tensor.item(), l = limit.tensor.item(), d = delta.tensor.item();
    LOCKSTEP_REQUIRE(d != 0.0f && s == s && l == l && d == d, "Range: delta is 0 or a value is NaN");
    const double count_real = (static_cast<double>(l) - s) / d;
    LOCKSTEP_REQUIRE(count_real < double(1 << 28), "Range: more than 2^28 elements");
    int64_t count = static_cast<int64_t>(count_real);
    if (static_cast<double>(count) < count_real) ++count;  // ceil
    if (count < 0) count = 0;
    // Element i is start + i * delta in float32 (one rounded product, one rounded sum).
    std::vector<float> v(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      const float step = static_cast<float>(i) * d;
      v[i] = s + step;
    }
    return {FloatValue(Tensor::FromVector({count}, v))};
  };
}

Elem CastTarget(const NodeView& node, int64_t to) {
  Elem elem;
  if (!ElemFromDataType(static_cast<int32_t>(to), &elem)) {
    node.Unsupported("cast to " + DataTypeName(static_cast<int32_t>(to)) + "; lockstep holds FLOAT, INT64, INT32 and BOOL");
  }
  return elem;
}

Kernel CastKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  node.Require(node.Has("to"), "attribute 'to' is required");
  int64_t to_type = 0;
  if (node.opset() < 6) {  // then 'to' is the type's name
    const std::string name = node.String("to", "");
    for (int32_t t = 0; t <= kBfloat16; ++t) {
      if (DataTypeName(t) == name) to_type = t;
    }
    node.Require(to_type != 0, "unknown type name '" + name + "'");
  } else {
    to_type = node.Int("to", 0);
  }
  const Elem to = CastTarget(node, to_type);
  return [to](const Values& in, RunContext&) -> Values { return {CastValue(Input(in, 0, "Cast"), to)}; };
}

Kernel CastLikeKernel(const NodeView& node) {
  node.RequireInputs(2, 2);
  return [](const Values& in, RunContext&) -> Values {
    return {CastValue(Input(in, 0, "CastLike"), Input(in, 1, "CastLike").elem)};
  };
}

Kernel GatherKernel(const NodeView& node) {
  node.RequireInputs(2, 2);
  const int64_t axis_attr = node.Int("axis", 0);
  const std::string where = node.Where();
  return [axis_attr, where](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "Gather");
    const Value& idx = Input(in, 1, "Gather");
    LOCKSTEP_REQUIRE(idx.is_int(), "Gather: indices must be int64 or int32, got " << ElemName(idx.elem));
    const int64_t axis = Axis(axis_attr, static_cast<int64_t>(x.shape().size()), where);
    return {Take(x, axis, IntValues(idx), idx.shape(), "Gather")};
  };
}

Kernel GatherElementsKernel(const NodeView& node) {
  node.RequireInputs(2, 2);
  const int64_t axis_attr = node.Int("axis", 0);
  const std::string where = node.Where();
  return [axis_attr, where](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "GatherElements");
    const Value& idx = Input(in, 1, "GatherElements");
    LOCKSTEP_REQUIRE(idx.is_int(), "GatherElements: indices must be int64 or int32");
    const int64_t rank = static_cast<int64_t>(x.shape().size());
    const int64_t axis = Axis(axis_attr, rank, where);
    LOCKSTEP_REQUIRE(static_cast<int64_t>(idx.shape().size()) == rank,
                     "GatherElements: indices " << ShapeString(idx.shape()) << " and data " << ShapeString(x.shape())
                                                << " differ in rank");
    // Flat positions into x (row-major), each index replacing its coordinate along axis.
    const std::vector<int64_t> v = IntValues(idx);
    const Shape strides = ContiguousStrides(x.shape());
    std::vector<int64_t> flat(v.size());
    std::vector<int64_t> coord(static_cast<size_t>(rank), 0);
    for (size_t i = 0; i < v.size(); ++i) {
      int64_t at = 0;
      for (int64_t d = 0; d < rank; ++d) {
        int64_t c = coord[d];
        if (d == axis) {
          const int64_t n = x.shape()[d];
          LOCKSTEP_REQUIRE(v[i] >= -n && v[i] < n, "GatherElements: index " << v[i] << " is out of range for extent " << n);
          c = v[i] < 0 ? v[i] + n : v[i];
        } else {
          LOCKSTEP_REQUIRE(c < x.shape()[d], "GatherElements: indices " << ShapeString(idx.shape())
                                                                         << " exceed data " << ShapeString(x.shape()));
        }
        at += c * strides[d];
      }
      flat[i] = at;
      for (int64_t d = rank - 1; d >= 0; --d) {  // next coordinate of the index tensor
        if (++coord[d] < idx.shape()[d]) break;
        coord[d] = 0;
      }
    }
    const Value column{x.tensor.Reshape({x.tensor.numel(), 1}), x.elem};
    const Value picked = Take(column, 0, flat, {static_cast<int64_t>(flat.size())}, "GatherElements");
    return {Value{picked.tensor.Reshape(idx.shape()), x.elem}};
  };
}

Kernel DropoutKernel(const NodeView& node) {
  node.RequireInputs(1, node.opset() >= 12 ? 3 : 1);
  float ratio = node.Float("ratio", 0.5f);
  node.Int("seed", 0);  // lockstep's masks come from its own Philox streams (the load's seed)
  bool runtime_ratio = false, runtime_mode = false;
  if (node.opset() >= 12) {
    ratio = 0.5f;
    if (node.HasInput(1)) {
      const Value* r = node.Constant(1);
      runtime_ratio = r == nullptr;  // read at each run (a graph input, say)
      if (r != nullptr) {
        node.Require(r->tensor.numel() == 1 && r->is_float(), "ratio must be a float scalar");
        ratio = r->tensor.ToVector()[0];
      }
    }
    if (node.HasInput(2)) {
      const Value* mode = node.Constant(2);
      runtime_mode = mode == nullptr;  // then checked at each run
      // Training mode with ratio 0 keeps every element: the output and mask need no draws.
      const bool keeps_all = !runtime_ratio && ratio == 0.0f;
      if (mode != nullptr && mode->tensor.ToVector()[0] != 0.0f && !keeps_all) {
        node.Unsupported("training_mode is true or computed at run time: a mask drawn from another engine's generator "
                         "cannot be reproduced; lockstep drops out (with its own Philox streams) while the module trains");
      }
    }
  }
  if (node.opset() < 7 && node.Int("is_test", 0) == 0) {
    node.Unsupported("is_test = 0 (training mode) in a graph: lockstep drops out while the module trains");
  }
  node.Require(ratio >= 0.0f && ratio < 1.0f, "ratio must be in [0, 1), got " + std::to_string(ratio));
  const bool want_mask = node.HasOutput(1);
  const Elem mask_elem = node.opset() < 10 ? Elem::kFloat : Elem::kBool;  // older masks have the input's type
  return [ratio_attr = ratio, runtime_ratio, runtime_mode, want_mask, mask_elem](const Values& in,
                                                                                 RunContext& context) -> Values {
    const Value& x = Input(in, 0, "Dropout");
    float ratio = ratio_attr;
    const bool graph_trains = runtime_mode && IntValues(CastValue(Input(in, 2, "Dropout"), Elem::kInt64))[0] != 0;
    if (runtime_ratio && (context.training || graph_trains)) {
      const Value& r = Input(in, 1, "Dropout");
      LOCKSTEP_REQUIRE(r.tensor.numel() == 1 && r.is_float(), "Dropout: ratio must be a float scalar, got "
                                                                  << ElemName(r.elem) << " of shape " << ShapeString(r.shape()));
      ratio = r.tensor.ToVector()[0];
      LOCKSTEP_REQUIRE(ratio >= 0.0f && ratio < 1.0f, "Dropout: ratio must be in [0, 1), got " << ratio);
    }
    LOCKSTEP_REQUIRE_KIND(ErrorKind::kUnavailable, !graph_trains || ratio == 0.0f,
                          "unsupported: training_mode is true with ratio " << ratio << ": a mask drawn from another "
                          "engine's generator cannot be reproduced; lockstep drops out (with its own Philox streams) "
                          "while the module trains");
    Values out;
    if (!context.training || ratio == 0.0f || context.dropout == nullptr) {
      out.push_back(x);
      if (want_mask) out.push_back(Value{Tensor::Ones(x.shape()), mask_elem});
      return out;
    }
    Generator& gen = *context.dropout;
    const uint64_t offset = gen.Take(static_cast<uint64_t>(x.tensor.numel()));
    out.push_back(FloatValue(Dropout(FloatInput(x, "Dropout"), ratio, true, gen.seed, gen.stream, offset)));
    if (want_mask) {  // the same draws on ones: kept positions are nonzero
      NoGradGuard no_grad;
      const Tensor kept = Dropout(Tensor::Ones(x.shape()), ratio, true, gen.seed, gen.stream, offset);
      out.push_back(Value{NotEqual(kept, Tensor::Scalar(0.0f)), mask_elem});
    }
    return out;
  };
}

// Ones on the k-th diagonal of a 2-D shape, zeros elsewhere; the input's type unless `dtype`.
Kernel EyeLikeKernel(const NodeView& node) {
  node.RequireInputs(1, 1);
  const int64_t k = node.Int("k", 0);
  const bool has_dtype = node.Has("dtype");
  const Elem dtype = has_dtype ? CastTarget(node, node.Int("dtype", 0)) : Elem::kFloat;
  return [k, has_dtype, dtype](const Values& in, RunContext&) -> Values {
    const Value& x = Input(in, 0, "EyeLike");
    LOCKSTEP_REQUIRE(x.shape().size() == 2, "EyeLike: expected a 2-D input, got " << ShapeString(x.shape()));
    const int64_t rows = x.shape()[0], cols = x.shape()[1];
    std::vector<int64_t> v(static_cast<size_t>(rows * cols), 0);
    for (int64_t i = 0; i < rows; ++i) {
      if (i + k >= 0 && i + k < cols) v[i * cols + i + k] = 1;
    }
    return {IntTensor({rows, cols}, v, has_dtype ? dtype : x.elem)};
  };
}

}  // namespace

void AddValueOps(std::vector<OpSpec>* t) {
  t->push_back(OpSpec{"Constant", 1, ConstantKernel}
                   .Reads({"sparse_value", "value", "value_float", "value_floats", "value_int", "value_ints",
                           "value_string", "value_strings"}));
  t->push_back(OpSpec{"Shape", 1, ShapeKernel}.Reads({"end", "start"}));
  t->push_back({"Size", 1, SizeKernel});
  t->push_back(OpSpec{"ConstantOfShape", 9, ConstantOfShapeKernel, {0}}.Reads({"value"}));
  t->push_back({"Range", 11, RangeKernel, {0, 1, 2}});
  t->push_back(OpSpec{"Cast", 1, CastKernel}
                   .Reads({"to"})
                   .Scope("every type but strings; float64 straight to float16 and bfloat16"));
  t->push_back(OpSpec{"EyeLike", 9, EyeLikeKernel}.Reads({"dtype", "k"}));
  t->push_back({"CastLike", 15, CastLikeKernel});
  t->push_back(OpSpec{"Gather", 1, GatherKernel, {1}}.Reads({"axis"}));
  t->push_back(OpSpec{"GatherElements", 11, GatherElementsKernel, {1}}.Reads({"axis"}));
  t->push_back(OpSpec{"Dropout", 1, DropoutKernel, {1, 2}}
                   .Reads({"ratio", "seed"})
                   .Scope("masks from lockstep's Philox streams while the module trains; training_mode with a nonzero ratio refused"));
}

}  // namespace onnx
}  // namespace lockstep
