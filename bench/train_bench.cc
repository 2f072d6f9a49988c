// Training-step throughput of lockstep: the MNIST LeNet-5 (batch 100, Adam), the GPT example
// ("small": batch 16 x 2 micro-batches of 64 tokens, AdamW, clipping) or a GPT-2-small-shaped model
// ("gpt2": nanoGPT's architecture with 12 layers, 12 heads, 768 channels, a 256-token block and a
// byte vocabulary of 256, dropout off; batch 4 x 256 tokens, AdamW with nanoGPT's GPT-2 settings,
// clipping), on synthetic data of the same shapes bench/peers/train_peers.py gives PyTorch.
// Prints one line:
//   lockstep <model> threads=T steps/s median=M min=A max=B
//
//   lockstep_train_bench --model lenet|gpt|gpt2 [--threads T] [--steps N] [--warmup W] [--samples S]
//                        [--trace-overhead 1] [--memory-stats 1] [--rss 1] [--generate N]
// With --generate N (gpt, gpt2), generation instead of training: each sample continues a 64-token
// prompt by N tokens (core/train/gpt.h's SampleGpt: temperature 1, top 200, the whole context
// through the model for each token, as nanoGPT's generate does), and the line gives tokens/s:
//   lockstep <model> threads=T generate tokens/s median=M min=A max=B
// With --trace-overhead 1, each sample runs the steps untraced and then traced (a trace kept in
// memory: hashes and statistics of every op, docs/diagnostics.md) and the line reports both, the
// overhead and the trace's bytes per step. The overhead is the median of each sample's traced time
// against its own untraced time: the two run back to back, so a shared machine's drift cancels.
//   lockstep <model> threads=T traced steps/s median=M untraced median=U overhead=X% bytes/step=B
// With --receipt-overhead 1, the same pairs with and without a training receipt
// (docs/verifiable-training.md): each step's state and batch copied and hashed into the chain, as
// `lockstep train mnist|gpt --receipt` does (core/receipt/step_hasher.h):
//   lockstep <model> threads=T receipt steps/s median=M plain median=U overhead=X%
// With --memory-stats 1 a second line gives the CPU's tensor storage (core/backend/caching_allocator.h):
//   memory in_use=... held=... peak_in_use=... reused=... device_allocations=... device_releases=...
// With --rss 1 a line gives the resident memory after start-up and the batch (bench/rss.h), the
// baseline of the working-memory rows of bench/run_bench.py:
//   rss baseline_kb=B startup_peak_kb=S peak_kb=P
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "core/backend/device.h"
#include "core/models/gpt.h"
#include "core/models/lenet.h"
#include "core/nn/init.h"
#include "core/ops.h"
#include "core/optim/optimizer.h"
#include "core/random.h"
#include "core/checkpoint.h"
#include "core/receipt/receipt.h"
#include "core/receipt/step_hasher.h"
#include "core/trace/trace.h"
#include "core/train/gpt.h"
#include "rss.h"
#include "simd/thread_pool.h"

namespace {

using namespace lockstep;

Tensor RandomLabels(int64_t n, int64_t classes, uint64_t seed) {
  std::vector<int64_t> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) y[static_cast<size_t>(i)] = static_cast<int64_t>((i * 7 + seed) % classes);
  return Tensor::FromInt64({n}, y);
}

// Each builder makes its batch first, then marks the resident baseline (start-up and data), then
// builds the model and optimizer, whose memory counts as training's like the steps' own.
struct Trained {
  std::shared_ptr<nn::Module> model;
  std::shared_ptr<optim::Optimizer> optimizer;
  Tensor x, y;  // the batch a receipt hashes (GPT: the first of its two micro-batches)
};

std::function<void()> LenetStep(Trained* out, lockstep_bench::RssBaseline* rss) {
  Generator g(1, "bench");
  Tensor x = Tensor::Zeros({100, 1, 28, 28});
  nn::NormalInit(x, 0.0f, 1.0f, g);
  const Tensor y = RandomLabels(100, 10, 3);
  if (rss) rss->Mark();
  auto model = models::MakeLeNet5(1);
  auto optimizer = std::make_shared<optim::Adam>(model->NamedParameters(), optim::AdamOptions{});
  *out = {model, optimizer, x, y};
  return [model, optimizer, x, y] {
    optimizer->ZeroGrad();
    CrossEntropy((*model)(x), y).Backward();
    optimizer->Step();
  };
}

// nanoGPT's AdamW: weight decay 0.1 on the matrices and embeddings, none on biases and norms.
std::shared_ptr<optim::Adam> NanoGptAdamW(const models::Gpt& model, float lr, float beta2) {
  std::vector<optim::ParamGroup> groups(2);
  groups[0].params = model.DecayParameters();
  groups[0].weight_decay = 0.1f;
  groups[1].params = model.NoDecayParameters();
  optim::AdamOptions o;
  o.lr = lr;
  o.beta2 = beta2;
  o.decoupled_weight_decay = true;
  return std::make_shared<optim::Adam>(groups, o);
}

