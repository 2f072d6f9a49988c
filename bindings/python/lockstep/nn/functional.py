"""torch.nn.functional's names over the engine's ops (core/ops.h): the same contract, the same bits
as the modules that use them."""
from .. import _C
from .._errors import ArgumentError
from .modules import _output_size, _pair, _unsupported

relu = _C.relu
tanh = _C.tanh
sigmoid = _C.sigmoid
softmax = _C.softmax
log_softmax = _C.log_softmax
embedding = _C.embedding


def gelu(input, approximate="none"):
    """GELU: approximate='none' (erf form) or 'tanh'."""
    return _C.gelu(input, approximate)


def linear(input, weight, bias=None):
    """input [..., in] x weight [out, in]^T + bias [out]."""
    return _C.linear(input, weight, bias)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution, any kernel shape; padding in ints (zeros)."""
    return _C.conv2d(input, weight, bias, _pair(stride, "conv2d", "stride"), _pair(padding, "conv2d", "padding"),
                     _pair(dilation, "conv2d", "dilation"), groups)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """2-D transposed convolution (the input gradient of conv2d, by the same kernel), any kernel shape;
    weight [C_in, C_out / groups, kh, kw]."""
    w = "conv_transpose2d"
    return _C.conv_transpose2d(input, weight, bias, _pair(stride, w, "stride"), _pair(padding, w, "padding"),
                               _pair(output_padding, w, "output_padding"), groups, _pair(dilation, w, "dilation"))


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max pooling; ceil_mode with PyTorch's output size (dilation 1, no indices)."""
    _unsupported("max_pool2d", dilation=(dilation, 1), return_indices=(return_indices, False))
    k = _pair(kernel_size, "max_pool2d", "kernel_size")
    return _C.max_pool2d(input, k, k if stride is None else _pair(stride, "max_pool2d", "stride"),
                         _pair(padding, "max_pool2d", "padding"), bool(ceil_mode))


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to ``output_size`` with PyTorch's windows (each the mean of its elements)."""
    h, w = _output_size(output_size, "adaptive_avg_pool2d")
    return _C.adaptive_avg_pool2d(input, h or input.shape[-2], w or input.shape[-1])


def channel_shuffle(input, groups):
    """[N, C, ...] -> [N, g, C/g, ...] transposed to [N, C/g, g, ...], flattened back."""
    return _C.channel_shuffle(input, int(groups))


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """min(max(x, min_val), max_val); gradient 0 at and beyond the bounds."""
    return _C.hardtanh(input, float(min_val), float(max_val))


def relu6(input, inplace=False):
    """hardtanh(x, 0, 6)."""
    return _C.relu6(input)


def silu(input, inplace=False):
    """x * sigmoid(x)."""
    return _C.silu(input)


def hardsigmoid(input, inplace=False):
    """min(max(x + 3, 0), 6) / 6."""
    return _C.hardsigmoid(input)


def hardswish(input, inplace=False):
    """x * min(max(x + 3, 0), 6) / 6."""
    return _C.hardswish(input)


def stochastic_depth(input, p, mode, training=True, generator=None):
    """torchvision.ops.stochastic_depth: rows (mode='row') or the batch ('batch') zeroed with
    probability p, the rest scaled by 1 / (1 - p); masks from ``generator``, else the default
    stream "dropout" (manual_seed)."""
    return _C.stochastic_depth(input, float(p), mode, bool(training), generator)


def avg_pool2d(input, kernel_size, stride=None, padding=0):
    k = _pair(kernel_size, "avg_pool2d", "kernel_size")
    return _C.avg_pool2d(input, k, k if stride is None else _pair(stride, "avg_pool2d", "stride"),
                         _pair(padding, "avg_pool2d", "padding"))


def dropout(input, p=0.5, training=True, generator=None):
    """Inverted dropout; masks from ``generator``, else the default stream "dropout" (manual_seed)."""
    return _C.dropout(input, float(p), bool(training), generator)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    dims = 1 if isinstance(normalized_shape, int) else len(normalized_shape)
    return _C.layer_norm(input, dims, weight, bias, float(eps))


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    return _C.batch_norm(input, running_mean, running_var, weight, bias, bool(training), float(momentum), float(eps))


def _no_weight(weight, where):
    if weight is not None:
        raise ArgumentError("%s: class weights are not supported" % where)


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """Cross-entropy of logits [N, C] against int64 class indices [N]."""
    _no_weight(weight, "cross_entropy")
    return _C.cross_entropy(input, target, reduction, ignore_index, float(label_smoothing))


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    _no_weight(weight, "nll_loss")
    return _C.nll_loss(input, target, reduction, ignore_index)


def mse_loss(input, target, reduction="mean"):
    return _C.mse_loss(input, target, reduction)


def flatten(input, start_dim=0, end_dim=-1):
    return input.flatten(start_dim, end_dim)
