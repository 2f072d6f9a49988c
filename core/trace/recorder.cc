// The trace recorder behind core/trace/trace.h: one per open Session, installed on its thread.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <charconv>
#include <map>
#include <string_view>
#include <unordered_map>
#include <tuple>

#include "core/contract.h"
#include "core/error.h"
#include "core/io/byte_order.h"
#include "core/io/files.h"
#include "core/nn/module.h"
#include "core/safetensors.h"
#include "core/trace/bits_hash.h"
#include "core/trace/summary.h"
#include "core/trace/trace.h"
#include "core/io/json_text.h"
#include "core/backend/host.h"

namespace lockstep {
namespace trace {

namespace {
thread_local Recorder* current = nullptr;

void AppendInteger(int64_t v, std::string* out) {
  char text[24];
  const std::to_chars_result r = std::to_chars(text, text + sizeof text, v);
  out->append(text, r.ptr);
}

// The next float32 toward +infinity (for a finite or -infinity x).
float NextUp(float x) {
  uint32_t bits;
  memcpy(&bits, &x, 4);
  if (x == 0.0f) bits = 1;                      // +0 or -0: the smallest positive subnormal
  else if (bits >> 31) --bits;                  // negative: toward zero
  else ++bits;                                  // positive: away from zero
  float y;
  memcpy(&y, &bits, 4);
  return y;
}

}  // namespace

class Recorder {
 public:
  Recorder(const Options& options, nn::Module* model) : options_(options) {
    if (const char* fault = getenv("LOCKSTEP_TRACE_FAULT")) ParseFault(fault);
    if (model != nullptr) {
      for (const auto& [path, module] : model->NamedModules()) {
        module_index_[module] = static_cast<int32_t>(paths_.size());
        paths_.push_back(path);
      }
      for (const auto& [name, p] : model->NamedParameters()) param_names_[p.impl().get()] = name;
    }
    std::string header = "{\"lockstep_trace\":" + std::to_string(kFormatVersion) +
                         ",\"producer\":\"lockstep\",\"version\":";
    AppendJsonString(LOCKSTEP_VERSION_STRING, &header);
    header += ",\"contract\":" + std::to_string(kContractVersion) + ",\"platform\":";
    AppendJsonString(LOCKSTEP_PLATFORM, &header);
    header += ",\"simd\":";
    AppendJsonString(host::SimdTargetName(), &header);
    header += ",\"source\":";
    AppendJsonString(options.source, &header);
    header += "}\n";
    lines_ = header;
  }

  void BeginStep(int64_t step, const char* phase) {
    step_ = step;
    phase_ = phase;
    calls_.clear();
  }
  const char* phase() const { return phase_; }
  void set_phase(const char* phase) { phase_ = phase; }
  bool in_backward() const { return in_backward_; }
  void set_in_backward(bool on) { in_backward_ = on; }

  int32_t CurrentModule() const { return module_stack_.empty() ? -1 : module_stack_.back(); }
  void Enter(const nn::Module* module) {
    auto it = module_index_.find(module);
    module_stack_.push_back(it != module_index_.end() ? it->second : CurrentModule());
  }
  void Leave() {
    if (!module_stack_.empty()) module_stack_.pop_back();
  }

