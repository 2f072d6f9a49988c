#include "bindings/native/cli/args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>

#include "lockstep/lockstep.h"

namespace lockstep_cli {

bool ParseArgs(const std::vector<std::string>& args, const std::vector<std::string>& value_flags, Args* out,
               std::string* error, const std::vector<std::string>& switches) {
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
      if (out->flags.count(name)) {
        *error = "option '" + name + "' is given twice";
        return false;
      }
      if (std::find(switches.begin(), switches.end(), name) != switches.end()) {
        if (eq != std::string::npos) {
          *error = "option '" + name + "' takes no value";
          return false;
        }
        out->flags[name] = "";
        continue;
      }
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
  const size_t first_digit = !text.empty() && text[0] == '-' ? 1 : 0;
  bool digits_only = text.size() > first_digit;
  for (size_t i = first_digit; i < text.size(); ++i) digits_only = digits_only && text[i] >= '0' && text[i] <= '9';
  const bool leading_zero = text.size() > first_digit + 1 && text[first_digit] == '0';
  errno = 0;
  char* end = nullptr;
  const long long value = digits_only ? strtoll(text.c_str(), &end, 10) : 0;
  if (!digits_only || leading_zero || *end != '\0' || errno == ERANGE || value < min || value > max) {
    *error = "invalid value '" + text + "' for " + flag + ": expected an integer in [" + std::to_string(min) + ", " +
             std::to_string(max) + "]";
    return false;
  }
  *out = value;
  return true;
}

bool NonEmpty(const Args& args, const std::string& flag, std::string* error) {
  const auto it = args.flags.find(flag);
  if (it != args.flags.end() && it->second.empty()) {
    *error = "option '" + flag + "' needs a non-empty value (a path)";
    return false;
  }
  return true;
}

const char kRunFlagsHelp[] =
    "  --out FILE           write the trained checkpoint (safetensors) to FILE (a regular file:\n"
    "                       devices and FIFOs are refused; a replaced file keeps its permissions)\n"
    "  --checkpoint-every N write the full training state every N steps (atomically), to\n"
    "  --checkpoint FILE    FILE (default: the --resume file, else %s)\n"
    "  --resume FILE        continue a training state written by --checkpoint-every: the run must\n"
    "                       have the same seed, data and configuration; it ends on the same hashes\n"
    "                       as a run never interrupted\n"
    "  --allow-nonfinite    train on through NaN or infinite losses (default: stop with an error)\n";

const char kReceiptFlagsHelp[] =
    "  --receipt FILE       write a training receipt (docs/verifiable-training.md): the run's identity\n"
    "                       and a hash chain over its steps, with training states kept beside it\n"
    "                       (FILE.<step>.state) at the start, every --receipt-every N steps (default:\n"
    "                       about ten over the run) and at the end; check it with `lockstep verify-run`\n";

bool ParseReceiptFlags(const Args& args, ReceiptFlags* out, std::string* error) {
  if (!NonEmpty(args, "--receipt", error)) return false;
  auto path = args.flags.find("--receipt");
  if (path != args.flags.end()) out->path = path->second;
  auto every = args.flags.find("--receipt-every");
  if (every != args.flags.end()) {
    if (out->path.empty()) return *error = "--receipt-every needs --receipt FILE", false;
    if (!ParseInt("--receipt-every", every->second, 1, INT64_MAX, &out->every, error)) return false;
  }
  if (!out->path.empty() && args.flags.count("--resume")) {
    return *error = "--receipt with --resume: a receipt covers a run from its first step", false;
  }
  return true;
}

bool ParseRunFlags(const Args& args, const std::string& default_checkpoint, RunFlags* out, std::string* error) {
  for (const char* flag : {"--out", "--checkpoint", "--resume"}) {
    if (!NonEmpty(args, flag, error)) return false;
  }
  auto text = [&](const char* flag) { return args.flags.count(flag) ? args.flags.at(flag) : std::string(); };
  out->out = text("--out");
  out->resume = text("--resume");
  out->allow_nonfinite = args.flags.count("--allow-nonfinite") != 0;
  if (args.flags.count("--checkpoint-every") &&
      !ParseInt("--checkpoint-every", args.flags.at("--checkpoint-every"), 1, INT64_MAX, &out->checkpoint_every, error)) {
    return false;
  }
  if (args.flags.count("--checkpoint") && out->checkpoint_every == 0) {
    *error = "--checkpoint FILE needs --checkpoint-every N";
    return false;
  }
  out->checkpoint = text("--checkpoint");
  if (out->checkpoint.empty() && out->checkpoint_every > 0) {
    out->checkpoint = out->resume.empty() ? default_checkpoint : out->resume;
  }
  return true;
}

const char kTraceFlagsHelp[] =
    "  --trace FILE         record an op-level trace (JSON lines; docs/diagnostics.md): every op's\n"
    "                       step, phase, module, hash of its exact bits and statistics; compare two\n"
    "                       with 'lockstep diff A B'\n"
    "  --trace-values FILE  also keep the full values of chosen records (safetensors), so that\n"
    "  --trace-steps A-B    'lockstep diff' reports ulps: records of steps A to B (or N)\n"
    "  --trace-match TEXT   whose \"module/op\" (\"param/op\" for gradients and updates, as in\n"
    "                       \"0.weight/grad\") contains TEXT\n";
const char* const kTraceFlagNames[4] = {"--trace", "--trace-values", "--trace-steps", "--trace-match"};

bool ParseTraceFlags(const Args& args, TraceFlags* out, std::string* error) {
  for (const char* flag : {"--trace", "--trace-values"}) {
    if (!NonEmpty(args, flag, error)) return false;
  }
  const bool any_values = args.flags.count("--trace-values") || args.flags.count("--trace-steps") ||
                          args.flags.count("--trace-match");
  if (!args.flags.count("--trace")) {
    if (any_values) *error = "--trace-values, --trace-steps and --trace-match need --trace FILE";
    return !any_values;
  }
  out->path = args.flags.at("--trace");
  out->options.path = out->path.c_str();
  if (args.flags.count("--trace-values")) {
    out->values_path = args.flags.at("--trace-values");
    out->options.values_path = out->values_path.c_str();
    const std::string steps = args.flags.count("--trace-steps") ? args.flags.at("--trace-steps") : "1";
    const size_t dash = steps.find('-');
    int64_t from = 0, to = 0;
    if (!ParseInt("--trace-steps", steps.substr(0, dash), 1, INT64_MAX, &from, error) ||
        !ParseInt("--trace-steps", dash == std::string::npos ? steps : steps.substr(dash + 1), from, INT64_MAX, &to,
                  error)) {
      return false;
    }
    out->options.values_from = from;
    out->options.values_to = to;
    if (args.flags.count("--trace-match")) {
      out->pattern = args.flags.at("--trace-match");
      out->options.values_pattern = out->pattern.c_str();
    }
  } else if (any_values) {
    *error = "--trace-steps and --trace-match choose the records of --trace-values FILE";
    return false;
  }
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
