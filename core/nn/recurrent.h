// PyTorch's recurrent layers, nn.RNN (tanh or relu), nn.LSTM and nn.GRU: any number of layers,
// batch_first, bidirectional, with PyTorch's parameter names (weight_ih_l0, weight_hh_l0,
// bias_ih_l0, bias_hh_l0, ..._reverse), gate orders (LSTM i, f, g, o; GRU r, z, n) and
// initialisation (every parameter uniform in +-1 / sqrt(hidden_size)). Each step computes its
// gates as x_t W_ih^T + b_ih and h W_hh^T + b_hh (a GEMM then its bias each), then PyTorch's cell
// equations, all with lockstep's ops, so the layers train and give the same bits everywhere.
#ifndef LOCKSTEP_CORE_NN_RECURRENT_H_
#define LOCKSTEP_CORE_NN_RECURRENT_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "core/nn/module.h"
#include "core/random.h"

namespace lockstep {
namespace nn {

enum class RecurrentCell { kRnnTanh, kRnnRelu, kLstm, kGru };

struct RecurrentOptions {
  int64_t input_size = 0, hidden_size = 0, num_layers = 1;
  bool bias = true, batch_first = false, bidirectional = false;
};

class Recurrent : public Module {
 public:
  Recurrent(RecurrentCell cell, const RecurrentOptions& options, Generator& gen);
  // The output sequence (PyTorch's output[0]).
  Tensor Forward(const Tensor& x) override { return ForwardWithState(x, Tensor(), Tensor())[0]; }
  // output, h_n and (LSTM) c_n; h0 and c0 [layers * directions, batch, hidden] or undefined (zeros).
  // x is [seq, batch, input] ([batch, seq, input] when batch_first), or [seq, input] unbatched.
  std::vector<Tensor> ForwardWithState(const Tensor& x, const Tensor& h0, const Tensor& c0);
  std::string Name() const override;

  RecurrentCell cell;
  RecurrentOptions options;

 private:
  // weight_ih, weight_hh, bias_ih, bias_hh (biases undefined without bias) of layer l, direction d.
  std::vector<Tensor> LayerParameters(int64_t layer, int64_t direction);
};

class RNN : public Recurrent {
 public:
  RNN(const RecurrentOptions& options, bool relu, Generator& gen)
      : Recurrent(relu ? RecurrentCell::kRnnRelu : RecurrentCell::kRnnTanh, options, gen) {}
};
class LSTM : public Recurrent {
 public:
  LSTM(const RecurrentOptions& options, Generator& gen) : Recurrent(RecurrentCell::kLstm, options, gen) {}
};
class GRU : public Recurrent {
 public:
  GRU(const RecurrentOptions& options, Generator& gen) : Recurrent(RecurrentCell::kGru, options, gen) {}
};

}  // namespace nn
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_NN_RECURRENT_H_
