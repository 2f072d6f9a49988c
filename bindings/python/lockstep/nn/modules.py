"""The layers with PyTorch's constructor signatures, defaults and parameter names.

Each class is the engine's (lockstep._C.nn.X): this module gives it PyTorch's arguments, checks
them, and refuses options the engine does not implement (an ArgumentError naming the option)
rather than ignoring them. Initial values come from ``generator`` or the default stream "init"
under lockstep.manual_seed's seed, drawn in construction order, so a model built twice after the
same manual_seed has the same hash everywhere.
"""
import collections

from .. import _C
from .._errors import ArgumentError
from .._tensor import Tensor, float32, tensor
from ._module import Module, children_of, extend

C = _C.nn


def _factory(where, device, dtype):
    if dtype not in (None, float32):
        raise ArgumentError("%s: parameters are float32, got dtype=%r" % (where, dtype))
    if device not in (None, _C._current_device()):
        raise ArgumentError("%s: modules are built on the current device (%s), got device=%r; make it current "
                            "with lockstep.device(...)" % (where, _C._current_device(), device))


def _pair(value, where, name):
    if isinstance(value, int):
        return (value, value)
    try:
        a, b = value
        return (int(a), int(b))
    except (TypeError, ValueError):
        raise TypeError("%s: %s must be an int or a pair of ints, got %r" % (where, name, value)) from None


def _unsupported(where, **options):
    """Refuses every option whose value is not the default given as (value, default)."""
    for name, (value, default) in options.items():
        if value != default:
            raise ArgumentError("%s: %s=%r is not supported (only %r)" % (where, name, value, default))


@extend(C.Linear)
class Linear:
    """y = x W^T + b over the last dimension of an input of any rank: weight [out, in], bias [out]."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None, generator=None):
        _factory("Linear", device, dtype)
        C.Linear._cinit(self, in_features, out_features, bool(bias), generator)

    in_features = property(lambda self: self.weight.shape[1])
    out_features = property(lambda self: self.weight.shape[0])

    def extra_repr(self):
        return "in_features=%d, out_features=%d, bias=%s" % (self.in_features, self.out_features,
                                                             self._own_tensor("bias") is not None)


@extend(C.Conv2d)
class Conv2d:
    """2-D convolution over [N, C, H, W]: square kernels; stride, padding ('same', 'valid' or
    ints), dilation and groups as in PyTorch; zero padding."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None, generator=None):
        _factory("Conv2d", device, dtype)
        _unsupported("Conv2d", padding_mode=(padding_mode, "zeros"))
        kh, kw = _pair(kernel_size, "Conv2d", "kernel_size")
        if kh != kw:
            raise ArgumentError("Conv2d: kernel_size (%d, %d) is not square; the Conv2d module takes square kernels "
                                "(lockstep.nn.functional.conv2d takes any)" % (kh, kw))
        stride, dilation = _pair(stride, "Conv2d", "stride"), _pair(dilation, "Conv2d", "dilation")
        if isinstance(padding, str):
            padding = _padding_for(padding, kh, stride, dilation)
        C.Conv2d._cinit(self, in_channels, out_channels, kh, stride, _pair(padding, "Conv2d", "padding"), dilation,
                        groups, bool(bias), generator)

    in_channels = property(lambda self: self.weight.shape[1] * self.groups)
    out_channels = property(lambda self: self.weight.shape[0])
    kernel_size = property(lambda self: tuple(self.weight.shape[2:]))
    stride = property(lambda self: self._options()[0])
    padding = property(lambda self: self._options()[1])
    dilation = property(lambda self: self._options()[2])
    groups = property(lambda self: self._options()[3])

    def extra_repr(self):
        return "%d, %d, kernel_size=%s, stride=%s, padding=%s, dilation=%s, groups=%d" % (
            self.in_channels, self.out_channels, self.kernel_size, self.stride, self.padding, self.dilation,
            self.groups)


