// The reference ONNX models (tests/onnx/models/export_models.py: LeNet-5, an MLP with BatchNorm, a
// small ResNet, a 2-layer transformer encoder, and torchvision's ResNet-18, MobileNetV2 and
// EfficientNet-B0 as PyTorch exports them) imported and run on their fixed inputs, and LeNet-5 and
// the small ResNet fine-tuned for a few Adam steps on MNIST: prints one line per result,
// `MODEL file|output|checkpoint|finetune HASH` (file: the .onnx file's SHA-256, so that a different
// export is told apart from a different computation), the lines tests/golden/onnx.txt holds and every
// platform must reproduce (tools/check-matrix).
//
// usage: lockstep_onnx_models [--models DIR] [--data DIR] [--target NAME] [--device D] [--threads T]
//                             [--only NAME,NAME...]   (those models alone)
#include <stdio.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/checkpoint.h"
#include "core/data.h"
#include "core/error.h"
#include "core/idx.h"
#include "core/io/files.h"
#include "core/io/npy.h"
#include "core/ops.h"
#include "core/optim/optimizer.h"
#include "core/sha256.h"
#include "core/train/mnist.h"
#include "examples/common/run_options.h"
#include "onnx/model.h"
#include "simd/thread_pool.h"

namespace {

int Usage(const std::string& problem) {
  fprintf(stderr, "%s\nusage: lockstep_onnx_models [--models DIR] [--data DIR] [--target NAME] [--device D] [--threads T]\n"
                  "                            [--only NAME,NAME...]\n",
          problem.c_str());
  return 2;
}

// Adam (lr 1e-3) on the first `steps` batches of 100 training images, in file order.
std::string FineTune(lockstep::onnx::OnnxModel& model, const lockstep::Dataset& data, int steps) {
  lockstep::optim::Adam adam(model.NamedParameters(), lockstep::optim::AdamOptions{});
  model.Train();
  for (int step = 0; step < steps; ++step) {
    adam.ZeroGrad();
    const lockstep::Tensor x = data.Inputs(step * 100, 100), y = data.Labels(step * 100, 100);
    lockstep::CrossEntropy(model(x), y).Backward();
    adam.Step();
  }
  model.Eval();
  return lockstep::ModelHash(model);
}

}  // namespace

int main(int argc, char** argv) {
  std::string models = ".deps/onnx", data_dir = ".deps/data/mnist", only;
  const std::vector<std::string> names = {"lenet5", "mlp_bn", "resnet_small", "transformer", "resnet18", "mobilenet_v2",
                                          "efficientnet_b0"};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return Usage("missing value after " + arg);
    const char* value = argv[++i];
    long long n = 0;
    if (arg == "--models") {
      models = value;
    } else if (arg == "--data") {
      data_dir = value;
    } else if (arg == "--only") {
      only = std::string(",") + value + ",";  // ",a,b,": each name found as ",name,"
      for (size_t start = 1; start < only.size(); start = only.find(',', start) + 1) {
        const std::string name = only.substr(start, only.find(',', start) - start);
        if (std::find(names.begin(), names.end(), name) == names.end()) {
          return Usage("--only: '" + name + "' is not one of the reference models");
        }
      }
    } else if (arg == "--target" || arg == "--device") {
      const std::string problem = arg == "--target" ? lockstep::examples::ForceTargetByName(value)
                                                    : lockstep::examples::UseDevice(value);
      if (!problem.empty()) return Usage(problem);
    } else if (arg == "--threads" && lockstep::examples::ParseInt(value, &n) && n >= 1 && n <= 1024) {
      lockstep::simd::SetDefaultThreadCount(static_cast<int>(n));
    } else {
      return Usage("unknown or invalid option " + arg + " " + value);
    }
  }
  try {
    lockstep::Dataset train = lockstep::LoadIdxDataset(data_dir + "/train-images.idx", data_dir + "/train-labels.idx");
    lockstep::train::NormalizeMnist(&train);  // (x - 0.1307) * (1 / 0.3081), as the reference run
    for (const std::string& model_name : names) {
      if (!only.empty() && only.find("," + model_name + ",") == std::string::npos) continue;
      const char* name = model_name.c_str();
      const std::string path = models + "/" + name + ".onnx";
      const std::vector<uint8_t> bytes = lockstep::ReadWholeFile(path, lockstep::onnx::kMaxOnnxBytes);
      printf("%s file %s\n", name, lockstep::Sha256Hex(bytes.data(), bytes.size()).c_str());
      auto model = lockstep::onnx::LoadOnnx(bytes.data(), bytes.size());
      const lockstep::Tensor input = lockstep::ReadNpy(models + "/" + name + ".input.npy").tensor;
      const lockstep::Tensor output = [&] {
        lockstep::NoGradGuard no_grad;
        return (*model)(input);
      }();
      printf("%s output %s\n", name, lockstep::TensorSha256(output).c_str());
      printf("%s checkpoint %s\n", name, lockstep::ModelHash(*model).c_str());
      if (std::string(name) == "lenet5" || std::string(name) == "resnet_small") {
        printf("%s finetune %s\n", name, FineTune(*model, train, 3).c_str());
      }
      fflush(stdout);
    }
  } catch (const lockstep::Error& e) {
    fprintf(stderr, "lockstep_onnx_models: %s\n", e.what());
    return 2;
  }
  return 0;
}
