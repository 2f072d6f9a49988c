// `lockstep verify-run RECEIPT`: steps of a training receipt re-executed and checked.
#include <stdio.h>

#include "bindings/native/cli/args.h"
#include "bindings/native/cli/commands.h"
#include "lockstep/lockstep.h"

namespace lockstep_cli {
namespace {

const char kHelp[] =
    "usage: lockstep verify-run RECEIPT [--checkpoint FILE] [--steps A-B | --sample K --seed S] [--data PATH]\n"
    "                           [--model FILE.onnx] [--threads T]\n"
    "\n"
    "Re-executes steps of a training run from a training state and checks each against the receipt's\n"
    "hash chain (docs/verifiable-training.md). The receipt's own chain is checked first: an altered\n"
    "line is refused. The training data must be the receipt's (its fingerprint is in the receipt).\n"
    "\n"
    "  --checkpoint FILE  the training state to start from (it must be the state the receipt records\n"
    "                     at its step); default: the receipt's checkpoints, beside it\n"
    "  --steps A-B        check steps A to B (default: every step after the starting state)\n"
    "  --sample K         check K steps drawn at random by --seed S (default seed 0), each from the\n"
    "                     nearest checkpoint before it: a spot check of a long run\n"
    "  --data PATH        the run's training data: the IDX folder of an mnist run, the text of a gpt\n"
    "                     run (default .deps/data/mnist or .deps/data/fortunes/input.txt)\n"
    "  --model FILE.onnx  the model a `lockstep train onnx` run started from (checked against the\n"
    "                     SHA-256 its receipt records)\n"
    "%s"
    "\n"
    "Exit status: 0 every checked step matches, 1 a step does not (the first is named), 2 error (a\n"
    "tampered receipt, a checkpoint that does not match its receipt, other data).\n";

void PrintLine(const char* line, void*) { printf("%s\n", line); }

}  // namespace

int VerifyRunCommand(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argv, {"--checkpoint", "--steps", "--sample", "--seed", "--data", "--model", "--threads", "--device"},
                 &args, &error)) {
    return UsageError("verify-run", error);
  }
  if (args.help) {
    printf(kHelp, kComputeFlagsHelp);
    return kExitOk;
  }
  if (args.positional.size() != 1) {
    return UsageError("verify-run", args.positional.empty() ? "expected a receipt"
                                                            : "unexpected argument '" + args.positional[1] + "'");
  }
  for (const char* flag : {"--checkpoint", "--data", "--model"}) {
    if (!NonEmpty(args, flag, &error)) return UsageError("verify-run", error);
  }
  lockstep_verify_options options;
  lockstep_verify_options_default(&options);
  if (args.flags.count("--checkpoint")) options.checkpoint_path = args.flags["--checkpoint"].c_str();
  if (args.flags.count("--data")) options.data = args.flags["--data"].c_str();
  if (args.flags.count("--model")) options.model = args.flags["--model"].c_str();
  if (args.flags.count("--steps")) {
    if (args.flags.count("--sample")) return UsageError("verify-run", "--steps and --sample: give one of them");
    const std::string& range = args.flags["--steps"];
    const size_t dash = range.find('-');
    int64_t a = 0, b = 0;
    if (dash == std::string::npos || !ParseInt("--steps", range.substr(0, dash), 1, INT64_MAX, &a, &error) ||
        !ParseInt("--steps", range.substr(dash + 1), a, INT64_MAX, &b, &error)) {
      return UsageError("verify-run", "--steps: expected A-B with 1 <= A <= B, got '" + range + "'");
    }
    options.first_step = a;
    options.last_step = b;
  }
  int64_t value = 0;
  if (args.flags.count("--sample")) {
    if (!ParseInt("--sample", args.flags["--sample"], 1, 1000000, &value, &error)) return UsageError("verify-run", error);
    options.sample = value;
  }
  if (args.flags.count("--seed")) {
    if (!args.flags.count("--sample")) return UsageError("verify-run", "--seed draws a --sample: give --sample K");
    if (!ParseInt("--seed", args.flags["--seed"], 0, INT64_MAX, &value, &error)) return UsageError("verify-run", error);
    options.sample_seed = static_cast<uint64_t>(value);
  }
  if (const int code = ApplyComputeFlags(args, "verify-run"); code != kExitOk) return code;
  int64_t mismatch = 0;
  const lockstep_status status =
      lockstep_verify_run(args.positional[0].c_str(), &options, PrintLine, nullptr, &mismatch);
  if (status != LOCKSTEP_OK) return ApiFailure("verify-run", "verifying the receipt", status);
  if (mismatch != 0) {
    printf("FAILED: step %lld does not match the receipt\n", static_cast<long long>(mismatch));
    return kExitMismatch;
  }
  printf("VERIFIED\n");
  return kExitOk;
}

}  // namespace lockstep_cli