@extend(C.ConvTranspose2d)
class ConvTranspose2d:
    """2-D transposed convolution over [N, C, H, W] (PyTorch's ConvTranspose2d: weight [in, out /
    groups, k, k]): square kernels; stride, padding, output_padding, groups and dilation as in
    PyTorch; zero padding."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None, generator=None):
        w = "ConvTranspose2d"
        _factory(w, device, dtype)
        _unsupported(w, padding_mode=(padding_mode, "zeros"))
        kh, kw = _pair(kernel_size, w, "kernel_size")
        if kh != kw:
            raise ArgumentError("ConvTranspose2d: kernel_size (%d, %d) is not square; the module takes square kernels "
                                "(lockstep.nn.functional.conv_transpose2d takes any)" % (kh, kw))
        C.ConvTranspose2d._cinit(self, in_channels, out_channels, kh, _pair(stride, w, "stride"),
                                 _pair(padding, w, "padding"), _pair(output_padding, w, "output_padding"), groups,
                                 bool(bias), _pair(dilation, w, "dilation"), generator)

    in_channels = property(lambda self: self.weight.shape[0])
    out_channels = property(lambda self: self.weight.shape[1] * self.groups)
    kernel_size = property(lambda self: tuple(self.weight.shape[2:]))
    stride = property(lambda self: self._options()[0])
    padding = property(lambda self: self._options()[1])
    output_padding = property(lambda self: self._options()[2])
    groups = property(lambda self: self._options()[3])
    dilation = property(lambda self: self._options()[4])

    def extra_repr(self):
        return "%d, %d, kernel_size=%s, stride=%s, padding=%s, output_padding=%s, groups=%d, dilation=%s" % (
            self.in_channels, self.out_channels, self.kernel_size, self.stride, self.padding, self.output_padding,
            self.groups, self.dilation)


def _padding_for(mode, k, stride, dilation):
    if mode == "valid":
        return (0, 0)
    if mode != "same":
        raise ArgumentError("Conv2d: padding must be 'same', 'valid' or ints, got %r" % mode)
    if stride != (1, 1):
        raise ArgumentError("Conv2d: padding='same' needs stride 1, got %s" % (stride,))
    pads = []
    for d in dilation:
        total = d * (k - 1)
        if total % 2:
            raise ArgumentError("Conv2d: padding='same' would pad unevenly here (dilation %d, kernel %d)" % (d, k))
        pads.append(total // 2)
    return tuple(pads)


def _pool_init(cls, where, self, kernel_size, stride, padding):
    k = _pair(kernel_size, where, "kernel_size")
    s = k if stride is None else _pair(stride, where, "stride")
    cls._cinit(self, k, s, _pair(padding, where, "padding"))


@extend(C.MaxPool2d)
class MaxPool2d:
    """Max pooling over [N, C, H, W] (the first maximum in window order, NaN propagated). With
    ceil_mode, PyTorch's output size: windows past the end take the maximum of their positions
    inside the input, and the last window starts inside the input or its left padding."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        _unsupported("MaxPool2d", dilation=(dilation, 1), return_indices=(return_indices, False))
        k = _pair(kernel_size, "MaxPool2d", "kernel_size")
        s = k if stride is None else _pair(stride, "MaxPool2d", "stride")
        C.MaxPool2d._cinit(self, k, s, _pair(padding, "MaxPool2d", "padding"), bool(ceil_mode))

    kernel_size = property(lambda self: self._options()[0])
    stride = property(lambda self: self._options()[1])
    padding = property(lambda self: self._options()[2])

    def extra_repr(self):
        return "kernel_size=%s, stride=%s, padding=%s, ceil_mode=%s" % (self._options() + (self.ceil_mode,))


