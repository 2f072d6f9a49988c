// The GPT example for JavaScript: character corpora, the model, the training loop one step at a
// time (so JavaScript can report progress and yield), and sampling.
#include <emscripten/bind.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings/wasm/src/js_boundary.h"
#include "core/error.h"
#include "core/text.h"
#include "core/train/gpt.h"

namespace lockstep {
namespace wasm {
namespace {

using emscripten::val;
using ModulePtr = std::shared_ptr<nn::Module>;

CharCorpus CorpusFromText(const std::string& text, double train_fraction) {
  return JsBoundary([&] { return MakeCharCorpus(text, train_fraction); });
}
double VocabSize(const CharCorpus& c) { return static_cast<double>(c.vocab_size()); }
std::string Vocab(const CharCorpus& c) { return c.vocab; }
double TrainSize(const CharCorpus& c) { return static_cast<double>(c.train.size()); }
double ValSize(const CharCorpus& c) { return static_cast<double>(c.val.size()); }
val Encode(const CharCorpus& c, const std::string& text) {
  return JsBoundary([&] {
    val out = val::array();
    for (int64_t id : c.Encode(text)) out.call<void>("push", static_cast<double>(id));
    return out;
  });
}
std::string Decode(const CharCorpus& c, const val& ids) {
  return JsBoundary([&] {
    std::vector<int64_t> v;
    for (double d : emscripten::convertJSArrayToNumberVector<double>(ids)) v.push_back(static_cast<int64_t>(d));
    return c.Decode(v);
  });
}

int64_t IntField(const val& options, const char* name, int64_t fallback) {
  const val v = options[name];
  if (v.isUndefined()) return fallback;
  const double d = v.as<double>();
  LOCKSTEP_REQUIRE(d >= 0 && d <= 9007199254740991.0 && d == static_cast<double>(static_cast<int64_t>(d)),
                   "gpt: " << name << " must be an integer >= 0, got " << d);
  return static_cast<int64_t>(d);
}
float FloatField(const val& options, const char* name, float fallback) {
  const val v = options[name];
  return v.isUndefined() ? fallback : FiniteFromJs(v.as<double>(), name);
}

// options: preset ("small" | "tiny") and any of steps, seed, evalInterval, evalIters, batchSize,
// gradAccum, lr, minLr, warmupSteps, decaySteps, weightDecay, dropout, allowNonFinite (the
// JavaScript layer has validated their types and names).
train::GptTrainConfig ConfigFromJs(const val& options) {
  const std::string preset = options["preset"].isUndefined() ? "small" : options["preset"].as<std::string>();
  const train::GptTrainConfig* base = train::GptPreset(preset);
  LOCKSTEP_REQUIRE(base != nullptr, "gpt: unknown preset '" << preset << "' (expected small or tiny)");
  train::GptTrainConfig c = *base;
  c.steps = IntField(options, "steps", c.steps);
  c.seed = static_cast<uint64_t>(IntField(options, "seed", static_cast<int64_t>(c.seed)));
  c.eval_interval = IntField(options, "evalInterval", c.eval_interval);
  c.eval_iters = IntField(options, "evalIters", c.eval_iters);
  c.batch_size = IntField(options, "batchSize", c.batch_size);
  c.grad_accum = IntField(options, "gradAccum", c.grad_accum);
  c.warmup_steps = IntField(options, "warmupSteps", c.warmup_steps);
  c.decay_steps = IntField(options, "decaySteps", c.decay_steps);
  c.lr = FloatField(options, "lr", c.lr);
  c.min_lr = FloatField(options, "minLr", c.min_lr);
  c.weight_decay = FloatField(options, "weightDecay", c.weight_decay);
  c.model.dropout = FloatField(options, "dropout", c.model.dropout);
  c.allow_nonfinite_loss = options["allowNonFinite"].isTrue();
  return c;
}

ModulePtr MakeGpt(const CharCorpus& corpus, const val& options) {
  return JsBoundary([&]() -> ModulePtr {
    train::GptTrainConfig c = ConfigFromJs(options);
    c.model.vocab_size = corpus.vocab_size();
    return std::make_shared<models::Gpt>(c.model, c.seed);
  });
}

class GptTraining {
 public:
  GptTraining(const CharCorpus& corpus, const train::GptTrainConfig& config)
      : corpus_(std::make_unique<CharCorpus>(corpus)), trainer_(config, *corpus_), total_(config.steps) {}
  double Step() { return JsBoundary([&] { return static_cast<double>(trainer_.Step()); }); }
  bool Done() const { return trainer_.done(); }
  double StepsDone() const { return static_cast<double>(trainer_.steps_done()); }
  double TotalSteps() const { return static_cast<double>(total_); }
  double Lr() const { return trainer_.lr(); }
  ModulePtr Model() { return trainer_.result().model; }
  val Finish() {
    return JsBoundary([&] {
      const train::GptResult r = trainer_.Finish();
      val out = val::object();
      out.set("initialHash", r.initial_hash);
      out.set("trainedHash", r.trained_hash);
      val losses = val::array(), estimates = val::array();
      for (float l : r.losses) losses.call<void>("push", static_cast<double>(l));
      for (const auto& e : r.estimates) {
        val o = val::object();
        o.set("train", static_cast<double>(e.train));
        o.set("val", static_cast<double>(e.val));
        estimates.call<void>("push", o);
      }
      out.set("losses", losses);
      out.set("estimates", estimates);
      return out;
    });
  }

