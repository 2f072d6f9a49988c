#include "core/models/gpt.h"

#include "core/error.h"
#include "core/nn/init.h"
#include "core/ops.h"

namespace lockstep {
namespace models {

void ValidateGptConfig(const GptConfig& c) {
  LOCKSTEP_REQUIRE(c.vocab_size > 0 && c.block_size > 0 && c.n_layer > 0 && c.n_head > 0 && c.n_embd > 0,
                   "gpt: vocab_size, block_size, n_layer, n_head and n_embd must be positive, got "
                       << c.vocab_size << ", " << c.block_size << ", " << c.n_layer << ", " << c.n_head << ", "
                       << c.n_embd);
  LOCKSTEP_REQUIRE(c.n_embd % c.n_head == 0,
                   "gpt: n_embd (" << c.n_embd << ") must be a multiple of n_head (" << c.n_head << ")");
  LOCKSTEP_REQUIRE(c.dropout >= 0.0f && c.dropout < 1.0f, "gpt: dropout must be in [0, 1), got " << c.dropout);
}

std::shared_ptr<nn::Dropout> GptBuild::MakeDropout(const std::string& path) const {
  return std::make_shared<nn::Dropout>(config.dropout, Generator(seed, "dropout/" + path));
}

namespace {

// nanoGPT's _init_weights: Linear weights normal(0, std), biases zero.
std::shared_ptr<nn::Linear> MakeLinear(const GptBuild& b, int64_t in, int64_t out, float std) {
  auto linear = std::make_shared<nn::Linear>(in, out, b.config.bias, b.init);
  nn::NormalInit(linear->weight, 0.0f, std, b.init);
  if (b.config.bias) nn::ConstantInit(linear->bias, 0.0f);
  return linear;
}

float ResidualStd(const GptConfig& c) {
  return static_cast<float>(0.02 / __builtin_sqrt(2.0 * static_cast<double>(c.n_layer)));
}

}  // namespace

CausalSelfAttention::CausalSelfAttention(const GptBuild& b, const std::string& path) : n_head_(b.config.n_head) {
  const int64_t c = b.config.n_embd;
  c_attn = RegisterModule("c_attn", MakeLinear(b, c, 3 * c, 0.02f));
  c_proj = RegisterModule("c_proj", MakeLinear(b, c, c, ResidualStd(b.config)));
  attn_dropout_ = RegisterModule("attn_dropout", b.MakeDropout(path + ".attn_dropout"));
  resid_dropout_ = RegisterModule("resid_dropout", b.MakeDropout(path + ".resid_dropout"));
}

Tensor CausalSelfAttention::Forward(const Tensor& x) {
  LOCKSTEP_REQUIRE(x.dim() == 3, "attention: expected [B, T, C], got " << ShapeString(x.shape()));
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2), hs = C / n_head_;
  const Tensor qkv = (*c_attn)(x);
  // [B, T, C] -> [B, n_head, T, hs] for each of q, k, v: views of qkv (the products read their rows
  // 3C apart), not copies.
  auto heads = [&](int64_t part) {
    return qkv.Slice(2, part * C, (part + 1) * C).View({B, T, n_head_, hs}).Transpose(1, 2);
  };
  const Tensor q = heads(0), k = heads(1), v = heads(2);
  // nanoGPT's manual attention: (q @ k^T) * (1 / sqrt(hs)), causal mask, softmax, dropout, @ v.
  const float scale = static_cast<float>(1.0 / __builtin_sqrt(static_cast<double>(hs)));
  Tensor att = MulScalar(Matmul(q, k.Transpose(-2, -1)), scale);
  std::vector<float> future(static_cast<size_t>(T * T), 0.0f);
  for (int64_t i = 0; i < T; ++i) {
    for (int64_t j = i + 1; j < T; ++j) future[static_cast<size_t>(i * T + j)] = 1.0f;
  }
  att = MaskedFill(att, Tensor::FromVector({T, T}, future), -__builtin_inff());
  att = (*attn_dropout_)(Softmax(att, -1));
  const Tensor y = Matmul(att, v).Transpose(1, 2).Reshape({B, T, C});
  return (*resid_dropout_)((*c_proj)(y));
}

GptMlp::GptMlp(const GptBuild& b, const std::string& path) {
  const int64_t c = b.config.n_embd;
  c_fc = RegisterModule("c_fc", MakeLinear(b, c, 4 * c, 0.02f));
  c_proj = RegisterModule("c_proj", MakeLinear(b, 4 * c, c, ResidualStd(b.config)));
  dropout_ = RegisterModule("dropout", b.MakeDropout(path + ".dropout"));
}

Tensor GptMlp::Forward(const Tensor& x) { return (*dropout_)((*c_proj)(GeluErf((*c_fc)(x)))); }

GptBlock::GptBlock(const GptBuild& b, const std::string& path) {
  const int64_t c = b.config.n_embd;
  ln_1_ = RegisterModule("ln_1", std::make_shared<nn::LayerNorm>(c, 1e-5f, true, b.config.bias));
  attn_ = RegisterModule("attn", std::make_shared<CausalSelfAttention>(b, path + ".attn"));
  ln_2_ = RegisterModule("ln_2", std::make_shared<nn::LayerNorm>(c, 1e-5f, true, b.config.bias));
  mlp_ = RegisterModule("mlp", std::make_shared<GptMlp>(b, path + ".mlp"));
}

Tensor GptBlock::Forward(const Tensor& x) {
  const Tensor h = Add(x, (*attn_)((*ln_1_)(x)));
  return Add(h, (*mlp_)((*ln_2_)(h)));
}

GptTransformer::GptTransformer(const GptBuild& b) {
  const GptConfig& c = b.config;
  wte = RegisterModule("wte", std::make_shared<nn::Embedding>(c.vocab_size, c.n_embd, b.init));
  wpe = RegisterModule("wpe", std::make_shared<nn::Embedding>(c.block_size, c.n_embd, b.init));
  nn::NormalInit(wte->weight, 0.0f, 0.02f, b.init);
  nn::NormalInit(wpe->weight, 0.0f, 0.02f, b.init);
  drop_ = RegisterModule("drop", b.MakeDropout("transformer.drop"));
  h_ = RegisterModule("h", std::make_shared<nn::Sequential>());
  for (int64_t i = 0; i < c.n_layer; ++i) {
    h_->Add(std::make_shared<GptBlock>(b, "transformer.h." + std::to_string(i)));
  }
  ln_f_ = RegisterModule("ln_f", std::make_shared<nn::LayerNorm>(c.n_embd, 1e-5f, true, c.bias));
}

Tensor GptTransformer::Forward(const Tensor& idx) {
  const int64_t T = idx.size(1);
  const Tensor positions = Tensor::Arange(T);
  Tensor x = (*drop_)(Add((*wte)(idx), (*wpe)(positions)));
  x = (*h_)(x);
  return (*ln_f_)(x);
}

Gpt::Gpt(const GptConfig& config, uint64_t seed) : config_(config) {
  ValidateGptConfig(config_);
  Generator init(seed, "init");
  const GptBuild build{config_, init, seed};
  transformer_ = RegisterModule("transformer", std::make_shared<GptTransformer>(build));
}

Tensor Gpt::Forward(const Tensor& idx) {
  LOCKSTEP_REQUIRE(idx.dim() == 2 && idx.dtype() != DType::kFloat32,
                   "gpt: expected token indices [B, T] (int64), got " << ShapeString(idx.shape()));
  LOCKSTEP_REQUIRE(idx.size(1) >= 1 && idx.size(1) <= config_.block_size,
                   "gpt: the sequence has " << idx.size(1) << " tokens, the block size is " << config_.block_size);
  // The head shares the token embedding's weight (weight tying): logits = x @ wte^T.
  return Linear((*transformer_)(idx), transformer_->wte->weight, Tensor());
}

nn::NamedTensors Gpt::DecayParameters() const {
  nn::NamedTensors out;
  for (const auto& [name, p] : NamedParameters()) {
    if (p.dim() >= 2) out.emplace_back(name, p);
  }
  return out;
}

nn::NamedTensors Gpt::NoDecayParameters() const {
  nn::NamedTensors out;
  for (const auto& [name, p] : NamedParameters()) {
    if (p.dim() < 2) out.emplace_back(name, p);
  }
  return out;
}

Tensor GptLoss(const Tensor& logits, const Tensor& targets) {
  const int64_t v = logits.size(-1);
  return CrossEntropy(logits.Reshape({-1, v}), targets.Reshape({-1}));
}

}  // namespace models
}  // namespace lockstep
