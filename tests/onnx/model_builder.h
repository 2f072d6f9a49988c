// Writes small ONNX models in protobuf's wire format for the tests: enough of ModelProto to build
// graphs by hand (nodes with attributes, initializers, typed inputs and outputs), and deliberately
// broken ones.
#ifndef LOCKSTEP_TESTS_ONNX_MODEL_BUILDER_H_
#define LOCKSTEP_TESTS_ONNX_MODEL_BUILDER_H_

#include <stdint.h>
#include <string.h>

#include <string>
#include <vector>

namespace lockstep {
namespace testing {

using Bytes = std::vector<uint8_t>;

inline void Varint(Bytes* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<uint8_t>(v));
}
inline void Key(Bytes* out, uint32_t field, uint32_t type) { Varint(out, (uint64_t{field} << 3) | type); }
inline void VarintField(Bytes* out, uint32_t field, int64_t v) {
  Key(out, field, 0);
  Varint(out, static_cast<uint64_t>(v));
}
inline void BytesField(Bytes* out, uint32_t field, const Bytes& b) {
  Key(out, field, 2);
  Varint(out, b.size());
  out->insert(out->end(), b.begin(), b.end());
}
inline void StringField(Bytes* out, uint32_t field, const std::string& s) { BytesField(out, field, Bytes(s.begin(), s.end())); }
inline void FloatField(Bytes* out, uint32_t field, float f) {
  Key(out, field, 5);
  uint32_t bits;
  memcpy(&bits, &f, 4);
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<uint8_t>(bits >> (8 * i)));
}

// TensorProto with float data (raw, little-endian) or int64 data (packed int64_data).
inline Bytes FloatTensor(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values) {
  Bytes t, packed, raw;
  for (int64_t d : dims) Varint(&packed, static_cast<uint64_t>(d));
  BytesField(&t, 1, packed);
  VarintField(&t, 2, 1);  // FLOAT
  StringField(&t, 8, name);
  for (float v : values) {
    uint32_t bits;
    memcpy(&bits, &v, 4);
    for (int i = 0; i < 4; ++i) raw.push_back(static_cast<uint8_t>(bits >> (8 * i)));
  }
  BytesField(&t, 9, raw);
  return t;
}
inline Bytes Int64Tensor(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& values) {
  Bytes t, packed_dims, packed;
  for (int64_t d : dims) Varint(&packed_dims, static_cast<uint64_t>(d));
  BytesField(&t, 1, packed_dims);
  VarintField(&t, 2, 7);  // INT64
  StringField(&t, 8, name);
  for (int64_t v : values) Varint(&packed, static_cast<uint64_t>(v));
  BytesField(&t, 7, packed);
  return t;
}

struct Attr {
  std::string name;
  Bytes encoded;  // the AttributeProto
  static Attr Int(const std::string& n, int64_t v) {
    Attr a{n, {}};
    StringField(&a.encoded, 1, n);
    VarintField(&a.encoded, 3, v);
    VarintField(&a.encoded, 20, 2);
    return a;
  }
  static Attr Float(const std::string& n, float v) {
    Attr a{n, {}};
    StringField(&a.encoded, 1, n);
    FloatField(&a.encoded, 2, v);
    VarintField(&a.encoded, 20, 1);
    return a;
  }
  static Attr String(const std::string& n, const std::string& v) {
    Attr a{n, {}};
    StringField(&a.encoded, 1, n);
    StringField(&a.encoded, 4, v);
    VarintField(&a.encoded, 20, 3);
    return a;
  }
  static Attr Ints(const std::string& n, const std::vector<int64_t>& v) {
    Attr a{n, {}};
    StringField(&a.encoded, 1, n);
    Bytes packed;
    for (int64_t x : v) Varint(&packed, static_cast<uint64_t>(x));
    BytesField(&a.encoded, 8, packed);
    VarintField(&a.encoded, 20, 7);
    return a;
  }
  static Attr Graph(const std::string& n, const Bytes& graph) {  // graph: a ModelBuilder's `graph`
    Attr a{n, {}};
    StringField(&a.encoded, 1, n);
    BytesField(&a.encoded, 6, graph);
    VarintField(&a.encoded, 20, 5);
    return a;
  }
  static Attr Tensor(const std::string& n, const Bytes& tensor) {
    Attr a{n, {}};
    StringField(&a.encoded, 1, n);
    BytesField(&a.encoded, 5, tensor);
    VarintField(&a.encoded, 20, 4);
    return a;
  }
};

