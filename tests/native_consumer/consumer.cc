// A C++ consumer of the installed liblockstep: LeNet-5 a few steps on synthetic images, save,
// reload and compare hashes, check the error path. Exit status 0 on success.
#include <lockstep/lockstep.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

void Check(lockstep_status status, const char* what) {
  if (status != LOCKSTEP_OK) {
    throw std::runtime_error(std::string(what) + ": " + lockstep_status_name(status) + ": " + lockstep_last_error());
  }
}

struct ModelFree {
  void operator()(lockstep_model* m) const { lockstep_model_free(m); }
};
struct OptimizerFree {
  void operator()(lockstep_optimizer* o) const { lockstep_optimizer_free(o); }
};
struct TensorFree {
  void operator()(lockstep_tensor* t) const { lockstep_tensor_free(t); }
};
using Model = std::unique_ptr<lockstep_model, ModelFree>;
using Optimizer = std::unique_ptr<lockstep_optimizer, OptimizerFree>;
using Tensor = std::unique_ptr<lockstep_tensor, TensorFree>;

int Run(const std::string& path) {
  constexpr int64_t kBatch = 4;
  std::vector<float> images(kBatch * 28 * 28);
  for (size_t i = 0; i < images.size(); ++i) images[i] = static_cast<float>((i * 13) % 29) / 29.0f;
  const std::vector<int64_t> labels = {1, 3, 5, 7};
  const int64_t shape[4] = {kBatch, 1, 28, 28};

  lockstep_model* raw_model = nullptr;
  Check(lockstep_model_create("lenet5", 2, &raw_model), "create");
  Model model(raw_model);
  lockstep_adam_options options;
  Check(lockstep_adam_options_default(&options), "adam options");
  options.lr = 1e-3f;
  lockstep_optimizer* raw_optimizer = nullptr;
  Check(lockstep_adam_create(model.get(), &options, &raw_optimizer), "adam");
  Optimizer optimizer(raw_optimizer);
  lockstep_tensor* raw_inputs = nullptr;
  Check(lockstep_tensor_create(images.data(), shape, 4, &raw_inputs), "tensor");
  Tensor inputs(raw_inputs);
  float first = 0, loss = 0;
  for (int step = 0; step < 5; ++step) {
    Check(lockstep_train_step(model.get(), optimizer.get(), inputs.get(), labels.data(), kBatch, &loss), "step");
    if (step == 0) first = loss;
  }
  if (!(loss < first)) throw std::runtime_error("loss did not fall");

  lockstep_tensor* raw_logits = nullptr;
  Check(lockstep_model_forward(model.get(), inputs.get(), &raw_logits), "forward");
  Tensor logits(raw_logits);
  int64_t dims[LOCKSTEP_MAX_RANK];
  Check(lockstep_tensor_shape(logits.get(), dims, LOCKSTEP_MAX_RANK), "shape");
  if (dims[0] != kBatch || dims[1] != 10) throw std::runtime_error("logits shape");

  char saved[LOCKSTEP_HASH_SIZE], reloaded_hash[LOCKSTEP_HASH_SIZE];
  Check(lockstep_model_save(model.get(), path.c_str(), saved), "save");
  lockstep_model* raw_reloaded = nullptr;
  Check(lockstep_model_load("lenet5", path.c_str(), &raw_reloaded), "load");
  Model reloaded(raw_reloaded);
  Check(lockstep_model_hash(reloaded.get(), reloaded_hash), "hash");
  if (std::string(saved) != reloaded_hash) throw std::runtime_error("hash changed on reload");

  // Error paths: a bad shape at creation and wrong label count.
  const int64_t negative[2] = {2, -3};
  lockstep_tensor* none = nullptr;
  lockstep_status status = lockstep_tensor_create(images.data(), negative, 2, &none);
  if (status != LOCKSTEP_ERROR_INVALID_ARGUMENT || none != nullptr) throw std::runtime_error("negative shape accepted");
  std::printf("bad shape -> %s: %s\n", lockstep_status_name(status), lockstep_last_error());
  status = lockstep_train_step(model.get(), optimizer.get(), inputs.get(), labels.data(), 3, &loss);
  if (status != LOCKSTEP_ERROR_INVALID_ARGUMENT) throw std::runtime_error("wrong label count accepted");
  std::printf("bad labels -> %s: %s\n", lockstep_status_name(status), lockstep_last_error());
  status = lockstep_model_load("lenet5", "/nonexistent/model.safetensors", &raw_reloaded);
  if (status != LOCKSTEP_ERROR_IO) throw std::runtime_error("missing file not an I/O error");

  std::printf("C++ consumer: loss %.4f -> %.4f, hash %s: OK\n", first, loss, saved);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc > 1 ? argv[1] : "consumer_cc.safetensors");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL: %s\n", e.what());
    return 1;
  }
}