def _output_size(value, where):
    """PyTorch's output_size: an int, or a pair whose entries may be None (the input's size: 0 here)."""
    pair = (value, value) if value is None or isinstance(value, int) else tuple(value)
    if len(pair) != 2 or any(v is not None and (not isinstance(v, int) or v < 1) for v in pair):
        raise ArgumentError("%s: output_size must be an int >= 1 or a pair of them (or None), got %r" % (where, value))
    return tuple(0 if v is None else v for v in pair)


@extend(C.AdaptiveAvgPool2d)
class AdaptiveAvgPool2d:
    """Average pooling of [N, C, H, W] or [C, H, W] to ``output_size`` with PyTorch's windows: rows
    floor(i*H/out) .. ceil((i+1)*H/out), columns alike, each the mean of its elements (output 1:
    one mean over H and W; sizes that divide: average pooling with kernel = stride = in/out)."""

    def __init__(self, output_size):
        C.AdaptiveAvgPool2d._cinit(self, *_output_size(output_size, "AdaptiveAvgPool2d"))
        self.output_size = output_size

    def extra_repr(self):
        return "output_size=%s" % (self.__dict__.get("output_size", "?"),)


@extend(C.ChannelShuffle)
class ChannelShuffle:
    """Divides the channels of [N, C, ...] into ``groups`` and interleaves them: [N, g, C/g, ...]
    transposed to [N, C/g, g, ...] (torch.nn.ChannelShuffle, ShuffleNet)."""

    def __init__(self, groups):
        C.ChannelShuffle._cinit(self, int(groups))

    def extra_repr(self):
        return "groups=%d" % self.groups


