// Command-line parsing for the `lockstep` tool: flags with values (--name VALUE or --name=VALUE),
// --help, and positional arguments; every failure is a message for stderr (exit status 2).
#ifndef LOCKSTEP_BINDINGS_NATIVE_CLI_ARGS_H_
#define LOCKSTEP_BINDINGS_NATIVE_CLI_ARGS_H_

#include <stdint.h>

#include <map>
#include <string>
#include <vector>

namespace lockstep_cli {

constexpr int kExitOk = 0, kExitMismatch = 1, kExitError = 2;

struct Args {
  bool help = false;
  std::vector<std::string> positional;
  std::map<std::string, std::string> flags;  // "--epochs" -> "3"
};

// Parses args; value_flags lists the accepted flags. Returns false with *error set on an unknown
// flag or a flag without its value.
bool ParseArgs(const std::vector<std::string>& args, const std::vector<std::string>& value_flags, Args* out,
               std::string* error);

// Parses a decimal integer in [min, max]; false with *error naming the flag otherwise.
bool ParseInt(const std::string& flag, const std::string& text, int64_t min, int64_t max, int64_t* out,
              std::string* error);

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
