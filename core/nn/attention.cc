#include "core/nn/attention.h"

#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/nn/init.h"
#include "core/ops.h"

namespace lockstep {
namespace nn {

void SeedDropoutStreams(Module& root, uint64_t seed) {
  for (const auto& [path, module] : root.NamedModules()) {
    if (auto* d = dynamic_cast<Dropout*>(module)) d->generator() = Generator(seed, "dropout/" + path);
  }
}

namespace {

// A mask as an additive float32 tensor: boolean (integer) masks become 0 / -inf, as PyTorch
// converts them before adding.
Tensor Additive(const Tensor& mask) {
  if (!mask.defined() || mask.dtype() == DType::kFloat32) return mask;
  NoGradGuard no_grad;
  return MaskedFill(Tensor::Zeros(mask.shape()), mask, -__builtin_inff());
}

// PyTorch's merge of attn_mask ([L, S] or [N * H, L, S]) and key_padding_mask ([N, S]) into one
// additive mask that broadcasts against the scores [N * H, L, S].
Tensor MergedMask(const AttentionMasks& masks, int64_t N, int64_t H, int64_t L, int64_t S) {
  Tensor mask = Additive(masks.attn_mask);
  if (mask.defined()) {
    const bool ok = (mask.dim() == 2 && mask.shape() == Shape{L, S}) ||
                    (mask.dim() == 3 && mask.shape() == Shape{N * H, L, S});
    LOCKSTEP_REQUIRE(ok, "MultiheadAttention: attn_mask must be [" << L << ", " << S << "] or [" << N * H << ", " << L
                                                                   << ", " << S << "], got "
                                                                   << ShapeString(masks.attn_mask.shape()));
    if (mask.dim() == 2) mask = mask.Unsqueeze(0);
  }
  if (masks.key_padding_mask.defined()) {
    LOCKSTEP_REQUIRE(masks.key_padding_mask.shape() == Shape({N, S}),
                     "MultiheadAttention: key_padding_mask must be [" << N << ", " << S << "], got "
                                                                      << ShapeString(masks.key_padding_mask.shape()));
    // [N, S] -> [N, H, 1, S] -> [N * H, 1, S]
    const Tensor padding =
        Additive(masks.key_padding_mask).Reshape({N, 1, 1, S}).Expand({N, H, 1, S}).Reshape({N * H, 1, S});
    mask = mask.defined() ? Add(mask, padding) : padding;
  }
  return mask;
}

void RequireRank3(const Tensor& t, const char* what, int64_t rank) {
  LOCKSTEP_REQUIRE(t.dim() == rank, "MultiheadAttention: " << what << " must have rank " << rank << " like the query, got "
                                                           << ShapeString(t.shape()));
}

}  // namespace

MultiheadAttention::MultiheadAttention(const MultiheadAttentionOptions& o, Generator& init) : options_(o) {
  const int64_t E = o.embed_dim;
  LOCKSTEP_REQUIRE(E > 0 && o.num_heads > 0 && E % o.num_heads == 0,
                   "MultiheadAttention: embed_dim (" << E << ") must be a positive multiple of num_heads ("
                                                     << o.num_heads << ")");
  LOCKSTEP_REQUIRE(o.dropout >= 0.0f && o.dropout < 1.0f,
                   "MultiheadAttention: dropout must be in [0, 1), got " << o.dropout);
  in_proj_weight = Tensor::Empty({3 * E, E});
  RegisterParameter("in_proj_weight", in_proj_weight);
  if (o.bias) in_proj_bias = RegisterParameter("in_proj_bias", Tensor::Zeros({3 * E}));
  out_proj = RegisterModule("out_proj", std::make_shared<Linear>(E, E, o.bias, init));
  if (o.bias) ConstantInit(out_proj->bias, 0.0f);
  // xavier_uniform_: bound sqrt(6 / (fan_in + fan_out)) with fan_in E, fan_out 3E.
  const float bound = static_cast<float>(__builtin_sqrt(6.0 / static_cast<double>(4 * E)));
  UniformInit(in_proj_weight, -bound, bound, init);
  dropout = RegisterModule("dropout", std::make_shared<Dropout>(o.dropout, Generator(0, "dropout/dropout")));
}

Tensor MultiheadAttention::Forward(const Tensor& x) { return Attend(x, x, x).output; }

MultiheadAttention::Result MultiheadAttention::Attend(const Tensor& query_in, const Tensor& key_in,
                                                      const Tensor& value_in, const AttentionMasks& masks,
                                                      bool need_weights, bool average_weights) {
  const int64_t E = options_.embed_dim, H = options_.num_heads, hs = E / H;
  const bool batched = query_in.dim() == 3;
  LOCKSTEP_REQUIRE(batched || query_in.dim() == 2,
                   "MultiheadAttention: expected a query of rank 3 ([L, N, E], or [N, L, E] with batch_first) or 2 "
                   "([L, E]), got " << ShapeString(query_in.shape()));
  RequireRank3(key_in, "key", query_in.dim());
  RequireRank3(value_in, "value", query_in.dim());
  LOCKSTEP_REQUIRE(query_in.size(-1) == E && key_in.size(-1) == E && value_in.size(-1) == E,
                   "MultiheadAttention: query, key and value must end in embed_dim " << E << ", got "
                       << ShapeString(query_in.shape()) << ", " << ShapeString(key_in.shape()) << ", "
                       << ShapeString(value_in.shape()));
  const bool self_attention = query_in.same(key_in) && key_in.same(value_in);
  const bool shared_kv = key_in.same(value_in);
  // To [L, N, E]: batch_first inputs are transposed, an unbatched one gets N = 1.
  auto to_lne = [&](const Tensor& t) { return !batched ? t.Unsqueeze(1) : options_.batch_first ? t.Transpose(0, 1) : t; };
  const Tensor query = to_lne(query_in), key = to_lne(key_in), value = to_lne(value_in);
  const int64_t L = query.size(0), N = query.size(1), S = key.size(0);
  LOCKSTEP_REQUIRE(key.size(1) == N && value.size(1) == N && value.size(0) == S,
                   "MultiheadAttention: key and value must have the query's batch and the same length, got "
                       << ShapeString(query_in.shape()) << ", " << ShapeString(key_in.shape()) << ", "
                       << ShapeString(value_in.shape()));

  // The input projections, rows [part * E, (part + 1) * E) of the packed weight.
  auto rows = [&](const Tensor& t, int64_t first, int64_t count) {
    return t.defined() ? t.Slice(0, first * E, (first + count) * E) : Tensor();
  };
  Tensor q, k, v;
  if (self_attention) {
    const Tensor qkv = lockstep::Linear(query, in_proj_weight, in_proj_bias);
    q = qkv.Slice(-1, 0, E), k = qkv.Slice(-1, E, 2 * E), v = qkv.Slice(-1, 2 * E, 3 * E);
  } else {
    q = lockstep::Linear(query, rows(in_proj_weight, 0, 1), rows(in_proj_bias, 0, 1));
    if (shared_kv) {
      const Tensor kv = lockstep::Linear(key, rows(in_proj_weight, 1, 2), rows(in_proj_bias, 1, 2));
      k = kv.Slice(-1, 0, E), v = kv.Slice(-1, E, 2 * E);
    } else {
      k = lockstep::Linear(key, rows(in_proj_weight, 1, 1), rows(in_proj_bias, 1, 1));
      v = lockstep::Linear(value, rows(in_proj_weight, 2, 1), rows(in_proj_bias, 2, 1));
    }
  }
  // [len, N, E] -> [N * H, len, hs]
  auto heads = [&](const Tensor& t, int64_t len) { return t.Reshape({len, N * H, hs}).Transpose(0, 1); };
  q = heads(q, L), k = heads(k, S), v = heads(v, S);
  AttentionMasks merged = masks;
  if (!batched && masks.key_padding_mask.defined() && masks.key_padding_mask.dim() == 1) {
    merged.key_padding_mask = masks.key_padding_mask.Unsqueeze(0);
  }
  const Tensor mask = MergedMask(merged, N, H, L, S);

  // q / sqrt(head_dim) with the divisor rounded to float32, as torch divides by a Python float.
  q = Div(q, Tensor::Scalar(static_cast<float>(__builtin_sqrt(static_cast<double>(hs)))));
  Tensor scores = Matmul(q, k.Transpose(-2, -1));  // [N * H, L, S]
  if (mask.defined()) scores = Add(mask, scores);
  const Tensor weights = (*dropout)(lockstep::Softmax(scores, -1));
  const Tensor attended = Matmul(weights, v).Transpose(0, 1).Reshape({L, N, E});
  Result result;
  result.output = lockstep::Linear(attended, out_proj->weight, out_proj->bias);  // F.linear, as torch: no module call
  if (!batched) {
    result.output = result.output.Squeeze(1);
  } else if (options_.batch_first) {
    result.output = result.output.Transpose(0, 1);
  }
  if (need_weights) {
    Tensor w = weights.Reshape({N, H, L, S});
    if (average_weights) w = Mean(w, 1);
    result.weights = batched ? w : w.Squeeze(0);
  }
  return result;
}

TransformerEncoderLayer::TransformerEncoderLayer(const TransformerEncoderLayerOptions& o, Generator& init)
    : options_(o) {
  LOCKSTEP_REQUIRE(o.dim_feedforward > 0, "TransformerEncoderLayer: dim_feedforward must be positive, got "
                                              << o.dim_feedforward);
  LOCKSTEP_REQUIRE(o.dropout >= 0.0f && o.dropout < 1.0f,
                   "TransformerEncoderLayer: dropout must be in [0, 1), got " << o.dropout);
  MultiheadAttentionOptions attention;
  attention.embed_dim = o.d_model;
  attention.num_heads = o.nhead;
  attention.dropout = o.dropout;
  attention.batch_first = o.batch_first;
  // PyTorch's registration order (so the module paths and the draws from `init` come in it).
  self_attn = RegisterModule("self_attn", std::make_shared<MultiheadAttention>(attention, init));
  linear1 = RegisterModule("linear1", std::make_shared<Linear>(o.d_model, o.dim_feedforward, true, init));
  dropout = RegisterModule("dropout", std::make_shared<Dropout>(o.dropout, Generator(0, "dropout/dropout")));
  linear2 = RegisterModule("linear2", std::make_shared<Linear>(o.dim_feedforward, o.d_model, true, init));
  norm1 = RegisterModule("norm1", std::make_shared<LayerNorm>(o.d_model, o.layer_norm_eps));
  norm2 = RegisterModule("norm2", std::make_shared<LayerNorm>(o.d_model, o.layer_norm_eps));
  dropout1 = RegisterModule("dropout1", std::make_shared<Dropout>(o.dropout, Generator(0, "dropout/dropout1")));
  dropout2 = RegisterModule("dropout2", std::make_shared<Dropout>(o.dropout, Generator(0, "dropout/dropout2")));
}

Tensor TransformerEncoderLayer::Encode(const Tensor& src, const AttentionMasks& masks) {
  const bool masked = masks.attn_mask.defined() || masks.key_padding_mask.defined();
  // Through the module call when unmasked, so a trace sees the self_attn scope.
  auto sa_block = [&](const Tensor& x) {
    return (*dropout1)(masked ? self_attn->Attend(x, x, x, masks).output : (*self_attn)(x));
  };
  auto ff_block = [&](const Tensor& x) {
    const Tensor h = (*linear1)(x);
    return (*dropout2)((*linear2)((*dropout)(options_.gelu ? GeluErf(h) : Relu(h))));
  };
  if (options_.norm_first) {
    const Tensor x = Add(src, sa_block((*norm1)(src)));
    return Add(x, ff_block((*norm2)(x)));
  }
  const Tensor x = (*norm1)(Add(src, sa_block(src)));
  return (*norm2)(Add(x, ff_block(x)));
}

TransformerEncoder::TransformerEncoder(const TransformerEncoderLayerOptions& layer, int64_t num_layers,
                                       bool final_norm, Generator& init) {
  LOCKSTEP_REQUIRE(num_layers > 0, "TransformerEncoder: num_layers must be positive, got " << num_layers);
  layers = RegisterModule("layers", std::make_shared<Sequential>());
  for (int64_t i = 0; i < num_layers; ++i) layers->Add(std::make_shared<TransformerEncoderLayer>(layer, init));
  if (final_norm) norm = RegisterModule("norm", std::make_shared<LayerNorm>(layer.d_model, layer.layer_norm_eps));
}

TransformerEncoder::TransformerEncoder(std::shared_ptr<Sequential> layers_in, std::shared_ptr<LayerNorm> norm_in) {
  LOCKSTEP_REQUIRE(layers_in != nullptr, "TransformerEncoder: expected the layers");
  layers = RegisterModule("layers", std::move(layers_in));
  if (norm_in) norm = RegisterModule("norm", std::move(norm_in));
}

Tensor TransformerEncoder::Encode(const Tensor& src, const AttentionMasks& masks) {
  const bool masked = masks.attn_mask.defined() || masks.key_padding_mask.defined();
  Tensor x = src;
  for (size_t i = 0; i < layers->size(); ++i) {
    Module& layer = (*layers)[i];
    auto* encoder_layer = dynamic_cast<TransformerEncoderLayer*>(&layer);
    LOCKSTEP_REQUIRE(!masked || encoder_layer != nullptr,
                     "TransformerEncoder: layer " << i << " is a " << layer.Name()
                                                  << ", which takes no masks; expected a TransformerEncoderLayer");
    x = masked ? encoder_layer->Encode(x, masks) : layer(x);
  }
  return norm ? (*norm)(x) : x;
}

}  // namespace nn
}  // namespace lockstep
