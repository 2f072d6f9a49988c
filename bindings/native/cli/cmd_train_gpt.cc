// `lockstep train gpt`: the GPT example's training run through lockstep_train_gpt.
#include <signal.h>
#include <stdio.h>

#include "bindings/native/cli/args.h"
#include "bindings/native/cli/commands.h"
#include "bindings/native/cli/data_parallel_session.h"
#include "bindings/native/cli/progress.h"
#include "lockstep/lockstep.h"

namespace lockstep_cli {

const char kGptHelp[] =
    "usage: lockstep train gpt [--config small|tiny] [--steps N] [--seed S] [--threads T] [--device D]\n"
    "                          [--data FILE] [--eval-interval N] [--out FILE]\n"
    "                          [--checkpoint-every N [--checkpoint FILE]] [--resume FILE]\n"
    "                          [--allow-nonfinite]\n"
    "                          [--trace FILE [--trace-values FILE --trace-steps A-B --trace-match TEXT]]\n"
    "                          [--receipt FILE [--receipt-every N]]\n"
    "\n"
    "Trains a character-level GPT (nanoGPT's architecture: pre-LayerNorm blocks, causal\n"
    "self-attention, GELU MLP, tied head, dropout 0.1) with AdamW, gradient clipping, warmup and\n"
    "cosine decay, and prints the initial and trained model hashes and the loss estimates. The\n"
    "hashes depend only on the text, configuration, steps and seed (not on --threads, the CPU or the device).\n"
    "\n"
    "  --config C         small (4 layers, 4 heads, 128 channels, block 64; default) or tiny\n"
    "  --steps N          optimizer steps (default 500, the whole learning-rate schedule)\n"
    "  --seed S           seed of initialisation, batches and dropout (default 1)\n"
    "  --data FILE        training text (default .deps/data/fortunes/input.txt); 90%% train, 10%% val\n"
    "  --eval-interval N  estimate train/val losses every N steps (default: at the end only)\n"
    "  (--out FILE: then try 'lockstep sample FILE')\n"
    "%s%s%s%s%s";

namespace {

volatile sig_atomic_t gpt_interrupted = 0;

int OnProgress(const lockstep_gpt_progress* p, void* user) {
  if (p->total_steps > 0 && user != nullptr) static_cast<Progress*>(user)->Update(p->step, p->total_steps, -1, p->loss);
  return gpt_interrupted ? 1 : 0;
}

}  // namespace

int TrainGptCommand(const Args& parsed) {
  Args args = parsed;
  std::string error;
  lockstep_gpt_config config;
  lockstep_gpt_config_default(&config);
  int64_t value = 0;
  if (args.flags.count("--config")) config.preset = args.flags["--config"].c_str();
  if (args.flags.count("--steps")) {
    if (!ParseInt("--steps", args.flags["--steps"], 1, 10000000, &value, &error)) return UsageError("train", error);
    config.steps = value;
  }
  if (args.flags.count("--seed")) {
    if (!ParseInt("--seed", args.flags["--seed"], 0, INT64_MAX, &value, &error)) return UsageError("train", error);
    config.seed = static_cast<uint64_t>(value);
  }
  if (args.flags.count("--eval-interval")) {
    if (!ParseInt("--eval-interval", args.flags["--eval-interval"], 0, INT64_MAX, &value, &error)) {
      return UsageError("train", error);
    }
    config.eval_interval = value;
  }
  if (const int code = ApplyComputeFlags(args, "train"); code != kExitOk) return code;
  if (args.flags.count("--data")) config.text_path = args.flags["--data"].c_str();
  RunFlags run;
  if (!ParseRunFlags(args, "lockstep-gpt.state", &run, &error)) return UsageError("train", error);
  ApplyRunFlags(run, &config);
  TraceFlags trace;
  if (!ParseTraceFlags(args, &trace, &error)) return UsageError("train", error);
  config.trace = trace.options;
  ReceiptFlags receipt;
  if (!ParseReceiptFlags(args, &receipt, &error)) return UsageError("train", error);
  ApplyReceiptFlags(receipt, &config);

  DataParallelSession session;  // under mpirun: data-parallel over its processes, rank 0 reports
  if (const int code = session.Start("train"); code != kExitOk) return code;
  signal(SIGINT, [](int) { gpt_interrupted = 1; });
  Progress bar(stdout);
  lockstep_gpt_result result;
  const int status = lockstep_train_gpt(&config, OnProgress, session.reports() ? &bar : nullptr, &result);
  bar.Finish();
  if (status == LOCKSTEP_ERROR_CANCELLED && !session.active()) {
    fprintf(stderr, "lockstep train: interrupted\n");
    return 130;
  }
  if (status != LOCKSTEP_OK) return session.Failed("train", "training", status);
  if (!session.reports()) return kExitOk;
  printf("initial hash:  %s\n", result.initial_hash);
  printf("trained hash:  %s\n", result.trained_hash);
  printf("final loss:    %.6f (step %lld); estimates: train %.4f, val %.4f\n", result.final_loss,
         static_cast<long long>(result.steps), result.train_loss, result.val_loss);
  if (config.save_path != nullptr) printf("saved:         %s\n", config.save_path);
  if (config.checkpoint_every > 0) printf("state:         %s\n", config.checkpoint_path);
  if (config.receipt_path != nullptr) printf("receipt:       %s\n", config.receipt_path);
  session.Report(result.steps);
  return kExitOk;
}

}  // namespace lockstep_cli
