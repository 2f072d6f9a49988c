// ONNX's own backend test data (Debian's libonnx-testdata: data/node, pytorch-converted,
// pytorch-operator, simple) run through the importer: every case whose model loads is run on each
// of its data sets and compared with the expected outputs at ONNX's tolerances (|got - want| <=
// 1e-7 + 1e-3 |want|, NaN equal to NaN, integers and bools exactly). A case whose model needs
// something lockstep does not compute (an error of kind kUnavailable, at load) is "unsupported";
// any other error or difference is a failure. Prints `N passed, M failed, K unsupported`, the
// failures, and the operators behind the unsupported cases; exits 1 when anything failed.
//
// Usage: lockstep_onnx_conformance DATA_DIR [--log FILE] [--filter SUBSTRING]
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/io/files.h"
#include "core/ops.h"
#include "onnx/float64.h"
#include "onnx/model.h"
#include "onnx/proto.h"
#include "onnx/value.h"

namespace {

using lockstep::Error;
using lockstep::ErrorKind;
namespace onnx = lockstep::onnx;

std::vector<std::string> List(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") out.push_back(name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// A data set's value: a TensorProto, or a SequenceProto or OptionalProto where the model declares one.
onnx::Value ReadValueFile(const std::string& path, const onnx::IoInfo* declared) {
  const std::vector<uint8_t> bytes = lockstep::ReadWholeFile(path, onnx::kMaxOnnxBytes);
  const onnx::TypeKind kind = declared ? declared->kind : onnx::TypeKind::kTensor;
  const int32_t elem = declared ? onnx::ElemDataType(declared->elem) : 0;
  switch (kind) {
    case onnx::TypeKind::kSequence:
      return onnx::ValueFromSequenceProto(onnx::DecodeSequence(bytes.data(), bytes.size(), path), elem, path);
    case onnx::TypeKind::kOptionalTensor:
    case onnx::TypeKind::kOptionalSequence:
      return onnx::ValueFromOptionalProto(onnx::DecodeOptional(bytes.data(), bytes.size(), path), elem,
                                          kind == onnx::TypeKind::kOptionalSequence, path);
    default:
      return onnx::ValueFromTensorProto(onnx::DecodeTensor(bytes.data(), bytes.size(), path), path);
  }
}

// Empty when equal within tolerance, else what differs.
std::string Compare(const onnx::Value& got, const onnx::Value& want) {
  if (onnx::KindName(got) != onnx::KindName(want)) return "a " + onnx::KindName(got) + ", expected a " + onnx::KindName(want);
  if (got.none) return "";
  if (got.items) {
    if (got.items->size() != want.items->size()) {
      return std::to_string(got.items->size()) + " tensors, expected " + std::to_string(want.items->size());
    }
    for (size_t i = 0; i < got.items->size(); ++i) {
      const std::string diff = Compare((*got.items)[i], (*want.items)[i]);
      if (!diff.empty()) return "tensor " + std::to_string(i) + ": " + diff;
    }
    return "";
  }
  if (got.elem != want.elem) {
    return std::string("type ") + onnx::ElemName(got.elem) + ", expected " + onnx::ElemName(want.elem);
  }
  if (got.shape() != want.shape()) {
    return "shape " + lockstep::ShapeString(got.shape()) + ", expected " + lockstep::ShapeString(want.shape());
  }
  if (got.is_int()) {
    const std::vector<int64_t> a = got.tensor.ToInt64Vector(), b = want.tensor.ToInt64Vector();
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] != b[i]) return "element " + std::to_string(i) + ": " + std::to_string(a[i]) + ", expected " + std::to_string(b[i]);
    }
    return "";
  }
  // float64 values compare as the doubles they are; the others as float32.
  const auto doubles = [](const onnx::Value& v) {
    if (v.is_float64()) return onnx::Float64Values(v);
    const std::vector<float> f = v.tensor.ToVector();
    return std::vector<double>(f.begin(), f.end());
  };
  const std::vector<double> a = doubles(got), b = doubles(want);
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = a[i], y = b[i];
    if (x != x || y != y) {
      if ((x != x) == (y != y)) continue;
    } else if (x == y) {
      continue;
    } else {
      const double diff = x > y ? x - y : y - x, mag = y < 0 ? -y : y;
      if (diff <= 1e-7 + 1e-3 * mag) continue;
    }
    char buf[160];
    snprintf(buf, sizeof buf, "element %zu: %.9g, expected %.9g", i, x, y);
    return buf;
  }
  return "";
}

