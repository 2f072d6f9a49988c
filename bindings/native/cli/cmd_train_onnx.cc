// `lockstep train onnx MODEL.onnx --data DIR`: fine-tunes an imported ONNX classifier on IDX data
// (cross-entropy on its output, Adam), in file order, and prints its hashes. Everything goes
// through the C ABI, so the hashes are those of any other front door for the same steps.
#include <stdio.h>
#include <stdlib.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "bindings/native/cli/args.h"
#include "bindings/native/cli/commands.h"
#include "lockstep/lockstep.h"

namespace lockstep_cli {
namespace {

const char kHelp[] =
    "usage: lockstep train onnx MODEL.onnx [--data DIR] [--epochs N] [--steps N] [--batch N] [--lr LR]\n"
    "                           [--seed S] [--out FILE] [--no-normalize] [--threads T] [--device D]\n"
    "                           [--receipt FILE [--receipt-every N]]\n"
    "\n"
    "Fine-tunes an imported ONNX classifier (docs/onnx.md; its one input takes a batch of images, its\n"
    "first output gives [N, classes] logits): Adam, cross-entropy, batches in file order. Prints the\n"
    "model hash before and after, the last loss, the test accuracy and the hash of the test logits.\n"
    "\n"
    "  --data DIR      train-images.idx, train-labels.idx, test-images.idx, test-labels.idx\n"
    "                  (default .deps/data/mnist)\n"
    "  --epochs N      passes over the training set (default 1)\n"
    "  --steps N       stop after N steps (default: every step of the epochs)\n"
    "  --batch N       examples per step (default 100; the last batch of an epoch may be smaller)\n"
    "  --lr LR         Adam's learning rate (default 0.001)\n"
    "  --seed S        seed of the graph's Dropout streams (default 0)\n"
    "  --out FILE      write the fine-tuned checkpoint (ONNX's initializer names)\n"
    "  --no-normalize  feed pixels / 255 without MNIST's normalisation (x - 0.1307) / 0.3081\n"
    "%s%s";

template <class T, lockstep_status (*Free)(T*)>
struct Handle {
  T* p = nullptr;
  ~Handle() { Free(p); }
};

bool ParseLr(const std::string& text, float* out, std::string* error) {
  char* end = nullptr;
  const float v = strtof(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v <= 0) {
    *error = "--lr must be a finite number > 0, got '" + text + "'";
    return false;
  }
  *out = v;
  return true;
}

}  // namespace

int TrainOnnxCommand(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argv, {"--data", "--epochs", "--steps", "--batch", "--lr", "--seed", "--out", "--threads", "--device",
                        "--receipt", "--receipt-every"},
                 &args, &error, {"--no-normalize"})) {
    return UsageError("train", error);
  }
  if (args.help) {
    printf(kHelp, kComputeFlagsHelp, kReceiptFlagsHelp);
    return kExitOk;
  }
  if (args.positional.size() != 1) {
    return UsageError("train", args.positional.empty() ? "expected MODEL.onnx after 'train onnx'"
                                                       : "unexpected argument '" + args.positional[1] + "'");
  }
  for (const char* flag : {"--data", "--out"}) {
    if (!NonEmpty(args, flag, &error)) return UsageError("train", error);
  }
  int64_t epochs = 1, steps = INT64_MAX, batch = 100, seed = 0;
  const struct {
    const char* flag;
    int64_t min, max;
    int64_t* out;
  } ints[] = {{"--epochs", 1, 100000, &epochs}, {"--steps", 1, INT64_MAX, &steps}, {"--batch", 1, 1 << 20, &batch},
              {"--seed", 0, INT64_MAX, &seed}};
  for (const auto& i : ints) {
    if (args.flags.count(i.flag) && !ParseInt(i.flag, args.flags[i.flag], i.min, i.max, i.out, &error)) {
      return UsageError("train", error);
    }
  }
  lockstep_adam_options adam;
  lockstep_adam_options_default(&adam);
  if (args.flags.count("--lr") && !ParseLr(args.flags["--lr"], &adam.lr, &error)) return UsageError("train", error);
  ReceiptFlags receipt;
  if (!ParseReceiptFlags(args, &receipt, &error)) return UsageError("train", error);
  if (const int code = ApplyComputeFlags(args, "train"); code != kExitOk) return code;
  const std::string data = args.flags.count("--data") ? args.flags["--data"] : ".deps/data/mnist";
  const int normalize = args.flags.count("--no-normalize") ? 0 : 1;

  Handle<lockstep_model, lockstep_model_free> model;
  int status = lockstep_model_load_onnx(args.positional[0].c_str(), static_cast<uint64_t>(seed), &model.p);
  if (status != LOCKSTEP_OK) return ApiFailure("train", "loading the model", status);
  Handle<lockstep_dataset, lockstep_dataset_free> train_set, test_set;
  status = lockstep_dataset_load_idx((data + "/train-images.idx").c_str(), (data + "/train-labels.idx").c_str(),
                                     normalize, &train_set.p);
  if (status != LOCKSTEP_OK) return ApiFailure("train", "reading the training set", status);
  status = lockstep_dataset_load_idx((data + "/test-images.idx").c_str(), (data + "/test-labels.idx").c_str(),
                                     normalize, &test_set.p);
  if (status != LOCKSTEP_OK) return ApiFailure("train", "reading the test set", status);
  Handle<lockstep_optimizer, lockstep_optimizer_free> optimizer;
  status = lockstep_adam_create(model.p, &adam, &optimizer.p);
  if (status != LOCKSTEP_OK) return ApiFailure("train", "creating the optimizer", status);
  char hash[LOCKSTEP_HASH_SIZE];
  lockstep_model_hash(model.p, hash);
  printf("initial hash:  %s\n", hash);
  lockstep_fine_tune_options options;
  lockstep_fine_tune_options_default(&options);
  options.epochs = epochs;
  options.max_steps = steps == INT64_MAX ? -1 : steps;
  options.batch_size = batch;
  ApplyReceiptFlags(receipt, &options);
  lockstep_fine_tune_result result;
  status = lockstep_fine_tune(model.p, optimizer.p, train_set.p, &options, nullptr, nullptr, &result);
  if (status != LOCKSTEP_OK) return ApiFailure("train", "fine-tuning", status);
  lockstep_model_hash(model.p, hash);
  printf("steps:         %lld\n", static_cast<long long>(result.steps));
  printf("last loss:     %.6f\n", static_cast<double>(result.last_loss));
  printf("trained hash:  %s\n", hash);
  lockstep_eval_result eval;
  status = lockstep_evaluate(model.p, test_set.p, 100, &eval);
  if (status != LOCKSTEP_OK) return ApiFailure("train", "evaluating", status);
  printf("test accuracy: %.4f (%lld examples)\n", eval.accuracy, static_cast<long long>(eval.examples));
  printf("logits hash:   %s\n", eval.logits_hash);
  if (args.flags.count("--out")) {
    status = lockstep_model_save(model.p, args.flags["--out"].c_str(), hash);
    if (status != LOCKSTEP_OK) return ApiFailure("train", "saving", status);
    printf("saved:         %s\n", args.flags["--out"].c_str());
  }
  return kExitOk;
}

}  // namespace lockstep_cli
