#include "onnx/op_registry.h"

#include <algorithm>
#include <sstream>

#include "core/error.h"

namespace lockstep {
namespace onnx {

std::string NodeView::Where() const {
  std::ostringstream s;
  s << "node '" << (proto_.name.empty() ? (proto_.output.empty() ? std::string("?") : proto_.output[0]) : proto_.name)
    << "' (" << proto_.op_type << ", opset " << opset_ << ")";
  return s.str();
}

const AttributeProto* NodeView::Find(const char* name) const {
  const bool listed = std::find(attributes_.begin(), attributes_.end(), name) != attributes_.end();
  LOCKSTEP_REQUIRE_KIND(ErrorKind::kInternal, listed,
                        proto_.op_type << " reads attribute '" << name
                                       << "', which its operator table entry does not list");
  for (const AttributeProto& a : proto_.attribute) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

const AttributeProto& NodeView::Typed(const char* name, int32_t type) const {
  const AttributeProto* a = Find(name);
  LOCKSTEP_ASSERT(a != nullptr);
  if (!a->ref_attr_name.empty()) Unsupported(std::string("attribute '") + name + "' refers to a function's attribute");
  // Writers before IR 3 may leave the type unset; then the present field decides.
  int32_t actual = a->type;
  if (actual == kAttrUndefined) {
    actual = a->has_f ? kAttrFloat : a->has_i ? kAttrInt : a->has_s ? kAttrString : !a->t.empty() ? kAttrTensor
             : !a->ints.empty() ? kAttrInts : !a->floats.empty() ? kAttrFloats : !a->strings.empty() ? kAttrStrings
                                                                                                     : kAttrUndefined;
  }
  Require(actual == type, std::string("attribute '") + name + "' should be " + AttributeTypeName(type) + ", the file has " +
                              AttributeTypeName(actual));
  return *a;
}

const GraphProto* NodeView::Graph(const char* name) const {
  if (!Has(name)) return nullptr;
  const AttributeProto& a = Typed(name, kAttrGraph);
  Require(a.g.size() == 1, std::string("attribute '") + name + "' holds no graph");
  return &a.g[0];
}

int64_t NodeView::Int(const char* name, int64_t fallback) const {
  return Has(name) ? Typed(name, kAttrInt).i : fallback;
}

float NodeView::Float(const char* name, float fallback) const {
  return Has(name) ? Typed(name, kAttrFloat).f : fallback;
}

std::string NodeView::String(const char* name, const std::string& fallback) const {
  return Has(name) ? Typed(name, kAttrString).s : fallback;
}

std::vector<int64_t> NodeView::Ints(const char* name, const std::vector<int64_t>& fallback) const {
  return Has(name) ? Typed(name, kAttrInts).ints : fallback;
}

std::vector<float> NodeView::Floats(const char* name) const {
  return Has(name) ? Typed(name, kAttrFloats).floats : std::vector<float>();
}

const TensorProto* NodeView::TensorAttr(const char* name) const {
  if (!Has(name)) return nullptr;
  const AttributeProto& a = Typed(name, kAttrTensor);
  Require(a.t.size() == 1, std::string("attribute '") + name + "' holds no tensor");
  return &a.t[0];
}

std::vector<int64_t> NodeView::ConstantInts(size_t i, const char* what) const {
  const Value* v = Constant(i);
  if (v == nullptr) {
    Unsupported(std::string(what) + " (input " + std::to_string(i) + ", '" + proto_.input[i] +
                "') is computed at run time; lockstep needs it constant at load time");
  }
  Require(v->is_int(), std::string(what) + " must be an integer tensor, got " + ElemName(v->elem));
  return IntValues(*v);
}

void NodeView::Require(bool condition, const std::string& message) const {
  LOCKSTEP_REQUIRE_FORMAT(condition, Where() << ": " << message);
}

void NodeView::Unsupported(const std::string& message) const {
  throw Error(Where() + ": unsupported: " + message, ErrorKind::kUnavailable);
}

void NodeView::RequireInputs(size_t min, size_t max) const {
  Require(inputs() >= min && inputs() <= max,
          "expected " + (min == max ? std::to_string(min) : std::to_string(min) + " to " + std::to_string(max)) +
              " inputs, got " + std::to_string(inputs()));
  for (size_t i = 0; i < min; ++i) Require(HasInput(i), "input " + std::to_string(i) + " is required");
}

const std::vector<OpSpec>& OperatorTable() {
  static const std::vector<OpSpec> table = [] {
    std::vector<OpSpec> t;
    // Each family's entries, labelled for the documentation.
    const std::pair<void (*)(std::vector<OpSpec>*), const char*> families[] = {
        {AddElementwiseOps, "elementwise"},   {AddPowerOps, "elementwise"},      {AddEinsumOps, "layers"},
        {AddShapeOps, "shapes and data"},     {AddValueOps, "values and casts"}, {AddNetworkOps, "layers"},
        {AddReduceOps, "reductions"},         {AddLossOps, "losses"},            {AddIndexOps, "indexing"},
        {AddSignalOps, "signals"},            {AddQuantizeOps, "quantisation"},  {AddRecurrentOps, "recurrent"},
        {AddResizeOps, "resizing"},           {AddDetectionOps, "detection"},    {AddNormalizeOps, "normalisation"},
        {AddGridSampleOps, "resizing"},       {AddTextOps, "text"},              {AddSequenceOps, "sequences"},
        {AddControlOps, "control flow"},
    };
    for (const auto& [add, family] : families) {
      const size_t first = t.size();
      add(&t);
      for (size_t i = first; i < t.size(); ++i) t[i].family = family;
    }
    std::sort(t.begin(), t.end(), [](const OpSpec& a, const OpSpec& b) { return std::string(a.name) < b.name; });
    return t;
  }();
  return table;
}

const OpSpec* FindOperator(const std::string& op_type) {
  for (const OpSpec& spec : OperatorTable()) {
    if (op_type == spec.name) return &spec;
  }
  return nullptr;
}

std::string SupportedOperatorList() {
  std::string out;
  for (const OpSpec& spec : OperatorTable()) out += (out.empty() ? "" : ", ") + std::string(spec.name);
  return out;
}

}  // namespace onnx
}  // namespace lockstep