  // One record: the tensor's identity (dtype, shape), hash and statistics.
  // new_call: the first output of an op execution (its other outputs share the call index).
  void Record(int32_t module, const char* op, int out_index, bool new_call, const Tensor& t,
              const char* param = nullptr) {
    static const std::string kTopLevel;
    const std::string& path = module >= 0 && static_cast<size_t>(module) < paths_.size() ? paths_[module] : kTopLevel;
    key_.assign(phase_).append("\n").append(path).append("\n").append(op);
    int64_t& calls = calls_[key_];
    const int64_t call = new_call ? calls++ : calls - 1;
    // Only read: a contiguous CPU tensor is used as it is (no new tensor per record).
    const Tensor c = t.device() != Device::Cpu() ? t.ToDevice(Device::Cpu())
                     : t.is_contiguous()         ? t
                                                 : t.Detach().Contiguous();
    // The line goes straight onto the trace: no temporary strings on this path, which runs for
    // every op of every traced step.
    std::string& line = lines_;
    line += "{\"step\":";
    AppendInteger(step_, &line);
    line.append(",\"phase\":\"").append(phase_).append("\",\"module\":");
    AppendJsonString(path, &line);
    line += ",\"op\":";
    AppendJsonString(op, &line);
    line += ",\"call\":";
    AppendInteger(call, &line);
    line += ",\"out\":";
    AppendInteger(out_index, &line);
    if (param != nullptr) {
      line += ",\"param\":";
      AppendJsonString(param, &line);
    }
    line.append(",\"dtype\":\"").append(DTypeString(c.dtype())).append("\",\"shape\":[");
    for (size_t i = 0; i < c.shape().size(); ++i) {
      if (i > 0) line += ',';
      AppendInteger(c.shape()[i], &line);
    }
    const size_t n = static_cast<size_t>(c.numel());
    const void* data = c.dtype() == DType::kFloat32 ? static_cast<const void*>(c.data_f32())
                       : c.dtype() == DType::kInt32 ? static_cast<const void*>(c.data_i32())
                                                    : static_cast<const void*>(c.data_i64());
    line += "]";
    // A module's output is the tensor its last op returned: the summary is computed once.
    const bool same_tensor = c.impl()->storage == summary_storage_ && c.impl()->offset == summary_offset_ &&
                             c.numel() == summary_numel_ && c.dtype() == summary_dtype_ && !in_place_phase();
    if (!same_tensor) {
      summary_ = SummaryJson(c.dtype(), data, n);
      summary_storage_ = c.impl()->storage;
      summary_offset_ = c.impl()->offset;
      summary_numel_ = c.numel();
      summary_dtype_ = c.dtype();
    }
    line += summary_;
    if (options_.values_from > 0) {
      const std::string name = (param != nullptr ? std::string(param) : path) + "/" + op;
      if (KeepValues(name)) {
        line += ",\"values\":\"r" + std::to_string(records_) + "\"";
        TensorRecord r;
        r.name = "r" + std::to_string(records_);
        r.dtype = c.dtype();
        r.shape = c.shape();
        r.data.resize(n * DTypeSize(c.dtype()));
        CopyLittleEndian(r.data.data(), data, n, DTypeSize(c.dtype()));
        values_.tensors.push_back(std::move(r));
      }
    }
    line += "}\n";
    ++records_;
  }

  std::string ParamName(const Tensor& p, size_t position) const {
    auto it = param_names_.find(p.impl().get());
    return it != param_names_.end() ? it->second : std::to_string(position);
  }
  // The module path of a parameter name ("features.0.weight" -> index of "features.0").
  int32_t ModuleOfParam(const std::string& name) const {
    const size_t dot = name.rfind('.');
    const std::string path = dot == std::string::npos ? "" : name.substr(0, dot);
    for (size_t i = 0; i < paths_.size(); ++i) {
      if (paths_[i] == path) return static_cast<int32_t>(i);
    }
    return -1;
  }

  std::string Bytes() const { return lines_ + "{\"end\":true,\"records\":" + std::to_string(records_) + "}\n"; }
  std::vector<uint8_t> ValueBytes() const {
    return values_.tensors.empty() ? std::vector<uint8_t>() : EncodeSafetensors(values_);
  }
  const Options& options() const { return options_; }
  int64_t records() const { return records_; }

 private:
  // STEP:MODULE:OP (MODULE may be empty: "3::add").
  void ParseFault(const std::string& text) {
    const size_t a = text.find(':'), b = a == std::string::npos ? a : text.find(':', a + 1);
    LOCKSTEP_REQUIRE(b != std::string::npos, "LOCKSTEP_TRACE_FAULT: expected STEP:MODULE:OP, got '" << text << "'");
    char* end = nullptr;
    options_.fault_step = strtoll(text.c_str(), &end, 10);
    LOCKSTEP_REQUIRE(end == text.c_str() + a && options_.fault_step >= 1,
                     "LOCKSTEP_TRACE_FAULT: STEP must be an integer >= 1, got '" << text.substr(0, a) << "'");
    options_.fault_module = text.substr(a + 1, b - a - 1);
    options_.fault_op = text.substr(b + 1);
  }

 public:
  // The planted fault: the first matching forward record of its step nudges element 0 by an ulp.
  void MaybePlantFault(int32_t module, const char* op, const Tensor& out) {
    if (options_.fault_step != step_ || fault_done_ || strcmp(phase_, "forward") != 0 || options_.fault_op != op ||
        out.dtype() != DType::kFloat32 || out.numel() == 0 || !out.is_contiguous()) {
      return;
    }
    const std::string path = module >= 0 && static_cast<size_t>(module) < paths_.size() ? paths_[module] : "";
    if (path != options_.fault_module) return;
    const Tensor first = out.View({out.numel()}).Slice(0, 0, 1);
    first.CopyFrom(Tensor::FromVector({1}, {NextUp(first.item())}));
    fault_done_ = true;
  }

 private:
  bool KeepValues(const std::string& name) const {
    return options_.values_from > 0 && step_ >= options_.values_from && step_ <= options_.values_to &&
           name.find(options_.values_pattern) != std::string::npos;
  }

