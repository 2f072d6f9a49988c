// lockstep_gpt_steps: 50 AdamW steps of the GPT example's "small" configuration with dropout off,
// with everything PyTorch needs to replay them (tests/reference/gpt_torch.py).
//
//   lockstep_gpt_steps [--data FILE] [--steps N] OUT_DIR
//
// core/train/gpt.cc's RunGpt with the "small" preset, dropout 0, no loss estimates. Writes to
// OUT_DIR (canonical safetensors, nanoGPT's state-dict names; the head's weight is tied to
// transformer.wte.weight and not stored twice):
//   initial.safetensors  the model before training
//   steps.safetensors    "x.SS.M", "y.SS.M" int64 [batch, block]: micro-batch M of step SS;
//                        "params.SS/NAME" the parameters after step SS; "loss" [N] each step's
//                        loss (the mean of its micro-batch losses); "lr" [N] each step's rate;
//                        "config" int64 [vocab, block, n_layer, n_head, n_embd, batch, grad_accum,
//                        warmup, decay_steps] and "hyper" float32 [lr, min_lr, weight_decay,
//                        beta1, beta2, grad_clip]
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#include "core/io/files.h"
#include "core/checkpoint.h"
#include "core/error.h"
#include "core/safetensors.h"
#include "tests/reference/tensor_record.h"
#include "core/train/gpt.h"

namespace {

using namespace lockstep;

int Run(const std::string& data, int64_t steps, const std::string& out_dir) {
  const CharCorpus corpus = MakeCharCorpus(ReadTextFile(data));
  train::GptTrainConfig config = *train::GptPreset("small");
  config.model.dropout = 0.0f;
  config.steps = steps;
  config.eval_iters = 0;

  SafetensorsFile file;
  file.metadata["what"] = "lockstep_gpt_steps";
  std::vector<float> lrs;
  for (int64_t s = 0; s < steps; ++s) {
    for (int64_t m = 0; m < config.grad_accum; ++m) {
      Tensor x, y;
      TextBatch(corpus.train, config.model.block_size, config.batch_size, config.seed, "batches",
                static_cast<uint64_t>(s * config.grad_accum + m), &x, &y);
      const std::string key = TwoDigits(s + 1) + "." + std::to_string(m);
      file.tensors.push_back(Record("x." + key, x));
      file.tensors.push_back(Record("y." + key, y));
    }
  }
  std::string initial_hash;
  const train::GptResult result = train::RunGpt(config, corpus, [&](const train::GptProgress& p) {
    lrs.push_back(p.lr);
    for (const auto& [name, t] : p.model->NamedParameters()) {
      file.tensors.push_back(Record("params." + TwoDigits(p.step) + "/" + name, t));
    }
    printf("step %2lld  loss %.9g\n", static_cast<long long>(p.step), static_cast<double>(p.loss));
  });
  // The initial model again, from the same seed (RunGpt hashed it before training).
  models::GptConfig model_config = config.model;
  model_config.vocab_size = corpus.vocab_size();
  const models::Gpt initial(model_config, config.seed);
  initial_hash = SaveModel(out_dir + "/initial.safetensors", initial);
  LOCKSTEP_REQUIRE(initial_hash == result.initial_hash, "the initial model is not reproducible");

  const auto& c = config;
  file.tensors.push_back(Record("loss", Tensor::FromVector({steps}, result.losses)));
  file.tensors.push_back(Record("lr", Tensor::FromVector({steps}, lrs)));
  file.tensors.push_back(Record("config", Tensor::FromInt64({9}, {corpus.vocab_size(), c.model.block_size, c.model.n_layer,
                                                                   c.model.n_head, c.model.n_embd, c.batch_size,
                                                                   c.grad_accum, c.warmup_steps, c.decay_steps})));
  file.tensors.push_back(Record("hyper", Tensor::FromVector({6}, {c.lr, c.min_lr, c.weight_decay, c.beta1, c.beta2,
                                                                  c.grad_clip})));
  WriteFileAtomic(out_dir + "/steps.safetensors", EncodeSafetensors(file));
  printf("initial %s\ntrained %s\n", initial_hash.c_str(), result.trained_hash.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string data = ".deps/data/fortunes/input.txt", out_dir;
  int64_t steps = 50;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--data") == 0 && i + 1 < argc) {
      data = argv[++i];
    } else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
      steps = atoll(argv[++i]);
    } else if (out_dir.empty() && argv[i][0] != '-') {
      out_dir = argv[i];
    } else {
      out_dir.clear();
      break;
    }
  }
  if (out_dir.empty() || steps < 1 || steps > 99) {
    fprintf(stderr, "usage: lockstep_gpt_steps [--data FILE] [--steps N (1..99)] OUT_DIR\n");
    return 2;
  }
  try {
    return Run(data, steps, out_dir);
  } catch (const std::exception& e) {
    fprintf(stderr, "lockstep_gpt_steps: %s\n", e.what());
    return 1;
  }
}