// Whether `expected` is the first input truncated to bfloat16 (its low 16 bits cleared), as ONNX's
// reference did for Cast before 1.14.
bool TruncatesToBFloat16(const std::vector<onnx::Value>& inputs, const onnx::Value& expected) {
  if (inputs.empty() || inputs[0].elem != onnx::Elem::kFloat || inputs[0].shape() != expected.shape()) return false;
  const std::vector<float> x = inputs[0].tensor.ToVector(), want = expected.tensor.ToVector();
  for (size_t i = 0; i < x.size(); ++i) {
    uint32_t a, b;
    memcpy(&a, &x[i], 4);
    memcpy(&b, &want[i], 4);
    if (x[i] == x[i] && (a & 0xFFFF0000u) != b) return false;
  }
  return true;
}

// The operator an unsupported-error names ("... (Conv, opset 13): unsupported: ..."), or the
// first words of the message.
std::string Reason(const std::string& message) {
  const size_t opset = message.find(", opset ");
  const size_t open = opset == std::string::npos ? std::string::npos : message.rfind('(', opset);
  if (open != std::string::npos) return message.substr(open + 1, opset - open - 1);
  const size_t type = message.find("element type ");
  if (type != std::string::npos) return "type " + message.substr(type + 13, message.find(';', type) - type - 13);
  const size_t start = message.find("onnx: ");
  const std::string tail = start == std::string::npos ? message : message.substr(start + 6);
  return tail.substr(0, std::min<size_t>(tail.size(), 48));
}

struct Outcome {
  enum Kind { kPassed, kFailed, kUnsupported } kind;
  std::string detail;
};

Outcome RunCase(const std::string& dir) {
  std::shared_ptr<onnx::OnnxModel> model;
  try {
    model = onnx::LoadOnnxFile(dir + "/model.onnx");
  } catch (const Error& e) {
    return {e.kind() == ErrorKind::kUnavailable ? Outcome::kUnsupported : Outcome::kFailed, e.what()};
  }
  int sets = 0;
  for (const std::string& set : List(dir)) {
    if (set.rfind("test_data_set_", 0) != 0) continue;
    ++sets;
    const std::string at = dir + "/" + set;
    try {
      std::vector<onnx::Value> inputs, expected;
      const auto declared = [](const std::vector<onnx::IoInfo>& list, size_t i) {
        return i < list.size() ? &list[i] : nullptr;
      };
      for (size_t i = 0; Exists(at + "/input_" + std::to_string(i) + ".pb"); ++i) {
        inputs.push_back(ReadValueFile(at + "/input_" + std::to_string(i) + ".pb", declared(model->inputs(), i)));
      }
      for (size_t i = 0; Exists(at + "/output_" + std::to_string(i) + ".pb"); ++i) {
        expected.push_back(ReadValueFile(at + "/output_" + std::to_string(i) + ".pb", declared(model->outputs(), i)));
      }
      // ONNX's test data of this version stores bfloat16 tensors as UINT16 (NumPy has no bfloat16):
      // their bits are read as bfloat16 where the model declares that type.
      const auto as_declared = [](onnx::Value& v, const std::vector<onnx::IoInfo>& declared, size_t i) {
        if (i < declared.size() && declared[i].elem == onnx::Elem::kBFloat16 && v.elem == onnx::Elem::kUInt16) {
          std::vector<float> f;
          for (int64_t bits : v.tensor.ToInt64Vector()) {
            const uint32_t word = static_cast<uint32_t>(bits) << 16;
            float x;
            memcpy(&x, &word, 4);
            f.push_back(x);
          }
          v = onnx::Value{lockstep::RoundToBFloat16(lockstep::Tensor::FromVector(v.shape(), f)), onnx::Elem::kBFloat16};
        }
      };
      for (size_t i = 0; i < inputs.size(); ++i) as_declared(inputs[i], model->inputs(), i);
      for (size_t i = 0; i < expected.size(); ++i) as_declared(expected[i], model->outputs(), i);
      // A few data sets give an input another shape than their model declares (CastLike's `like`,
      // whose values do not matter there); lockstep holds inputs to the declared shapes.
      for (size_t i = 0; i < inputs.size() && i < model->inputs().size(); ++i) {
        const onnx::IoInfo& info = model->inputs()[i];
        if (!info.has_shape) continue;
        bool differs = info.dims.size() != inputs[i].shape().size();
        for (size_t d = 0; !differs && d < info.dims.size(); ++d) {
          differs = info.dims[d] >= 0 && info.dims[d] != inputs[i].shape()[d];
        }
        if (differs) {
          return {Outcome::kUnsupported, set + ": the data set's input '" + info.name + "' has shape " +
                                             lockstep::ShapeString(inputs[i].shape()) +
                                             " where the model declares another; lockstep holds inputs to their declared shapes"};
        }
      }
      // Optional inputs left out of a data set are trailing ones the model does not declare.
      const std::vector<onnx::Value> got = [&] {
        lockstep::NoGradGuard no_grad;
        return model->Run(inputs);
      }();
      if (got.size() != expected.size()) {
        return {Outcome::kFailed, set + ": " + std::to_string(got.size()) + " outputs, expected " + std::to_string(expected.size())};
      }
      for (size_t i = 0; i < got.size(); ++i) {
        const std::string diff = Compare(got[i], expected[i]);
        if (!diff.empty() && got[i].elem == onnx::Elem::kBFloat16 && TruncatesToBFloat16(inputs, expected[i])) {
          return {Outcome::kUnsupported, set + ": output " + std::to_string(i) + ": " + diff +
                                             ": the reference truncates to bfloat16 (ONNX before 1.14); lockstep rounds to "
                                             "nearest even, as ONNX now specifies"};
        }
        if (!diff.empty()) return {Outcome::kFailed, set + ": output " + std::to_string(i) + ": " + diff};
      }
    } catch (const Error& e) {
      return {e.kind() == ErrorKind::kUnavailable ? Outcome::kUnsupported : Outcome::kFailed, set + ": " + e.what()};
    }
  }
  if (sets == 0) return {Outcome::kFailed, "no test_data_set_* folder"};
  return {Outcome::kPassed, ""};
}

}  // namespace

