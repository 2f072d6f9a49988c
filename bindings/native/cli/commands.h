// The subcommands of the `lockstep` tool; each takes the arguments after its name and returns the
// process exit status (0 ok, 1 verify mismatch, 2 usage error or failure).
#ifndef LOCKSTEP_BINDINGS_NATIVE_CLI_COMMANDS_H_
#define LOCKSTEP_BINDINGS_NATIVE_CLI_COMMANDS_H_

#include <string>
#include <vector>

namespace lockstep_cli {
extern const char kGptHelp[];
}  // namespace lockstep_cli

namespace lockstep_cli {

struct Args;

int TrainCommand(const std::vector<std::string>& args);
int TrainGptCommand(const Args& parsed);  // `train gpt`, after TrainCommand parsed its flags
int SampleCommand(const std::vector<std::string>& args);
int EvalCommand(const std::vector<std::string>& args);
int HashCommand(const std::vector<std::string>& args);
int CanonicalizeCommand(const std::vector<std::string>& args);
int DiffCommand(const std::vector<std::string>& args);
int VerifyCommand(const std::vector<std::string>& args);
int VerifyRunCommand(const std::vector<std::string>& args);  // a receipt re-executed
int DisputeCommand(const std::vector<std::string>& args);    // two receipts settled
int InfoCommand(const std::vector<std::string>& args);
int RunCommand(const std::vector<std::string>& args);        // an ONNX model on .npy inputs
int ConvertCommand(const std::vector<std::string>& args);    // an ONNX model to a checkpoint
int TrainOnnxCommand(const std::vector<std::string>& args);  // `train onnx`, the arguments after it

}  // namespace lockstep_cli

#endif  // LOCKSTEP_BINDINGS_NATIVE_CLI_COMMANDS_H_
