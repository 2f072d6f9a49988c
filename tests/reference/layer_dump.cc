// lockstep_layer_dump: runs every layer and loss of core/ops.h forward and backward on
// deterministic inputs and writes inputs, parameters, lockstep's outputs and lockstep's gradients
// to a fixture file that tests/reference/torch_layers.py recomputes with torch.nn.functional.
//
//   lockstep_layer_dump [--target NAME] FILE
//
// --target forces one Highway target (simd/targets.h); the contract says the file is then
// byte-identical to the one the best target writes.
//
// Every input and weight comes from Philox (simd/philox.h) under a fixed seed, one stream per
// array, so the fixture is the same on every machine. The backward pass of each case is
// out.Backward(gout): the gradients of sum(out * gout) for a fixed random weighting `gout` of the
// output (a random scalar for scalar losses).
//
// Fixture format (little-endian):
//   "LSLAYER1"  u32 case_count
//   per case:   str name ("op:variant"), u32 param_count, param_count x (str key, f64 value),
//               u32 array_count, array_count x (str name, u8 dtype (0 float32, 1 int64),
//                                              u32 ndim, ndim x i64 dim, raw data)
//   str:        u32 length, bytes (no terminator)
// Array names: "out" (lockstep's forward result), "gout" (the weighting of the output),
// "grad.NAME" (lockstep's gradient w.r.t. input NAME), "NAME.after" (a buffer lockstep updated in
// place, such as BatchNorm's running statistics), "mask" (lockstep's dropout mask); every other
// array is an input.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "core/tensor.h"
#include "simd/philox.h"
#include "simd/targets.h"

namespace {

using namespace lockstep;

constexpr uint64_t kSeed = 20240607;
uint64_t g_stream = 1;  // every array draws from its own Philox stream

std::vector<float> Uniform(int64_t n, float low, float high) {
  std::vector<float> v(static_cast<size_t>(n));
  simd::PhiloxUniformRange(kSeed, g_stream++, 0, low, high, v.data(), v.size());
  return v;
}

std::vector<int64_t> Integers(int64_t n, int64_t bound) {
  std::vector<uint32_t> w(static_cast<size_t>(n));
  simd::PhiloxUint32(kSeed, g_stream++, 0, w.data(), w.size());
  std::vector<int64_t> v(w.size());
  for (size_t i = 0; i < w.size(); ++i) v[i] = static_cast<int64_t>((uint64_t{w[i]} * static_cast<uint64_t>(bound)) >> 32);
  return v;
}

// A float32 leaf with uniform values in [low, high), optionally requiring grad.
Tensor Leaf(const Shape& shape, float low, float high, bool grad = true) {
  Tensor t = Tensor::FromVector(shape, Uniform(NumElements(shape), low, high));
  if (grad) t.RequiresGrad();
  return t;
}

struct Array {
  std::string name;
  uint8_t dtype;  // 0 float32, 1 int64
  Shape dims;
  std::vector<char> bytes;
};

struct Case {
  std::string name;
  std::vector<std::pair<std::string, double>> params;
  std::vector<Array> arrays;
  std::vector<std::pair<std::string, Tensor>> grad_inputs;  // inputs whose gradients are dumped