@extend(C.AvgPool2d)
class AvgPool2d:
    """Average pooling over [N, C, H, W], padding counted (PyTorch's default)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        _unsupported("AvgPool2d", ceil_mode=(ceil_mode, False), count_include_pad=(count_include_pad, True),
                     divisor_override=(divisor_override, None))
        _pool_init(C.AvgPool2d, "AvgPool2d", self, kernel_size, stride, padding)

    kernel_size = property(lambda self: self._options()[0])
    stride = property(lambda self: self._options()[1])
    padding = property(lambda self: self._options()[2])

    def extra_repr(self):
        return "kernel_size=%s, stride=%s, padding=%s" % self._options()


@extend(C.ReLU)
class ReLU:
    """max(x, 0); ``inplace`` is accepted and has no effect (results are new tensors)."""

    def __init__(self, inplace=False):
        C.ReLU._cinit(self)


@extend(C.GELU)
class GELU:
    """GELU: approximate='none' (the erf form) or 'tanh'."""

    def __init__(self, approximate="none"):
        if approximate not in ("none", "tanh"):
            raise ArgumentError("GELU: approximate must be 'none' or 'tanh', got %r" % (approximate,))
        C.GELU._cinit(self, approximate == "tanh")
        self.approximate = approximate


@extend(C.Hardtanh)
class Hardtanh:
    """min(max(x, min_val), max_val), NaN kept; the gradient is 0 at and beyond the bounds
    (PyTorch's). ``inplace`` is accepted and has no effect."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        if min_val > max_val:
            raise ArgumentError("Hardtanh: min_val %r is above max_val %r" % (min_val, max_val))
        C.Hardtanh._cinit(self, float(min_val), float(max_val))
        self.min_val, self.max_val = float(min_val), float(max_val)


@extend(C.ReLU6)
class ReLU6:
    """min(max(x, 0), 6) (hardtanh(x, 0, 6)); the gradient is 0 at and beyond 0 and 6, as PyTorch's."""

    def __init__(self, inplace=False):
        C.ReLU6._cinit(self)


@extend(C.SiLU)
class SiLU:
    """x * sigmoid(x) (the sigmoid correctly rounded, then one multiplication)."""

    def __init__(self, inplace=False):
        C.SiLU._cinit(self)


@extend(C.Hardsigmoid)
class Hardsigmoid:
    """min(max(x + 3, 0), 6) / 6; the gradient is 1/6 for -3 < x < 3, else 0 (PyTorch's)."""

    def __init__(self, inplace=False):
        C.Hardsigmoid._cinit(self)


@extend(C.Hardswish)
class Hardswish:
    """x * min(max(x + 3, 0), 6) / 6; the gradient is 0 below -3, x/3 + 1/2 from -3 to 3, 1 above."""

    def __init__(self, inplace=False):
        C.Hardswish._cinit(self)


@extend(C.Tanh)
class Tanh:
    def __init__(self):
        C.Tanh._cinit(self)


@extend(C.Sigmoid)
class Sigmoid:
    def __init__(self):
        C.Sigmoid._cinit(self)


@extend(C.Identity)
class Identity:
    """Returns its input (arguments are ignored, as in PyTorch)."""

    def __init__(self, *args, **kwargs):
        C.Identity._cinit(self)


def _dim_module(cls, where):
    def __init__(self, dim=None):
        if dim is None:
            raise ArgumentError("%s: give dim (PyTorch's implicit choice is deprecated)" % where)
        cls._cinit(self, int(dim))
        self.dim = int(dim)
    return __init__


@extend(C.Softmax)
class Softmax:
    """softmax over ``dim``."""
    __init__ = _dim_module(C.Softmax, "Softmax")


@extend(C.LogSoftmax)
class LogSoftmax:
    """log-softmax over ``dim``."""
    __init__ = _dim_module(C.LogSoftmax, "LogSoftmax")


@extend(C.Flatten)
class Flatten:
    """Flattens dimensions start_dim..end_dim (default: all but the batch dimension)."""

    def __init__(self, start_dim=1, end_dim=-1):
        C.Flatten._cinit(self, start_dim, end_dim)
        self.start_dim, self.end_dim = start_dim, end_dim


@extend(C.Dropout)
class Dropout:
    """Inverted dropout: in training, each element is kept with probability 1 - p and scaled by
    1 / (1 - p). Masks come from ``generator``, or else from a stream of its own: the k-th Dropout
    made without a generator since manual_seed draws from "dropout/k" (as the npm package's).
    from_torch_module and lockstep.nn.seed_dropout_streams name streams by module path instead
    ("dropout/<path>", docs/python.md)."""

    def __init__(self, p=0.5, inplace=False, generator=None):
        C.Dropout._cinit(self, float(p), generator)
        self.p = float(p)

    def extra_repr(self):
        p = self.__dict__.get("p")
        return "" if p is None else "p=%g" % p


@extend(C.StochasticDepth)
class StochasticDepth:
    """torchvision.ops.StochasticDepth(p, mode): in training, each sample (mode='row') or the whole
    batch (mode='batch') is zeroed with probability p and the rest scaled by 1 / (1 - p); identity
    in eval mode or when p == 0. A Dropout for its masks: they come from ``generator`` or from the
    next default stream "dropout/k" (the Dropout layers' count), and from_torch_module and
    lockstep.nn.seed_dropout_streams name its stream "dropout/<module path>". One Philox word is
    drawn per sample (row) or per call (batch)."""

    def __init__(self, p, mode, generator=None):
        if mode not in ("row", "batch"):
            raise ArgumentError("StochasticDepth: mode must be 'row' or 'batch', got %r" % (mode,))
        if not 0.0 <= float(p) <= 1.0:
            raise ArgumentError("StochasticDepth: p must be in [0, 1], got %r" % (p,))
        C.StochasticDepth._cinit(self, float(p), mode, generator)
        self.p, self.mode = float(p), mode

    def extra_repr(self):
        return "p=%s, mode=%s" % (self.__dict__.get("p", "?"), self.__dict__.get("mode", "?"))


@extend(C.LayerNorm)
class LayerNorm:
    """Layer normalisation over the last dimension (weight and bias of that size)."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        _factory("LayerNorm", device, dtype)
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        if len(shape) != 1:
            raise ArgumentError("LayerNorm: only a normalized_shape of one dimension is supported, got %s" % (shape,))
        C.LayerNorm._cinit(self, shape[0], float(eps), bool(elementwise_affine), bool(bias))
        self.normalized_shape, self.eps = shape, float(eps)

    def extra_repr(self):
        return "%s, eps=%s" % (self.__dict__.get("normalized_shape", "?"), self.__dict__.get("eps", "?"))


def _batch_norm_init(cls, where):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None):
        _factory(where, device, dtype)
        _unsupported(where, affine=(affine, True), track_running_stats=(track_running_stats, True))
        if momentum is None:
            raise ArgumentError("%s: momentum=None (a cumulative average) is not supported" % where)
        cls._cinit(self, num_features, float(eps), float(momentum))
        self.num_features, self.eps, self.momentum = num_features, float(eps), float(momentum)
    return __init__


@extend(C.BatchNorm1d)
class BatchNorm1d:
    """Batch normalisation of [N, C]; running statistics in running_mean, running_var."""
    __init__ = _batch_norm_init(C.BatchNorm1d, "BatchNorm1d")


@extend(C.BatchNorm2d)
class BatchNorm2d:
    """Batch normalisation of [N, C, H, W]; running statistics in running_mean, running_var."""
    __init__ = _batch_norm_init(C.BatchNorm2d, "BatchNorm2d")


@extend(C.Embedding)
class Embedding:
    """A table of num_embeddings vectors: int64 indices [...] -> [..., embedding_dim]; normal(0, 1)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, device=None, dtype=None, generator=None):
        _factory("Embedding", device, dtype)
        _unsupported("Embedding", padding_idx=(padding_idx, None), max_norm=(max_norm, None),
                     scale_grad_by_freq=(scale_grad_by_freq, False), sparse=(sparse, False))
        C.Embedding._cinit(self, num_embeddings, embedding_dim, generator)
        if _weight is not None:
            self.weight.copy_(_weight.detach())


