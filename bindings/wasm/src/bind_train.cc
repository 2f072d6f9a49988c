// Data sets, the training-loop step, evaluation, hashing and library information for JavaScript.
#include <emscripten/bind.h>
#include <malloc.h>

#include <map>
#include <memory>
#include <string>

#include "bindings/wasm/src/js_boundary.h"
#include "core/checkpoint.h"
#include "core/contract.h"
#include "core/error.h"
#include "core/idx.h"
#include "core/ops.h"
#include "core/receipt/run_receipt.h"
#include "core/sha256.h"
#include "core/train/fit_run.h"
#include "core/train/evaluate.h"
#include "core/train/mnist.h"
#include "simd/targets.h"

namespace lockstep {
namespace wasm {
namespace {

using emscripten::val;
using ModulePtr = std::shared_ptr<nn::Module>;
using OptimizerPtr = std::shared_ptr<optim::Optimizer>;

Dataset DatasetFromIdxJs(const val& images, const val& labels) {
  return JsBoundary([&] {
    const std::vector<uint8_t> image_bytes = BytesFromJs(images, "images");
    const std::vector<uint8_t> label_bytes = BytesFromJs(labels, "labels");
    return lockstep::DatasetFromIdxBytes(image_bytes, label_bytes, "images", "labels");
  });
}

Dataset DatasetFromTensors(const Tensor& inputs, const Tensor& labels) {
  return JsBoundary([&] {
    return Dataset(inputs, labels);
  });
}

double SizeOf(const Dataset& d) { return static_cast<double>(d.size()); }
Tensor InputsOf(const Dataset& d) { return JsBoundary([&] { return d.AllInputs(); }); }
Tensor LabelsOf(const Dataset& d) { return d.labels(); }
void Normalize(Dataset& d) { JsBoundary([&] { train::NormalizeMnist(&d); }); }
Dataset Slice(const Dataset& d, double start, double count) {
  return JsBoundary([&] {
    const double size = static_cast<double>(d.size());
    LOCKSTEP_REQUIRE(start >= 0 && count >= 1 && start + count <= size && start == static_cast<int64_t>(start) &&
                         count == static_cast<int64_t>(count),
                     "slice: examples [" << start << ", " << start + count << ") are not in the data set of "
                                         << d.size());
    return d.Subset(static_cast<int64_t>(start), static_cast<int64_t>(count));
  });
}

// fit()'s run (core/train/fit_run.h) with what it refers to kept alive, its full training state
// as bytes (JavaScript has no files: fit() hands them to the caller), and its receipt
// (core/receipt/), written in memory.
class Trainer {
 public:
  Trainer(ModulePtr model, OptimizerPtr optimizer, const Dataset& data, int64_t batch_size, uint64_t seed)
      : model_(std::move(model)),
        optimizer_(std::move(optimizer)),
        data_(data),
        run_(*model_, *optimizer_, data_, batch_size, seed) {}
  // The run is the MNIST reference run (LeNet-5 and Adam at lr, made by the caller): its states and
  // receipts are those of `lockstep train mnist`, so each side resumes and verifies the other's.
  void UseMnistIdentity(double lr) {
    JsBoundary([&] { run_.UseMnistIdentity(static_cast<float>(lr)); });
  }
  double Step() {
    return JsBoundary([&] { return static_cast<double>(run_.Step()); });
  }
  double StepsDone() const { return static_cast<double>(run_.steps_done()); }
  double StepsPerEpoch() const { return static_cast<double>(run_.steps_per_epoch()); }
  void SetAllowNonFinite(bool allow) { run_.set_allow_nonfinite_loss(allow); }
  val StateBytes() {
    return JsBoundary([&] { return BytesToJs(run_.StateBytes()); });
  }
  // Records a receipt of the run from here (its first step) to step `total`, keeping the state
  // every `every` steps (0: about ten over the run).
  void StartReceipt(double every, double total) {
    JsBoundary([&] {
      LOCKSTEP_REQUIRE(every >= 0 && every == static_cast<int64_t>(every),
                       "fit: receipt.every must be an integer >= 0, got " << every);
      receipt::ReceiptOptions options;
      options.path = kReceiptName;
      options.every = static_cast<int64_t>(every);
      options.store = &store_;
      options.background = false;  // a page's module cannot start a thread of its own
      run_.StartReceipt(options, static_cast<int64_t>(total));
    });
  }
  // The receipt's end line; { text, states: { file name: bytes } }.
  val FinishReceipt() {
    return JsBoundary([&] {
      run_.FinishReceipt();
      val states = val::object();
      std::string text;
      for (const auto& [name, bytes] : store_.files) {
        if (name == kReceiptName) {
          text.assign(bytes.begin(), bytes.end());
        } else {
          states.set(name, BytesToJs(bytes));
        }
      }
      val out = val::object();
      out.set("text", text);
      out.set("states", states);
      return out;
    });
  }
  // Continues from StateBytes() of the same run (else an Error of kind "state").
  void Resume(const val& bytes_js) {
    JsBoundary([&] { run_.Resume(BytesFromJs(bytes_js, "fit resume"), "fit resume"); });
  }

