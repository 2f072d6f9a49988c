// lockstep._C.nn recurrent modules (core/nn/recurrent.h): RNN, LSTM and GRU.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>

#include "bindings/python/src/bindings.h"
#include "bindings/python/src/engine.h"
#include "core/nn/recurrent.h"

namespace lockstep {
namespace python {

namespace {

using OptT = const std::optional<Tensor>&;

nn::RecurrentOptions Options(int64_t input_size, int64_t hidden_size, int64_t num_layers, bool bias, bool batch_first,
                             bool bidirectional) {
  nn::RecurrentOptions o;
  o.input_size = input_size, o.hidden_size = hidden_size, o.num_layers = num_layers;
  o.bias = bias, o.batch_first = batch_first, o.bidirectional = bidirectional;
  return o;
}

// The methods every recurrent class has: _run (output, h_n, c_n or None) and _options.
template <class M>
void Common(py::class_<M, nn::Recurrent, std::shared_ptr<M>>& c) {
  c.def("_run", [](M& self, const Tensor& x, OptT h0, OptT c0) {
    const std::vector<Tensor> r = Long([&] { return self.ForwardWithState(x, h0 ? *h0 : Tensor(), c0 ? *c0 : Tensor()); });
    return py::make_tuple(r[0], r[1], r[2].defined() ? py::cast(r[2]) : py::none());
  });
  c.def("_options", [](const M& self) {
    const nn::RecurrentOptions& o = self.options;
    return py::make_tuple(o.input_size, o.hidden_size, o.num_layers, o.bias, o.batch_first, o.bidirectional);
  });
}

}  // namespace

void BindRecurrent(py::module_& m) {
  py::class_<nn::Recurrent, nn::Module, std::shared_ptr<nn::Recurrent>>(m, "_Recurrent", py::dynamic_attr());
  py::class_<nn::RNN, nn::Recurrent, std::shared_ptr<nn::RNN>> rnn(m, "RNN", py::dynamic_attr(),
                                                                  "torch.nn.RNN's computation and parameter names.");
  rnn.def(py::init([](int64_t in, int64_t hidden, int64_t layers, bool relu, bool bias, bool batch_first, bool bi,
                      Generator* g) {
            return Short([&] {
              return std::make_shared<nn::RNN>(Options(in, hidden, layers, bias, batch_first, bi), relu, (g ? *g : DefaultGenerator("init")));
            });
          }),
          py::arg("input_size"), py::arg("hidden_size"), py::arg("num_layers"), py::arg("relu"), py::arg("bias"),
          py::arg("batch_first"), py::arg("bidirectional"), py::arg("generator").none(true));
  Common(rnn);
  py::class_<nn::LSTM, nn::Recurrent, std::shared_ptr<nn::LSTM>> lstm(m, "LSTM", py::dynamic_attr(),
                                                                     "torch.nn.LSTM's computation and parameter names.");
  lstm.def(py::init([](int64_t in, int64_t hidden, int64_t layers, bool bias, bool batch_first, bool bi, Generator* g) {
             return Short([&] {
               return std::make_shared<nn::LSTM>(Options(in, hidden, layers, bias, batch_first, bi), (g ? *g : DefaultGenerator("init")));
             });
           }),
           py::arg("input_size"), py::arg("hidden_size"), py::arg("num_layers"), py::arg("bias"), py::arg("batch_first"),
           py::arg("bidirectional"), py::arg("generator").none(true));
  Common(lstm);
  py::class_<nn::GRU, nn::Recurrent, std::shared_ptr<nn::GRU>> gru(m, "GRU", py::dynamic_attr(),
                                                                  "torch.nn.GRU's computation and parameter names.");
  gru.def(py::init([](int64_t in, int64_t hidden, int64_t layers, bool bias, bool batch_first, bool bi, Generator* g) {
            return Short([&] {
              return std::make_shared<nn::GRU>(Options(in, hidden, layers, bias, batch_first, bi), (g ? *g : DefaultGenerator("init")));
            });
          }),
          py::arg("input_size"), py::arg("hidden_size"), py::arg("num_layers"), py::arg("bias"), py::arg("batch_first"),
          py::arg("bidirectional"), py::arg("generator").none(true));
  Common(gru);
}

}  // namespace python
}  // namespace lockstep
