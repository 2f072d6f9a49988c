// `lockstep eval MODEL --data DIR`: accuracy and logits hash of a checkpoint on an IDX test set.
#include <stdio.h>

#include <string>

#include "bindings/native/cli/args.h"
#include "bindings/native/cli/commands.h"
#include "lockstep/lockstep.h"

namespace lockstep_cli {
namespace {

const char kHelp[] =
    "usage: lockstep eval MODEL [--data DIR] [--arch lenet5|mlp|auto] [--threads T] [--device D]\n"
    "                     [--trace FILE [--trace-values FILE --trace-steps A-B --trace-match TEXT]]\n"
    "\n"
    "Evaluates the checkpoint MODEL on DIR/test-images.idx and DIR/test-labels.idx (normalised as\n"
    "in training, batches of 100) and prints the model hash, the accuracy and the hash of the\n"
    "logits; for a model saved by 'lockstep train mnist --out', these equal the training run's.\n"
    "The model hash is the SHA-256 of the model's canonical checkpoint: the file's own SHA-256 when\n"
    "lockstep wrote MODEL; for a file from another tool both are printed ('lockstep canonicalize'\n"
    "writes the canonical file). Labels outside the model's classes, and an empty test set, are\n"
    "errors.\n"
    "\n"
    "  --data DIR    data directory (default .deps/data/mnist)\n"
    "  --arch NAME   architecture of MODEL (default auto: the one whose parameters match)\n"
    "%s%s";

}  // namespace

int EvalCommand(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argv, {"--data", "--arch", "--threads", "--device", "--trace", "--trace-values", "--trace-steps",
                        "--trace-match"},
                 &args, &error)) {
    return UsageError("eval", error);
  }
  TraceFlags trace;
  if (!ParseTraceFlags(args, &trace, &error)) return UsageError("eval", error);
  if (!NonEmpty(args, "--data", &error)) return UsageError("eval", error);
  if (args.help) {
    printf(kHelp, kComputeFlagsHelp, kTraceFlagsHelp);
    return kExitOk;
  }
  if (args.positional.size() != 1) {
    return UsageError("eval", args.positional.empty() ? "missing MODEL"
                                                      : "unexpected argument '" + args.positional[1] + "'");
  }
  const std::string data = args.flags.count("--data") ? args.flags["--data"] : ".deps/data/mnist";
  const std::string arch = args.flags.count("--arch") ? args.flags["--arch"] : "auto";
  if (arch != "auto" && arch != "lenet5" && arch != "mlp") {
    return UsageError("eval", "invalid value '" + arch + "' for --arch: expected lenet5, mlp or auto");
  }

  if (const int code = ApplyComputeFlags(args, "eval"); code != kExitOk) return code;
  lockstep_model* model = nullptr;
  lockstep_dataset* dataset = nullptr;
  int status = lockstep_model_load(arch.c_str(), args.positional[0].c_str(), &model);
  if (status != LOCKSTEP_OK) return ApiFailure("eval", "loading the model", status);
  status = lockstep_dataset_load_idx((data + "/test-images.idx").c_str(), (data + "/test-labels.idx").c_str(), 1, &dataset);
  if (status != LOCKSTEP_OK) {
    lockstep_model_free(model);
    return ApiFailure("eval", "loading the data", status);
  }
  char hash[LOCKSTEP_HASH_SIZE], file_hash[LOCKSTEP_HASH_SIZE];
  const char* name = "";
  lockstep_eval_result result;
  status = lockstep_model_hash(model, hash);
  if (status == LOCKSTEP_OK) status = lockstep_file_sha256(args.positional[0].c_str(), file_hash);
  if (status == LOCKSTEP_OK) status = lockstep_model_arch(model, &name);
  if (status == LOCKSTEP_OK && trace.options.path != nullptr) status = lockstep_trace_begin(model, &trace.options);
  if (status == LOCKSTEP_OK) status = lockstep_evaluate(model, dataset, 100, &result);
  if (status == LOCKSTEP_OK && trace.options.path != nullptr) status = lockstep_trace_end(nullptr);
  int exit_code = kExitOk;
  if (status != LOCKSTEP_OK) {
    exit_code = ApiFailure("eval", "evaluation", status);
  } else {
    printf("model:         %s (%s)\n", args.positional[0].c_str(), name);
    if (std::string(hash) == file_hash) {
      printf("model hash:    %s (the file's SHA-256: a canonical checkpoint)\n", hash);
    } else {
      printf("model hash:    %s (the canonical checkpoint's SHA-256; 'lockstep canonicalize' writes it)\n", hash);
      printf("file sha256:   %s (not canonical: written by another tool)\n", file_hash);
    }
    printf("test accuracy: %.4f (%lld/%lld)\n", result.accuracy, static_cast<long long>(result.correct),
           static_cast<long long>(result.examples));
    printf("logits hash:   %s\n", result.logits_hash);
  }
  lockstep_dataset_free(dataset);
  lockstep_model_free(model);
  return exit_code;
}

}  // namespace lockstep_cli
