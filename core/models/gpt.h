// A GPT in nanoGPT's architecture: token and position embeddings, dropout, pre-LayerNorm blocks of
// causal self-attention and a 4x MLP with exact (erf) GELU, a final LayerNorm and a language-model
// head tied to the token embedding. Parameter names are nanoGPT's ("transformer.h.0.attn.c_attn.
// weight"), so a lockstep checkpoint loads into nanoGPT's model and back.
#ifndef LOCKSTEP_CORE_MODELS_GPT_H_
#define LOCKSTEP_CORE_MODELS_GPT_H_

#include <stdint.h>

#include <memory>
#include <string>
#include <vector>

#include "core/nn/layers.h"
#include "core/nn/module.h"
#include "core/random.h"

namespace lockstep {
namespace models {

struct GptConfig {
  int64_t vocab_size = 0;
  int64_t block_size = 64;  // the longest context
  int64_t n_layer = 4, n_head = 4, n_embd = 128;
  float dropout = 0.1f;
  bool bias = true;  // biases in Linear and LayerNorm layers
};

// Throws lockstep::Error unless every size is positive, n_embd divides by n_head and dropout is
// in [0, 1).
void ValidateGptConfig(const GptConfig& config);

// What every layer's constructor needs: the configuration, the "init" stream, and the seed that
// names each dropout layer's stream.
struct GptBuild {
  const GptConfig& config;
  Generator& init;
  uint64_t seed;
  std::shared_ptr<nn::Dropout> MakeDropout(const std::string& path) const;
};

class CausalSelfAttention : public nn::Module {
 public:
  CausalSelfAttention(const GptBuild& build, const std::string& path);
  Tensor Forward(const Tensor& x) override;  // [B, T, C] -> [B, T, C]
  std::string Name() const override { return "CausalSelfAttention"; }
  std::shared_ptr<nn::Linear> c_attn, c_proj;

 private:
  int64_t n_head_;
  std::shared_ptr<nn::Dropout> attn_dropout_, resid_dropout_;
};

class GptMlp : public nn::Module {
 public:
  GptMlp(const GptBuild& build, const std::string& path);
  Tensor Forward(const Tensor& x) override;
  std::string Name() const override { return "MLP"; }
  std::shared_ptr<nn::Linear> c_fc, c_proj;

 private:
  std::shared_ptr<nn::Dropout> dropout_;
};

class GptBlock : public nn::Module {
 public:
  GptBlock(const GptBuild& build, const std::string& path);
  Tensor Forward(const Tensor& x) override;  // x + attn(ln_1(x)), then + mlp(ln_2(.))
  std::string Name() const override { return "Block"; }

 private:
  std::shared_ptr<nn::LayerNorm> ln_1_, ln_2_;
  std::shared_ptr<CausalSelfAttention> attn_;
  std::shared_ptr<GptMlp> mlp_;
};

// nanoGPT's `transformer` ModuleDict: wte, wpe, drop, h, ln_f.
class GptTransformer : public nn::Module {
 public:
  explicit GptTransformer(const GptBuild& build);
  Tensor Forward(const Tensor& x) override;  // hidden states after ln_f, [B, T, C]
  std::string Name() const override { return "Transformer"; }
  std::shared_ptr<nn::Embedding> wte, wpe;

 private:
  std::shared_ptr<nn::Dropout> drop_;
  std::shared_ptr<nn::Sequential> h_;
  std::shared_ptr<nn::LayerNorm> ln_f_;
};

class Gpt : public nn::Module {
 public:
  // Parameters from the seed's "init" stream: normal(0, 0.02) for weights and embeddings, zero
  // biases, normal(0, 0.02 / sqrt(2 * n_layer)) for the residual projections (c_proj). Dropout
  // masks come from one stream per dropout layer, named "dropout/<its path>".
  Gpt(const GptConfig& config, uint64_t seed);
  // Token indices [B, T] (int64, T <= block_size) -> logits [B, T, vocab_size].
  Tensor Forward(const Tensor& idx) override;
  std::string Name() const override { return "GPT"; }
  const GptConfig& config() const { return config_; }
  // nanoGPT's optimizer groups: tensors of 2 or more dimensions get weight decay, others not.
  nn::NamedTensors DecayParameters() const;
  nn::NamedTensors NoDecayParameters() const;

 private:
  GptConfig config_;
  std::shared_ptr<GptTransformer> transformer_;
};

// Mean cross-entropy of logits [B, T, V] against targets [B, T].
Tensor GptLoss(const Tensor& logits, const Tensor& targets);

}  // namespace models
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_MODELS_GPT_H_
