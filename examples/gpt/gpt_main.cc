// A character-level GPT (nanoGPT's architecture) trained on text, with dropout and AdamW: prints
// the initial model hash, each step's loss, train/validation loss estimates, the trained model
// hash, and a sample of generated text. Every line but the timings is identical on every platform.
//
// usage: lockstep_gpt [--data FILE] [--config small|tiny] [--steps N] [--seed S] [--threads T]
//                     [--eval-interval N] [--eval-iters N] [--sample N] [--prompt TEXT]
//                     [--temperature T] [--top-k K] [--target NAME] [--device D] [--out FILE] [--quiet]
// Under mpirun (mpirun -np N lockstep_gpt ...) it trains data-parallel over the N processes and
// prints the same lines.
#include <stdio.h>
#include <stdlib.h>

#include <chrono>
#include <string>

#include "core/error.h"
#include "core/sha256.h"
#include "core/train/gpt.h"
#include "examples/common/data_parallel_job.h"
#include "examples/common/run_options.h"
#include "simd/targets.h"
#include "simd/thread_pool.h"

namespace {

int Usage(const std::string& problem) {
  fprintf(stderr,
          "%s\nusage: lockstep_gpt [--data FILE] [--config small|tiny] [--steps N] [--seed S] [--threads T]\n"
          "                    [--eval-interval N] [--eval-iters N] [--sample N] [--prompt TEXT]\n"
          "                    [--temperature T] [--top-k K] [--target NAME] [--device D] [--out FILE]\n"
          "                    [--trace FILE [--trace-values FILE --trace-steps A-B --trace-match TEXT]]\n"
          "                    [--quiet]\n",
          problem.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string data = ".deps/data/fortunes/input.txt", preset = "small", prompt = "\n";
  lockstep::train::GptTrainConfig config = *lockstep::train::GptPreset("small");
  lockstep::train::SampleOptions sample;
  long long steps = -1, seed = -1, eval_interval = -1, eval_iters = -1;
  bool quiet = false;
  std::string out_path;
  lockstep::trace::Options trace;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quiet") {
      quiet = true;
      continue;
    }
    if (i + 1 >= argc) return Usage("missing value after " + arg);
    const char* value = argv[++i];
    long long n = 0;
    const bool numeric = lockstep::examples::ParseInt(value, &n);
    std::string problem;
    if (lockstep::examples::ParseTraceOption(arg, value, &trace, &problem)) {
      if (!problem.empty()) return Usage(problem);
      continue;
    }
    if (arg == "--data") data = value;
    else if (arg == "--config") preset = value;
    else if (arg == "--prompt") prompt = value;
    else if (arg == "--out") out_path = value;
    else if (arg == "--temperature") {
      if (!lockstep::examples::ParseFloat(value, &sample.temperature)) {
        return Usage("expected a number after --temperature, got '" + std::string(value) + "'");
      }
    }
    else if (arg == "--target" || arg == "--device") {
      const std::string problem = arg == "--target" ? lockstep::examples::ForceTargetByName(value)
                                                    : lockstep::examples::UseDevice(value);
      if (!problem.empty()) return Usage(problem);
    }
    else if (!numeric || n < 0) return Usage("expected a non-negative integer after " + arg + ", got '" + value + "'");
    else if (arg == "--steps") steps = n;
    else if (arg == "--seed") seed = n;
    else if (arg == "--eval-interval") eval_interval = n;
    else if (arg == "--eval-iters") eval_iters = n;
    else if (arg == "--sample") sample.max_new_tokens = n;
    else if (arg == "--top-k") sample.top_k = n;
    else if (arg == "--threads") lockstep::simd::SetDefaultThreadCount(n < 1 ? 1 : static_cast<size_t>(n));
    else return Usage("unknown option " + arg);
  }
  const lockstep::train::GptTrainConfig* chosen = lockstep::train::GptPreset(preset);
  if (!chosen) return Usage("unknown --config '" + preset + "' (expected small or tiny)");
  config = *chosen;
  if (steps >= 0) config.steps = steps;
  if (seed >= 0) config.seed = static_cast<uint64_t>(seed);
  if (eval_interval >= 0) config.eval_interval = eval_interval;
  if (eval_iters >= 0) config.eval_iters = eval_iters;
  config.save_path = out_path;
  config.trace = trace;
  sample.seed = config.seed;
  std::unique_ptr<lockstep::examples::DataParallelJob> job;
  try {
    job = std::make_unique<lockstep::examples::DataParallelJob>(&argc, &argv);
    const lockstep::CharCorpus corpus = lockstep::MakeCharCorpus(lockstep::ReadTextFile(data));
    const auto& m = config.model;
    printf("lockstep GPT (%s): %lld layers, %lld heads, %lld channels, block %lld, vocab %lld, dropout %g\n",
           preset.c_str(), static_cast<long long>(m.n_layer), static_cast<long long>(m.n_head),
           static_cast<long long>(m.n_embd), static_cast<long long>(m.block_size),
           static_cast<long long>(corpus.vocab_size()), m.dropout);
    printf("AdamW lr %g, batch %lld x %lld accumulated, %lld steps, seed %llu, SIMD target %s, device %s\n", config.lr,
           static_cast<long long>(config.batch_size), static_cast<long long>(config.grad_accum),
           static_cast<long long>(config.steps), static_cast<unsigned long long>(config.seed),
           lockstep::simd::ActiveTargetName().c_str(), lockstep::CurrentKernels().device_name);
    const auto start = std::chrono::steady_clock::now();
    const lockstep::train::GptResult result = lockstep::train::RunGpt(config, corpus, [&](const lockstep::train::GptProgress& p) {
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      // The loss with 9 significant digits identifies its float32 bits.
      printf("step %4lld/%lld  loss %.9g  lr %.3g  %.2f steps/s\n", static_cast<long long>(p.step),
             static_cast<long long>(p.total_steps), p.loss, p.lr, static_cast<double>(p.step) / seconds);
      if (quiet) fflush(stdout);
    });
    for (size_t i = 0; i < result.estimates.size(); ++i) {
      printf("estimate %zu      train loss %.9g  val loss %.9g\n", i + 1, result.estimates[i].train, result.estimates[i].val);
    }
    printf("initial model hash  %s\n", result.initial_hash.c_str());
    printf("trained model hash  %s\n", result.trained_hash.c_str());
    if (sample.max_new_tokens > 0) {
      const std::vector<int64_t> tokens = lockstep::train::SampleGpt(*result.model, corpus.Encode(prompt), sample);
      const std::string text = corpus.Decode(tokens);
      printf("sample hash         %s\n", lockstep::Sha256Hex(text.data(), text.size()).c_str());
      printf("sample (temperature %g, top-k %lld, seed %llu):\n%s%s\n", sample.temperature,
             static_cast<long long>(sample.top_k), static_cast<unsigned long long>(sample.seed), prompt.c_str(),
             text.c_str());
    }
  } catch (const std::exception& e) {
    if (job) job->Fail(1, "lockstep_gpt", e.what());
    fprintf(stderr, "lockstep_gpt: %s\n", e.what());
    return 1;
  }
  return 0;
}