  explicit Case(std::string n) : name(std::move(n)) {}
  Case& Param(const std::string& key, double value) {
    params.emplace_back(key, value);
    return *this;
  }
  Case& Put(const std::string& array_name, const Tensor& t) {
    Array a{array_name, 0, t.shape(), {}};
    if (t.dtype() == DType::kFloat32) {
      const std::vector<float> v = t.ToVector();
      a.bytes.resize(v.size() * 4);
      if (!v.empty()) memcpy(a.bytes.data(), v.data(), a.bytes.size());
    } else {
      const std::vector<int64_t> v = t.ToInt64Vector();
      a.dtype = 1;
      a.bytes.resize(v.size() * 8);
      if (!v.empty()) memcpy(a.bytes.data(), v.data(), a.bytes.size());
    }
    arrays.push_back(std::move(a));
    return *this;
  }
  // An input: dumped now (before any in-place update); its gradient is dumped by Finish when it
  // requires grad.
  Case& In(const std::string& array_name, const Tensor& t) {
    Put(array_name, t);
    if (t.dtype() == DType::kFloat32 && t.requires_grad()) grad_inputs.emplace_back(array_name, t);
    return *this;
  }
  // Dumps the output, runs backward with a random weighting and dumps the gradients.
  void Finish(const Tensor& out, std::vector<Case>* cases) {
    Put("out", out);
    const Tensor gout = Tensor::FromVector(out.shape(), Uniform(out.numel(), -1.0f, 1.0f));
    Put("gout", gout);
    out.Backward(gout);
    for (const auto& [n, t] : grad_inputs) {
      LOCKSTEP_REQUIRE(t.grad().defined(), name << ": no gradient for " << n);
      Put("grad." + n, t.grad());
    }
    grad_inputs.clear();
    cases->push_back(std::move(*this));
  }
};

// ---- layers

void AddLinear(std::vector<Case>* cases) {
  struct Config {
    const char* name;
    Shape x;
    int64_t out;
    bool bias;
  };
  // batch70: the weight and bias gradients sum over 70 rows, more than one batch group (32).
  const Config configs[] = {{"batch70", {70, 33}, 17, true}, {"rank3", {2, 9, 33}, 17, true},
                            {"no_bias", {8, 20}, 5, false}};
  for (const Config& c : configs) {
    const int64_t in = c.x.back();
    Case k(std::string("linear:") + c.name);
    const Tensor x = Leaf(c.x, -1, 1), w = Leaf({c.out, in}, -0.5f, 0.5f);
    const Tensor b = c.bias ? Leaf({c.out}, -0.5f, 0.5f) : Tensor();
    k.In("x", x).In("weight", w);
    if (c.bias) k.In("bias", b);
    k.Finish(Linear(x, w, b), cases);
  }
}

void AddConv2d(std::vector<Case>* cases) {
  struct Config {
    const char* name;
    Shape x, w;
    Conv2dOptions o;
    bool bias;
  };
  auto opts = [](int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw, int64_t g) {
    Conv2dOptions o;
    o.stride_h = sh, o.stride_w = sw, o.padding_h = ph, o.padding_w = pw, o.dilation_h = dh, o.dilation_w = dw,
    o.groups = g;
    return o;
  };
  const Config configs[] = {
      {"basic", {3, 4, 10, 10}, {6, 4, 3, 3}, opts(1, 1, 0, 0, 1, 1, 1), true},
      {"stride2_pad1", {3, 4, 11, 11}, {6, 4, 3, 3}, opts(2, 2, 1, 1, 1, 1, 1), true},
      {"dilation2_pad2", {2, 3, 12, 12}, {5, 3, 3, 3}, opts(1, 1, 2, 2, 2, 2, 1), true},
      {"groups2_pad1", {2, 6, 9, 9}, {8, 3, 3, 3}, opts(1, 1, 1, 1, 1, 1, 2), true},
      {"depthwise_no_bias", {2, 4, 8, 8}, {4, 1, 3, 3}, opts(1, 1, 1, 1, 1, 1, 4), false},
      {"asymmetric", {2, 3, 9, 11}, {4, 3, 2, 3}, opts(2, 1, 1, 0, 1, 2, 1), true},
      {"groups3_stride2_dil2", {2, 6, 13, 13}, {9, 2, 3, 3}, opts(2, 2, 2, 2, 2, 2, 3), true},
      {"lenet_conv1_batch40", {40, 1, 12, 12}, {6, 1, 5, 5}, opts(1, 1, 2, 2, 1, 1, 1), true},
  };
  for (const Config& c : configs) {
    Case k(std::string("conv2d:") + c.name);
    k.Param("stride_h", static_cast<double>(c.o.stride_h)).Param("stride_w", static_cast<double>(c.o.stride_w));
    k.Param("padding_h", static_cast<double>(c.o.padding_h)).Param("padding_w", static_cast<double>(c.o.padding_w));
    k.Param("dilation_h", static_cast<double>(c.o.dilation_h)).Param("dilation_w", static_cast<double>(c.o.dilation_w));
    k.Param("groups", static_cast<double>(c.o.groups));
    const Tensor x = Leaf(c.x, -1, 1), w = Leaf(c.w, -0.5f, 0.5f);
    const Tensor b = c.bias ? Leaf({c.w[0]}, -0.5f, 0.5f) : Tensor();
    k.In("x", x).In("weight", w);
    if (c.bias) k.In("bias", b);
    k.Finish(Conv2d(x, w, b, c.o), cases);
  }
}

void AddPools(std::vector<Case>* cases) {
  struct Config {
    const char* name;
    Shape x;
    Pool2dOptions o;
  };
  const Config configs[] = {
      {"k2s2", {3, 4, 10, 10}, {2, 2, 2, 2, 0, 0}},
      {"k3s2p1", {2, 3, 11, 11}, {3, 3, 2, 2, 1, 1}},
      {"k3s1_overlap", {2, 2, 7, 7}, {3, 3, 1, 1, 0, 0}},
      {"k2x3_s1x2_p1x1", {2, 3, 8, 9}, {2, 3, 1, 2, 1, 1}},
  };
  for (int max = 1; max >= 0; --max) {
    for (const Config& c : configs) {
      Case k(std::string(max ? "max_pool2d:" : "avg_pool2d:") + c.name);
      k.Param("kernel_h", static_cast<double>(c.o.kernel_h)).Param("kernel_w", static_cast<double>(c.o.kernel_w));
      k.Param("stride_h", static_cast<double>(c.o.stride_h)).Param("stride_w", static_cast<double>(c.o.stride_w));
      k.Param("padding_h", static_cast<double>(c.o.padding_h)).Param("padding_w", static_cast<double>(c.o.padding_w));
      const Tensor x = Leaf(c.x, -2, 2);
      k.In("x", x);
      k.Finish(max ? MaxPool2d(x, c.o) : AvgPool2d(x, c.o), cases);
    }
  }
}

void AddActivations(std::vector<Case>* cases) {
  // Uniform over [-6, 6] (both saturating tails of tanh/sigmoid, the GELU dip), a dense [-1, 1]
  // band and exact zeros (ReLU's gradient at 0 is 0 in both libraries).
  std::vector<float> v = Uniform(2000, -6, 6);
  const std::vector<float> mid = Uniform(1000, -1, 1);
  v.insert(v.end(), mid.begin(), mid.end());
  for (int i = 0; i < 8; ++i) v.push_back(i % 2 ? -0.0f : 0.0f);
  const Shape shape = {static_cast<int64_t>(v.size()) / 8, 8};
  const std::pair<const char*, Tensor (*)(const Tensor&)> ops[] = {
      {"relu", Relu}, {"gelu_erf", GeluErf}, {"gelu_tanh", GeluTanh}, {"tanh", Tanh}, {"sigmoid", Sigmoid}};
  for (const auto& op : ops) {
    Case k(std::string(op.first) + ":uniform");
    Tensor x = Tensor::FromVector(shape, v);
    x.RequiresGrad();
    k.In("x", x);
    k.Finish(op.second(x), cases);
  }
}

void AddSoftmax(std::vector<Case>* cases) {
  struct Config {
    const char* name;
    Shape x;
    int64_t dim;
    float scale;
  };
  const Config configs[] = {{"last", {16, 50}, -1, 5}, {"dim0", {7, 12}, 0, 5}, {"middle", {3, 9, 4}, 1, 5},
                            {"wide_range", {4, 300}, -1, 30}};
  for (int log = 0; log < 2; ++log) {
    for (const Config& c : configs) {
      Case k(std::string(log ? "log_softmax:" : "softmax:") + c.name);
      k.Param("dim", static_cast<double>(c.dim));
      const Tensor x = Leaf(c.x, -c.scale, c.scale);
      k.In("x", x);
      k.Finish(log ? LogSoftmax(x, c.dim) : Softmax(x, c.dim), cases);
    }
  }
}

void AddDropout(std::vector<Case>* cases) {
  const float p = 0.3f;
  const uint64_t seed = 7, stream = 99, offset = 1234;
  const Tensor x = Leaf({40, 50}, -2, 2);
  Case k("dropout:p0.3");
  k.Param("p", p);
  k.In("x", x);
  // lockstep's mask, drawn exactly as lockstep::Dropout draws it (core/ops_nn.cc).
  Tensor mask = Tensor::Empty(x.shape());
  simd::PhiloxDropoutMask(seed, stream, offset, p, mask.data_f32(), static_cast<size_t>(x.numel()));
  k.Put("mask", mask);
  k.Finish(Dropout(x, p, true, seed, stream, offset), cases);
}

void AddLayerNorm(std::vector<Case>* cases) {
  struct Config {
    const char* name;
    Shape x;
    int64_t dims;
    bool affine;
  };
  const Config configs[] = {{"affine", {6, 40}, 1, true}, {"two_dims", {4, 5, 8}, 2, true},
                            {"no_affine", {6, 40}, 1, false}, {"wide_768", {3, 768}, 1, true}};
  for (const Config& c : configs) {
    Case k(std::string("layer_norm:") + c.name);
    const float eps = 1e-5f;
    k.Param("normalized_dims", static_cast<double>(c.dims)).Param("eps", eps);
    // A non-zero mean (the subtraction matters) and a spread of about 1.
    const Tensor x = Leaf(c.x, 0.5f, 3.5f);
    const Shape normalized(c.x.end() - c.dims, c.x.end());
    Tensor w, b;
    k.In("x", x);
    if (c.affine) {
      w = Leaf(normalized, 0.5f, 1.5f);
      b = Leaf(normalized, -0.5f, 0.5f);
      k.In("weight", w).In("bias", b);
    }
    k.Finish(LayerNorm(x, c.dims, w, b, eps), cases);
  }
}

void AddBatchNorm(std::vector<Case>* cases) {
  struct Config {
    const char* name;
    Shape x;
    bool training;
  };
  // batch40 and 2d_batch35: the statistics and parameter gradients sum over more than one batch
  // group (32 samples).
  const Config configs[] = {{"1d_train", {12, 7}, true},         {"1d_train_batch40", {40, 5}, true},
                            {"2d_train", {5, 4, 6, 6}, true},     {"2d_train_batch35", {35, 3, 4, 4}, true},
                            {"1d_eval", {12, 7}, false},          {"2d_eval", {5, 4, 6, 6}, false}};
  for (const Config& c : configs) {
    Case k(std::string("batch_norm:") + c.name);
    const float momentum = 0.1f, eps = 1e-5f;
    k.Param("training", c.training ? 1 : 0).Param("momentum", momentum).Param("eps", eps);
    const int64_t ch = c.x[1];
    const Tensor x = Leaf(c.x, 1.0f, 3.0f);
    const Tensor w = Leaf({ch}, 0.5f, 1.5f), b = Leaf({ch}, -0.5f, 0.5f);
    const Tensor rm = Leaf({ch}, 1.5f, 2.5f, false), rv = Leaf({ch}, 0.2f, 0.5f, false);
    k.In("x", x).In("weight", w).In("bias", b).In("running_mean", rm).In("running_var", rv);
    const Tensor out = BatchNorm(x, rm, rv, w, b, c.training, momentum, eps);
    if (c.training) k.Put("running_mean.after", rm).Put("running_var.after", rv);
    k.Finish(out, cases);
  }
}

void AddEmbedding(std::vector<Case>* cases) {
  Case k("embedding:repeats");
  const Tensor idx = Tensor::FromInt64({5, 7}, Integers(35, 20));  // 35 draws from 20 rows: repeats
  const Tensor w = Leaf({20, 6}, -1, 1);
  k.In("indices", idx).In("weight", w);
  k.Finish(Embedding(idx, w), cases);
}

const char* ReductionName(Reduction r) {
  return r == Reduction::kMean ? "mean" : r == Reduction::kSum ? "sum" : "none";
}

void AddLosses(std::vector<Case>* cases) {
  const int64_t n = 37, c = 10;  // 37 rows: the batch sum crosses a group of 32
  struct Config {
    const char* name;
    Reduction reduction;
    int64_t ignore_index;
    bool has_ignored;
    float smoothing;
  };
  const Config ce[] = {
      {"mean", Reduction::kMean, -100, false, 0.0f},
      {"sum", Reduction::kSum, -100, false, 0.0f},
      {"none", Reduction::kNone, -100, false, 0.0f},
      {"mean_ignore_default", Reduction::kMean, -100, true, 0.0f},
      {"sum_ignore_3", Reduction::kSum, 3, true, 0.0f},
      {"mean_smoothing0.1", Reduction::kMean, -100, false, 0.1f},
      {"sum_smoothing0.2_ignore_3", Reduction::kSum, 3, true, 0.2f},
      {"mean_smoothing0.1_ignore_default", Reduction::kMean, -100, true, 0.1f},
      {"none_smoothing0.1_ignore_3", Reduction::kNone, 3, true, 0.1f},
  };
  for (int nll = 0; nll < 2; ++nll) {
    for (const Config& cfg : ce) {
      if (nll && cfg.smoothing != 0.0f) continue;
      Case k(std::string(nll ? "nll_loss:" : "cross_entropy:") + cfg.name);
      k.Param("reduction", static_cast<double>(static_cast<int>(cfg.reduction)))
          .Param("ignore_index", static_cast<double>(cfg.ignore_index))
          .Param("label_smoothing", cfg.smoothing);
      // cross_entropy: logits; nll_loss: any values standing for log-probabilities.
      const Tensor x = nll ? Leaf({n, c}, -5, 0) : Leaf({n, c}, -4, 4);
      std::vector<int64_t> t = Integers(n, c);
      if (cfg.has_ignored) {
        for (int64_t i = 0; i < n; i += 5) t[static_cast<size_t>(i)] = cfg.ignore_index;
      }
      const Tensor target = Tensor::FromInt64({n}, t);
      k.In(nll ? "log_probs" : "logits", x).In("target", target);
      k.Finish(nll ? NllLoss(x, target, cfg.reduction, cfg.ignore_index)
                   : CrossEntropy(x, target, cfg.reduction, cfg.ignore_index, cfg.smoothing),
               cases);
    }
  }
  for (Reduction r : {Reduction::kMean, Reduction::kSum, Reduction::kNone}) {
    Case k(std::string("mse_loss:") + ReductionName(r));
    k.Param("reduction", static_cast<double>(static_cast<int>(r)));
    const Tensor input = Leaf({9, 13}, -2, 2), target = Leaf({9, 13}, -2, 2);
    k.In("input", input).In("target", target);
    k.Finish(MseLoss(input, target, r), cases);
  }
}

// ---- the GPT's attention and residual ops (core/models/gpt.cc), each as that model uses it

void AddGptOps(std::vector<Case>* cases) {
  const int64_t B = 2, H = 3, T = 8, hs = 5;
  {
    // q @ k^T: batched over [B, H], k a transposed view, as CausalSelfAttention.
    Case k("matmul:attention_scores");
    const Tensor q = Leaf({B, H, T, hs}, -1, 1), key = Leaf({B, H, T, hs}, -1, 1);
    k.In("a", q).In("b_t", key);
    k.Finish(Matmul(q, key.Transpose(-2, -1)), cases);
  }
  {
    Case k("matmul:attention_values");
    const Tensor att = Leaf({B, H, T, T}, 0, 1), v = Leaf({B, H, T, hs}, -1, 1);
    k.In("a", att).In("b", v);
    k.Finish(Matmul(att, v), cases);
  }
  {
    // softmax(masked_fill(x, future, -inf)): the causal mask, then the softmax over keys.
    Case k("causal_softmax:attention");
    const Tensor x = Leaf({B, H, T, T}, -3, 3);
    std::vector<float> future(static_cast<size_t>(T * T), 0.0f);
    for (int64_t i = 0; i < T; ++i) {
      for (int64_t j = i + 1; j < T; ++j) future[static_cast<size_t>(i * T + j)] = 1.0f;
    }
    k.In("x", x);
    k.Finish(Softmax(MaskedFill(x, Tensor::FromVector({T, T}, future), -INFINITY), -1), cases);
  }
  {
    // Token plus position embeddings: [B, T, C] + [T, C] broadcast (the second's gradient sums
    // over the batch).
    Case k("add:broadcast");
    const Tensor a = Leaf({B, T, 6}, -1, 1), b = Leaf({T, 6}, -1, 1);
    k.In("a", a).In("b", b);
    k.Finish(Add(a, b), cases);
  }
  {
    Case k("mul_scalar:attention_scale");
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hs)));
    const Tensor x = Leaf({B, H, T, T}, -2, 2);
    k.Param("scale", scale).In("x", x);
    k.Finish(MulScalar(x, scale), cases);
  }
  {
    // [B, T, C] -> [B, H, T, hs] and back: data movement only.
    Case k("heads:split_merge");
    const Tensor x = Leaf({B, T, H * hs}, -1, 1);
    k.Param("heads", H).In("x", x);
    const Tensor heads = x.Reshape({B, T, H, hs}).Transpose(1, 2);
    k.Finish(MulScalar(heads, 1.0f).Transpose(1, 2).Reshape({B, T, H * hs}), cases);
  }
}

