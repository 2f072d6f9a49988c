// ONNX's messages (onnx.proto, IR version 3 and later) as plain structs, decoded with the wire
// reader. Only the fields lockstep uses are kept; unknown fields are skipped, as protobuf does.
// Subgraph attributes (If, Loop, Scan and SequenceMap bodies) are decoded to a bounded depth
// (kMaxGraphDepth), so a hostile file cannot make the decoder recurse without limit.
#ifndef LOCKSTEP_ONNX_PROTO_H_
#define LOCKSTEP_ONNX_PROTO_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

namespace lockstep {
namespace onnx {

// TensorProto.DataType.
enum DataType : int32_t {
  kUndefined = 0, kFloat = 1, kUint8 = 2, kInt8 = 3, kUint16 = 4, kInt16 = 5, kInt32 = 6, kInt64 = 7,
  kString = 8, kBool = 9, kFloat16 = 10, kDouble = 11, kUint32 = 12, kUint64 = 13, kComplex64 = 14,
  kComplex128 = 15, kBfloat16 = 16,
};
// "FLOAT", "INT64", ... ("type 99" for unknown values).
std::string DataTypeName(int32_t type);

struct TensorProto {
  std::string name;
  std::vector<int64_t> dims;
  int32_t data_type = kUndefined;
  std::vector<uint8_t> raw_data;
  bool has_raw_data = false;
  std::vector<float> float_data;
  std::vector<int32_t> int32_data;  // also int8/16, uint8/16, bool and float16 bits
  std::vector<int64_t> int64_data;
  std::vector<double> double_data;
  std::vector<uint64_t> uint64_data;
  size_t string_count = 0;
  bool external = false;  // data_location == EXTERNAL or external_data entries
  bool segmented = false;
};

// AttributeProto.AttributeType.
enum AttributeType : int32_t {
  kAttrUndefined = 0, kAttrFloat = 1, kAttrInt = 2, kAttrString = 3, kAttrTensor = 4, kAttrGraph = 5,
  kAttrFloats = 6, kAttrInts = 7, kAttrStrings = 8, kAttrTensors = 9, kAttrGraphs = 10,
  kAttrSparseTensor = 11, kAttrSparseTensors = 12, kAttrTypeProto = 13, kAttrTypeProtos = 14,
};
std::string AttributeTypeName(int32_t type);

struct GraphProto;
// Graphs nested in graphs (a Loop body holding an If, ...): deeper ones are refused (kFormat).
constexpr int kMaxGraphDepth = 8;

struct AttributeProto {
  std::string name;
  int32_t type = kAttrUndefined;
  float f = 0;
  int64_t i = 0;
  std::string s;
  std::vector<TensorProto> t;  // 0 or 1 (a vector: TensorProto is defined above, the optional is cheap)
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  bool has_f = false, has_i = false, has_s = false;
  bool has_other = false;  // a list of graphs, a sparse tensor or a type value: present, not decoded
  std::vector<GraphProto> g;  // 0 or 1: a graph attribute
  std::string ref_attr_name;
};

struct NodeProto {
  std::vector<std::string> input, output;
  // The names its subgraphs read from the enclosing graphs (defined in none of them), sorted: the
  // node depends on them as on its inputs.
  std::vector<std::string> implicit_input;
  std::string name, op_type, domain;
  std::vector<AttributeProto> attribute;
};

// The kinds of value a graph's inputs and outputs can be that lockstep holds: a tensor, a sequence of
// tensors, an optional tensor or an optional sequence of tensors (maps, sparse tensors and deeper
// nestings are kOther).
enum class TypeKind { kOther, kTensor, kSequence, kOptionalTensor, kOptionalSequence };

// A value's type: its kind, the element type of its tensors, and a tensor's shape (each dimension a
// value (>= 0) or a name (-1 in dims, name in params)).
struct ValueInfoProto {
  std::string name;
  int32_t elem_type = kUndefined;
  TypeKind kind = TypeKind::kOther;
  bool has_shape = false;
  std::vector<int64_t> dims;
  std::vector<std::string> dim_params;
};

struct GraphProto {
  std::string name;
  std::vector<NodeProto> node;
  std::vector<TensorProto> initializer;
  size_t sparse_initializer_count = 0;
  std::vector<ValueInfoProto> input, output, value_info;
};

struct OperatorSetId {
  std::string domain;
  int64_t version = 0;
};

struct ModelProto {
  int64_t ir_version = 0;
  std::vector<OperatorSetId> opset_import;
  std::string producer_name, producer_version;
  GraphProto graph;
  bool has_graph = false;
  size_t function_count = 0;  // model-local functions (not supported)
};

// The element count of a tensor message, checked against the data it holds (raw bytes or typed
// values) before anything is allocated. Refuses (kind kUnavailable) external data, strings and
// element types lockstep does not compute with; a count that contradicts the data is kFormat.
int64_t CheckedElementCount(const TensorProto& t, const std::string& where);

// Decoders: throw lockstep::Error (kind kFormat) naming the field path on malformed input.
ModelProto DecodeModel(const uint8_t* data, size_t size);
TensorProto DecodeTensor(const uint8_t* data, size_t size, const std::string& where);

// SequenceProto (of tensors) and OptionalProto (of a tensor or a sequence of tensors), as ONNX's
// test data stores those values.
struct SequenceProto {
  std::vector<TensorProto> tensors;
  bool other = false;  // holds sequences, maps or sparse tensors
};
struct OptionalProto {
  std::vector<TensorProto> tensor;      // 0 or 1
  std::vector<SequenceProto> sequence;  // 0 or 1
  bool other = false;
};
SequenceProto DecodeSequence(const uint8_t* data, size_t size, const std::string& where);
OptionalProto DecodeOptional(const uint8_t* data, size_t size, const std::string& where);

}  // namespace onnx
}  // namespace lockstep

#endif  // LOCKSTEP_ONNX_PROTO_H_
