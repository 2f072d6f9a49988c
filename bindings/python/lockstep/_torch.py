"""PyTorch models in, lockstep modules out (and state dicts back).

``from_torch_module(module)`` builds the same tree of lockstep modules, with PyTorch's module and
parameter names, and copies every parameter and buffer's value; from then on the model computes
with lockstep's kernels (same bits everywhere). A module lockstep cannot compute exactly as PyTorch
defines it is an error naming its class and path, never a silent fallback to PyTorch. torch is
imported only here, when called: it is an optional dependency.

Dropout streams: every Dropout (including MultiheadAttention's, as its child ``dropout``) draws
its masks from the Philox stream "dropout/<module path>" under ``seed`` (docs/python.md); a model
built with the C++ API and passed to SeedDropoutStreams (core/nn/attention.h) draws the same.
"""

import copy

from . import _C
from ._errors import ArgumentError
from ._tensor import Tensor, from_numpy
from . import nn
from ._fx import convert_custom


def _where(path):
    return "the model itself" if path == "" else "'%s'" % path


class _Converter:
    def __init__(self, torch):
        self.torch, self.tnn = torch, torch.nn
        self.gen = _C.Generator(0, "from_torch_module")  # initial values are overwritten by torch's
        t = torch.nn
        self.table = {
            t.Sequential: self.sequential, t.ModuleList: self.module_list, t.Identity: lambda m, p: nn.Identity(),
            t.Linear: self.linear, t.modules.linear.NonDynamicallyQuantizableLinear: self.linear,
            t.Conv2d: self.conv2d, t.ConvTranspose2d: self.conv_transpose2d, t.RNN: self.recurrent,
            t.LSTM: self.recurrent, t.GRU: self.recurrent, t.MaxPool2d: self.max_pool2d, t.AvgPool2d: self.avg_pool2d,
            t.BatchNorm1d: self.batch_norm, t.BatchNorm2d: self.batch_norm, t.LayerNorm: self.layer_norm,
            t.Embedding: self.embedding, t.Dropout: lambda m, p: nn.Dropout(m.p, generator=self.gen),
            t.ReLU: lambda m, p: nn.ReLU(), t.Tanh: lambda m, p: nn.Tanh(), t.Sigmoid: lambda m, p: nn.Sigmoid(),
            t.GELU: lambda m, p: nn.GELU(m.approximate), t.Softmax: self.softmax, t.LogSoftmax: self.softmax,
            t.Flatten: lambda m, p: nn.Flatten(m.start_dim, m.end_dim),
            t.MultiheadAttention: self.attention, t.TransformerEncoderLayer: self.encoder_layer,
            t.TransformerEncoder: self.encoder,
        }

    def convert(self, m, path):
        build = self.table.get(type(m))
        if build is None and not type(m).__module__.startswith("torch."):
            return convert_custom(self, m, path, _where(path))  # a forward of its own: torch.fx reads it
        if build is None:
            names = sorted({c.__name__ for c in self.table})
            raise ArgumentError("from_torch_module: %s is a %s.%s, which lockstep cannot convert (it converts %s, "
                                "Sequential/ModuleList trees of them, and modules whose forward calls them)" % (
                                    _where(path), type(m).__module__, type(m).__name__, ", ".join(names)))
        try:
            return build(m, path)
        except ArgumentError as e:
            if str(e).startswith("from_torch_module:"):
                raise
            raise ArgumentError("from_torch_module: %s (%s): %s" % (_where(path), type(m).__name__, e)) from None

    def _children(self, m, path, target):
        for name, child in m.named_children():
            target.add_module(name, self.convert(child, path + ("." if path else "") + name))
        return target

    def sequential(self, m, path):
        return self._children(m, path, nn.Sequential())

    def module_list(self, m, path):
        return self._children(m, path, nn.ModuleList())

    def linear(self, m, path):
        return nn.Linear(m.in_features, m.out_features, bias=m.bias is not None, generator=self.gen)

    def conv2d(self, m, path):
        return nn.Conv2d(m.in_channels, m.out_channels, m.kernel_size, stride=m.stride, padding=m.padding,
                         dilation=m.dilation, groups=m.groups, bias=m.bias is not None, padding_mode=m.padding_mode,
                         generator=self.gen)

    def conv_transpose2d(self, m, path):
        if m.output_padding and not isinstance(m.output_padding, tuple):
            raise ArgumentError("ConvTranspose2d at %s: output_padding %r" % (path, m.output_padding))
        return nn.ConvTranspose2d(m.in_channels, m.out_channels, m.kernel_size, stride=m.stride, padding=m.padding,
                                  output_padding=m.output_padding, groups=m.groups, bias=m.bias is not None,
                                  dilation=m.dilation, padding_mode=m.padding_mode, generator=self.gen)

    def recurrent(self, m, path):
        common = dict(num_layers=m.num_layers, bias=m.bias, batch_first=m.batch_first, dropout=m.dropout,
                      bidirectional=m.bidirectional, generator=self.gen)
        if isinstance(m, self.tnn.LSTM):
            return nn.LSTM(m.input_size, m.hidden_size, proj_size=m.proj_size, **common)
        if isinstance(m, self.tnn.GRU):
            return nn.GRU(m.input_size, m.hidden_size, **common)
        return nn.RNN(m.input_size, m.hidden_size, nonlinearity=m.nonlinearity, **common)

    def max_pool2d(self, m, path):
        return nn.MaxPool2d(m.kernel_size, m.stride, m.padding, m.dilation, m.return_indices, m.ceil_mode)

    def avg_pool2d(self, m, path):
        return nn.AvgPool2d(m.kernel_size, m.stride, m.padding, m.ceil_mode, m.count_include_pad, m.divisor_override)

    def batch_norm(self, m, path):
        cls = nn.BatchNorm1d if isinstance(m, self.tnn.BatchNorm1d) else nn.BatchNorm2d
        return cls(m.num_features, m.eps, m.momentum, m.affine, m.track_running_stats)

    def layer_norm(self, m, path):
        if not m.elementwise_affine:
            return nn.LayerNorm(m.normalized_shape, m.eps, elementwise_affine=False)
        return nn.LayerNorm(m.normalized_shape, m.eps, bias=m.bias is not None)

    def embedding(self, m, path):
        return nn.Embedding(m.num_embeddings, m.embedding_dim, m.padding_idx, m.max_norm, m.norm_type,
                            m.scale_grad_by_freq, m.sparse, generator=self.gen)

    def softmax(self, m, path):
        cls = nn.Softmax if isinstance(m, self.tnn.Softmax) else nn.LogSoftmax
        return cls(m.dim)

    def attention(self, m, path):
        if not m._qkv_same_embed_dim:
            raise ArgumentError("kdim/vdim other than embed_dim are not supported")
        return nn.MultiheadAttention(m.embed_dim, m.num_heads, m.dropout, bias=m.in_proj_bias is not None,
                                     add_bias_kv=m.bias_k is not None, add_zero_attn=m.add_zero_attn,
                                     batch_first=m.batch_first, generator=self.gen)

    def encoder_layer(self, m, path):
        F = self.torch.nn.functional
        act = m.activation
        if act is F.relu or isinstance(act, self.tnn.ReLU):
            activation = "relu"
        elif act is F.gelu or (isinstance(act, self.tnn.GELU) and act.approximate == "none"):
            activation = "gelu"
        else:
            raise ArgumentError("the activation %r is not supported (relu or gelu)" % (act,))
        rates = {m.dropout.p, m.dropout1.p, m.dropout2.p, m.self_attn.dropout}
        if len(rates) != 1:
            raise ArgumentError("its dropout layers have different rates %s; lockstep's layer uses one" % sorted(rates))
        for name in ("linear1", "linear2"):
            if getattr(m, name).bias is None:
                raise ArgumentError("%s has no bias; lockstep's layer has biases" % name)
        if not m.norm1.elementwise_affine or m.norm1.eps != m.norm2.eps:
            raise ArgumentError("norm1 and norm2 must be affine LayerNorms with the same eps")
        self.attention(m.self_attn, path + ".self_attn")  # its own checks (bias, kdim, ...)
        if m.self_attn.in_proj_bias is None:
            raise ArgumentError("self_attn without biases is not supported")
        return nn.TransformerEncoderLayer(m.self_attn.embed_dim, m.self_attn.num_heads, m.linear1.out_features,
                                          rates.pop(), activation, m.norm1.eps, m.self_attn.batch_first,
                                          m.norm_first, generator=self.gen)

    def encoder(self, m, path):
        layers = self._children(m.layers, path + ("." if path else "") + "layers", nn.Sequential())
        norm = None if m.norm is None else self.convert(m.norm, path + ("." if path else "") + "norm")
        out = nn.TransformerEncoder.__new__(nn.TransformerEncoder)
        _C.nn.TransformerEncoder._cinit(out, layers, norm)
        return out