def _add_children(self, modules):
    if len(modules) == 1 and isinstance(modules[0], collections.OrderedDict):
        for name, m in modules[0].items():
            self.add_module(name, m)
    else:
        for m in modules:
            self.append(m)


def _index_children(self, index):
    children = list(children_of(self).values())
    if isinstance(index, slice):
        return type(self)(*children[index]) if isinstance(self, C.Sequential) else children[index]
    return children[index]


@extend(C.Sequential)
class Sequential:
    """Modules applied in order, named "0", "1", ... (or by the keys of an OrderedDict)."""

    def __init__(self, *modules):
        C.Sequential._cinit(self)
        _add_children(self, modules)

    def append(self, module):
        if not isinstance(module, Module):
            raise TypeError("Sequential.append: expected a lockstep.nn.Module, got %s" % type(module).__name__)
        children = children_of(self)
        name = str(len(children))
        self._append(module)
        children[name] = module
        return self

    __getitem__ = _index_children
    __iter__ = lambda self: iter(list(children_of(self).values()))


@extend(C.ModuleList)
class ModuleList:
    """A list of modules registered as "0", "1", ...; its owner calls them."""

    def __init__(self, modules=None):
        C.ModuleList._cinit(self)
        for m in modules or ():
            self.append(m)

    def append(self, module):
        self.add_module(str(len(children_of(self))), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    __getitem__ = _index_children
    __len__ = lambda self: len(children_of(self))
    __iter__ = lambda self: iter(list(children_of(self).values()))


def to_mask(mask, where):
    """A mask as the engine takes it: float32 (added) or integer (nonzero: masked)."""
    if mask is None or isinstance(mask, Tensor):
        return mask
    import numpy as np
    array = np.asarray(mask)
    if array.dtype.kind == "b":
        array = array.astype(np.int32)
    elif array.dtype.kind == "f":
        array = array.astype(np.float32)
    else:
        raise TypeError("%s: a mask must be boolean or float, got dtype %s" % (where, array.dtype))
    return tensor(array, dtype=_C.dtype.int32 if array.dtype == np.int32 else float32)
