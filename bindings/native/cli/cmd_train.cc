// `lockstep train mnist`: the MNIST reference run through lockstep_train_mnist (and the dispatch
// to `lockstep train gpt`).
#include <signal.h>
#include <stdio.h>

#include "bindings/native/cli/args.h"
#include "bindings/native/cli/commands.h"
#include "bindings/native/cli/data_parallel_session.h"
#include "bindings/native/cli/progress.h"
#include "lockstep/lockstep.h"

namespace lockstep_cli {
namespace {

const char kHelp[] =
    "usage: lockstep train mnist [--epochs N] [--steps N] [--test N] [--seed S] [--threads T] [--device D]\n"
    "                            [--data DIR] [--out FILE] [--checkpoint-every N [--checkpoint FILE]]\n"
    "                            [--resume FILE] [--allow-nonfinite]\n"
    "                            [--trace FILE [--trace-values FILE --trace-steps A-B --trace-match TEXT]]\n"
    "                            [--receipt FILE [--receipt-every N]]\n"
    "       lockstep train gpt --help    (the GPT example)\n"
    "       lockstep train onnx --help   (an imported ONNX classifier)\n"
    "\n"
    "Trains LeNet-5 on MNIST as the reference run does (Adam, lr 1e-3, batch 100) and prints the\n"
    "initial model hash, the trained model hash, the test accuracy and the hash of the test logits.\n"
    "The hashes depend only on the data, epochs and seed (not on --threads, the CPU or the device).\n"
    "\n"
    "  --epochs N    epochs to train (default 20)\n"
    "  --steps N     stop after N steps (default: every step of the epochs)\n"
    "  --test N      evaluate on the first N test images (default: all)\n"
    "  --seed S      seed of initialisation and shuffling (default 2)\n"
    "  --data DIR    train-images.idx, train-labels.idx, test-images.idx, test-labels.idx\n"
    "                (default .deps/data/mnist)\n"

    "%s%s%s%s%s";

volatile sig_atomic_t interrupted = 0;

struct ProgressState {
  Progress* bar;
};

int OnProgress(const lockstep_mnist_progress* p, void* user) {
  Progress* bar = static_cast<ProgressState*>(user)->bar;
  if (p->total_steps > 0 && bar != nullptr) bar->Update(p->step, p->total_steps, p->epoch, p->loss);
  return interrupted ? 1 : 0;  // also asked while the data loads (total_steps 0)
}

}  // namespace

int TrainCommand(const std::vector<std::string>& argv) {
  if (!argv.empty() && argv[0] == "onnx") return TrainOnnxCommand(std::vector<std::string>(argv.begin() + 1, argv.end()));
  Args args;
  std::string error;
  const bool gpt = !argv.empty() && argv[0] == "gpt";
  std::vector<std::string> flags =
      gpt ? std::vector<std::string>{"--config", "--steps", "--eval-interval"}
          : std::vector<std::string>{"--epochs", "--steps", "--test"};
  for (const char* common : {"--seed", "--threads", "--device", "--data", "--out", "--checkpoint-every",
                             "--checkpoint", "--resume", "--trace", "--trace-values", "--trace-steps",
                             "--trace-match", "--receipt", "--receipt-every"}) {
    flags.push_back(common);
  }
  if (!ParseArgs(argv, flags, &args, &error, {"--allow-nonfinite"})) return UsageError("train", error);
  if (args.help) {
    char help[4096];
    snprintf(help, sizeof help, kRunFlagsHelp, gpt ? "lockstep-gpt.state" : "lockstep-mnist.state");
    printf(gpt ? kGptHelp : kHelp, kComputeFlagsHelp, help, kReceiptFlagsHelp, kTraceFlagsHelp, kDataParallelHelp);
    return kExitOk;
  }
  if (args.positional.empty()) return UsageError("train", "missing the model to train (mnist or gpt)");
  if (args.positional[0] != "mnist" && args.positional[0] != "gpt") {
    return UsageError("train", "expected 'mnist', 'gpt' or 'onnx', got '" + args.positional[0] + "'");
  }
  if (args.positional.size() > 1) return UsageError("train", "unexpected argument '" + args.positional[1] + "'");
  if (!NonEmpty(args, "--data", &error)) return UsageError("train", error);
  if (gpt) return TrainGptCommand(args);
  lockstep_mnist_config config;
  lockstep_mnist_config_default(&config);
  int64_t value = 0;
  if (args.flags.count("--epochs")) {
    if (!ParseInt("--epochs", args.flags["--epochs"], 1, 100000, &value, &error)) return UsageError("train", error);
    config.epochs = value;
  }
  if (args.flags.count("--steps")) {
    if (!ParseInt("--steps", args.flags["--steps"], 1, INT64_MAX, &value, &error)) return UsageError("train", error);
    config.max_steps = value;
  }
  if (args.flags.count("--test")) {
    if (!ParseInt("--test", args.flags["--test"], 1, INT64_MAX, &value, &error)) return UsageError("train", error);
    config.max_test = value;
  }
  if (args.flags.count("--seed")) {
    if (!ParseInt("--seed", args.flags["--seed"], 0, INT64_MAX, &value, &error)) return UsageError("train", error);
    config.seed = static_cast<uint64_t>(value);
  }
  if (const int code = ApplyComputeFlags(args, "train"); code != kExitOk) return code;
  if (args.flags.count("--data")) config.data_dir = args.flags["--data"].c_str();
  RunFlags run;
  if (!ParseRunFlags(args, "lockstep-mnist.state", &run, &error)) return UsageError("train", error);
  ApplyRunFlags(run, &config);
  TraceFlags trace;
  if (!ParseTraceFlags(args, &trace, &error)) return UsageError("train", error);
  config.trace = trace.options;
  ReceiptFlags receipt;
  if (!ParseReceiptFlags(args, &receipt, &error)) return UsageError("train", error);
  ApplyReceiptFlags(receipt, &config);

  DataParallelSession session;  // under mpirun: data-parallel over its processes, rank 0 reports
  if (const int code = session.Start("train"); code != kExitOk) return code;
  signal(SIGINT, [](int) { interrupted = 1; });
  Progress bar(stdout);
  ProgressState state{session.reports() ? &bar : nullptr};
  lockstep_mnist_result result;
  const int status = lockstep_train_mnist(&config, OnProgress, &state, &result);
  bar.Finish();
  if (status == LOCKSTEP_ERROR_CANCELLED && !session.active()) {
    fprintf(stderr, "lockstep train: interrupted\n");
    return 130;
  }
  if (status != LOCKSTEP_OK) return session.Failed("train", "training", status);
  if (!session.reports()) return kExitOk;
  printf("initial hash:  %s\n", result.initial_hash);
  printf("trained hash:  %s\n", result.trained_hash);
  printf("test accuracy: %.4f (%lld examples)\n", result.test_accuracy, static_cast<long long>(result.test_examples));
  printf("logits hash:   %s\n", result.logits_hash);
  if (config.save_path != nullptr) printf("saved:         %s\n", config.save_path);
  if (config.checkpoint_every > 0) printf("state:         %s\n", config.checkpoint_path);
  if (config.receipt_path != nullptr) printf("receipt:       %s\n", config.receipt_path);
  session.Report(result.steps);
  return kExitOk;
}

}  // namespace lockstep_cli