int main(int argc, char** argv) {
  std::string data, log_path, filter;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--log" && i + 1 < argc) {
      log_path = argv[++i];
    } else if (arg == "--filter" && i + 1 < argc) {
      filter = argv[++i];
    } else if (data.empty() && arg[0] != '-') {
      data = arg;
    } else {
      fprintf(stderr, "usage: %s DATA_DIR [--log FILE] [--filter SUBSTRING]\n", argv[0]);
      return 2;
    }
  }
  if (data.empty()) {
    fprintf(stderr, "usage: %s DATA_DIR [--log FILE] [--filter SUBSTRING]\n", argv[0]);
    return 2;
  }
  std::ofstream log;
  if (!log_path.empty()) log.open(log_path);
  int passed = 0, failed = 0, unsupported = 0, cases = 0;
  std::vector<std::string> failures;
  std::map<std::string, int> reasons;
  for (const char* suite : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    for (const std::string& name : List(data + "/" + suite)) {
      const std::string dir = data + "/" + suite + "/" + name;
      if (!filter.empty() && dir.find(filter) == std::string::npos) continue;
      if (!Exists(dir + "/model.onnx")) continue;  // the "real" models are download links only
      ++cases;
      const Outcome o = RunCase(dir);
      const char* verdict = o.kind == Outcome::kPassed ? "passed" : o.kind == Outcome::kFailed ? "FAILED" : "unsupported";
      if (log.is_open()) log << suite << "/" << name << ": " << verdict << (o.detail.empty() ? "" : ": " + o.detail) << "\n";
      if (o.kind == Outcome::kPassed) ++passed;
      if (o.kind == Outcome::kFailed) {
        ++failed;
        failures.push_back(std::string(suite) + "/" + name + ": " + o.detail);
      }
      if (o.kind == Outcome::kUnsupported) {
        ++unsupported;
        ++reasons[Reason(o.detail)];
      }
    }
  }
  if (cases == 0) {
    fprintf(stderr, "onnx conformance: no test cases under %s (Debian: libonnx-testdata)\n", data.c_str());
    return 2;
  }
  printf("unsupported cases by operator:");
  for (const auto& [reason, count] : reasons) printf(" %s %d;", reason.c_str(), count);
  printf("\n");
  for (const std::string& f : failures) printf("FAILED %s\n", f.c_str());
  printf("%d passed, %d failed, %d unsupported (%d cases; %.1f%% passed)\n", passed, failed, unsupported, cases,
         100.0 * passed / cases);
  return failed == 0 ? 0 : 1;
}