bool WriteAll(FILE* f, const void* p, size_t n) { return n == 0 || fwrite(p, 1, n, f) == n; }
bool WriteU32(FILE* f, uint32_t v) { return WriteAll(f, &v, 4); }  // every target is little-endian
bool WriteI64(FILE* f, int64_t v) { return WriteAll(f, &v, 8); }
bool WriteF64(FILE* f, double v) { return WriteAll(f, &v, 8); }
bool WriteStr(FILE* f, const std::string& s) {
  return WriteU32(f, static_cast<uint32_t>(s.size())) && WriteAll(f, s.data(), s.size());
}

}  // namespace

int main(int argc, char** argv) {
  const char* path = nullptr;
  std::string target_name;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--target") == 0 && i + 1 < argc) {
      target_name = argv[++i];
    } else if (path == nullptr && argv[i][0] != '-') {
      path = argv[i];
    } else {
      path = nullptr;
      break;
    }
  }
  if (path == nullptr) {
    fprintf(stderr, "usage: lockstep_layer_dump [--target NAME] FILE\n");
    return 2;
  }
  if (!target_name.empty()) {
    bool found = false;
    for (const simd::Target& t : simd::RunnableTargets()) {
      if (t.name == target_name) {
        simd::ForceTarget(t.bits);
        found = true;
      }
    }
    if (!found) {
      fprintf(stderr, "lockstep_layer_dump: target %s is not runnable here\n", target_name.c_str());
      return 2;
    }
  }
  std::vector<Case> cases;
  try {
    AddLinear(&cases);
    AddConv2d(&cases);
    AddPools(&cases);
    AddActivations(&cases);
    AddSoftmax(&cases);
    AddDropout(&cases);
    AddLayerNorm(&cases);
    AddBatchNorm(&cases);
    AddEmbedding(&cases);
    AddLosses(&cases);
    AddGptOps(&cases);
  } catch (const std::exception& e) {
    fprintf(stderr, "lockstep_layer_dump: %s\n", e.what());
    return 1;
  }
  FILE* f = fopen(path, "wb");
  if (f == nullptr) {
    perror(path);
    return 1;
  }
  bool ok = WriteAll(f, "LSLAYER1", 8) && WriteU32(f, static_cast<uint32_t>(cases.size()));
  for (const Case& c : cases) {
    ok = ok && WriteStr(f, c.name) && WriteU32(f, static_cast<uint32_t>(c.params.size()));
    for (const auto& p : c.params) ok = ok && WriteStr(f, p.first) && WriteF64(f, p.second);
    ok = ok && WriteU32(f, static_cast<uint32_t>(c.arrays.size()));
    for (const Array& a : c.arrays) {
      ok = ok && WriteStr(f, a.name) && WriteAll(f, &a.dtype, 1) && WriteU32(f, static_cast<uint32_t>(a.dims.size()));
      for (int64_t d : a.dims) ok = ok && WriteI64(f, d);
      ok = ok && WriteAll(f, a.bytes.data(), a.bytes.size());
    }
  }
  ok = (fclose(f) == 0) && ok;
  if (!ok) {
    fprintf(stderr, "lockstep_layer_dump: writing %s failed\n", path);
    return 1;
  }
  printf("lockstep_layer_dump: %zu cases written to %s on target %s\n", cases.size(), path,
         simd::ActiveTargetName().c_str());
  return 0;
}
