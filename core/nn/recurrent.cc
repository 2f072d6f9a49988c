#include "core/nn/recurrent.h"

#include "core/error.h"
#include "core/nn/init.h"
#include "core/ops.h"

namespace lockstep {
namespace nn {

namespace {

int64_t GateCount(RecurrentCell cell) {
  return cell == RecurrentCell::kLstm ? 4 : cell == RecurrentCell::kGru ? 3 : 1;
}

std::string Suffix(int64_t layer, int64_t direction) {
  return "_l" + std::to_string(layer) + (direction == 1 ? "_reverse" : "");
}

Tensor Columns(const Tensor& t, int64_t g, int64_t hidden) { return t.Slice(-1, g * hidden, (g + 1) * hidden); }

}  // namespace

Recurrent::Recurrent(RecurrentCell c, const RecurrentOptions& o, Generator& gen) : cell(c), options(o) {
  LOCKSTEP_REQUIRE(o.input_size > 0 && o.hidden_size > 0 && o.num_layers > 0,
                   Name() << ": input_size, hidden_size and num_layers must be >= 1, got " << o.input_size << ", "
                          << o.hidden_size << ", " << o.num_layers);
  const int64_t gates = GateCount(c) * o.hidden_size;
  for (int64_t layer = 0; layer < o.num_layers; ++layer) {
    for (int64_t d = 0; d < (o.bidirectional ? 2 : 1); ++d) {
      const int64_t in = layer == 0 ? o.input_size : o.hidden_size * (o.bidirectional ? 2 : 1);
      const std::string s = Suffix(layer, d);
      Tensor w_ih = Tensor::Empty({gates, in}), w_hh = Tensor::Empty({gates, o.hidden_size});
      // PyTorch draws every parameter from U(-1/sqrt(hidden), 1/sqrt(hidden)) in registration order.
      BiasUniformDefault(w_ih, o.hidden_size, gen);
      RegisterParameter("weight_ih" + s, w_ih);
      BiasUniformDefault(w_hh, o.hidden_size, gen);
      RegisterParameter("weight_hh" + s, w_hh);
      if (o.bias) {
        Tensor b_ih = Tensor::Empty({gates}), b_hh = Tensor::Empty({gates});
        BiasUniformDefault(b_ih, o.hidden_size, gen);
        RegisterParameter("bias_ih" + s, b_ih);
        BiasUniformDefault(b_hh, o.hidden_size, gen);
        RegisterParameter("bias_hh" + s, b_hh);
      }
    }
  }
}

std::string Recurrent::Name() const {
  return cell == RecurrentCell::kLstm ? "LSTM" : cell == RecurrentCell::kGru ? "GRU" : "RNN";
}

std::vector<Tensor> Recurrent::LayerParameters(int64_t layer, int64_t direction) {
  const std::string s = Suffix(layer, direction);
  std::vector<Tensor> p(4);
  for (const auto& [name, t] : NamedParameters()) {
    if (name == "weight_ih" + s) p[0] = t;
    if (name == "weight_hh" + s) p[1] = t;
    if (name == "bias_ih" + s) p[2] = t;
    if (name == "bias_hh" + s) p[3] = t;
  }
  return p;
}

std::vector<Tensor> Recurrent::ForwardWithState(const Tensor& x_in, const Tensor& h0, const Tensor& c0) {
  const RecurrentOptions& o = options;
  LOCKSTEP_REQUIRE(x_in.dim() == 2 || x_in.dim() == 3, Name() << ": expected input [seq, batch, input] (or unbatched "
                                                                 "[seq, input]), got " << ShapeString(x_in.shape()));
  const bool unbatched = x_in.dim() == 2;
  Tensor x = unbatched ? x_in.Unsqueeze(1) : (o.batch_first ? x_in.Transpose(0, 1) : x_in);  // [seq, batch, input]
  LOCKSTEP_REQUIRE(x.size(2) == o.input_size, Name() << ": input has " << x.size(2) << " features, expected "
                                                     << o.input_size);
  const int64_t steps = x.size(0), batch = x.size(1), hid = o.hidden_size, dirs = o.bidirectional ? 2 : 1;
  const auto initial = [&](const Tensor& t, int64_t index, const char* what) {
    if (!t.defined()) return Tensor::Zeros({batch, hid});
    const Tensor s = unbatched ? t.Unsqueeze(1) : t;
    LOCKSTEP_REQUIRE(s.shape() == Shape({o.num_layers * dirs, batch, hid}),
                     Name() << ": " << what << " " << ShapeString(t.shape()) << " is not [" << o.num_layers * dirs
                            << ", " << batch << ", " << hid << "]");
    return s.Select(0, index);
  };
  std::vector<Tensor> h_n, c_n;
  for (int64_t layer = 0; layer < o.num_layers; ++layer) {
    std::vector<Tensor> direction_outputs;
    for (int64_t d = 0; d < dirs; ++d) {
      const std::vector<Tensor> p = LayerParameters(layer, d);
      const Tensor w_ih_t = p[0].Transpose(0, 1), w_hh_t = p[1].Transpose(0, 1);
      Tensor h = initial(h0, layer * dirs + d, "h0");
      Tensor c = cell == RecurrentCell::kLstm ? initial(c0, layer * dirs + d, "c0") : Tensor();
      std::vector<Tensor> outputs(static_cast<size_t>(steps));
      for (int64_t s = 0; s < steps; ++s) {
        const int64_t t = d == 1 ? steps - 1 - s : s;
        Tensor gi = Matmul(x.Select(0, t), w_ih_t), gh = Matmul(h, w_hh_t);
        if (p[2].defined()) gi = Add(gi, p[2]);
        if (p[3].defined()) gh = Add(gh, p[3]);
        if (cell == RecurrentCell::kLstm) {
          const Tensor i = Sigmoid(Add(Columns(gi, 0, hid), Columns(gh, 0, hid)));
          const Tensor f = Sigmoid(Add(Columns(gi, 1, hid), Columns(gh, 1, hid)));
          const Tensor g = Tanh(Add(Columns(gi, 2, hid), Columns(gh, 2, hid)));
          const Tensor out_gate = Sigmoid(Add(Columns(gi, 3, hid), Columns(gh, 3, hid)));
          c = Add(Mul(f, c), Mul(i, g));
          h = Mul(out_gate, Tanh(c));
        } else if (cell == RecurrentCell::kGru) {
          const Tensor r = Sigmoid(Add(Columns(gi, 0, hid), Columns(gh, 0, hid)));
          const Tensor z = Sigmoid(Add(Columns(gi, 1, hid), Columns(gh, 1, hid)));
          const Tensor n = Tanh(Add(Columns(gi, 2, hid), Mul(r, Columns(gh, 2, hid))));
          h = Add(Mul(Sub(Tensor::Scalar(1.0f), z), n), Mul(z, h));
        } else {
          const Tensor pre = Add(gi, gh);
          h = cell == RecurrentCell::kRnnTanh ? Tanh(pre) : Relu(pre);
        }
        outputs[t] = h.Unsqueeze(0);
      }
      direction_outputs.push_back(Concat(outputs, 0));  // [seq, batch, hidden]
      h_n.push_back(h.Unsqueeze(0));
      if (c.defined()) c_n.push_back(c.Unsqueeze(0));
    }
    x = dirs == 1 ? direction_outputs[0] : Concat(direction_outputs, 2);
  }
  Tensor y = unbatched ? x.Squeeze(1) : (o.batch_first ? x.Transpose(0, 1) : x);
  Tensor hn = Concat(h_n, 0), cn = c_n.empty() ? Tensor() : Concat(c_n, 0);
  if (unbatched) {
    hn = hn.Squeeze(1);
    if (cn.defined()) cn = cn.Squeeze(1);
  }
  return {y, hn, cn};
}

}  // namespace nn
}  // namespace lockstep
