// The C ABI: the GPT example's training run and sampling from a trained checkpoint.

#include <cmath>
#include <string>
#include <vector>

#include "bindings/native/c_api_internal.h"
#include "core/checkpoint.h"
#include "core/error.h"
#include "core/parallel/data_parallel.h"
#include "core/text.h"
#include "core/train/gpt.h"

using lockstep::capi::Boundary;
using lockstep::capi::Fail;
using lockstep::capi::RequireNonNull;

namespace {

const lockstep::train::GptTrainConfig& Preset(const char* name) {
  const lockstep::train::GptTrainConfig* preset = lockstep::train::GptPreset(name);
  if (preset == nullptr) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, std::string("unknown GPT preset '") + name + "' (expected small or tiny)");
  return *preset;
}

lockstep::CharCorpus Corpus(const char* text_path) {
  lockstep::capi::RequireReadable(text_path);
  return lockstep::MakeCharCorpus(lockstep::ReadTextFile(text_path));
}

}  // namespace

extern "C" {

lockstep_status lockstep_gpt_config_default(lockstep_gpt_config* out) {
  return Boundary(__func__, [&] {
    RequireNonNull(out, "out");
    *out = lockstep_gpt_config{sizeof(lockstep_gpt_config), ".deps/data/fortunes/input.txt", "small", 500, 1, 0,
                               nullptr, 0, nullptr, nullptr, 0, {}, nullptr, 0};
  });
}

lockstep_status lockstep_train_gpt(const lockstep_gpt_config* config, lockstep_gpt_progress_fn progress, void* user_data,
                                   lockstep_gpt_result* out) {
  return Boundary(__func__, [&] {
    RequireNonNull(config, "config");
    RequireNonNull(out, "out");
    lockstep::capi::RequireStructSize(config->struct_size, sizeof(lockstep_gpt_config), "lockstep_gpt_config");
    RequireNonNull(config->text_path, "config->text_path");
    RequireNonNull(config->preset, "config->preset");
    if (config->steps < 1) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "steps must be >= 1, got " + std::to_string(config->steps));
    if (config->eval_interval < 0) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "eval_interval must be >= 0");
    lockstep::capi::CheckReceiptFields(config->receipt_path, config->receipt_every, config->resume_path);
    lockstep::train::GptTrainConfig c = Preset(config->preset);
    if (config->receipt_path != nullptr) c.receipt.path = config->receipt_path;
    c.receipt.every = config->receipt_every;
    c.steps = config->steps;
    c.seed = config->seed;
    c.eval_interval = config->eval_interval;
    if (config->save_path != nullptr) c.save_path = config->save_path;  // checked before training
    if (config->checkpoint_every < 0) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "checkpoint_every must be >= 0");
    if (config->checkpoint_every > 0 && config->checkpoint_path == nullptr) {
      Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "checkpoint_every needs checkpoint_path");
    }
    c.checkpoint_every = config->checkpoint_every;
    if (config->checkpoint_path != nullptr) c.checkpoint_path = config->checkpoint_path;
    if (config->resume_path != nullptr) {
      c.resume_path = config->resume_path;
      // In a data-parallel run rank 0 reads the state and sends it to the others.
      if (lockstep::parallel::IsWriter()) lockstep::capi::RequireReadable(c.resume_path);
    }
    c.allow_nonfinite_loss = config->allow_nonfinite != 0;
    if (config->trace.path != nullptr) c.trace = lockstep::capi::TraceOptionsOf(config->trace);
    const lockstep::CharCorpus corpus = Corpus(config->text_path);
    lockstep::train::GptProgressFn report;
    if (progress != nullptr) {
      report = [&](const lockstep::train::GptProgress& p) {
        const lockstep_gpt_progress cp{p.step, p.total_steps, p.loss, p.lr};
        if (progress(&cp, user_data) != 0) Fail(LOCKSTEP_ERROR_CANCELLED, "stopped by the progress callback");
      };
    }
    const lockstep::train::GptResult r = lockstep::train::RunGpt(c, corpus, report);
    lockstep_gpt_result result{};
    lockstep::capi::CopyHash(r.initial_hash, result.initial_hash);
    lockstep::capi::CopyHash(r.trained_hash, result.trained_hash);
    result.steps = static_cast<int64_t>(r.losses.size());
    result.vocab_size = corpus.vocab_size();
    result.final_loss = r.losses.empty() ? 0.0f : r.losses.back();
    if (!r.estimates.empty()) {
      result.train_loss = r.estimates.back().train;
      result.val_loss = r.estimates.back().val;
    }
    *out = result;
  });
}

lockstep_status lockstep_sample_options_default(lockstep_sample_options* out) {
  return Boundary(__func__, [&] {
    RequireNonNull(out, "out");
    const lockstep::train::SampleOptions d;
    *out = lockstep_sample_options{sizeof(lockstep_sample_options), "\n", d.max_new_tokens, d.temperature, d.top_k,
                                   d.seed, {}};
  });
}

lockstep_status lockstep_gpt_sample(const char* checkpoint_path, const char* text_path, const char* preset,
                                    const lockstep_sample_options* options, char* buf, size_t size) {
  return Boundary(__func__, [&] {
    RequireNonNull(checkpoint_path, "checkpoint_path");
    RequireNonNull(text_path, "text_path");
    RequireNonNull(preset, "preset");
    RequireNonNull(options, "options");
    lockstep::capi::RequireStructSize(options->struct_size, sizeof(lockstep_sample_options), "lockstep_sample_options");
    RequireNonNull(options->prompt, "options->prompt");
    RequireNonNull(buf, "buf");
    if (options->max_new_tokens < 0 || static_cast<uint64_t>(options->max_new_tokens) >= size) {
      Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "max_new_tokens must be >= 0 and below the buffer size " + std::to_string(size));
    }
    if (!(options->temperature > 0.0f) || !std::isfinite(options->temperature)) {
      Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "temperature must be a finite number > 0");
    }
    if (options->top_k < 0) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "top_k must be >= 0");
    lockstep::models::GptConfig model_config = Preset(preset).model;
    const lockstep::CharCorpus corpus = Corpus(text_path);
    model_config.vocab_size = corpus.vocab_size();
    lockstep::capi::RequireReadable(checkpoint_path);
    lockstep::models::Gpt model(model_config, 0);
    lockstep::LoadModel(checkpoint_path, model);
    lockstep::train::SampleOptions o;
    o.max_new_tokens = options->max_new_tokens;
    o.temperature = options->temperature;
    o.top_k = options->top_k;
    o.seed = options->seed;
    std::vector<int64_t> prompt;
    try {
      prompt = corpus.Encode(options->prompt);
    } catch (const lockstep::Error& e) {
      Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, std::string("prompt: ") + e.what());
    }
    if (prompt.empty()) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "the prompt is empty");
    std::unique_ptr<lockstep::trace::Session> tracing;
    if (options->trace.path != nullptr) {
      tracing = std::make_unique<lockstep::trace::Session>(lockstep::capi::TraceOptionsOf(options->trace), &model);
    }
    const std::string text = corpus.Decode(lockstep::train::SampleGpt(model, prompt, o));
    if (tracing) tracing->Finish();
    lockstep::capi::CopyString(text, buf, size);
  });
}

}  // extern "C"
