// Attention modules with PyTorch's semantics and parameter names: MultiheadAttention
// (in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias), TransformerEncoderLayer
// (self_attn, linear1, dropout, linear2, norm1, norm2, dropout1, dropout2) and TransformerEncoder
// (layers.N, norm), written with the core ops, so checkpoints, hashes and traces work unchanged.
//
// Dropout streams. A Dropout at module path P of a finished model draws its masks from the Philox
// stream "dropout/P" under the run's seed (the GPT example's rule): SeedDropoutStreams applies it
// to a whole tree. Python's lockstep.from_torch_module and any C++ builder of the same model call
// it on the finished model, so both draw the same masks.
#ifndef LOCKSTEP_CORE_NN_ATTENTION_H_
#define LOCKSTEP_CORE_NN_ATTENTION_H_

#include <stdint.h>

#include <memory>
#include <string>

#include "core/nn/layers.h"
#include "core/nn/module.h"
#include "core/random.h"

namespace lockstep {
namespace nn {

// Points every Dropout of the tree at its stream "dropout/<path>" under `seed`, offset 0.
void SeedDropoutStreams(Module& root, uint64_t seed);

// Masks, as PyTorch takes them: a float32 mask is added to the attention scores; an int32/int64
// mask is boolean (nonzero: not attended, the score becomes -inf). attn_mask is [L, S] or
// [N * num_heads, L, S]; key_padding_mask is [N, S] (or [S] for an unbatched input).
struct AttentionMasks {
  Tensor attn_mask;
  Tensor key_padding_mask;
};

struct MultiheadAttentionOptions {
  int64_t embed_dim = 0, num_heads = 1;
  float dropout = 0.0f;  // on the attention weights, in training
  bool bias = true;
  bool batch_first = false;  // inputs [N, L, E] instead of [L, N, E]
};

class MultiheadAttention : public Module {
 public:
  // PyTorch's initialisation from `init`: out_proj as a Linear (kaiming uniform) with a zero bias,
  // then in_proj_weight xavier-uniform, in_proj_bias zero.
  MultiheadAttention(const MultiheadAttentionOptions& options, Generator& init);
  // Self-attention without masks: Attend(x, x, x).output.
  Tensor Forward(const Tensor& x) override;
  std::string Name() const override { return "MultiheadAttention"; }

  struct Result {
    Tensor output;   // [L, N, E] ([N, L, E] batch_first; [L, E] unbatched)
    Tensor weights;  // [N, L, S] averaged over heads, or [N, num_heads, L, S]; undefined unless asked
  };
  // torch.nn.functional.multi_head_attention_forward's steps: one packed projection when query,
  // key and value are the same tensor, q / sqrt(head_dim), q k^T plus the mask, softmax, dropout,
  // times v, out_proj.
  Result Attend(const Tensor& query, const Tensor& key, const Tensor& value, const AttentionMasks& masks = {},
                bool need_weights = false, bool average_weights = true);
  const MultiheadAttentionOptions& options() const { return options_; }

  Tensor in_proj_weight, in_proj_bias;  // [3E, E], [3E]
  std::shared_ptr<Linear> out_proj;
  // PyTorch's MultiheadAttention applies F.dropout with its `dropout` probability; here that is a
  // child module "dropout" (no parameters), so its stream follows the rule above.
  std::shared_ptr<Dropout> dropout;

 private:
  MultiheadAttentionOptions options_;
};

struct TransformerEncoderLayerOptions {
  int64_t d_model = 0, nhead = 1, dim_feedforward = 2048;
  float dropout = 0.1f;
  bool gelu = false;  // activation: false ReLU, true GELU (erf form)
  float layer_norm_eps = 1e-5f;
  bool batch_first = false;
  bool norm_first = false;
};

class TransformerEncoderLayer : public Module {
 public:
  TransformerEncoderLayer(const TransformerEncoderLayerOptions& options, Generator& init);
  Tensor Forward(const Tensor& src) override { return Encode(src, {}); }
  // norm_first: x + sa(norm1(x)), then + ff(norm2(.)); else norm1(x + sa(x)), then norm2(. + ff(.)).
  Tensor Encode(const Tensor& src, const AttentionMasks& masks);
  std::string Name() const override { return "TransformerEncoderLayer"; }
  const TransformerEncoderLayerOptions& options() const { return options_; }

  std::shared_ptr<MultiheadAttention> self_attn;
  std::shared_ptr<Linear> linear1, linear2;
  std::shared_ptr<Dropout> dropout, dropout1, dropout2;
  std::shared_ptr<LayerNorm> norm1, norm2;

 private:
  TransformerEncoderLayerOptions options_;
};

// num_layers layers (children "layers.0", ...) each drawn afresh from `init` (PyTorch deep-copies
// one layer; the values of a converted model come from its checkpoint anyway), and an optional
// final LayerNorm "norm" (final_norm).
class TransformerEncoder : public Module {
 public:
  TransformerEncoder(const TransformerEncoderLayerOptions& layer, int64_t num_layers, bool final_norm,
                     Generator& init);
  // For layers made elsewhere (from_torch_module); norm may be null.
  TransformerEncoder(std::shared_ptr<Sequential> layers, std::shared_ptr<LayerNorm> norm);
  Tensor Forward(const Tensor& src) override { return Encode(src, {}); }
  Tensor Encode(const Tensor& src, const AttentionMasks& masks);
  std::string Name() const override { return "TransformerEncoder"; }

  std::shared_ptr<Sequential> layers;
  std::shared_ptr<LayerNorm> norm;
};

}  // namespace nn
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_NN_ATTENTION_H_