// nanoGPT's GPT-2 (124M) shape with a byte vocabulary and a 256-token block; its GPT-2 training
// settings (AdamW, betas 0.9 and 0.95, weight decay 0.1 on the matrices, lr 6e-4, clipping at 1).
models::GptConfig Gpt2Config() {
  models::GptConfig c;
  c.vocab_size = 256;
  c.block_size = 256;
  c.n_layer = 12;
  c.n_head = 12;
  c.n_embd = 768;
  c.dropout = 0.0f;
  return c;
}

std::function<void()> Gpt2Step(Trained* out, lockstep_bench::RssBaseline* rss) {
  std::vector<int64_t> ids(4 * 256), next(4 * 256);
  for (size_t i = 0; i < ids.size(); ++i) {
    ids[i] = static_cast<int64_t>((i * 31 + 7) % 256);
    next[i] = static_cast<int64_t>((i * 31 + 12) % 256);
  }
  const Tensor x = Tensor::FromInt64({4, 256}, ids), y = Tensor::FromInt64({4, 256}, next);
  if (rss) rss->Mark();
  auto model = std::make_shared<models::Gpt>(Gpt2Config(), 1);
  auto optimizer = NanoGptAdamW(*model, 6e-4f, 0.95f);
  *out = {model, optimizer, x, y};
  const std::vector<Tensor> params = model->Parameters();
  return [model, optimizer, x, y, params] {
    model->Train();
    models::GptLoss((*model)(x), y).Backward();
    optim::ClipGradNorm(params, 1.0f);
    optimizer->Step();
    optimizer->ZeroGrad();
  };
}

std::function<void()> GptStep(Trained* out, lockstep_bench::RssBaseline* rss) {
  std::vector<Tensor> xs, ys;
  for (int m = 0; m < 2; ++m) {
    std::vector<int64_t> ids(16 * 64), next(16 * 64);
    for (size_t i = 0; i < ids.size(); ++i) {
      ids[i] = static_cast<int64_t>((i * 31 + m * 17) % 96);
      next[i] = static_cast<int64_t>((i * 31 + m * 17 + 5) % 96);
    }
    xs.push_back(Tensor::FromInt64({16, 64}, ids));
    ys.push_back(Tensor::FromInt64({16, 64}, next));
  }
  if (rss) rss->Mark();
  models::GptConfig c;
  c.vocab_size = 96;
  auto model = std::make_shared<models::Gpt>(c, 1);
  auto optimizer = NanoGptAdamW(*model, optim::AdamOptions{}.lr, 0.99f);
  *out = {model, optimizer, xs.front(), ys.front()};
  const std::vector<Tensor> params = model->Parameters();
  return [model, optimizer, xs, ys, params] {
    model->Train();
    for (size_t m = 0; m < xs.size(); ++m) MulScalar(models::GptLoss((*model)(xs[m]), ys[m]), 0.5f).Backward();
    optim::ClipGradNorm(params, 1.0f);
    optimizer->Step();
    optimizer->ZeroGrad();
  };
}

