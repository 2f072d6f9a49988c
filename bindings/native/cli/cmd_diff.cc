// `lockstep diff A B`: the first op where two traces differ, and how the difference spreads.
#include <stdio.h>

#include <string>

#include "bindings/native/cli/args.h"
#include "bindings/native/cli/commands.h"
#include "lockstep/lockstep.h"

namespace lockstep_cli {
namespace {

const char kHelp[] =
    "usage: lockstep diff A B [--a-values FILE] [--b-values FILE] [--html FILE] [--rows N]\n"
    "\n"
    "Compares two traces (written by --trace, lockstep's C++ and npm APIs, or tools/torch_trace for a\n"
    "PyTorch loop; docs/diagnostics.md). Records are aligned by step, phase, module, op and call; where\n"
    "the two sides decompose a module into different ops, they are compared at the module's output\n"
    "and its parameters' gradients and updates. Prints the first divergence (step, phase, module, op,\n"
    "how many elements differ and by how many ulps when values were recorded), what was identical\n"
    "before it, where divergence enters each module and how it grows over the steps, and the\n"
    "agreement per op.\n"
    "\n"
    "  --a-values FILE  the values sidecar of A (--trace-values), for element counts and ulps\n"
    "  --b-values FILE  the values sidecar of B\n"
    "  --html FILE      also write a page that shows divergence per module over the steps\n"
    "  --rows N         rows per table (default 20)\n"
    "\n"
    "Exit status: 0 identical, 1 different, 2 error (a truncated or malformed trace, another format\n"
    "version, traces of unrelated runs).\n";

void Print(const char* text, void*) { fputs(text, stdout); }

}  // namespace

int DiffCommand(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argv, {"--a-values", "--b-values", "--html", "--rows"}, &args, &error)) return UsageError("diff", error);
  if (args.help) {
    fputs(kHelp, stdout);
    return kExitOk;
  }
  if (args.positional.size() != 2) {
    return UsageError("diff", args.positional.size() < 2 ? "expected two traces A and B"
                                                         : "unexpected argument '" + args.positional[2] + "'");
  }
  for (const char* flag : {"--a-values", "--b-values", "--html"}) {
    if (!NonEmpty(args, flag, &error)) return UsageError("diff", error);
  }
  lockstep_diff_options options;
  lockstep_diff_options_default(&options);
  if (args.flags.count("--a-values")) options.a_values = args.flags["--a-values"].c_str();
  if (args.flags.count("--b-values")) options.b_values = args.flags["--b-values"].c_str();
  if (args.flags.count("--html")) options.html_path = args.flags["--html"].c_str();
  if (args.flags.count("--rows")) {
    int64_t rows = 0;
    if (!ParseInt("--rows", args.flags["--rows"], 1, 100000, &rows, &error)) return UsageError("diff", error);
    options.max_rows = static_cast<int>(rows);
  }
  int identical = 0;
  const int status = lockstep_trace_diff(args.positional[0].c_str(), args.positional[1].c_str(), &options, Print,
                                         nullptr, &identical);
  if (status != LOCKSTEP_OK) return ApiFailure("diff", "comparing the traces", status);
  if (options.html_path != nullptr) printf("\nHTML report: %s\n", options.html_path);
  return identical ? kExitOk : kExitMismatch;
}

}  // namespace lockstep_cli