  Options options_;
  std::vector<std::string> paths_;
  std::map<const nn::Module*, int32_t> module_index_;
  std::map<const TensorImpl*, std::string> param_names_;
  std::vector<int32_t> module_stack_;
  std::unordered_map<std::string, int64_t> calls_;
  std::string key_;  // calls_'s key, built in place
  int64_t step_ = 0;
  const char* phase_ = "forward";
  bool in_backward_ = false;
  bool fault_done_ = false;
  // The last summary and its tensor (storage, offset, size, dtype); holding the storage keeps its
  // address from being reused by another tensor while it is the key.
  std::string summary_;
  std::shared_ptr<Storage> summary_storage_;
  int64_t summary_offset_ = 0, summary_numel_ = -1;
  DType summary_dtype_ = DType::kFloat32;
  // Parameters change in place between their gradient and update records: never reuse there.
  bool in_place_phase() const { return strcmp(phase_, "grad") == 0 || strcmp(phase_, "update") == 0; }
  std::string lines_;
  SafetensorsFile values_;
  int64_t records_ = 0;
};

Recorder* Current() { return current; }

Session::Session(const Options& options, nn::Module* model)
    : recorder_(std::make_unique<Recorder>(options, model)), previous_(current) {
  if (!options.path.empty()) RequireWritableFile(options.path);
  if (!options.values_path.empty()) RequireWritableFile(options.values_path);
  LOCKSTEP_REQUIRE(options.values_from <= options.values_to,
                   "trace: values steps [" << options.values_from << ", " << options.values_to << "] are empty");
  current = recorder_.get();
}

Session::~Session() {
  try {
    Finish();
  } catch (...) {
    current = previous_;
  }
}

void Session::Finish() {
  if (finished_) return;
  finished_ = true;
  current = previous_;
  const Options& o = recorder_->options();
  if (!o.path.empty()) WriteFileAtomic(o.path, Bytes());
  const std::vector<uint8_t> values = ValueBytes();
  if (!o.values_path.empty() && !values.empty()) WriteFileAtomic(o.values_path, values);
}

std::vector<uint8_t> Session::Bytes() const {
  const std::string text = recorder_->Bytes();
  return std::vector<uint8_t>(text.begin(), text.end());
}
std::vector<uint8_t> Session::ValueBytes() const { return recorder_->ValueBytes(); }
int64_t Session::records() const { return recorder_->records(); }

void BeginStep(int64_t step, const char* phase) {
  if (current != nullptr) current->BeginStep(step, phase);
}

PhaseScope::PhaseScope(const char* phase) {
  if (current == nullptr) return;
  previous_ = current->phase();
  current->set_phase(phase);
}
PhaseScope::~PhaseScope() {
  if (current != nullptr && previous_ != nullptr) current->set_phase(previous_);
}

void RecordOp(const char* op, const Tensor& out) {
  if (current == nullptr || current->in_backward() || !out.defined()) return;
  current->MaybePlantFault(current->CurrentModule(), op, out);
  current->Record(current->CurrentModule(), op, 0, true, out);
}

void EnterModule(const nn::Module* module) {
  if (current != nullptr) current->Enter(module);
}

void LeaveModule(const nn::Module* module, const Tensor& out) {
  (void)module;
  if (current == nullptr) return;
  if (!current->in_backward() && out.defined()) current->Record(current->CurrentModule(), "output", 0, true, out);
  current->Leave();
}

int32_t CurrentModuleIndex() { return current == nullptr ? -1 : current->CurrentModule(); }

PauseScope::PauseScope() : active_(current != nullptr && !current->in_backward()) {
  if (active_) current->set_in_backward(true);  // the same silence as inside backward rules
}
PauseScope::~PauseScope() {
  if (active_ && current != nullptr) current->set_in_backward(false);
}

BackwardScope::BackwardScope() : active_(current != nullptr && !current->in_backward()) {
  if (!active_) return;
  current->set_in_backward(true);
}
BackwardScope::~BackwardScope() {
  if (active_ && current != nullptr) current->set_in_backward(false);
}

void RecordBackward(const char* op, int32_t module_index, const std::vector<Tensor>& grads) {
  if (current == nullptr) return;
  const char* saved = current->phase();
  current->set_phase("backward");
  const std::string name = std::string(op) + "_backward";
  bool first = true;
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) continue;
    // The first recorded output takes the next call index; the others share it.
    current->Record(module_index, name.c_str(), static_cast<int>(i), first, grads[i]);
    first = false;
  }
  current->set_phase(saved);
}

void RecordParameters(const char* phase, const std::vector<Tensor>& params, bool gradients) {
  if (current == nullptr) return;
  const char* saved = current->phase();
  current->set_phase(phase);
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor t = gradients ? params[i].grad() : params[i];
    if (!t.defined()) continue;
    const std::string name = current->ParamName(params[i], i);
    current->Record(current->ModuleOfParam(name), gradients ? "grad" : "update", 0, true, t, name.c_str());
  }
  current->set_phase(saved);
}

}  // namespace trace
}  // namespace lockstep
