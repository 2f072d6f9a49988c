"""MultiheadAttention, TransformerEncoderLayer and TransformerEncoder with PyTorch's signatures
(core/nn/attention.h computes them with PyTorch's steps and parameter names)."""
from .. import _C
from .._errors import ArgumentError
from . import functional as F
from ._module import extend
from .modules import GELU, ReLU, Sequential, _factory, _unsupported, to_mask

C = _C.nn


@extend(C.MultiheadAttention)
class MultiheadAttention:
    """torch.nn.MultiheadAttention: in_proj_weight [3E, E], in_proj_bias [3E], out_proj (Linear).
    Inputs [L, N, E] ([N, L, E] with batch_first, [L, E] unbatched). Masks: boolean (True: not
    attended) or float (added); attn_mask [L, S] or [N * num_heads, L, S], key_padding_mask [N, S].
    The dropout on the attention weights is the child module ``dropout`` (its stream follows the
    Dropout rule)."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None, generator=None):
        _factory("MultiheadAttention", device, dtype)
        _unsupported("MultiheadAttention", add_bias_kv=(add_bias_kv, False), add_zero_attn=(add_zero_attn, False),
                     kdim=(kdim if kdim != embed_dim else None, None), vdim=(vdim if vdim != embed_dim else None, None))
        C.MultiheadAttention._cinit(self, embed_dim, num_heads, float(dropout), bool(bias), bool(batch_first), generator)

    embed_dim = property(lambda self: self._options()[0])
    num_heads = property(lambda self: self._options()[1])
    batch_first = property(lambda self: self._options()[4])

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        """(attn_output, attn_weights or None), as torch returns them."""
        if is_causal and attn_mask is None:
            raise ArgumentError("MultiheadAttention: is_causal needs the causal attn_mask itself")
        return self._attend(query, key, value, to_mask(key_padding_mask, "MultiheadAttention"), bool(need_weights),
                            to_mask(attn_mask, "MultiheadAttention"), bool(average_attn_weights))

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def extra_repr(self):
        return "embed_dim=%d, num_heads=%d, batch_first=%s" % (self.embed_dim, self.num_heads, self.batch_first)

    def _annotate_children(self, children):
        children["dropout"].__dict__["p"] = self._options()[2]


def _activation_name(activation):
    if isinstance(activation, str) and activation in ("relu", "gelu"):
        return activation
    if activation is F.relu or isinstance(activation, ReLU):
        return "relu"
    if activation is F.gelu or (isinstance(activation, GELU) and activation.__dict__.get("approximate") == "none"):
        return "gelu"
    raise ArgumentError("TransformerEncoderLayer: activation must be 'relu' or 'gelu' (or F.relu, F.gelu), got %r"
                        % (activation,))


@extend(C.TransformerEncoderLayer)
class TransformerEncoderLayer:
    """torch.nn.TransformerEncoderLayer: self_attn, linear1, dropout, linear2, norm1, norm2,
    dropout1, dropout2; post-norm (or norm_first); activation 'relu' or 'gelu'."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, device=None, dtype=None, generator=None):
        _factory("TransformerEncoderLayer", device, dtype)
        gelu = _activation_name(activation) == "gelu"
        C.TransformerEncoderLayer._cinit(self, d_model, nhead, dim_feedforward, float(dropout), gelu,
                                         float(layer_norm_eps), bool(batch_first), bool(norm_first), generator)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        if src_mask is None and src_key_padding_mask is None:
            return self._call(src)
        return self._encode(src, to_mask(src_mask, "TransformerEncoderLayer"),
                            to_mask(src_key_padding_mask, "TransformerEncoderLayer"))

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def extra_repr(self):
        o = self._options()
        return "d_model=%d, nhead=%d, dim_feedforward=%d, activation=%s, batch_first=%s, norm_first=%s" % (
            o[0], o[1], o[2], o[4], o[6], o[7])

    def _annotate_children(self, children):
        o = self._options()
        for name in ("dropout", "dropout1", "dropout2"):
            children[name].__dict__["p"] = o[3]
        for name in ("norm1", "norm2"):
            children[name].__dict__.update(normalized_shape=(o[0],), eps=o[5])


def _clone_layer(layer):
    """A new TransformerEncoderLayer with the same options and values (PyTorch deep-copies)."""
    d_model, nhead, ff, dropout, activation, eps, batch_first, norm_first = layer._options()
    copy = TransformerEncoderLayer(d_model, nhead, ff, dropout, activation, eps, batch_first, norm_first,
                                   generator=_C.Generator(0, "clone"))
    copy.load_state_dict(layer.state_dict())
    return copy


@extend(C.TransformerEncoder)
class TransformerEncoder:
    """torch.nn.TransformerEncoder: num_layers copies of encoder_layer as layers.0, layers.1, ...,
    then an optional final norm."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        if not isinstance(encoder_layer, C.TransformerEncoderLayer):
            raise TypeError("TransformerEncoder: expected a TransformerEncoderLayer, got %s"
                            % type(encoder_layer).__name__)
        if num_layers < 1:
            raise ArgumentError("TransformerEncoder: num_layers must be >= 1, got %d" % num_layers)
        layers = Sequential(*[_clone_layer(encoder_layer) for _ in range(num_layers)])
        C.TransformerEncoder._cinit(self, layers, norm)

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        if mask is None and src_key_padding_mask is None:
            return self._call(src)
        return self._encode(src, to_mask(mask, "TransformerEncoder"),
                            to_mask(src_key_padding_mask, "TransformerEncoder"))

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)