 private:
  static constexpr const char* kReceiptName = "run.receipt";
  ModulePtr model_;
  OptimizerPtr optimizer_;
  Dataset data_;
  train::FitRun run_;
  receipt::MemoryStore store_;
};

std::shared_ptr<Trainer> MakeTrainer(const ModulePtr& model, const OptimizerPtr& optimizer, const Dataset& data,
                                     double batch_size, double seed) {
  return JsBoundary([&] {
    LOCKSTEP_REQUIRE(batch_size >= 1 && batch_size == static_cast<int64_t>(batch_size),
                     "fit: batchSize must be an integer >= 1, got " << batch_size);
    return std::make_shared<Trainer>(model, optimizer, data, static_cast<int64_t>(batch_size),
                                     SeedFromJs(seed, "fit seed"));
  });
}

val EvaluateJs(const ModulePtr& model, const Dataset& data, double batch_size, double limit) {
  return JsBoundary([&] {
    LOCKSTEP_REQUIRE(batch_size >= 1, "evaluate: batchSize must be >= 1, got " << batch_size);
    const train::EvalResult r =
        train::Evaluate(*model, data, static_cast<int64_t>(batch_size), limit < 0 ? -1 : static_cast<int64_t>(limit));
    val out = val::object();
    out.set("examples", static_cast<double>(r.examples));
    out.set("correct", static_cast<double>(r.correct));
    out.set("accuracy", r.accuracy);
    out.set("logitsHash", r.logits_hash);
    return out;
  });
}

std::string Sha256Js(const val& bytes) {
  return JsBoundary([&] {
    const std::vector<uint8_t> b = BytesFromJs(bytes, "sha256");
    return Sha256Hex(b.data(), b.size());
  });
}

val Info() {
  val out = val::object();
  out.set("version", std::string(LOCKSTEP_VERSION_STRING));
  out.set("contractVersion", kContractVersion);
  out.set("simdTarget", simd::ActiveTargetName());
  out.set("platform", std::string(LOCKSTEP_PLATFORM));
  return out;
}

// Bytes the allocator has handed out and not had back: the leak tests watch it.
double HeapInUse() { return static_cast<double>(mallinfo().uordblks); }

}  // namespace

EMSCRIPTEN_BINDINGS(lockstep_train) {
  using emscripten::class_;
  using emscripten::function;
  class_<Dataset>("Dataset")
      .class_function("fromIdx", &DatasetFromIdxJs)
      .class_function("fromTensors", &DatasetFromTensors)
      .function("size", &SizeOf)
      .function("inputs", &InputsOf)
      .function("labels", &LabelsOf)
      .function("normalizeMnist", &Normalize)
      .function("slice", &Slice);
  class_<Trainer>("Trainer")
      .smart_ptr<std::shared_ptr<Trainer>>("TrainerPtr")
      .function("step", &Trainer::Step)
      .function("stepsDone", &Trainer::StepsDone)
      .function("stepsPerEpoch", &Trainer::StepsPerEpoch)
      .function("setAllowNonFinite", &Trainer::SetAllowNonFinite)
      .function("stateBytes", &Trainer::StateBytes)
      .function("resume", &Trainer::Resume)
      .function("useMnistIdentity", &Trainer::UseMnistIdentity)
      .function("startReceipt", &Trainer::StartReceipt)
      .function("finishReceipt", &Trainer::FinishReceipt);
  function("makeTrainer", &MakeTrainer);
  function("evaluate", &EvaluateJs);
  function("sha256", &Sha256Js);
  function("info", &Info);
  function("heapInUse", &HeapInUse);
}

}  // namespace wasm
}  // namespace lockstep
