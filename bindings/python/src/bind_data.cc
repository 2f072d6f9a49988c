// lockstep._C data and training: data sets (IDX files, NumPy arrays), the deterministic loader,
// the classifier training run that fit() steps (core/train/fit_run.h), evaluation
// and the MNIST reference run. Long work runs without the GIL; loading and the reference run stop
// on Ctrl-C (KeyboardInterrupt) between chunks and steps.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings/python/src/bindings.h"
#include "bindings/python/src/engine.h"
#include "bindings/python/src/numpy_bridge.h"
#include "core/checkpoint.h"
#include "core/data.h"
#include "core/error.h"
#include "core/train/fit_run.h"
#include "core/train/evaluate.h"
#include "core/train/mnist.h"

namespace lockstep {
namespace python {

namespace {

using DatasetPtr = std::shared_ptr<Dataset>;
using ModulePtr = std::shared_ptr<nn::Module>;
using OptimizerPtr = std::shared_ptr<optim::Optimizer>;

// Asked between chunks of a file: true (stop) after Ctrl-C, with KeyboardInterrupt pending.
bool Interrupted() {
  ThrowIfInterrupted();
  return false;
}

DatasetPtr FromIdx(const std::string& images, const std::string& labels) {
  return Long([&] { return std::make_shared<Dataset>(LoadIdxDataset(images, labels, &Interrupted)); });
}

// Examples as float32 (any shape [N, ...]) or uint8 (kept as bytes, p / 255 per batch), labels as
// integers [N].
DatasetPtr FromArrays(const py::array& inputs, const py::array& labels) {
  const py::dtype dt = inputs.dtype();
  const Tensor y = TensorFromArray(labels);
  if (dt.kind() == 'u' && dt.itemsize() == 1) {
    LOCKSTEP_REQUIRE(inputs.ndim() >= 1, "Dataset.from_numpy: expected examples [N, ...], got a 0-d array");
    Shape example(inputs.shape() + 1, inputs.shape() + inputs.ndim());
    const py::array_t<uint8_t, py::array::c_style> contiguous(inputs);  // copies only when strided
    std::vector<uint8_t> bytes(contiguous.data(), contiguous.data() + contiguous.size());
    return Long([&] { return std::make_shared<Dataset>(Dataset::FromBytes(std::move(bytes), example, y)); });
  }
  const Tensor x = TensorFromArray(inputs);
  return Long([&] { return std::make_shared<Dataset>(x, y); });
}

// The loader with the data set it reads kept alive.
struct Loader {
  Loader(DatasetPtr d, int64_t batch_size, bool shuffle, bool drop_last, uint64_t seed)
      : data(std::move(d)), loader(*data, batch_size, shuffle, drop_last, seed) {}
  DatasetPtr data;
  DataLoader loader;
};

// fit()'s run (core/train/fit_run.h) with everything it refers to kept alive.
struct Trainer {
  Trainer(ModulePtr m, OptimizerPtr o, DatasetPtr d, int64_t batch_size, uint64_t seed)
      : model(std::move(m)), optimizer(std::move(o)), data(std::move(d)),
        run(*model, *optimizer, *data, batch_size, seed) {}
  ModulePtr model;
  OptimizerPtr optimizer;
  DatasetPtr data;
  train::FitRun run;
};

py::dict EvalDict(const train::EvalResult& r) {
  py::dict out;
  out["examples"] = r.examples;
  out["correct"] = r.correct;
  out["accuracy"] = r.accuracy;
  out["logits_hash"] = r.logits_hash;
  return out;
}

py::dict RunMnistPy(const std::string& data_dir, int64_t epochs, uint64_t seed, int64_t max_steps, int64_t max_test,
                    double lr, const std::string& save_path, const py::object& on_progress,
                    const std::string& receipt_path, int64_t receipt_every) {
  train::MnistConfig config;
  config.data_dir = data_dir;
  config.epochs = epochs;
  config.seed = seed;
  config.max_steps = max_steps;
  config.max_test = max_test;
  config.lr = static_cast<float>(lr);
  config.save_path = save_path;
  config.receipt.path = receipt_path;
  config.receipt.every = receipt_every;
  config.cancelled = &Interrupted;
  const bool report = !on_progress.is_none();
  train::MnistResult r = Long([&] {
    return train::RunMnist(config, [&](const train::MnistProgress& p) {
      py::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      if (report) on_progress(p.step, p.total_steps, p.epoch, p.loss);
    });
  });
  py::dict out;
  out["initial_hash"] = r.initial_hash;
  out["trained_hash"] = r.trained_hash;
  out["logits_hash"] = r.logits_hash;
  out["test_accuracy"] = r.test_accuracy;
  out["steps"] = r.steps;
  out["test_examples"] = r.test_examples;
  out["final_loss"] = r.final_loss;
  return out;
}

}  // namespace

void BindData(py::module_& m) {
  py::class_<Dataset, DatasetPtr>(m, "Dataset", "Examples [N, ...] and int64 labels [N] (core/data.h).")
      .def_static("_from_idx", &FromIdx)
      .def_static("_from_numpy", &FromArrays)
      .def_static("_from_tensors", [](const Tensor& x, const Tensor& y) {
        return Long([&] { return std::make_shared<Dataset>(x, y); });
      })
      .def("__len__", &Dataset::size)
      .def_property_readonly("example_shape", [](const Dataset& d) { return ShapeTuple(d.example_shape()); })
      .def("_normalize", [](Dataset& d, double shift, double scale) {
        Short([&] { d.SetNormalization(static_cast<float>(shift), static_cast<float>(scale)); });
      })
      .def("normalize_mnist", [](Dataset& d) { Short([&] { train::NormalizeMnist(&d); }); },
           "MNIST's normalisation of every batch, x = (x + (-0.1307f)) * (1.0f / 0.3081f) in float32.")
      .def_property_readonly("normalized", &Dataset::normalized)
      .def("_inputs", [](const Dataset& d, int64_t start, int64_t count) {
        return Long([&] {
          LOCKSTEP_REQUIRE(start >= 0 && count >= 0 && start + count <= d.size(),
                           "Dataset: examples [" << start << ", " << start + count << ") are not in a data set of "
                                                 << d.size());
          return d.Inputs(start, count);
        });
      })
      .def("_labels", [](const Dataset& d, int64_t start, int64_t count) {
        return Short([&] {
          LOCKSTEP_REQUIRE(start >= 0 && count >= 0 && start + count <= d.size(),
                           "Dataset: examples [" << start << ", " << start + count << ") are not in a data set of "
                                                 << d.size());
          return d.Labels(start, count);
        });
      })
      .def("subset", [](const Dataset& d, int64_t start, int64_t count) {
        return Long([&] {
          LOCKSTEP_REQUIRE(start >= 0 && count >= 1 && start + count <= d.size(),
                           "Dataset.subset: examples [" << start << ", " << start + count
                                                        << ") are not in a data set of " << d.size());
          return std::make_shared<Dataset>(d.Subset(start, count));
        });
      }, py::arg("start"), py::arg("count"), "Examples [start, start + count) as a data set of their own.")
      .def("fingerprint", [](const Dataset& d) { return Long([&] { return d.Fingerprint(); }); },
           "SHA-256 of the examples, labels and normalisation.");

  py::class_<Loader, std::shared_ptr<Loader>>(m, "_Loader")
      .def(py::init([](const DatasetPtr& d, int64_t batch_size, bool shuffle, bool drop_last, uint64_t seed) {
        return Short([&] {
          LOCKSTEP_REQUIRE(d != nullptr, "DataLoader: expected a Dataset");
          LOCKSTEP_REQUIRE(batch_size >= 1, "DataLoader: batch_size must be >= 1, got " << batch_size);
          return std::make_shared<Loader>(d, batch_size, shuffle, drop_last, seed);
        });
      }))
      .def("batches_per_epoch", [](const Loader& l) { return Short([&] { return l.loader.batches_per_epoch(); }); })
      .def("batch", [](const Loader& l, int64_t epoch, int64_t batch) {
        Tensor x, y;
        Long([&] {
          LOCKSTEP_REQUIRE(epoch >= 0 && batch >= 0 && batch < l.loader.batches_per_epoch(),
                           "DataLoader: batch " << batch << " of epoch " << epoch << " does not exist ("
                                                << l.loader.batches_per_epoch() << " per epoch)");
          l.loader.GetBatch(epoch, batch, &x, &y);
        });
        return py::make_tuple(x, y);
      });

  py::class_<Trainer, std::shared_ptr<Trainer>>(m, "_Trainer")
      .def(py::init([](const ModulePtr& model, const OptimizerPtr& opt, const DatasetPtr& d, int64_t batch_size,
                       uint64_t seed) {
        return Short([&] { return std::make_shared<Trainer>(model, opt, d, batch_size, seed); });
      }))
      .def("step", [](Trainer& t) { return Long([&] { return t.run.Step(); }); })
      .def("steps_done", [](const Trainer& t) { return t.run.steps_done(); })
      .def("steps_per_epoch", [](const Trainer& t) { return t.run.steps_per_epoch(); })
      .def("set_allow_nonfinite", [](Trainer& t, bool allow) { t.run.set_allow_nonfinite_loss(allow); })
      .def("start_receipt", [](Trainer& t, const std::string& path, int64_t every, int64_t total) {
        Long([&] {
          receipt::ReceiptOptions options;
          options.path = path;
          options.every = every;
          t.run.StartReceipt(options, total);
        });
      })
      .def("finish_receipt", [](Trainer& t) { Long([&] { t.run.FinishReceipt(); }); });

  m.def("_evaluate", [](nn::Module& model, const Dataset& d, int64_t batch_size, int64_t limit) {
    return EvalDict(Long([&] {
      LOCKSTEP_REQUIRE(batch_size >= 1, "evaluate: batch_size must be >= 1, got " << batch_size);
      return train::Evaluate(model, d, batch_size, limit);
    }));
  });
  m.def("_mnist_reference_run", &RunMnistPy);
}

}  // namespace python
}  // namespace lockstep
