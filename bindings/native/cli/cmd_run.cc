// `lockstep run MODEL.onnx --input NAME=FILE.npy ...`: runs an imported ONNX model on .npy inputs,
// prints each output's SHA-256 (its elements as little-endian bytes, the hash every platform
// reproduces) and writes the outputs as .npy files.
#include <stdio.h>
#include <sys/stat.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bindings/native/cli/args.h"
#include "bindings/native/cli/commands.h"
#include "lockstep/lockstep.h"

namespace lockstep_cli {
namespace {

const char kHelp[] =
    "usage: lockstep run MODEL.onnx --input NAME=FILE.npy ... [--output-dir DIR] [--threads T] [--device D]\n"
    "\n"
    "Runs an ONNX model (imported by lockstep: docs/onnx.md) on NumPy .npy inputs and prints, for each\n"
    "output, its shape, type and the SHA-256 of its elements (little-endian, C order: the bytes of the\n"
    "data section of the .npy file written for it). The same model and inputs give the same hashes on\n"
    "every platform lockstep runs on. A model with one input also takes --input FILE.npy.\n"
    "\n"
    "  --input NAME=FILE  the value of graph input NAME (float32, float64, int32, int64 or bool .npy)\n"
    "  --output-dir DIR   write each output to DIR/NAME.npy (characters other than letters, digits,\n"
    "                     '.', '-' and '_' in NAME become '_')\n"
    "%s";

struct TensorHandle {
  lockstep_tensor* t = nullptr;
  ~TensorHandle() { lockstep_tensor_free(t); }
};

std::string FileName(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
    out += ok ? c : '_';
  }
  return out.empty() || out == "." || out == ".." ? "output" : out;
}

std::string Describe(const lockstep_tensor* t) {
  int rank = 0;
  lockstep_tensor_rank(t, &rank);
  std::vector<int64_t> shape(static_cast<size_t>(rank > 0 ? rank : 1));
  lockstep_tensor_shape(t, shape.data(), rank > 0 ? rank : 1);
  std::string s = "[";
  for (int i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(shape[static_cast<size_t>(i)]);
  lockstep_dtype dtype = LOCKSTEP_FLOAT32;
  lockstep_tensor_dtype(t, &dtype);
  return s + "] " + (dtype == LOCKSTEP_FLOAT32 ? "float32" : dtype == LOCKSTEP_INT32 ? "int32" : "int64");
}

}  // namespace

int RunCommand(const std::vector<std::string>& argv) {
  // --input repeats; the other flags are parsed as usual.
  std::vector<std::string> inputs, rest;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == "--input") {
      if (i + 1 >= argv.size()) return UsageError("run", "option '--input' needs a value");
      inputs.push_back(argv[++i]);
    } else if (argv[i].rfind("--input=", 0) == 0) {
      inputs.push_back(argv[i].substr(8));
    } else {
      rest.push_back(argv[i]);
    }
  }
  Args args;
  std::string error;
  if (!ParseArgs(rest, {"--output-dir", "--threads", "--device"}, &args, &error)) return UsageError("run", error);
  if (args.help) {
    printf(kHelp, kComputeFlagsHelp);
    return kExitOk;
  }
  if (args.positional.size() != 1) {
    return UsageError("run", args.positional.empty() ? "expected MODEL.onnx" : "unexpected argument '" + args.positional[1] + "'");
  }
  if (!NonEmpty(args, "--output-dir", &error)) return UsageError("run", error);
  if (const int code = ApplyComputeFlags(args, "run"); code != kExitOk) return code;
  const std::string model_path = args.positional[0];
  if (model_path.empty()) return UsageError("run", "the model path is empty");
  std::string out_dir = args.flags.count("--output-dir") ? args.flags["--output-dir"] : "";
  if (!out_dir.empty()) {
    struct stat st;
    if (stat(out_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return UsageError("run", "--output-dir '" + out_dir + "' is not an existing folder");
    }
  }

  lockstep_model* raw_model = nullptr;
  int status = lockstep_model_load_onnx(model_path.c_str(), 0, &raw_model);
  if (status != LOCKSTEP_OK) return ApiFailure("run", "loading the model", status);
  std::unique_ptr<lockstep_model, lockstep_status (*)(lockstep_model*)> model(raw_model, lockstep_model_free);
  int n_in = 0, n_out = 0;
  lockstep_model_io_count(model.get(), &n_in, &n_out);
  std::vector<std::string> in_names, out_names;
  for (int i = 0; i < n_in; ++i) {
    const char* name = nullptr;
    lockstep_model_io_name(model.get(), 0, i, &name);
    in_names.push_back(name);
  }
  for (int i = 0; i < n_out; ++i) {
    const char* name = nullptr;
    lockstep_model_io_name(model.get(), 1, i, &name);
    out_names.push_back(name);
  }
  // Match NAME=FILE to the graph's inputs (a bare FILE for a one-input graph).
  std::map<std::string, std::string> files;
  for (const std::string& given : inputs) {
    const size_t eq = given.find('=');
    std::string name = eq == std::string::npos ? "" : given.substr(0, eq);
    const std::string file = eq == std::string::npos ? given : given.substr(eq + 1);
    if (name.empty()) {
      if (n_in != 1) return UsageError("run", "--input " + given + ": name the input (NAME=FILE); the model has " + std::to_string(n_in) + " inputs");
      name = in_names[0];
    }
    bool known = false;
    for (const std::string& n : in_names) known = known || n == name;
    if (!known) {
      std::string list;
      for (const std::string& n : in_names) list += (list.empty() ? "" : ", ") + n;
      return UsageError("run", "the model has no input '" + name + "' (its inputs: " + list + ")");
    }
    if (files.count(name)) return UsageError("run", "input '" + name + "' is given twice");
    if (file.empty()) return UsageError("run", "--input " + given + ": the file is empty");
    files[name] = file;
  }
  std::vector<TensorHandle> values(static_cast<size_t>(n_in));
  std::vector<const lockstep_tensor*> pointers;
  for (int i = 0; i < n_in; ++i) {
    const auto it = files.find(in_names[static_cast<size_t>(i)]);
    if (it == files.end()) return UsageError("run", "missing --input " + in_names[static_cast<size_t>(i)] + "=FILE.npy");
    status = lockstep_tensor_load_npy(it->second.c_str(), &values[static_cast<size_t>(i)].t);
    if (status != LOCKSTEP_OK) return ApiFailure("run", ("reading " + it->second).c_str(), status);
    pointers.push_back(values[static_cast<size_t>(i)].t);
  }
  std::vector<TensorHandle> outputs(static_cast<size_t>(n_out));
  std::vector<lockstep_tensor*> out_pointers(static_cast<size_t>(n_out), nullptr);
  status = lockstep_model_run(model.get(), pointers.data(), n_in, out_pointers.data(), n_out);
  if (status != LOCKSTEP_OK) return ApiFailure("run", "running the model", status);
  for (int i = 0; i < n_out; ++i) outputs[static_cast<size_t>(i)].t = out_pointers[static_cast<size_t>(i)];
  for (int i = 0; i < n_out; ++i) {
    const lockstep_tensor* t = outputs[static_cast<size_t>(i)].t;
    char hash[LOCKSTEP_HASH_SIZE];
    lockstep_tensor_sha256(t, hash);
    printf("%s  %s %s\n", hash, out_names[static_cast<size_t>(i)].c_str(), Describe(t).c_str());
    if (!out_dir.empty()) {
      const std::string path = out_dir + "/" + FileName(out_names[static_cast<size_t>(i)]) + ".npy";
      status = lockstep_tensor_save_npy(t, path.c_str());
      if (status != LOCKSTEP_OK) return ApiFailure("run", ("writing " + path).c_str(), status);
    }
  }
  return kExitOk;
}

}  // namespace lockstep_cli
