// Data-parallel training throughput (docs/distributed.md): the GPT example's trainer
// (core/train/gpt.h) on its text, alone or under `mpirun -np R`, timing optimizer steps after a
// warm-up (the final loss estimate is not timed). Rank 0 prints one line:
//   lockstep gpt-<config> ranks=R threads=T steps/s median=M min=A max=B bytes/step=S ring/step=G
// bytes/step: what rank 0 handed the transport per step (partial sums, split groups' rows, the
// embedding's rows, loss counts); ring/step: what a ring all-reduce of the same gradients sends
// per rank, once per step, 2 (R - 1) / R of the gradient bytes; transport-ms/step: rank 0's time
// in the transport's calls (moving bytes and waiting for the other ranks).
//
//   [mpirun -np R] lockstep_data_parallel_bench [--config small|tiny] [--threads T] [--steps N]
//                                              [--warmup W] [--samples S] [--data FILE]
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "core/parallel/data_parallel.h"
#include "core/text.h"
#include "core/train/gpt.h"
#include "examples/common/data_parallel_job.h"
#include "simd/thread_pool.h"

int main(int argc, char** argv) {
  std::string preset = "small", data = ".deps/data/fortunes/input.txt";
  int threads = 1, steps = 5, warmup = 2, samples = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--config") preset = argv[i + 1];
    else if (flag == "--data") data = argv[i + 1];
    else if (flag == "--threads") threads = atoi(argv[i + 1]);
    else if (flag == "--steps") steps = atoi(argv[i + 1]);
    else if (flag == "--warmup") warmup = atoi(argv[i + 1]);
    else if (flag == "--samples") samples = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  const lockstep::train::GptTrainConfig* chosen = lockstep::train::GptPreset(preset);
  if (chosen == nullptr || threads < 1 || steps < 1 || samples < 1 || warmup < 0) {
    fprintf(stderr, "usage: lockstep_data_parallel_bench [--config small|tiny] [--threads T] [--steps N] "
                    "[--warmup W] [--samples S] [--data FILE]\n");
    return 2;
  }
  std::unique_ptr<lockstep::examples::DataParallelJob> job;
  try {
    job = std::make_unique<lockstep::examples::DataParallelJob>(&argc, &argv);
    lockstep::simd::SetDefaultThreadCount(static_cast<size_t>(threads));
    const lockstep::CharCorpus corpus = lockstep::MakeCharCorpus(lockstep::ReadTextFile(data));
    lockstep::train::GptTrainConfig config = *chosen;
    config.steps = warmup + steps * samples + 1;  // the last step's loss estimate is not timed
    lockstep::train::GptTrainer trainer(config, corpus);
    lockstep::parallel::DataParallel* dp = lockstep::parallel::Current();
    const int ranks = dp == nullptr ? 1 : dp->size();
    for (int i = 0; i < warmup; ++i) trainer.Step();
    std::vector<double> rates;
    const uint64_t bytes_before = dp == nullptr ? 0 : dp->bytes_sent();
    const double transport_before = dp == nullptr ? 0 : dp->transport_seconds();
    for (int s = 0; s < samples; ++s) {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < steps; ++i) trainer.Step();
      rates.push_back(steps / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    const double bytes = dp == nullptr ? 0.0 : static_cast<double>(dp->bytes_sent() - bytes_before) / (steps * samples);
    const double transport = dp == nullptr ? 0.0 : (dp->transport_seconds() - transport_before) / (steps * samples);
    int64_t gradient_floats = 0;
    for (const lockstep::Tensor& p : trainer.result().model->Parameters()) gradient_floats += p.numel();
    const double ring = 2.0 * (ranks - 1) / ranks * static_cast<double>(gradient_floats) * 4.0;
    std::sort(rates.begin(), rates.end());
    printf("lockstep gpt-%s ranks=%d threads=%d steps/s median=%.3f min=%.3f max=%.3f bytes/step=%.0f ring/step=%.0f "
           "transport-ms/step=%.1f\n",
           preset.c_str(), ranks, threads, rates[rates.size() / 2], rates.front(), rates.back(), bytes, ring,
           transport * 1000.0);
  } catch (const std::exception& e) {
    if (job) job->Fail(1, "lockstep_data_parallel_bench", e.what());
    fprintf(stderr, "lockstep_data_parallel_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
