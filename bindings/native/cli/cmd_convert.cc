// `lockstep convert MODEL.onnx OUT.safetensors`: an imported ONNX model's parameters and buffers as
// a canonical checkpoint (ONNX's initializer names), so `lockstep hash` and PyTorch's
// load_state_dict work on it.
#include <stdio.h>

#include <memory>
#include <string>

#include "bindings/native/cli/args.h"
#include "bindings/native/cli/commands.h"
#include "lockstep/lockstep.h"

namespace lockstep_cli {
namespace {

const char kHelp[] =
    "usage: lockstep convert MODEL.onnx OUT.safetensors\n"
    "\n"
    "Imports an ONNX model (docs/onnx.md) and writes its parameters and running statistics to OUT as\n"
    "lockstep's canonical checkpoint, under the ONNX initializer names (for a model exported from\n"
    "PyTorch, its state_dict names). Prints the model hash, the SHA-256 of OUT.\n";

}  // namespace

int ConvertCommand(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argv, {}, &args, &error)) return UsageError("convert", error);
  if (args.help) {
    fputs(kHelp, stdout);
    return kExitOk;
  }
  if (args.positional.size() != 2) {
    return UsageError("convert", args.positional.size() < 2 ? "expected MODEL.onnx and OUT.safetensors"
                                                            : "unexpected argument '" + args.positional[2] + "'");
  }
  for (const std::string& path : args.positional) {
    if (path.empty()) return UsageError("convert", "a path is empty");
  }
  lockstep_model* raw = nullptr;
  int status = lockstep_model_load_onnx(args.positional[0].c_str(), 0, &raw);
  if (status != LOCKSTEP_OK) return ApiFailure("convert", "loading the model", status);
  std::unique_ptr<lockstep_model, lockstep_status (*)(lockstep_model*)> model(raw, lockstep_model_free);
  char hash[LOCKSTEP_HASH_SIZE];
  status = lockstep_model_save(model.get(), args.positional[1].c_str(), hash);
  if (status != LOCKSTEP_OK) return ApiFailure("convert", "writing the checkpoint", status);
  printf("%s  %s\n", hash, args.positional[1].c_str());
  return kExitOk;
}

}  // namespace lockstep_cli
