// The C ABI: IDX data sets, evaluation, and the MNIST reference run.

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "bindings/native/c_api_internal.h"
#include "bindings/native/models.h"
#include "core/autograd.h"
#include "core/ops.h"
#include "core/parallel/data_parallel.h"
#include "core/train/evaluate.h"
#include "core/train/mnist.h"

using lockstep::capi::Boundary;
using lockstep::capi::Fail;
using lockstep::capi::RequireNonNull;

namespace {

void RequireRange(const lockstep_dataset* dataset, int64_t start, int64_t count) {
  const int64_t size = dataset->data.size();
  if (start < 0 || count < 1 || start > size || count > size - start) {
    Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "examples [" + std::to_string(start) + ", " + std::to_string(start) + " + " +
                                              std::to_string(count) + ") are not in the data set of " +
                                              std::to_string(size));
  }
}

}  // namespace

extern "C" {

lockstep_status lockstep_dataset_load_idx(const char* images_path, const char* labels_path, int normalize,
                                          lockstep_dataset** out) {
  return Boundary(__func__, [&] {
    RequireNonNull(images_path, "images_path");
    RequireNonNull(labels_path, "labels_path");
    RequireNonNull(out, "out");
    lockstep::capi::RequireReadable(images_path);
    lockstep::capi::RequireReadable(labels_path);
    lockstep::Dataset data = lockstep::LoadIdxDataset(images_path, labels_path);
    if (normalize) lockstep::train::NormalizeMnist(&data);
    *out = new lockstep_dataset{data};
  });
}

lockstep_status lockstep_dataset_free(lockstep_dataset* dataset) {
  delete dataset;  // never fails, and leaves lockstep_last_error() as it was
  return LOCKSTEP_OK;
}

lockstep_status lockstep_dataset_size(const lockstep_dataset* dataset, int64_t* out) {
  return Boundary(__func__, [&] {
    RequireNonNull(dataset, "dataset");
    RequireNonNull(out, "out");
    *out = dataset->data.size();
  });
}

lockstep_status lockstep_dataset_batch(const lockstep_dataset* dataset, int64_t start, int64_t count,
                                       lockstep_tensor** inputs, int64_t* labels) {
  return Boundary(__func__, [&] {
    RequireNonNull(dataset, "dataset");
    RequireNonNull(inputs, "inputs");
    RequireNonNull(labels, "labels");
    RequireRange(dataset, start, count);
    lockstep::Tensor x = dataset->data.Inputs(start, count);
    const std::vector<int64_t> y = dataset->data.Labels(start, count).ToInt64Vector();
    auto handle = std::make_unique<lockstep_tensor>(lockstep_tensor{x});
    std::copy(y.begin(), y.end(), labels);
    *inputs = handle.release();
  });
}

lockstep_status lockstep_evaluate(lockstep_model* model, const lockstep_dataset* dataset, int64_t batch_size,
                                  lockstep_eval_result* out) {
  return Boundary(__func__, [&] {
    RequireNonNull(model, "model");
    RequireNonNull(dataset, "dataset");
    RequireNonNull(out, "out");
    if (batch_size <= 0) batch_size = 100;
    const int64_t size = dataset->data.size();
    if (size == 0) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "the data set is empty");
    lockstep::capi::RequireInputShape(model->arch, dataset->data.BatchShape(size));
    const lockstep::train::EvalResult eval = lockstep::train::Evaluate(*model->module, dataset->data, batch_size);
    lockstep_eval_result result;
    result.examples = eval.examples;
    result.correct = eval.correct;
    result.accuracy = eval.accuracy;
    lockstep::capi::CopyHash(eval.logits_hash, result.logits_hash);
    *out = result;
  });
}

lockstep_status lockstep_mnist_config_default(lockstep_mnist_config* out) {
  return Boundary(__func__, [&] {
    RequireNonNull(out, "out");
    const lockstep::train::MnistConfig d;
    *out = lockstep_mnist_config{sizeof(lockstep_mnist_config), ".deps/data/mnist", d.epochs, d.seed, d.batch_size,
                                 d.lr, d.max_steps, d.max_test, nullptr, 0, nullptr, nullptr, 0, {}, nullptr, 0};
  });
}