def _state(torch_module, torch):
    out = {}
    for name, t in torch_module.state_dict().items():
        if t.is_floating_point() and t.dtype != torch.float32:
            raise ArgumentError("from_torch_module: '%s' is %s; lockstep models are float32 (call .float() first)"
                                % (name, t.dtype))
        out[name] = from_numpy(t.detach().cpu().numpy())
    return out


def _skeleton(module, torch):
    """A copy of ``module`` whose state_dict tensors are on the meta device (no memory): what
    lockstep.export records the aten program from, for a model converted module by module, once
    the converted model's values are put back in (_export.py)."""
    memo = {}
    for t in module.state_dict(keep_vars=True).values():
        if id(t) not in memo:
            meta = torch.empty_like(t, device="meta")
            memo[id(t)] = torch.nn.Parameter(meta, t.requires_grad) if isinstance(t, torch.nn.Parameter) else meta
    return copy.deepcopy(module, memo)


def from_torch_module(module, seed=None, example_inputs=None):
    """A lockstep module computing what the torch.nn.Module ``module`` computes, with the same
    parameter and buffer names and values (tied parameters stay one), in the same training mode.

    Two routes, chosen here: a tree of lockstep modules with the same module names where every
    module is one lockstep has (Sequential, ModuleList, Identity, Linear, Conv2d, MaxPool2d,
    AvgPool2d, BatchNorm1d/2d, LayerNorm, Embedding, Dropout, ReLU, GELU, Tanh, Sigmoid, Softmax,
    LogSoftmax, Flatten, MultiheadAttention, TransformerEncoder(Layer), and forwards of their own
    that torch.fx reads: lockstep/_fx.py); otherwise the aten route (lockstep/_aten.py): the
    forward recorded at the level of aten operations, whatever Python it takes, in each mode at
    the first call in that mode, from that call's inputs (or from ``example_inputs``, a tensor or
    tuple of torch tensors, recorded here so that a refusal shows now). A recorded model takes any
    batch size. An operation lockstep cannot compute is an ArgumentError naming the aten op and
    the module path; a converted model never runs PyTorch.

    Dropout (and StochasticDepth) masks come from the streams "dropout/<module path>" under
    ``seed`` (default: lockstep.initial_seed(), i.e. manual_seed's)."""
    import torch
    if not isinstance(module, torch.nn.Module):
        raise TypeError("from_torch_module: expected a torch.nn.Module, got %s" % type(module).__name__)
    seed = _C.initial_seed() if seed is None else int(seed)
    # The state_dict's per-module versions, which some modules' loading reads (MNASNet's):
    # to_torch_state_dict gives them back.
    metadata = copy.deepcopy(getattr(module.state_dict(keep_vars=True), "_metadata", None))
    try:
        out = _Converter(torch).convert(module, "")
    except ArgumentError:
        from . import _aten
        out = _aten.prepare(module, seed)
        out.__dict__["_torch_metadata"] = metadata
        if example_inputs is not None:
            _aten.record(out, example_inputs if isinstance(example_inputs, tuple) else (example_inputs,),
                         bool(module.training))
        return out
    out.__dict__["_torch_metadata"] = metadata
    out.load_state_dict(_state(module, torch))
    nn.seed_dropout_streams(out, seed)
    # For lockstep.export: the module's structure without its values, and the first call's inputs.
    out.__dict__["_torch_skeleton"] = _skeleton(module, torch)
    out.__dict__["_export_seed"] = seed
    if example_inputs is not None:
        out.__dict__["_export_example"] = tuple(
            t.detach().clone() for t in (example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)))
    modes = dict(module.named_modules())
    for path, m in out.named_modules():
        if path in modes:
            m._set_training(modes[path].training)
    return out


def to_torch_state_dict(model):
    """The model's parameters and buffers as torch tensors by name (copies), for
    torch_module.load_state_dict."""
    import collections
    import torch
    if not isinstance(model, nn.Module):
        raise TypeError("to_torch_state_dict: expected a lockstep.nn.Module, got %s" % type(model).__name__)
    out = collections.OrderedDict((name, torch.from_numpy(t.numpy().copy())) for name, t in model.state_dict().items())
    metadata = model.__dict__.get("_torch_metadata")
    if metadata is not None:
        out._metadata = copy.deepcopy(metadata)
    return out
