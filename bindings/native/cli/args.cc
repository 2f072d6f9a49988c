#include "bindings/native/cli/args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>

#include "lockstep/lockstep.h"

namespace lockstep_cli {

bool ParseArgs(const std::vector<std::string>& args, const std::vector<std::string>& value_flags, Args* out,
               std::string* error) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      out->help = true;
    } else if (arg == "--") {
      out->positional.insert(out->positional.end(), args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    } else if (arg.size() > 1 && arg[0] == '-') {
      const size_t eq = arg.find('=');
      const std::string name = arg.substr(0, eq);
      if (std::find(value_flags.begin(), value_flags.end(), name) == value_flags.end()) {
        *error = "unknown option '" + name + "'";
        return false;
      }
      if (eq != std::string::npos) {
        out->flags[name] = arg.substr(eq + 1);
      } else if (i + 1 < args.size()) {
        out->flags[name] = args[++i];
      } else {
        *error = "option '" + name + "' needs a value";
        return false;
      }
    } else {
      out->positional.push_back(arg);
    }
  }
  return true;
}

bool ParseInt(const std::string& flag, const std::string& text, int64_t min, int64_t max, int64_t* out,
              std::string* error) {
  errno = 0;
  char* end = nullptr;
  const long long value = strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < min || value > max) {
    *error = "invalid value '" + text + "' for " + flag + ": expected an integer in [" + std::to_string(min) + ", " +
             std::to_string(max) + "]";
    return false;
  }
  *out = value;
  return true;
}

int UsageError(const char* command, const std::string& message) {
  fprintf(stderr, "lockstep %s: %s\nTry 'lockstep %s --help'.\n", command, message.c_str(), command);
  return kExitError;
}

const char kComputeFlagsHelp[] =
    "  --threads T        kernel threads (default: LOCKSTEP_NUM_THREADS, else all cores)\n"
    "  --device D         cpu (default), cuda or cuda:N: where the kernels run (the CUDA plugin;\n"
    "                     'lockstep info' lists the GPUs); the results are the same bits\n";

int ApplyComputeFlags(const Args& args, const char* command) {
  int64_t value = 0;
  std::string error;
  const auto threads = args.flags.find("--threads");
  if (threads != args.flags.end()) {
    if (!ParseInt("--threads", threads->second, 1, 1024, &value, &error)) return UsageError(command, error);
    const int status = lockstep_set_num_threads(static_cast<int>(value));
    if (status != LOCKSTEP_OK) return ApiFailure(command, "setting the thread count", status);
  }
  const auto device = args.flags.find("--device");
  if (device != args.flags.end()) {
    const int status = lockstep_set_device(device->second.c_str());
    if (status == LOCKSTEP_ERROR_INVALID_ARGUMENT) return UsageError(command, lockstep_last_error());
    if (status != LOCKSTEP_OK) return ApiFailure(command, ("selecting device " + device->second).c_str(), status);
  }
  return kExitOk;
}

int ApiFailure(const char* command, const char* what, int status) {
  fprintf(stderr, "lockstep %s: %s failed (%s): %s\n", command, what,
          lockstep_status_name(static_cast<lockstep_status>(status)), lockstep_last_error());
  return kExitError;
}

}  // namespace lockstep_cli