// A ValueInfoProto: elem_type and dims (-1 for a named dimension "N").
inline Bytes ValueInfo(const std::string& name, int32_t elem_type, const std::vector<int64_t>& dims) {
  Bytes shape, tensor, type, v;
  for (int64_t d : dims) {
    Bytes dim;
    if (d >= 0) {
      VarintField(&dim, 1, d);
    } else {
      StringField(&dim, 2, "N");
    }
    BytesField(&shape, 1, dim);
  }
  VarintField(&tensor, 1, elem_type);
  BytesField(&tensor, 2, shape);
  BytesField(&type, 1, tensor);
  StringField(&v, 1, name);
  BytesField(&v, 2, type);
  return v;
}

// A ValueInfoProto of a sequence of tensors of elem_type (TypeProto.sequence_type, its elem_type a
// tensor type without a shape).
inline Bytes SequenceValueInfo(const std::string& name, int32_t elem_type) {
  Bytes tensor, inner, sequence, type, v;
  VarintField(&tensor, 1, elem_type);
  BytesField(&inner, 1, tensor);
  BytesField(&sequence, 1, inner);
  BytesField(&type, 4, sequence);
  StringField(&v, 1, name);
  BytesField(&v, 2, type);
  return v;
}

struct ModelBuilder {
  Bytes graph;
  int64_t opset = 13;
  int64_t ir_version = 8;

  ModelBuilder& Node(const std::string& op, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& outputs, const std::vector<Attr>& attrs = {},
                     const std::string& name = "") {
    Bytes n;
    for (const std::string& i : inputs) StringField(&n, 1, i);
    for (const std::string& o : outputs) StringField(&n, 2, o);
    StringField(&n, 3, name.empty() ? outputs.at(0) : name);
    StringField(&n, 4, op);
    for (const Attr& a : attrs) BytesField(&n, 5, a.encoded);
    BytesField(&graph, 1, n);
    return *this;
  }
  ModelBuilder& Initializer(const Bytes& tensor) {
    BytesField(&graph, 5, tensor);
    return *this;
  }
  ModelBuilder& Input(const std::string& name, const std::vector<int64_t>& dims, int32_t elem_type = 1) {
    BytesField(&graph, 11, ValueInfo(name, elem_type, dims));
    return *this;
  }
  ModelBuilder& Output(const std::string& name, const std::vector<int64_t>& dims, int32_t elem_type = 1) {
    BytesField(&graph, 12, ValueInfo(name, elem_type, dims));
    return *this;
  }
  ModelBuilder& SequenceInput(const std::string& name, int32_t elem_type = 1) {
    BytesField(&graph, 11, SequenceValueInfo(name, elem_type));
    return *this;
  }
  ModelBuilder& SequenceOutput(const std::string& name, int32_t elem_type = 1) {
    BytesField(&graph, 12, SequenceValueInfo(name, elem_type));
    return *this;
  }
  Bytes Build() const {
    Bytes m, opset_id;
    VarintField(&m, 1, ir_version);
    StringField(&m, 2, "lockstep-test");
    BytesField(&m, 7, graph);
    StringField(&opset_id, 1, "");
    VarintField(&opset_id, 2, opset);
    BytesField(&m, 8, opset_id);
    return m;
  }
};

}  // namespace testing
}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_ONNX_MODEL_BUILDER_H_
