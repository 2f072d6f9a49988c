// The three architectures of tests/python/test_torch_convert.py, built with lockstep's C++ API:
// it loads the initial checkpoint that Python wrote from a PyTorch model, trains the same steps on
// the same data (a safetensors file: "inputs" float32 [N, ...], "labels" int64 [N]) with Adam and
// the classifier trainer of lockstep.fit, and prints the model hash. Built natively and for
// WebAssembly (run under Node): the Python test compares both hashes with its own.
//
//   lockstep_py_models --model lenet|mlp|encoder --init FILE --data FILE --steps N --batch B
//                      --seed S --lr LR
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <memory>
#include <string>

#include "core/checkpoint.h"
#include "core/data.h"
#include "core/error.h"
#include "core/io/byte_order.h"
#include "core/io/files.h"
#include "core/models/lenet.h"
#include "core/nn/attention.h"
#include "core/nn/layers.h"
#include "core/optim/optimizer.h"
#include "core/safetensors.h"
#include "core/train/classifier_trainer.h"

namespace {

using namespace lockstep;

// Flatten, Linear(64, 32), BatchNorm1d(32), ReLU, Dropout(0.2), Linear(32, 10).
std::shared_ptr<nn::Module> MakeMlp(Generator& init) {
  auto m = std::make_shared<nn::Sequential>();
  m->Add(std::make_shared<nn::Flatten>())
      .Add(std::make_shared<nn::Linear>(64, 32, true, init))
      .Add(std::make_shared<nn::BatchNorm>(32, 2))
      .Add(std::make_shared<nn::ReLU>())
      .Add(std::make_shared<nn::Dropout>(0.2f, Generator()))
      .Add(std::make_shared<nn::Linear>(32, 10, true, init));
  return m;
}

// Linear(8, 32), TransformerEncoder(TransformerEncoderLayer(32, 4, 64, dropout 0.1, batch_first),
// 2 layers), Flatten, Linear(6 * 32, 10): sequences [N, 6, 8].
std::shared_ptr<nn::Module> MakeEncoder(Generator& init) {
  nn::TransformerEncoderLayerOptions layer;
  layer.d_model = 32, layer.nhead = 4, layer.dim_feedforward = 64, layer.dropout = 0.1f, layer.batch_first = true;
  auto m = std::make_shared<nn::Sequential>();
  m->Add(std::make_shared<nn::Linear>(8, 32, true, init))
      .Add(std::make_shared<nn::TransformerEncoder>(layer, 2, /*final_norm=*/false, init))
      .Add(std::make_shared<nn::Flatten>())
      .Add(std::make_shared<nn::Linear>(6 * 32, 10, true, init));
  return m;
}

Dataset ReadData(const std::string& path) {
  const std::vector<uint8_t> bytes = ReadWholeFile(path, size_t{1} << 30);
  const SafetensorsFile file = DecodeSafetensors(bytes.data(), bytes.size(), path);
  Tensor inputs, labels;
  for (const TensorRecord& r : file.tensors) {
    Tensor t = Tensor::Empty(r.shape, r.dtype);
    CopyLittleEndian(t.impl()->storage->data(), r.data.data(), static_cast<size_t>(t.numel()), DTypeSize(r.dtype));
    if (r.name == "inputs") inputs = t;
    if (r.name == "labels") labels = t;
  }
  LOCKSTEP_REQUIRE(inputs.defined() && labels.defined(), path << ": expected tensors 'inputs' and 'labels'");
  return Dataset(inputs, labels);
}

const char* Arg(int argc, char** argv, const char* name) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (strcmp(argv[i], name) == 0) return argv[i + 1];
  }
  fprintf(stderr, "lockstep_py_models: missing %s\n", name);
  exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string arch = Arg(argc, argv, "--model");
    const uint64_t seed = strtoull(Arg(argc, argv, "--seed"), nullptr, 10);
    Generator init(seed, "init");  // any values: the checkpoint replaces them
    std::shared_ptr<nn::Module> model = arch == "lenet"   ? models::MakeLeNet5(seed)
                                        : arch == "mlp"   ? MakeMlp(init)
                                        : arch == "encoder" ? MakeEncoder(init)
                                                            : nullptr;
    LOCKSTEP_REQUIRE(model != nullptr, "unknown --model " << arch);
    nn::SeedDropoutStreams(*model, seed);  // "dropout/<path>", as lockstep.from_torch_module
    LoadModel(Arg(argc, argv, "--init"), *model);
    const Dataset data = ReadData(Arg(argc, argv, "--data"));
    optim::AdamOptions adam;
    adam.lr = strtof(Arg(argc, argv, "--lr"), nullptr);
    optim::Adam optimizer(model->NamedParameters(), adam);
    train::ClassifierTrainer trainer(*model, optimizer, data, strtoll(Arg(argc, argv, "--batch"), nullptr, 10), seed);
    const long steps = strtol(Arg(argc, argv, "--steps"), nullptr, 10);
    for (long i = 0; i < steps; ++i) trainer.Step();
    printf("hash %s\n", ModelHash(*model).c_str());
    return 0;
  } catch (const std::exception& e) {
    fprintf(stderr, "lockstep_py_models: %s\n", e.what());
    return 1;
  }
}
