// `lockstep canonicalize IN OUT`: rewrites any safetensors checkpoint in lockstep's canonical form,
// whose SHA-256 is the model hash that `lockstep eval` reports for it.
#include <stdio.h>

#include <string>

#include "bindings/native/cli/args.h"
#include "bindings/native/cli/commands.h"
#include "lockstep/lockstep.h"

namespace lockstep_cli {
namespace {

const char kHelp[] =
    "usage: lockstep canonicalize IN OUT\n"
    "\n"
    "Writes the checkpoint IN (a safetensors file from lockstep, PyTorch or another tool) to OUT in\n"
    "lockstep's canonical encoding: the same tensors and values, sorted, with a canonical header and\n"
    "canonical NaNs. OUT's SHA-256 (printed, and what `sha256sum OUT` prints) is the model hash that\n"
    "'lockstep eval IN' reports; IN's own SHA-256 differs when another tool wrote it.\n";

}  // namespace

int CanonicalizeCommand(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argv, {}, &args, &error)) return UsageError("canonicalize", error);
  if (args.help) {
    fputs(kHelp, stdout);
    return kExitOk;
  }
  if (args.positional.size() != 2) {
    return UsageError("canonicalize", args.positional.size() < 2 ? "expected IN and OUT"
                                                                  : "unexpected argument '" + args.positional[2] + "'");
  }
  for (const std::string& path : args.positional) {
    if (path.empty()) return UsageError("canonicalize", "a path is empty");
  }
  char hash[LOCKSTEP_HASH_SIZE];
  const int status = lockstep_canonicalize(args.positional[0].c_str(), args.positional[1].c_str(), hash);
  if (status != LOCKSTEP_OK) return ApiFailure("canonicalize", "canonicalizing", status);
  printf("%s  %s\n", hash, args.positional[1].c_str());
  return kExitOk;
}

}  // namespace lockstep_cli
