#include "onnx/proto.h"

#include <set>

#include "core/error.h"
#include "onnx/wire.h"

namespace lockstep {
namespace onnx {

namespace {

std::string Index(const std::string& where, const char* field, size_t i) {
  return where + "." + field + "[" + std::to_string(i) + "]";
}

TensorProto ReadTensor(Bytes message, const std::string& where) {
  TensorProto t;
  WireReader r(message, where);
  Field f;
  while (r.Next(&f)) {
    switch (f.number) {
      case 1: AppendInt64s(f, where + ".dims", &t.dims); break;
      case 2: t.data_type = AsInt32(f, where + ".data_type"); break;
      case 3: t.segmented = true; break;
      case 4: AppendFloats(f, where + ".float_data", &t.float_data); break;
      case 5: AppendInt32s(f, where + ".int32_data", &t.int32_data); break;
      case 6: AsBytes(f, where + ".string_data"); ++t.string_count; break;
      case 7: AppendInt64s(f, where + ".int64_data", &t.int64_data); break;
      case 8: t.name = AsString(f, where + ".name"); break;
      case 9: {
        const Bytes b = AsBytes(f, where + ".raw_data");
        t.raw_data.assign(b.data, b.data + b.size);
        t.has_raw_data = true;
        break;
      }
      case 10: AppendDoubles(f, where + ".double_data", &t.double_data); break;
      case 11: AppendUint64s(f, where + ".uint64_data", &t.uint64_data); break;
      case 13: AsBytes(f, where + ".external_data"); t.external = true; break;
      case 14: t.external = t.external || AsInt32(f, where + ".data_location") == 1; break;
      default: break;
    }
  }
  return t;
}

void ReadShape(Bytes message, const std::string& where, ValueInfoProto* v) {
  WireReader r(message, where);
  Field f;
  v->has_shape = true;
  while (r.Next(&f)) {
    if (f.number != 1) continue;
    const std::string at = Index(where, "dim", v->dims.size());
    WireReader dim(AsBytes(f, at), at);
    Field d;
    int64_t value = -1;
    std::string param;
    while (dim.Next(&d)) {
      if (d.number == 1) {
        value = AsInt64(d, at + ".dim_value");
        LOCKSTEP_REQUIRE_FORMAT(value >= 0, at << ": negative dimension " << value);
      } else if (d.number == 2) {
        param = AsString(d, at + ".dim_param");
        value = -1;
      }
    }
    v->dims.push_back(value);
    v->dim_params.push_back(param);
  }
}

// TypeProto's fields: tensor_type 1, sequence_type 4, map_type 5, sparse_tensor_type 8, optional_type 9;
// a sequence's or optional's elem_type (a TypeProto) is field 1.
constexpr uint32_t kTensorType = 1, kSequenceType = 4, kOptionalType = 9;

void ReadTensorType(Bytes message, const std::string& at, bool with_shape, ValueInfoProto* v) {
  WireReader tensor(message, at);
  Field e;
  while (tensor.Next(&e)) {
    if (e.number == 1) v->elem_type = AsInt32(e, at + ".elem_type");
    if (e.number == 2 && with_shape) ReadShape(AsBytes(e, at + ".shape"), at + ".shape", v);
  }
}

// The type a sequence or optional holds: a tensor type, or (for an optional) a sequence of tensors.
// Two levels at most, read without recursion.
TypeKind ReadElementType(Bytes message, const std::string& at, bool sequences_allowed, ValueInfoProto* v) {
  TypeKind kind = TypeKind::kOther;
  WireReader r(message, at);
  Field f;
  while (r.Next(&f)) {
    if (f.number != 1) continue;
    WireReader type(AsBytes(f, at + ".elem_type"), at + ".elem_type");
    Field t;
    while (type.Next(&t)) {
      if (t.number == kTensorType) {
        ReadTensorType(AsBytes(t, at + ".elem_type.tensor_type"), at + ".elem_type.tensor_type", false, v);
        kind = TypeKind::kTensor;
      } else if (t.number == kSequenceType && sequences_allowed) {
        const std::string inner = at + ".elem_type.sequence_type";
        kind = ReadElementType(AsBytes(t, inner), inner, false, v) == TypeKind::kTensor ? TypeKind::kSequence
                                                                                        : TypeKind::kOther;
      } else {
        AsBytes(t, at + ".elem_type");
        kind = TypeKind::kOther;
      }
    }
  }
  return kind;
}

ValueInfoProto ReadValueInfo(Bytes message, const std::string& where) {
  ValueInfoProto v;
  WireReader r(message, where);
  Field f;
  while (r.Next(&f)) {
    if (f.number == 1) {
      v.name = AsString(f, where + ".name");
    } else if (f.number == 2) {
      WireReader type(AsBytes(f, where + ".type"), where + ".type");
      Field t;
      while (type.Next(&t)) {
        if (t.number == kTensorType) {
          v.kind = TypeKind::kTensor;
          ReadTensorType(AsBytes(t, where + ".type.tensor_type"), where + ".type.tensor_type", true, &v);
        } else if (t.number == kSequenceType) {
          const std::string at = where + ".type.sequence_type";
          v.kind = ReadElementType(AsBytes(t, at), at, false, &v) == TypeKind::kTensor ? TypeKind::kSequence
                                                                                      : TypeKind::kOther;
        } else if (t.number == kOptionalType) {
          const std::string at = where + ".type.optional_type";
          const TypeKind inner = ReadElementType(AsBytes(t, at), at, true, &v);
          v.kind = inner == TypeKind::kTensor     ? TypeKind::kOptionalTensor
                   : inner == TypeKind::kSequence ? TypeKind::kOptionalSequence
                                                  : TypeKind::kOther;
        } else {  // map, sparse tensor
          AsBytes(t, where + ".type");
          v.kind = TypeKind::kOther;
        }
      }
    }
  }
  return v;
}

SequenceProto ReadSequence(Bytes message, const std::string& where) {
  SequenceProto s;
  WireReader r(message, where);
  Field f;
  while (r.Next(&f)) {
    if (f.number == 3) {
      const std::string at = Index(where, "tensor_values", s.tensors.size());
      s.tensors.push_back(ReadTensor(AsBytes(f, at), at));
    } else if (f.number >= 4 && f.number <= 7) {
      AsBytes(f, where);
      s.other = true;
    }
  }
  return s;
}

GraphProto ReadGraph(Bytes message, const std::string& where, int depth);

AttributeProto ReadAttribute(Bytes message, const std::string& where, int depth) {
  AttributeProto a;
  WireReader r(message, where);
  Field f;
  while (r.Next(&f)) {
    switch (f.number) {
      case 1: a.name = AsString(f, where + ".name"); break;
      case 2: a.f = AsFloat(f, where + ".f"); a.has_f = true; break;
      case 3: a.i = AsInt64(f, where + ".i"); a.has_i = true; break;
      case 4: a.s = AsString(f, where + ".s"); a.has_s = true; break;
      case 5:
        a.t.clear();
        a.t.push_back(ReadTensor(AsBytes(f, where + ".t"), where + ".t"));
        break;
      case 6:
        LOCKSTEP_REQUIRE_FORMAT(depth < kMaxGraphDepth, where << ": graphs nested more than " << kMaxGraphDepth
                                                              << " deep");
        a.g.clear();
        a.g.push_back(ReadGraph(AsBytes(f, where + ".g"), where + ".g", depth + 1));
        break;
      case 11: case 14: case 15: case 22: case 23:  // graph lists, type protos, sparse tensors
        AsBytes(f, where);
        a.has_other = true;
        break;
      case 7: AppendFloats(f, where + ".floats", &a.floats); break;
      case 8: AppendInt64s(f, where + ".ints", &a.ints); break;
      case 9: a.strings.push_back(AsString(f, where + ".strings")); break;
      case 10:  // tensors: counted as present, not used by any supported operator
        AsBytes(f, where + ".tensors");
        a.has_other = true;
        break;
      case 20: a.type = AsInt32(f, where + ".type"); break;
      case 21: a.ref_attr_name = AsString(f, where + ".ref_attr_name"); break;
      default: break;
    }
  }
  return a;
}

// The names a graph reads that it does not define: its nodes' inputs (and their own subgraphs' free
// names) other than its inputs, initializers and node outputs.
std::set<std::string> FreeNames(const GraphProto& g) {
  std::set<std::string> defined, read;
  for (const ValueInfoProto& v : g.input) defined.insert(v.name);
  for (const TensorProto& t : g.initializer) defined.insert(t.name);
  for (const NodeProto& n : g.node) {
    for (const std::string& o : n.output) defined.insert(o);
    for (const std::string& i : n.input) read.insert(i);
    for (const std::string& i : n.implicit_input) read.insert(i);
  }
  for (const ValueInfoProto& v : g.output) read.insert(v.name);
  std::set<std::string> free;
  for (const std::string& name : read) {
    if (!name.empty() && !defined.count(name)) free.insert(name);
  }
  return free;
}

NodeProto ReadNode(Bytes message, const std::string& where, int depth) {
  NodeProto n;
  WireReader r(message, where);
  Field f;
  while (r.Next(&f)) {
    switch (f.number) {
      case 1: n.input.push_back(AsString(f, where + ".input")); break;
      case 2: n.output.push_back(AsString(f, where + ".output")); break;
      case 3: n.name = AsString(f, where + ".name"); break;
      case 4: n.op_type = AsString(f, where + ".op_type"); break;
      case 5:
        n.attribute.push_back(ReadAttribute(AsBytes(f, where), Index(where, "attribute", n.attribute.size()), depth));
        break;
      case 7: n.domain = AsString(f, where + ".domain"); break;
      default: break;
    }
  }
  std::set<std::string> implicit;
  for (const AttributeProto& a : n.attribute) {
    for (const GraphProto& g : a.g) {
      const std::set<std::string> free = FreeNames(g);
      implicit.insert(free.begin(), free.end());
    }
  }
  n.implicit_input.assign(implicit.begin(), implicit.end());
  return n;
}

GraphProto ReadGraph(Bytes message, const std::string& where, int depth) {
  GraphProto g;
  WireReader r(message, where);
  Field f;
  while (r.Next(&f)) {
    switch (f.number) {
      case 1: g.node.push_back(ReadNode(AsBytes(f, where), Index(where, "node", g.node.size()), depth)); break;
      case 2: g.name = AsString(f, where + ".name"); break;
      case 5:
        g.initializer.push_back(ReadTensor(AsBytes(f, where), Index(where, "initializer", g.initializer.size())));
        break;
      case 11: g.input.push_back(ReadValueInfo(AsBytes(f, where), Index(where, "input", g.input.size()))); break;
      case 12: g.output.push_back(ReadValueInfo(AsBytes(f, where), Index(where, "output", g.output.size()))); break;
      case 13:
        g.value_info.push_back(ReadValueInfo(AsBytes(f, where), Index(where, "value_info", g.value_info.size())));
        break;
      case 15: AsBytes(f, where); ++g.sparse_initializer_count; break;
      default: break;
    }
  }
  return g;
}

}  // namespace

std::string DataTypeName(int32_t type) {
  static const char* const kNames[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING",
                                       "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
  if (type >= 0 && type <= kBfloat16) return kNames[type];
  return "type " + std::to_string(type);
}

std::string AttributeTypeName(int32_t type) {
  static const char* const kNames[] = {"UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH", "FLOATS", "INTS",
                                       "STRINGS", "TENSORS", "GRAPHS", "SPARSE_TENSOR", "SPARSE_TENSORS",
                                       "TYPE_PROTO", "TYPE_PROTOS"};
  if (type >= 0 && type <= kAttrTypeProtos) return kNames[type];
  return "type " + std::to_string(type);
}

int64_t CheckedElementCount(const TensorProto& t, const std::string& where) {
  if (t.external) {
    throw Error(where + ": tensor '" + t.name + "' keeps its data in an external file, which lockstep does not read; "
                "save the model with its weights inside (onnx.save(model, path, save_as_external_data=False))",
                ErrorKind::kUnavailable);
  }
  LOCKSTEP_REQUIRE_FORMAT(!t.segmented, where << ": tensor '" << t.name << "' is segmented, which ONNX files do not use");
  size_t width = 0;
  size_t present = 0;
  switch (t.data_type) {
    case kFloat: width = 4; present = t.float_data.size(); break;
    case kInt32: width = 4; present = t.int32_data.size(); break;
    case kInt64: width = 8; present = t.int64_data.size(); break;
    case kBool:
    case kInt8:
    case kUint8: width = 1; present = t.int32_data.size(); break;
    case kInt16:
    case kUint16:
    case kFloat16:
    case kBfloat16: width = 2; present = t.int32_data.size(); break;
    case kUint32: width = 4; present = t.uint64_data.size(); break;
    case kUint64: width = 8; present = t.uint64_data.size(); break;
    case kDouble: width = 8; present = t.double_data.size(); break;
    default:
      throw Error(where + ": tensor '" + t.name + "' has element type " + DataTypeName(t.data_type) +
                      "; lockstep computes with FLOAT, DOUBLE, FLOAT16, BFLOAT16, BOOL and the 8- to 64-bit integer tensors",
                  ErrorKind::kUnavailable);
  }
  int64_t count = 1;
  for (int64_t d : t.dims) {
    LOCKSTEP_REQUIRE_FORMAT(d >= 0, where << ": tensor '" << t.name << "' has a negative dimension " << d);
    LOCKSTEP_REQUIRE_FORMAT(d == 0 || count <= INT64_MAX / d, where << ": tensor '" << t.name << "' is too large");
    count *= d;
  }
  if (t.has_raw_data) {
    LOCKSTEP_REQUIRE_FORMAT(t.raw_data.size() % width == 0 && t.raw_data.size() / width == static_cast<uint64_t>(count),
                            where << ": tensor '" << t.name << "' declares " << count << " elements of "
                                  << DataTypeName(t.data_type) << " but its raw data holds " << t.raw_data.size()
                                  << " bytes");
  } else {
    LOCKSTEP_REQUIRE_FORMAT(present == static_cast<uint64_t>(count),
                            where << ": tensor '" << t.name << "' declares " << count << " elements but holds "
                                  << present);
  }
  return count;
}

ModelProto DecodeModel(const uint8_t* data, size_t size) {
  ModelProto m;
  WireReader r(Bytes{data, size}, "model");
  Field f;
  while (r.Next(&f)) {
    switch (f.number) {
      case 1: m.ir_version = AsInt64(f, "model.ir_version"); break;
      case 2: m.producer_name = AsString(f, "model.producer_name"); break;
      case 3: m.producer_version = AsString(f, "model.producer_version"); break;
      case 7:
        m.graph = ReadGraph(AsBytes(f, "model.graph"), "model.graph", 0);
        m.has_graph = true;
        break;
      case 8: {
        const std::string at = Index("model", "opset_import", m.opset_import.size());
        WireReader op(AsBytes(f, at), at);
        Field o;
        OperatorSetId id;
        while (op.Next(&o)) {
          if (o.number == 1) id.domain = AsString(o, at + ".domain");
          if (o.number == 2) id.version = AsInt64(o, at + ".version");
        }
        m.opset_import.push_back(id);
        break;
      }
      case 25: AsBytes(f, "model.functions"); ++m.function_count; break;
      default: break;
    }
  }
  return m;
}

TensorProto DecodeTensor(const uint8_t* data, size_t size, const std::string& where) {
  return ReadTensor(Bytes{data, size}, where);
}

SequenceProto DecodeSequence(const uint8_t* data, size_t size, const std::string& where) {
  return ReadSequence(Bytes{data, size}, where);
}

// OptionalProto: tensor_value 3, sequence_value 5 (4, 6, 7: sparse tensors, maps, optionals).
OptionalProto DecodeOptional(const uint8_t* data, size_t size, const std::string& where) {
  OptionalProto o;
  WireReader r(Bytes{data, size}, where);
  Field f;
  while (r.Next(&f)) {
    if (f.number == 3) {
      o.tensor.assign(1, ReadTensor(AsBytes(f, where + ".tensor_value"), where + ".tensor_value"));
    } else if (f.number == 5) {
      o.sequence.assign(1, ReadSequence(AsBytes(f, where + ".sequence_value"), where + ".sequence_value"));
    } else if (f.number == 4 || f.number == 6 || f.number == 7) {
      AsBytes(f, where);
      o.other = true;
    }
  }
  return o;
}

}  // namespace onnx
}  // namespace lockstep