lockstep_status lockstep_train_mnist(const lockstep_mnist_config* config, lockstep_progress_fn progress,
                                     void* user_data, lockstep_mnist_result* out) {
  return Boundary(__func__, [&] {
    RequireNonNull(config, "config");
    RequireNonNull(out, "out");
    lockstep::capi::RequireStructSize(config->struct_size, sizeof(lockstep_mnist_config), "lockstep_mnist_config");
    RequireNonNull(config->data_dir, "config->data_dir");
    if (config->data_dir[0] == '\0') Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "config->data_dir is empty: expected a folder");
    if (config->epochs < 0) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "epochs must be >= 0");
    if (config->checkpoint_every < 0) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "checkpoint_every must be >= 0");
    if (config->checkpoint_every > 0 && config->checkpoint_path == nullptr) {
      Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "checkpoint_every needs checkpoint_path");
    }
    if (config->batch_size < 1) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "batch_size must be >= 1");
    if (!std::isfinite(config->lr) || config->lr <= 0) Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "lr must be finite and > 0");
    lockstep::capi::CheckReceiptFields(config->receipt_path, config->receipt_every, config->resume_path);
    lockstep::train::MnistConfig c;
    c.data_dir = config->data_dir;
    if (config->receipt_path != nullptr) c.receipt.path = config->receipt_path;
    c.receipt.every = config->receipt_every;
    for (const char* file : {"/train-images.idx", "/train-labels.idx", "/test-images.idx", "/test-labels.idx"}) {
      lockstep::capi::RequireReadable(c.data_dir + file);
    }
    c.epochs = config->epochs;
    c.seed = config->seed;
    c.batch_size = config->batch_size;
    c.lr = config->lr;
    c.max_steps = config->max_steps < 0 ? -1 : config->max_steps;
    c.max_test = config->max_test < 0 ? -1 : config->max_test;
    if (config->save_path != nullptr) c.save_path = config->save_path;  // checked before training
    c.checkpoint_every = config->checkpoint_every;
    if (config->checkpoint_path != nullptr) c.checkpoint_path = config->checkpoint_path;
    if (config->resume_path != nullptr) {
      c.resume_path = config->resume_path;
      // In a data-parallel run rank 0 reads the state and sends it to the others.
      if (lockstep::parallel::IsWriter()) lockstep::capi::RequireReadable(c.resume_path);
    }
    c.allow_nonfinite_loss = config->allow_nonfinite != 0;
    if (config->trace.path != nullptr) c.trace = lockstep::capi::TraceOptionsOf(config->trace);

    std::function<void(const lockstep::train::MnistProgress&)> report;
    if (progress != nullptr) {
      report = [&](const lockstep::train::MnistProgress& p) {
        const lockstep_mnist_progress cp{p.step, p.total_steps, p.epoch, p.loss};
        if (progress(&cp, user_data) != 0) Fail(LOCKSTEP_ERROR_CANCELLED, "stopped by the progress callback");
      };
      c.cancelled = [&] {
        const lockstep_mnist_progress loading{0, 0, 0, 0.0f};
        return progress(&loading, user_data) != 0;
      };
    }
    const lockstep::train::MnistResult r = lockstep::train::RunMnist(c, report);
    lockstep_mnist_result result;
    lockstep::capi::CopyHash(r.initial_hash, result.initial_hash);
    lockstep::capi::CopyHash(r.trained_hash, result.trained_hash);
    lockstep::capi::CopyHash(r.logits_hash, result.logits_hash);
    result.test_accuracy = r.test_accuracy;
    result.steps = r.steps;
    result.test_examples = r.test_examples;
    result.final_loss = r.final_loss;
    *out = result;
  });
}

}  // extern "C"
