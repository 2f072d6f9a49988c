// `lockstep`: train, evaluate, hash and verify models through the C ABI.
#include <stdio.h>
#include <string.h>

#include <string>
#include <vector>

#include "bindings/native/cli/args.h"
#include "bindings/native/cli/commands.h"

namespace {

const char kUsage[] =
    "usage: lockstep <command> [options]\n"
    "\n"
    "Bitwise-reproducible training: the same model, data and seed give the same hashes everywhere.\n"
    "\n"
    "commands:\n"
    "  train mnist   train LeNet-5 on MNIST (the reference run) and print its hashes\n"
    "  train gpt     train a character-level GPT on text and print its hashes\n"
    "  train onnx MODEL  fine-tune an imported ONNX classifier on IDX data\n"
    "  run MODEL     run an ONNX model on .npy inputs; print the outputs' hashes\n"
    "  convert MODEL OUT  write an ONNX model's weights as a canonical checkpoint\n"
    "  sample MODEL  generate text with a trained GPT checkpoint\n"
    "  eval MODEL    evaluate a checkpoint on an IDX test set\n"
    "  hash FILE     print a file's SHA-256 (a checkpoint's hash is its model hash)\n"
    "  canonicalize IN OUT  rewrite any safetensors checkpoint in lockstep's canonical form\n"
    "  diff A B      the first op where two traces (--trace) differ, and how the difference spreads\n"
    "  verify FILE   compare a file's SHA-256 with --expect HASH\n"
    "  verify-run RECEIPT  re-execute steps of a training receipt and check them against its chain\n"
    "  dispute A B   settle two receipts of one run: the first differing step and op\n"
    "  info          version, contract version, SIMD targets, threads\n"
    "\n"
    "'lockstep <command> --help' describes a command. Exit status: 0 success, 1 verify mismatch,\n"
    "2 usage error or failure.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fputs(kUsage, stderr);
    return lockstep_cli::kExitError;
  }
  const std::string command = argv[1];
  const std::vector<std::string> rest(argv + 2, argv + argc);
  if (command == "--help" || command == "-h" || command == "help") {
    fputs(kUsage, stdout);
    return lockstep_cli::kExitOk;
  }
  if (command == "train") return lockstep_cli::TrainCommand(rest);
  if (command == "sample") return lockstep_cli::SampleCommand(rest);
  if (command == "eval") return lockstep_cli::EvalCommand(rest);
  if (command == "hash") return lockstep_cli::HashCommand(rest);
  if (command == "canonicalize") return lockstep_cli::CanonicalizeCommand(rest);
  if (command == "diff") return lockstep_cli::DiffCommand(rest);
  if (command == "verify") return lockstep_cli::VerifyCommand(rest);
  if (command == "verify-run") return lockstep_cli::VerifyRunCommand(rest);
  if (command == "dispute") return lockstep_cli::DisputeCommand(rest);
  if (command == "info") return lockstep_cli::InfoCommand(rest);
  if (command == "run") return lockstep_cli::RunCommand(rest);
  if (command == "convert") return lockstep_cli::ConvertCommand(rest);
  fprintf(stderr, "lockstep: unknown command '%s'\n\n%s", command.c_str(), kUsage);
  return lockstep_cli::kExitError;
}
