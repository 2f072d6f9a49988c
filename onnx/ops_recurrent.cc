// The recurrent layers RNN, GRU and LSTM, step by step with lockstep's ops (so they train): at
// each step the gates are X_t W^T + H_{t-1} R^T + Wb + Rb, added in that order (two GEMMs, then
// the biases), then ONNX's equations with its default activations. sequence_lens stops a batch
// entry early: its later outputs are zeros and its state stays.
#include <string>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "onnx/op_helpers.h"
#include "onnx/op_registry.h"

namespace lockstep {
namespace onnx {

namespace {

enum class Cell { kRnn, kGru, kLstm };

int64_t Gates(Cell c) { return c == Cell::kRnn ? 1 : c == Cell::kGru ? 3 : 4; }
const char* CellName(Cell c) { return c == Cell::kRnn ? "RNN" : c == Cell::kGru ? "GRU" : "LSTM"; }

struct Config {
  Cell cell;
  int64_t hidden = 0;
  bool reverse = false, bidirectional = false, batch_first = false, linear_before_reset = false;
};

// Columns [g * hidden, (g + 1) * hidden) of a [batch, gates * hidden] tensor.
Tensor Gate(const Tensor& t, int64_t g, int64_t hidden) { return t.Slice(1, g * hidden, (g + 1) * hidden); }

Tensor OneMinus(const Tensor& t) { return Sub(Tensor::Scalar(1.0f), t); }

struct DirectionResult {
  std::vector<Tensor> outputs;  // per step, in time order: [batch, hidden]
  Tensor h, c;
};

// One direction over the whole sequence. x: [seq, batch, input]; w [G*H, I], r [G*H, H], wb and
// rb [G*H] or undefined; p [3H] (LSTM peepholes i, o, f) or undefined; lens per batch entry.
DirectionResult RunDirection(const Config& cfg, const Tensor& x, const Tensor& w, const Tensor& r, const Tensor& wb,
                             const Tensor& rb, const Tensor& p, Tensor h, Tensor c, const std::vector<int64_t>& lens,
                             bool backward) {
  const int64_t steps = x.size(0), batch = x.size(1), hid = cfg.hidden;
  const Tensor wt = w.Transpose(0, 1), rt = r.Transpose(0, 1);
  DirectionResult out;
  out.outputs.resize(static_cast<size_t>(steps));
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t t = backward ? steps - 1 - s : s;
    const Tensor xt = x.Select(0, t);
    Tensor xw = Matmul(xt, wt);
    if (wb.defined()) xw = Add(xw, wb);
    // The recurrent part and its bias: kept apart for GRU's candidate gate.
    Tensor hr = Matmul(h, rt);
    if (rb.defined()) hr = Add(hr, rb);
    Tensor h_new, c_new;
    if (cfg.cell == Cell::kRnn) {
      h_new = Tanh(Add(xw, hr));
    } else if (cfg.cell == Cell::kGru) {
      const Tensor z = Sigmoid(Add(Gate(xw, 0, hid), Gate(hr, 0, hid)));
      const Tensor reset = Sigmoid(Add(Gate(xw, 1, hid), Gate(hr, 1, hid)));
      Tensor candidate;
      if (cfg.linear_before_reset) {
        candidate = Tanh(Add(Gate(xw, 2, hid), Mul(reset, Gate(hr, 2, hid))));
      } else {
        const Tensor rh = Matmul(Mul(reset, h), rt.Slice(1, 2 * hid, 3 * hid));
        candidate = Tanh(Add(Gate(xw, 2, hid), rb.defined() ? Add(rh, rb.Slice(0, 2 * hid, 3 * hid)) : rh));
      }
      h_new = Add(Mul(OneMinus(z), candidate), Mul(z, h));
    } else {
      Tensor i_pre = Add(Gate(xw, 0, hid), Gate(hr, 0, hid)), f_pre = Add(Gate(xw, 2, hid), Gate(hr, 2, hid));
      if (p.defined()) {
        i_pre = Add(i_pre, Mul(p.Slice(0, 0, hid), c));
        f_pre = Add(f_pre, Mul(p.Slice(0, 2 * hid, 3 * hid), c));
      }
      const Tensor i = Sigmoid(i_pre), f = Sigmoid(f_pre);
      const Tensor g = Tanh(Add(Gate(xw, 3, hid), Gate(hr, 3, hid)));
      c_new = Add(Mul(f, c), Mul(i, g));
      Tensor o_pre = Add(Gate(xw, 1, hid), Gate(hr, 1, hid));
      if (p.defined()) o_pre = Add(o_pre, Mul(p.Slice(0, hid, 2 * hid), c_new));
      h_new = Mul(Sigmoid(o_pre), Tanh(c_new));
    }
    bool all_active = true;
    std::vector<float> active(static_cast<size_t>(batch));
    for (int64_t b = 0; b < batch; ++b) {
      active[b] = t < lens[b] ? 1.0f : 0.0f;
      all_active = all_active && t < lens[b];
    }
    if (all_active) {
      h = h_new;
      if (c_new.defined()) c = c_new;
      out.outputs[t] = h_new;
    } else {
      const Tensor mask = Tensor::FromVector({batch, 1}, active);
      h = Where(mask, h_new, h);
      if (c_new.defined()) c = Where(mask, c_new, c);
      out.outputs[t] = Where(mask, h_new, Tensor::Scalar(0.0f));
    }
  }
  out.h = h;
  out.c = c;
  return out;
}

Kernel RecurrentKernel(const NodeView& node, Cell cell) {
  node.RequireInputs(3, cell == Cell::kLstm ? 8 : 6);
  Config cfg;
  cfg.cell = cell;
  cfg.hidden = node.Int("hidden_size", 0);
  node.Require(cfg.hidden >= 1, "hidden_size is required and must be >= 1");
  const std::string direction = node.String("direction", "forward");
  node.Require(direction == "forward" || direction == "reverse" || direction == "bidirectional",
               "direction must be forward, reverse or bidirectional, got '" + direction + "'");
  cfg.reverse = direction == "reverse";
  cfg.bidirectional = direction == "bidirectional";
  cfg.batch_first = node.Int("layout", 0) != 0;
  cfg.linear_before_reset = node.Int("linear_before_reset", 0) != 0;
  if (node.Has("clip")) node.Unsupported("the clip attribute");
  if (node.Int("input_forget", 0) != 0) node.Unsupported("input_forget");
  const std::vector<std::string> defaults =
      cell == Cell::kRnn ? std::vector<std::string>{"Tanh"}
      : cell == Cell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                           : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  if (node.Has("activations")) {
    const AttributeProto* a = nullptr;
    for (const AttributeProto& at : node.proto().attribute) {
      if (at.name == "activations") a = &at;
    }
    std::vector<std::string> wanted = defaults;
    if (cfg.bidirectional) wanted.insert(wanted.end(), defaults.begin(), defaults.end());
    if (a == nullptr || a->strings != wanted) node.Unsupported("activations other than ONNX's defaults");
  }
  return [cfg](const Values& in, RunContext&) -> Values {
    const char* name = CellName(cfg.cell);
    Tensor x = FloatInput(Input(in, 0, name), name);
    const Tensor w = FloatInput(Input(in, 1, name), name), r = FloatInput(Input(in, 2, name), name);
    LOCKSTEP_REQUIRE(x.dim() == 3, name << ": X must be 3-D, got " << ShapeString(x.shape()));
    if (cfg.batch_first) x = x.Transpose(0, 1);  // [seq, batch, input]
    const int64_t dirs = cfg.bidirectional ? 2 : 1, gh = Gates(cfg.cell) * cfg.hidden;
    const int64_t steps = x.size(0), batch = x.size(1), hid = cfg.hidden;
    LOCKSTEP_REQUIRE(w.shape() == Shape({dirs, gh, x.size(2)}) && r.shape() == Shape({dirs, gh, hid}),
                     name << ": W " << ShapeString(w.shape()) << " and R " << ShapeString(r.shape())
                          << " do not fit X " << ShapeString(x.shape()) << " with hidden_size " << hid);
    const auto optional = [&](size_t i) { return in.size() > i && in[i].defined() ? FloatInput(in[i], name) : Tensor(); };
    const Tensor b = optional(3), h0 = optional(5), c0 = cfg.cell == Cell::kLstm ? optional(6) : Tensor();
    const Tensor p = cfg.cell == Cell::kLstm ? optional(7) : Tensor();
    std::vector<int64_t> lens(static_cast<size_t>(batch), steps);
    if (in.size() > 4 && in[4].defined()) {
      lens = IntValues(in[4]);
      LOCKSTEP_REQUIRE(static_cast<int64_t>(lens.size()) == batch, name << ": sequence_lens of " << lens.size()
                                                                        << " for a batch of " << batch);
      for (int64_t len : lens) {
        LOCKSTEP_REQUIRE(len >= 0 && len <= steps, name << ": sequence length " << len << " for " << steps << " steps");
        LOCKSTEP_REQUIRE(len == steps || (!cfg.reverse && !cfg.bidirectional),
                         name << ": unsupported: sequence_lens shorter than the sequence in the reverse direction");
      }
    }
    std::vector<Tensor> ys, hs, cs;
    for (int64_t d = 0; d < dirs; ++d) {
      const auto state = [&](const Tensor& t) {
        if (!t.defined()) return Tensor::Zeros({batch, hid});
        LOCKSTEP_REQUIRE(t.shape() == Shape({dirs, batch, hid}), name << ": an initial state " << ShapeString(t.shape())
                                                                      << " is not [" << dirs << ", " << batch << ", " << hid << "]");
        return t.Select(0, d);
      };
      Tensor wb, rb;
      if (b.defined()) {
        LOCKSTEP_REQUIRE(b.shape() == Shape({dirs, 2 * gh}), name << ": B " << ShapeString(b.shape()) << " is not ["
                                                                  << dirs << ", " << 2 * gh << "]");
        wb = b.Select(0, d).Slice(0, 0, gh);
        rb = b.Select(0, d).Slice(0, gh, 2 * gh);
      }
      const Tensor pd = p.defined() ? p.Select(0, d) : Tensor();
      const DirectionResult res = RunDirection(cfg, x, w.Select(0, d), r.Select(0, d), wb, rb, pd, state(h0),
                                               cfg.cell == Cell::kLstm ? state(c0) : Tensor(), lens,
                                               cfg.reverse || d == 1);
      ys.push_back(Concat([&] {
        std::vector<Tensor> parts;
        for (const Tensor& o : res.outputs) parts.push_back(o.Unsqueeze(0));
        return parts;
      }(), 0));  // [seq, batch, hidden]
      hs.push_back(res.h.Unsqueeze(0));
      if (res.c.defined()) cs.push_back(res.c.Unsqueeze(0));
    }
    std::vector<Tensor> per_dir;
    for (const Tensor& y : ys) per_dir.push_back(y.Unsqueeze(1));
    Tensor y = Concat(per_dir, 1);  // [seq, dirs, batch, hidden]
    Tensor yh = Concat(hs, 0);      // [dirs, batch, hidden]
    Tensor yc = cs.empty() ? Tensor() : Concat(cs, 0);
    if (cfg.batch_first) {
      y = y.Permute({2, 0, 1, 3});  // [batch, seq, dirs, hidden]
      yh = yh.Transpose(0, 1);
      if (yc.defined()) yc = yc.Transpose(0, 1);
    }
    Values out{FloatValue(y), FloatValue(yh)};
    if (yc.defined()) out.push_back(FloatValue(yc));
    return out;
  };
}

}  // namespace

void AddRecurrentOps(std::vector<OpSpec>* t) {
  t->push_back(OpSpec{"RNN", 7, [](const NodeView& node) { return RecurrentKernel(node, Cell::kRnn); }}
                   .Reads({"activations", "clip", "direction", "hidden_size", "input_forget", "layout",
                           "linear_before_reset"})
                   .Scope("ONNX's default activations; no clip or input_forget"));
  t->push_back(OpSpec{"GRU", 7, [](const NodeView& node) { return RecurrentKernel(node, Cell::kGru); }}
                   .Reads({"activations", "clip", "direction", "hidden_size", "input_forget", "layout",
                           "linear_before_reset"})
                   .Scope("ONNX's default activations; no clip"));
  t->push_back(OpSpec{"LSTM", 7, [](const NodeView& node) { return RecurrentKernel(node, Cell::kLstm); }}
                   .Reads({"activations", "clip", "direction", "hidden_size", "input_forget", "layout",
                           "linear_before_reset"})
                   .Scope("ONNX's default activations; no clip or input_forget; peepholes"));
}

}  // namespace onnx
}  // namespace lockstep