// Tokens per second of SampleGpt continuing a 64-token prompt by `tokens` tokens.
int Generate(const std::string& name, models::Gpt& model, int threads, int warmup, int samples, int tokens) {
  std::vector<int64_t> prompt(64);
  const int64_t vocab = model.config().vocab_size;
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int64_t>((i * 13 + 5) % static_cast<size_t>(vocab));
  train::SampleOptions o;
  o.max_new_tokens = tokens;
  o.temperature = 1.0f;
  o.top_k = 200;
  for (int i = 0; i < warmup; ++i) train::SampleGpt(model, prompt, o);
  std::vector<double> rates;
  for (int s = 0; s < samples; ++s) {
    o.seed = static_cast<uint64_t>(s + 1);
    const auto start = std::chrono::steady_clock::now();
    train::SampleGpt(model, prompt, o);
    rates.push_back(tokens / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(rates.begin(), rates.end());
  printf("lockstep %s threads=%d generate tokens/s median=%.6g min=%.6g max=%.6g\n", name.c_str(), threads,
         rates[rates.size() / 2], rates.front(), rates.back());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_name;
  int threads = 1, steps = 20, warmup = 3, samples = 5, trace_overhead = 0, receipt_overhead = 0, memory_stats = 0,
      rss = 0, generate = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--model") model_name = argv[i + 1];
    else if (flag == "--threads") threads = atoi(argv[i + 1]);
    else if (flag == "--steps") steps = atoi(argv[i + 1]);
    else if (flag == "--warmup") warmup = atoi(argv[i + 1]);
    else if (flag == "--samples") samples = atoi(argv[i + 1]);
    else if (flag == "--trace-overhead") trace_overhead = atoi(argv[i + 1]);
    else if (flag == "--receipt-overhead") receipt_overhead = atoi(argv[i + 1]);
    else if (flag == "--memory-stats") memory_stats = atoi(argv[i + 1]);
    else if (flag == "--rss") rss = atoi(argv[i + 1]);
    else if (flag == "--generate") generate = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if ((model_name != "lenet" && model_name != "gpt" && model_name != "gpt2") || threads < 1 || steps < 1 ||
      samples < 1 || generate < 0 || (generate > 0 && model_name == "lenet")) {
    fprintf(stderr, "usage: lockstep_train_bench --model lenet|gpt|gpt2 [--threads T] [--steps N] [--warmup W] "
                    "[--samples S] [--generate N (gpt, gpt2)]\n");
    return 2;
  }
  simd::SetDefaultThreadCount(static_cast<size_t>(threads));
  Trained trained;
  lockstep_bench::RssBaseline baseline;
  lockstep_bench::RssBaseline* mark = rss ? &baseline : nullptr;
  const std::function<void()> step = model_name == "lenet" ? LenetStep(&trained, mark)
                                     : model_name == "gpt"  ? GptStep(&trained, mark)
                                                            : Gpt2Step(&trained, mark);
  const std::shared_ptr<nn::Module> model = trained.model;
  if (generate > 0) return Generate(model_name, static_cast<models::Gpt&>(*model), threads, warmup, samples, generate);
  for (int i = 0; i < warmup; ++i) step();
  if (receipt_overhead) {
    const char* tmp = getenv("TMPDIR");
    const std::string path = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") + "/lockstep_bench.receipt";
    std::vector<double> plain, with, ratios;
    // One receipt for the whole measurement, as a run has: its thread and reused buffers start
    // once (the first pair is warm-up); each sample ends with every step it submitted hashed.
    receipt::Writer writer(receipt::FileStore(), path, "bench", {}, "", receipt::Digest{});
    receipt::StepHasher hasher([&](int64_t k, const receipt::Digest& batch, const receipt::Digest& state) {
      writer.Step(k, batch, state);
    }, /*background=*/true, trained.optimizer.get());  // as the trainers' closed loops
    int64_t submitted = 0;
    for (int s = -1; s < samples; ++s) {
      auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < steps; ++i) step();
      const double plain_rate = steps / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      start = std::chrono::steady_clock::now();
      for (int i = 0; i < steps; ++i) {
        step();
        hasher.Submit(++submitted, *model, *trained.optimizer, DropoutOffsets(*model), trained.x, trained.y);
      }
      hasher.Drain();
      const double with_rate = steps / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (s < 0) continue;
      plain.push_back(plain_rate);
      with.push_back(with_rate);
      ratios.push_back(plain.back() / with.back());
    }
    remove(path.c_str());
    std::sort(plain.begin(), plain.end());
    std::sort(with.begin(), with.end());
    std::sort(ratios.begin(), ratios.end());
    printf("lockstep %s threads=%d receipt steps/s median=%.2f plain median=%.2f overhead=%.1f%%\n", model_name.c_str(),
           threads, with[with.size() / 2], plain[plain.size() / 2], 100.0 * (ratios[ratios.size() / 2] - 1.0));
    return 0;
  }
  if (trace_overhead) {
    std::vector<double> plain, traced, ratios;
    size_t bytes = 0;
    for (int s = 0; s < samples; ++s) {
      auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < steps; ++i) step();
      plain.push_back(steps / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      trace::Session session(trace::Options{}, model.get());
      start = std::chrono::steady_clock::now();
      for (int i = 0; i < steps; ++i) {
        trace::BeginStep(i + 1);
        step();
      }
      traced.push_back(steps / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      session.Finish();
      bytes = session.Bytes().size();
      ratios.push_back(plain.back() / traced.back());
    }
    std::sort(plain.begin(), plain.end());
    std::sort(traced.begin(), traced.end());
    std::sort(ratios.begin(), ratios.end());
    const double p = plain[plain.size() / 2], t = traced[traced.size() / 2], ratio = ratios[ratios.size() / 2];
    printf("lockstep %s threads=%d traced steps/s median=%.2f untraced median=%.2f overhead=%.1f%% bytes/step=%zu\n",
           model_name.c_str(), threads, t, p, 100.0 * (ratio - 1.0), bytes / static_cast<size_t>(steps));
    return 0;
  }
  std::vector<double> rates;
  for (int s = 0; s < samples; ++s) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < steps; ++i) step();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rates.push_back(steps / seconds);
  }
  std::sort(rates.begin(), rates.end());
  printf("lockstep %s threads=%d steps/s median=%.6g min=%.6g max=%.6g\n", model_name.c_str(), threads,
         rates[rates.size() / 2], rates.front(), rates.back());
  if (memory_stats) {
    const backend::MemoryStats m = AllocatorOf(Device::Cpu()).Stats();
    printf("memory in_use=%zu held=%zu peak_in_use=%zu reused=%llu device_allocations=%llu device_releases=%llu\n",
           m.in_use_bytes, m.held_bytes, m.peak_in_use_bytes, static_cast<unsigned long long>(m.reused),
           static_cast<unsigned long long>(m.device_allocations), static_cast<unsigned long long>(m.device_releases));
  }
  if (rss) printf("%s\n", baseline.Report().c_str());
  return 0;
}
