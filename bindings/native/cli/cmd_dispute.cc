// `lockstep dispute A B`: two receipts of one claimed run, settled to a step and an op.
#include <stdio.h>

#include "bindings/native/cli/args.h"
#include "bindings/native/cli/commands.h"
#include "lockstep/lockstep.h"

namespace lockstep_cli {
namespace {

const char kHelp[] =
    "usage: lockstep dispute A.receipt B.receipt [--trace-a FILE] [--trace-b FILE] [--a-values FILE]\n"
    "                        [--b-values FILE] [--data PATH] [--threads T]\n"
    "\n"
    "Two receipts of the same claimed run (the same identity) whose chains differ\n"
    "(docs/verifiable-training.md): finds the first differing step by bisection over the chains,\n"
    "re-executes it from the latest checkpoint both sides agree on, says which side the re-execution\n"
    "supports, and, given the other side's trace of its run (--trace), names the first op where it\n"
    "left the computation, with that op's values on both sides.\n"
    "\n"
    "  --trace-a FILE, --trace-b FILE    the parties' traces (written with --trace)\n"
    "  --a-values FILE, --b-values FILE  their values sidecars (--trace-values), for ulps\n"
    "  --data PATH                       the run's training data: the IDX folder of an mnist run, the\n"
    "                                    text of a gpt run (default .deps/data/mnist or\n"
    "                                    .deps/data/fortunes/input.txt)\n"
    "%s"
    "\n"
    "Exit status: 0 the receipts agree on every common step, 1 they differ (the step and the side\n"
    "the re-execution supports are printed), 2 error (a tampered receipt, receipts of different runs,\n"
    "no usable checkpoint).\n";

void PrintLine(const char* line, void*) { printf("%s\n", line); }

}  // namespace

int DisputeCommand(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  const std::vector<std::string> files = {"--trace-a", "--trace-b", "--a-values", "--b-values", "--data"};
  std::vector<std::string> flags = files;
  flags.push_back("--threads");
  flags.push_back("--device");
  if (!ParseArgs(argv, flags, &args, &error)) return UsageError("dispute", error);
  if (args.help) {
    printf(kHelp, kComputeFlagsHelp);
    return kExitOk;
  }
  if (args.positional.size() != 2) {
    return UsageError("dispute", args.positional.size() < 2 ? "expected two receipts A and B"
                                                            : "unexpected argument '" + args.positional[2] + "'");
  }
  for (const std::string& flag : files) {
    if (!NonEmpty(args, flag.c_str(), &error)) return UsageError("dispute", error);
  }
  if (const int code = ApplyComputeFlags(args, "dispute"); code != kExitOk) return code;
  lockstep_dispute_options options;
  lockstep_dispute_options_default(&options);
  auto flag = [&](const char* name) { return args.flags.count(name) ? args.flags[name].c_str() : nullptr; };
  options.a_trace = flag("--trace-a");
  options.b_trace = flag("--trace-b");
  options.a_values = flag("--a-values");
  options.b_values = flag("--b-values");
  if (args.flags.count("--data")) options.data = args.flags["--data"].c_str();
  int64_t step = 0;
  char supported = 0;
  const lockstep_status status = lockstep_dispute(args.positional[0].c_str(), args.positional[1].c_str(), &options,
                                                  PrintLine, nullptr, &step, &supported);
  if (status != LOCKSTEP_OK) return ApiFailure("dispute", "settling the receipts", status);
  if (step == 0) return kExitOk;
  printf("DISPUTE: step %lld; the re-execution supports %s\n", static_cast<long long>(step),
         supported == 'A' ? "A" : supported == 'B' ? "B" : "neither side");
  return kExitMismatch;
}

}  // namespace lockstep_cli
