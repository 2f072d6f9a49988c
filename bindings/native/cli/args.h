// Command-line parsing for the `lockstep` tool: flags with values (--name VALUE or --name=VALUE),
// --help, and positional arguments; every failure is a message for stderr (exit status 2).
#ifndef LOCKSTEP_BINDINGS_NATIVE_CLI_ARGS_H_
#define LOCKSTEP_BINDINGS_NATIVE_CLI_ARGS_H_

#include <stdint.h>

#include <map>
#include <string>
#include <vector>

#include "lockstep/lockstep.h"

namespace lockstep_cli {

constexpr int kExitOk = 0, kExitMismatch = 1, kExitError = 2;

struct Args {
  bool help = false;
  std::vector<std::string> positional;
  std::map<std::string, std::string> flags;  // "--epochs" -> "3"; a switch maps to ""
};

// Parses args; value_flags lists the flags that take a value, switches those that take none.
// Returns false with *error set on an unknown flag, a flag without its value, a switch given a
// value, or a flag given twice.
bool ParseArgs(const std::vector<std::string>& args, const std::vector<std::string>& value_flags, Args* out,
               std::string* error, const std::vector<std::string>& switches = {});

// Parses a decimal integer in [min, max]: digits only (a '-' first for negatives), no sign '+', no
// spaces, no leading zeros (010 is not 8 or 10 by guess); false with *error naming the flag.
bool ParseInt(const std::string& flag, const std::string& text, int64_t min, int64_t max, int64_t* out,
              std::string* error);

// A flag's text value that must not be empty (a path): false with *error when it is.
bool NonEmpty(const Args& args, const std::string& flag, std::string* error);

// The flags of a training run that every model takes: --out, --checkpoint-every, --checkpoint,
// --resume, --allow-nonfinite. default_checkpoint names the state file when only
// --checkpoint-every is given.
struct RunFlags {
  std::string out, checkpoint, resume;
  int64_t checkpoint_every = 0;
  bool allow_nonfinite = false;
};
extern const char kRunFlagsHelp[];

// --receipt FILE [--receipt-every N] (docs/verifiable-training.md), for `train mnist` and `train gpt`.
struct ReceiptFlags {
  std::string path;
  int64_t every = 0;
};
extern const char kReceiptFlagsHelp[];
bool ParseReceiptFlags(const Args& args, ReceiptFlags* out, std::string* error);
template <class Config>
void ApplyReceiptFlags(const ReceiptFlags& receipt, Config* config) {
  if (!receipt.path.empty()) config->receipt_path = receipt.path.c_str();
  config->receipt_every = receipt.every;
}

// --trace FILE [--trace-values FILE] [--trace-steps A-B] [--trace-match TEXT]: an op-level trace
// (docs/diagnostics.md). options.path is NULL without --trace; the strings live in the struct.
struct TraceFlags {
  std::string path, values_path, pattern;
  lockstep_trace_options options{};
};
extern const char kTraceFlagsHelp[];
extern const char* const kTraceFlagNames[4];
bool ParseTraceFlags(const Args& args, TraceFlags* out, std::string* error);
bool ParseRunFlags(const Args& args, const std::string& default_checkpoint, RunFlags* out, std::string* error);
// Points a config's save, checkpoint and resume fields at run's strings (which must outlive it).
template <class Config>
void ApplyRunFlags(const RunFlags& run, Config* config) {
  if (!run.out.empty()) config->save_path = run.out.c_str();
  config->checkpoint_every = run.checkpoint_every;
  if (!run.checkpoint.empty()) config->checkpoint_path = run.checkpoint.c_str();
  if (!run.resume.empty()) config->resume_path = run.resume.c_str();
  config->allow_nonfinite = run.allow_nonfinite ? 1 : 0;
}

// Applies --threads T and --device NAME when present (the flags every computing command takes).
// Returns kExitOk, or prints the problem and returns kExitError.
int ApplyComputeFlags(const Args& args, const char* command);
// The help lines of those two flags.
extern const char kComputeFlagsHelp[];

// Prints "lockstep <command>: <message>" and the usage hint to stderr; returns kExitError.
int UsageError(const char* command, const std::string& message);
// Prints "lockstep <command>: <what>: <lockstep_last_error()>" to stderr; returns kExitError.
int ApiFailure(const char* command, const char* what, int status);

}  // namespace lockstep_cli

#endif  // LOCKSTEP_BINDINGS_NATIVE_CLI_ARGS_H_