 private:
  std::unique_ptr<CharCorpus> corpus_;  // the trainer refers to it
  train::GptTrainer trainer_;
  int64_t total_;
};

std::shared_ptr<GptTraining> MakeGptTraining(const CharCorpus& corpus, const val& options) {
  return JsBoundary([&] { return std::make_shared<GptTraining>(corpus, ConfigFromJs(options)); });
}

std::string SampleJs(const ModulePtr& model, const CharCorpus& corpus, const std::string& prompt, const val& options) {
  return JsBoundary([&] {
    auto* gpt = dynamic_cast<models::Gpt*>(model.get());
    LOCKSTEP_REQUIRE(gpt != nullptr, "sample: expected a GPT model, got " << model->Name());
    LOCKSTEP_REQUIRE(gpt->config().vocab_size == corpus.vocab_size(),
                     "sample: the model has " << gpt->config().vocab_size << " tokens, the corpus "
                                              << corpus.vocab_size());
    train::SampleOptions o;
    o.max_new_tokens = IntField(options, "maxNewTokens", o.max_new_tokens);
    o.top_k = IntField(options, "topK", o.top_k);
    o.seed = static_cast<uint64_t>(IntField(options, "seed", static_cast<int64_t>(o.seed)));
    o.temperature = FloatField(options, "temperature", o.temperature);
    return corpus.Decode(train::SampleGpt(*gpt, corpus.Encode(prompt), o));
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(lockstep_gpt) {
  using emscripten::class_;
  class_<CharCorpus>("CharCorpus")
      .class_function("fromText", &CorpusFromText)
      .function("vocabSize", &VocabSize)
      .function("vocab", &Vocab)
      .function("trainSize", &TrainSize)
      .function("valSize", &ValSize)
      .function("encode", &Encode)
      .function("decode", &Decode);
  class_<GptTraining>("GptTraining")
      .smart_ptr<std::shared_ptr<GptTraining>>("GptTrainingPtr")
      .function("step", &GptTraining::Step)
      .function("done", &GptTraining::Done)
      .function("stepsDone", &GptTraining::StepsDone)
      .function("totalSteps", &GptTraining::TotalSteps)
      .function("lr", &GptTraining::Lr)
      .function("model", &GptTraining::Model)
      .function("finish", &GptTraining::Finish);
  emscripten::function("makeGpt", &MakeGpt);
  emscripten::function("makeGptTraining", &MakeGptTraining);
  emscripten::function("sampleGpt", &SampleJs);
}

}  // namespace wasm
}  // namespace lockstep
