// `lockstep hash FILE` and `lockstep verify FILE --expect HASH`.
#include <ctype.h>
#include <stdio.h>

#include <string>

#include "bindings/native/cli/args.h"
#include "bindings/native/cli/commands.h"
#include "lockstep/lockstep.h"

namespace lockstep_cli {
namespace {

const char kHashHelp[] =
    "usage: lockstep hash FILE...\n"
    "\n"
    "Prints the SHA-256 of each FILE as `sha256sum` does; a checkpoint's SHA-256 is its model hash.\n";

const char kVerifyHelp[] =
    "usage: lockstep verify FILE --expect HASH\n"
    "\n"
    "Compares the SHA-256 of FILE with HASH (64 hex digits, any case).\n"
    "Exit status: 0 match, 1 mismatch, 2 error (unreadable file, malformed HASH, bad usage).\n";

bool IsHash(std::string* text) {
  if (text->size() != 64) return false;
  for (char& c : *text) {
    if (!isxdigit(static_cast<unsigned char>(c))) return false;
    c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  }
  return true;
}

}  // namespace

int HashCommand(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argv, {}, &args, &error)) return UsageError("hash", error);
  if (args.help) {
    fputs(kHashHelp, stdout);
    return kExitOk;
  }
  if (args.positional.empty()) return UsageError("hash", "missing FILE");
  int exit_code = kExitOk;
  for (const std::string& file : args.positional) {
    char hash[LOCKSTEP_HASH_SIZE];
    const int status = lockstep_file_sha256(file.c_str(), hash);
    if (status != LOCKSTEP_OK) {
      exit_code = ApiFailure("hash", "hashing", status);
      continue;
    }
    printf("%s  %s\n", hash, file.c_str());
  }
  return exit_code;
}

int VerifyCommand(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argv, {"--expect"}, &args, &error)) return UsageError("verify", error);
  if (args.help) {
    fputs(kVerifyHelp, stdout);
    return kExitOk;
  }
  if (args.positional.size() != 1) return UsageError("verify", args.positional.empty() ? "missing FILE" : "expected one FILE");
  if (!args.flags.count("--expect")) return UsageError("verify", "missing --expect HASH");
  std::string expected = args.flags["--expect"];
  if (!IsHash(&expected)) return UsageError("verify", "invalid value '" + expected + "' for --expect: expected 64 hex digits");
  char hash[LOCKSTEP_HASH_SIZE];
  const int status = lockstep_file_sha256(args.positional[0].c_str(), hash);
  if (status != LOCKSTEP_OK) return ApiFailure("verify", "hashing", status);
  if (expected == hash) {
    printf("OK  %s  %s\n", hash, args.positional[0].c_str());
    return kExitOk;
  }
  printf("MISMATCH  %s\n  expected %s\n  got      %s\n", args.positional[0].c_str(), expected.c_str(), hash);
  return kExitMismatch;
}

}  // namespace lockstep_cli
