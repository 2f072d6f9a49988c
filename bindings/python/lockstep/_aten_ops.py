"""The aten op table of the aten route (lockstep/_aten.py): each aten operation PyTorch's proxy-tensor
tracing records, as the lockstep op or composition of ops that computes it (``_OPS``), and the ops
the replay treats specially: in-place ops and the functional op each applies (``_INPLACE``), views,
ops whose tensor arguments give only a shape and a dtype, and random draws.
"""
import functools
import math
import operator

import numpy as np

from . import _C
from ._errors import ArgumentError
from ._tensor import TRIG as _TRIG, Tensor, float32, int32, int64
from .nn import functional as F


_INT = (int64, int32)


class _Unsupported(Exception):
    """An aten op's arguments lockstep does not compute (re-raised as ArgumentError naming the op)."""


def _refuse(message):
    raise _Unsupported(message)


# ---- values -------------------------------------------------------------------------------------

def _is_int(t):
    return isinstance(t, Tensor) and t.dtype in _INT


def _np(t):
    return t.detach().numpy() if isinstance(t, Tensor) else np.asarray(t)


def _from_np(a, floating=False):
    a = np.asarray(a)
    if floating or a.dtype.kind in "fb":
        return _C.from_numpy(np.array(a, dtype=np.float32))  # a C-ordered copy; 0-d stays 0-d
    return _C.from_numpy(np.array(a, dtype=np.int64))


def _dtype(torch_dtype):
    """lockstep's dtype for a torch dtype name ('float32', 'int64', 'bool', ...); bool -> float32 0/1."""
    name = str(torch_dtype).replace("torch.", "") if torch_dtype is not None else "float32"
    if name in ("float32", "float", "bool", "uint8"):
        return float32
    if name in ("int64", "long"):
        return int64
    if name in ("int32", "int"):
        return int32
    _refuse("dtype %s (lockstep computes float32, int64 and int32; booleans as float32 0/1)" % name)


def _zeros(shape, dtype=float32):
    return _C._zeros([int(s) for s in shape], dtype)


def _full(shape, value, dtype=float32):
    shape = [int(s) for s in shape]
    if dtype in _INT:
        return _from_np(np.full(shape, value, dtype=np.int64)).to(dtype)
    return _C._full(shape, float(value))


def _dims(dims, rank):
    if dims is None:
        return list(range(rank))
    if isinstance(dims, int):
        dims = [dims]
    return sorted({d % rank if rank else 0 for d in dims})


# ---- elementwise --------------------------------------------------------------------------------

_NP_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
              "eq": np.equal, "ne": np.not_equal, "gt": np.greater, "lt": np.less, "ge": np.greater_equal,
              "le": np.less_equal, "fmod": np.fmod, "remainder": np.remainder}


def _binary(name, a, b):
    """a (op) b for tensors and Python numbers with PyTorch's type promotion: float32 in the
    engine; integer tensors with integers exactly, in NumPy (comparisons give float32 0/1)."""
    ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
    floating = (ta and a.dtype == float32) or (tb and b.dtype == float32) or \
        isinstance(a, float) or isinstance(b, float)
    if not floating:  # integer tensors (and ints): exact in NumPy
        out = _NP_BINARY[name](_np(a), _np(b))
        return _from_np(out, floating=name == "div" or out.dtype == np.bool_)
    a = a.float() if ta and a.dtype != float32 else a
    b = b.float() if tb and b.dtype != float32 else b
    if name in ("add", "sub", "mul", "div"):
        if not ta:  # a number (op) a tensor
            rop = {"add": "__radd__", "sub": "__rsub__", "mul": "__rmul__", "div": "__rtruediv__"}[name]
            return getattr(b, rop)(float(a))
        op = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv}[name]
        return op(a, b if tb else float(b))
    a = a if ta else _full([], a)
    b = b if tb else _full([], b)
    if name in ("fmod", "remainder"):
        return getattr(_C, name)(a, b)
    if name == "eq":
        return _C.eq(a, b)
    if name == "gt":
        return _C.gt(a, b)
    if name == "lt":
        return _C.gt(b, a)
    if name == "ne":  # NaN != x is true: 1 - eq
        return 1.0 - _C.eq(a, b)
    if name == "ge":  # eq and gt exclude each other; a NaN gives 0 + 0
        return _C.eq(a, b) + _C.gt(a, b)
    return _C.eq(a, b) + _C.gt(b, a)  # le


def _alpha(name, a, b, alpha=1):
    if alpha != 1:
        b = _binary("mul", b, alpha)
    return _binary(name, a, b)


def _where_op(cond, a, b):
    """cond ? a : b. With a 0-d b (a constant such as a mask value): a masked fill. Else exactly
    as a with -0 where cond is false plus b with -0 where it is true (x + -0 is x for every x,
    signed zeros and NaNs included); differentiable in a and b."""
    a = a if isinstance(a, Tensor) else _full([], a)
    b = b if isinstance(b, Tensor) else _full([], b)
    shape = _broadcast(cond, a, b)
    if b.dim() == 0 and not b.requires_grad and tuple(a.shape) == shape:
        return _C.masked_fill(a, 1.0 - cond, float(b.item()))
    if a.dim() == 0 and not a.requires_grad and tuple(b.shape) == shape:
        return _C.masked_fill(b, cond, float(a.item()))
    a, b = a.expand(*shape), b.expand(*shape)
    return _C.masked_fill(a, 1.0 - cond, -0.0) + _C.masked_fill(b, cond, -0.0)


def _broadcast(*ts):
    return tuple(np.broadcast_shapes(*[tuple(t.shape) for t in ts]))


def _clamp(x, lo=None, hi=None):
    """clamp: min(max(x, lo), hi) with NaN kept, in one kernel pass (differentiable; the gradient
    passes where lo <= x <= hi, as PyTorch's clamp's)."""
    if isinstance(lo, Tensor) or isinstance(hi, Tensor):
        _refuse("clamp with tensor bounds")
    return _C.clamp(x, -math.inf if lo is None else float(lo), math.inf if hi is None else float(hi))


def _hardtanh(x, lo=-1.0, hi=1.0):
    """hardtanh (ReLU6 = hardtanh(x, 0, 6)): the same values as clamp, but PyTorch's gradient is 0
    at the bounds too (hardtanh_backward: x <= lo or x >= hi); the masks include the bounds (and
    exact zeros are common there: a ReLU6 after a convolution of zeros). lockstep's one-pass
    hardtanh gives the two masked fills' bits; bounds the wrong way round (PyTorch then gives hi
    everywhere) keep the fills."""
    lo, hi = float(lo), float(hi)
    if lo <= hi:
        return _C.hardtanh(x, lo, hi)
    x = _C.masked_fill(x, _binary("le", x, lo), lo)
    return _C.masked_fill(x, _binary("ge", x, hi), hi)


def _hardsigmoid(x):
    """PyTorch's order, min(max(x + 3, 0), 6) / 6; its gradient is 1/6 only for -3 < x < 3. The
    masks test x (x + 3 rounds to 6 just below 3, where the gradient is still 1/6)."""
    t = _C.masked_fill(x + 3.0, _binary("le", x, -3.0), 0.0)
    return _C.masked_fill(t, _binary("ge", x, 3.0), 6.0) / 6.0


def _hardswish(x):
    """PyTorch's order, x * min(max(x + 3, 0), 6) / 6. PyTorch's gradient is 0 below -3, x/3 + 1/2
    for -3 <= x < 3 and 1 from 3 on: the lower mask leaves -3 out, the upper one takes 3 in (both
    test x, as PyTorch's backward does)."""
    t = _C.masked_fill(x + 3.0, _binary("lt", x, -3.0), 0.0)
    t = _C.masked_fill(t, _binary("ge", x, 3.0), 6.0)
    return (x * t) / 6.0


def _silu(x):
    return x * _C.sigmoid(x)


def _leaky_relu(x, slope=0.01):
    """PyTorch's x > 0 ? x : x * slope, with its gradient (1 or slope by the same test)."""
    return _where_op(_binary("gt", x, 0.0), x, x * float(slope))


def _abs(x):
    return _C.relu(x) + _C.relu(-x)  # one of the two is +0: exact, |−0| = +0, NaN kept


def _to_copy(x, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None):
    if dtype is None:
        return x.clone()
    name = str(dtype).replace("torch.", "")
    if name == "bool":
        return _binary("ne", x, 0)
    target = _dtype(dtype)
    return x.clone() if x.dtype == target else x.to(target)


# ---- reductions ---------------------------------------------------------------------------------

def _merged(x, dims):
    """x with the dimensions ``dims`` moved last and merged into one (a view when they already are)."""
    keep = [d for d in range(x.dim()) if d not in dims]
    if dims != list(range(x.dim() - len(dims), x.dim())):
        x = x.permute(*(keep + dims))
    return x.reshape(*([x.shape[i] for i in range(len(keep))] + [-1]))


def _reduce(name, x, dims=None, keepdim=False, dtype=None):
    if dtype is not None:
        _refuse("%s with dtype=%s" % (name, dtype))
    if x.dim() == 0:
        return x.clone()
    d = _dims(dims, x.dim()) if dims not in (None, []) else list(range(x.dim()))
    fn = _C.mean if name == "mean" else _C.sum
    if len(d) == x.dim() and not keepdim:
        return fn(x.reshape(-1), 0, False)
    out = fn(_merged(x, d) if len(d) > 1 else x, -1 if len(d) > 1 else d[0], False)
    if keepdim:
        out = out.reshape(*[1 if i in d else n for i, n in enumerate(x.shape)])
    return out


def _amax(x, dims=(), keepdim=False):
    d = _dims(dims, x.dim()) if dims not in (None, [], ()) else list(range(x.dim()))
    out = _C.amax(_merged(x, d) if len(d) > 1 else x, -1 if len(d) > 1 else d[0], False)
    if keepdim:
        out = out.reshape(*[1 if i in d else n for i, n in enumerate(x.shape)])
    return out


def _norm(x, p=2, dims=None, keepdim=False, dtype=None):
    if p not in (2, 2.0) or dtype is not None:
        _refuse("norm with p=%r (lockstep composes the 2-norm)" % (p,))
    s = _reduce("sum", x * x, dims, keepdim)
    # PyTorch's gradient of the norm at 0 is 0, not sqrt's 0 * inf: sqrt of 1 there, then filled
    # with 0 (the same values; the fills pass no gradient).
    zero = _binary("eq", s, 0.0)
    return _C.masked_fill(_C.sqrt(_C.masked_fill(s, zero, 1.0)), zero, 0.0)


def _var(x, dims=None, correction=None, keepdim=False, unbiased=None):
    """Variance over ``dims`` (merged into one), not differentiable in the engine."""
    if correction is None:
        correction = 1 if unbiased in (None, True) else 0
    d = _dims(dims, x.dim())
    out = _C.var(_merged(x, d), -1, int(correction), False) if len(d) > 1 else _C.var(x, d[0], int(correction), False)
    if keepdim:
        out = out.reshape(*[1 if i in d else n for i, n in enumerate(x.shape)])
    return out


# ---- linear algebra -----------------------------------------------------------------------------

def _addmm(bias, a, b, beta=1, alpha=1):
    if beta != 1 or alpha != 1:
        _refuse("addmm with beta=%r, alpha=%r" % (beta, alpha))
    return _C.matmul(a, b) + bias


def _linear_t(x, weight, bias=None):
    """addmm(bias, x, t(weight)) and mm(x, t(weight)): Linear's own op."""
    return _C.linear(x, weight, bias)


def _baddbmm(bias, a, b, beta=1, alpha=1):
    out = _C.matmul(a, b)
    if alpha != 1:
        out = out * float(alpha)
    return out + (bias if beta == 1 else bias * float(beta)) if beta != 0 else out


# ---- neural-network ops -------------------------------------------------------------------------

def _convolution(x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    if transposed:
        if len(stride) == 2:
            return F.conv_transpose2d(x, w, b, tuple(stride), tuple(padding), tuple(output_padding), groups,
                                      tuple(dilation))
        if len(stride) == 1:  # conv_transpose1d as a conv_transpose2d of height 1
            out = F.conv_transpose2d(x.unsqueeze(2), w.unsqueeze(2), b, (1, stride[0]), (0, padding[0]),
                                     (0, output_padding[0]), groups, (1, dilation[0]))
            return out.squeeze(2)
        _refuse("%d-D transposed convolution (lockstep convolves in 1 and 2 dimensions)" % len(stride))
    if len(stride) == 2:
        return F.conv2d(x, w, b, tuple(stride), tuple(padding), tuple(dilation), groups)
    if len(stride) == 1:  # conv1d as a conv2d of height 1
        out = F.conv2d(x.unsqueeze(2), w.unsqueeze(2), b, (1, stride[0]), (0, padding[0]), (1, dilation[0]), groups)
        return out.squeeze(2)
    _refuse("%d-D convolution (lockstep convolves in 1 and 2 dimensions)" % len(stride))


def _pool_size(n, k, s, p, d, ceil):
    out = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    if ceil and (out - 1) * s >= n + p:
        out -= 1
    return out


def _max_pool2d(x, kernel, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    k = _two(kernel)
    s = _two(stride) if stride else k
    p, d = _two(padding), _two(dilation)
    if d != (1, 1):
        _refuse("max_pool2d with dilation %r" % (d,))
    if ceil_mode:  # the windows ceil_mode adds past the end see -inf rows/columns appended
        for axis in (2, 3):
            n = x.shape[axis]
            out = _pool_size(n, k[axis - 2], s[axis - 2], p[axis - 2], 1, True)
            extra = (out - 1) * s[axis - 2] + k[axis - 2] - (n + 2 * p[axis - 2])
            if extra > 0:
                shape = list(x.shape)
                shape[axis] = extra
                x = _C.cat([x, _full(shape, float("-inf"))], axis)
    return (_C.max_pool2d(x, k, s, p), None)


def _avg_pool2d(x, kernel, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True, divisor_override=None):
    k = _two(kernel)
    s = _two(stride) if stride else k
    if ceil_mode or not count_include_pad or divisor_override is not None:
        _refuse("avg_pool2d with ceil_mode, count_include_pad=False or divisor_override (the engine's AvgPool2d "
                "has them; its Python binding does not yet)")
    return _C.avg_pool2d(x, k, s, _two(padding))


def _adaptive_avg_pool2d(x, size):
    """PyTorch's windows: rows floor(i*H/oh) .. ceil((i+1)*H/oh), each the mean of its elements;
    one AvgPool2d when the sizes divide, else one mean per output cell."""
    oh, ow = _two(size)
    h, w = x.shape[-2], x.shape[-1]
    if h % oh == 0 and w % ow == 0:
        k = (h // oh, w // ow)
        if k == (h, w):
            return _C.mean(x.reshape(*(list(x.shape[:-2]) + [-1])), -1, True).unsqueeze(-1)
        return _C.avg_pool2d(x, k, k, (0, 0))
    rows = []
    for i in range(oh):
        r0, r1 = (i * h) // oh, -((-(i + 1) * h) // oh)
        cells = []
        for j in range(ow):
            c0, c1 = (j * w) // ow, -((-(j + 1) * w) // ow)
            window = x[..., r0:r1, c0:c1].reshape(*(list(x.shape[:-2]) + [-1]))
            cells.append(_C.mean(window, -1, True))
        rows.append(_C.cat(cells, -1).unsqueeze(-2))
    return _C.cat(rows, -2)


def _two(v):
    if isinstance(v, int):
        return (v, v)
    v = list(v)
    return (int(v[0]), int(v[0])) if len(v) == 1 else (int(v[0]), int(v[1]))


def _batch_norm(x, weight, bias, running_mean, running_var, training, momentum, eps, activation=("", 0.0, 0.0)):
    """activation: (name, lo, hi) of the op after it that the conversion folded in (_fold_activations:
    core's BatchNorm applies it in its own passes, the bits of the two ops)."""
    rank = x.dim()
    flat = x.unsqueeze(-1) if rank == 3 else x  # [N, C, L] as [N, C, L, 1]
    out = _C.batch_norm(flat, running_mean, running_var, weight, bias, bool(training), float(momentum), float(eps),
                        *activation)
    return (out.squeeze(-1) if rank == 3 else out, None, None)


def _batch_norm_legit(x, weight, bias, running_mean, running_var, training, momentum, eps, activation=("", 0.0, 0.0)):
    return _batch_norm(x, weight, bias, running_mean, running_var, training, momentum, eps, activation)


def _batch_norm_no_stats(x, weight, bias, training, momentum, eps, activation=("", 0.0, 0.0)):
    return _batch_norm(x, weight, bias, None, None, True, momentum, eps, activation)


def _passthrough(x, *args, **kwargs):
    """An activation folded into the batch norm before it: its value is that norm's output."""
    return x


def _layer_norm(x, shape, weight=None, bias=None, eps=1e-5):
    return (F.layer_norm(x, list(shape), weight, bias, eps), None, None)


def _group_norm(x, weight, bias, n, c, hw, groups, eps):
    """GroupNorm as a LayerNorm over each group's elements, then the per-channel affine map."""
    shape = list(x.shape)
    out = F.layer_norm(x.reshape(n, groups, -1), 1, None, None, eps).reshape(*shape)
    affine = [1, c] + [1] * (len(shape) - 2)
    if weight is not None:
        out = out * weight.reshape(*affine)
    if bias is not None:
        out = out + bias.reshape(*affine)
    return (out, None, None)


def _softmax(x, dim, half_to_float=False):
    return _C.softmax(x, dim)


def _log_softmax(x, dim, half_to_float=False):
    return _C.log_softmax(x, dim)


def _embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if padding_idx not in (-1, None) or scale_grad_by_freq or sparse:
        _refuse("embedding with padding_idx, scale_grad_by_freq or sparse (their gradients differ)")
    return _C.embedding(indices, weight)


def _gather_rows(x, index):
    """x[index] along dimension 0 with an int64 index of any shape: an Embedding of x's rows."""
    if not _is_int(index):
        _refuse("indexing with a boolean or float index")
    rest = list(x.shape[1:])
    rows = x.reshape(x.shape[0], -1) if x.dim() != 2 else x
    if x.dim() == 1:
        rows = x.reshape(-1, 1)
    out = _C.embedding(index, rows)
    return out.reshape(*(list(index.shape) + rest))


def _index(x, indices):
    indices = list(indices)
    if len(indices) != 1 or indices[0] is None:
        _refuse("advanced indexing other than x[index] with one integer index tensor")
    return _gather_rows(x, indices[0])


def _index_select(x, dim, index):
    d = dim % x.dim()
    moved = x.transpose(0, d) if d else x
    out = _gather_rows(moved, index)
    return out.transpose(0, d) if d else out


# ---- shapes -------------------------------------------------------------------------------------

def _reshape(x, shape, *unused):
    shape = [int(s) for s in shape]
    try:
        return x._view(shape) if -1 not in shape else x.reshape(*shape)
    except ArgumentError:
        return x.reshape(*shape)


def _slice(x, dim=0, start=None, end=None, step=1):
    d = dim % x.dim()
    n = x.shape[d]
    start, stop, step = slice(start, end, step).indices(n)
    if step < 1:
        _refuse("slice with step %d" % step)
    return x._slice(d, start, max(start, stop), step)


def _split(x, size, dim=0):
    d = dim % x.dim()
    n = x.shape[d]
    return [x._slice(d, i, min(i + size, n), 1) for i in range(0, n, size)] if n else [x]


def _split_with_sizes(x, sizes, dim=0):
    d, at, out = dim % x.dim(), 0, []
    for s in sizes:
        out.append(x._slice(d, at, at + s, 1))
        at += s
    return out


def _unbind(x, dim=0):
    return [x.select(dim, i) for i in range(x.shape[dim])]


def _squeeze(x, dim=None):
    if isinstance(dim, (list, tuple)):
        for d in sorted((d % x.dim() for d in dim), reverse=True):
            x = x.squeeze(d)
        return x
    return x.squeeze(dim)


def _cat(tensors, dim=0):
    tensors = [t for t in tensors if not (t.dim() == 1 and t.shape[0] == 0)] or list(tensors)[:1]
    if any(_is_int(t) for t in tensors):
        return _from_np(np.concatenate([_np(t) for t in tensors], dim))
    return _C.cat(list(tensors), dim)


def _stack(tensors, dim=0):
    d = dim % (tensors[0].dim() + 1)
    return _cat([t.unsqueeze(d) for t in tensors], d)


def _constant_pad_nd(x, pad, value=0.0):
    """Zero (or value) padding as concatenation, negative padding as slicing: exact."""
    pad = list(pad)
    for i in range(len(pad) // 2):
        d = x.dim() - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo < 0:
            x, lo = x._slice(d, -lo, x.shape[d], 1), 0
        if hi < 0:
            x, hi = x._slice(d, 0, x.shape[d] + hi, 1), 0
        parts = []
        for n in (lo, hi):
            shape = list(x.shape)
            shape[d] = n
            parts.append(_full(shape, value, x.dtype) if n else None)
        if lo or hi:
            x = _cat([p for p in (parts[0], x, parts[1]) if p is not None], d)
    return x


def _roll(x, shifts, dims=()):
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    dims = [dims] if isinstance(dims, int) else list(dims)
    if not dims:
        return _roll(x.reshape(-1), shifts, [0]).reshape(*x.shape)
    for s, d in zip(shifts, dims):
        d %= x.dim()
        n = x.shape[d]
        s %= n if n else 1
        if s:
            x = _cat([x._slice(d, n - s, n, 1), x._slice(d, 0, n - s, 1)], d)
    return x


def _clone(x, memory_format=None):
    return x.clone()


def _t(x):
    return x.transpose(0, 1) if x.dim() == 2 else x


# ---- factories (the tensor argument of *_like / new_* gives only dtype and shape) -----------------

def _factory_dtype(dtype, like=None):
    if dtype is None:
        return like.dtype if like is not None else float32
    return _dtype(dtype)


def _empty(size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _zeros(size, _factory_dtype(dtype))


def _empty_like(x, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _zeros(x.shape, _factory_dtype(dtype, x))


def _new_full(x, size, value, dtype=None, layout=None, device=None, pin_memory=None):
    return _full(size, value, _factory_dtype(dtype, x))


def _full_factory(size, value, dtype=None, layout=None, device=None, pin_memory=None):
    if dtype is None:
        dtype = "int64" if isinstance(value, (bool, int)) and not isinstance(value, float) else "float32"
    return _full(size, value, _dtype(dtype))


def _arange(start, end=None, step=1, dtype=None, layout=None, device=None, pin_memory=None):
    if end is None:
        start, end = 0, start
    ints = all(isinstance(v, int) for v in (start, end, step))
    dt = _dtype(dtype) if dtype is not None else (int64 if ints else float32)
    if dt in _INT:
        return _from_np(np.arange(start, end, step, dtype=np.int64)).to(dt)
    return _from_np(np.arange(start, end, step, dtype=np.float64).astype(np.float32), floating=True)


def _lift(x):
    return x.clone()


def _as_strided_identity(x, *args):
    return x


# ---- the table ----------------------------------------------------------------------------------

_OPS = {
    # elementwise
    "add.Tensor": functools.partial(_alpha, "add"), "add.Scalar": functools.partial(_alpha, "add"),
    "sub.Tensor": functools.partial(_alpha, "sub"), "sub.Scalar": functools.partial(_alpha, "sub"),
    "rsub.Scalar": lambda a, b, alpha=1: _alpha("sub", b, a, 1) if alpha == 1 else _refuse("rsub with alpha"),
    "rsub.Tensor": lambda a, b, alpha=1: _alpha("sub", b, a, 1) if alpha == 1 else _refuse("rsub with alpha"),
    "mul.Tensor": functools.partial(_binary, "mul"), "mul.Scalar": functools.partial(_binary, "mul"),
    "div.Tensor": functools.partial(_binary, "div"), "div.Scalar": functools.partial(_binary, "div"),
    "fmod.Tensor": functools.partial(_binary, "fmod"), "fmod.Scalar": functools.partial(_binary, "fmod"),
    "remainder.Tensor": functools.partial(_binary, "remainder"),
    "remainder.Scalar": functools.partial(_binary, "remainder"),
    "neg.default": _C.neg, "relu.default": _C.relu, "sigmoid.default": _C.sigmoid, "tanh.default": _C.tanh,
    **{f"{n}.default": getattr(_C, n) for n in _TRIG},
    "floor.default": _C.floor, "ceil.default": _C.ceil, "round.default": _C.round,
    "exp.default": _C.exp, "log.default": _C.log, "sqrt.default": _C.sqrt,
    "rsqrt.default": lambda x: 1.0 / _C.sqrt(x), "abs.default": _abs,
    "reciprocal.default": lambda x: 1.0 / x,
    "gelu.default": lambda x, approximate="none": _C.gelu(x, approximate),
    "silu.default": _silu, "leaky_relu.default": _leaky_relu, "hardtanh.default": _hardtanh,
    "hardsigmoid.default": _hardsigmoid,
    "hardswish.default": _hardswish, "clamp.default": _clamp,
    "clamp_min.default": lambda x, lo: _clamp(x, lo, None), "clamp_max.default": lambda x, hi: _clamp(x, None, hi),
    "pow.Tensor_Scalar": lambda x, e: _C.pow(x, float(e)),
    "eq.Scalar": functools.partial(_binary, "eq"), "eq.Tensor": functools.partial(_binary, "eq"),
    "ne.Scalar": functools.partial(_binary, "ne"), "ne.Tensor": functools.partial(_binary, "ne"),
    "gt.Scalar": functools.partial(_binary, "gt"), "gt.Tensor": functools.partial(_binary, "gt"),
    "lt.Scalar": functools.partial(_binary, "lt"), "lt.Tensor": functools.partial(_binary, "lt"),
    "ge.Scalar": functools.partial(_binary, "ge"), "ge.Tensor": functools.partial(_binary, "ge"),
    "le.Scalar": functools.partial(_binary, "le"), "le.Tensor": functools.partial(_binary, "le"),
    "logical_not.default": lambda x: 1.0 - _binary("ne", x, 0),
    "bitwise_not.default": lambda x: 1.0 - x if x.dtype == float32 else _refuse("bitwise_not of integers"),
    "logical_and.default": lambda a, b: _binary("ne", a, 0) * _binary("ne", b, 0),
    "where.self": _where_op,
    "masked_fill.Scalar": lambda x, m, v: _C.masked_fill(x, m, float(v)),
    "masked_fill.Tensor": lambda x, m, v: _C.masked_fill(x, m, float(v.item())) if not v.requires_grad else
    _refuse("masked_fill with a value that requires grad"),
    "_to_copy.default": _to_copy,
    # reductions
    "mean.dim": functools.partial(_reduce, "mean"), "mean.default": lambda x, dtype=None: _reduce("mean", x),
    "sum.dim_IntList": functools.partial(_reduce, "sum"), "sum.default": lambda x, dtype=None: _reduce("sum", x),
    "amax.default": _amax, "max.dim": lambda x, d, keepdim=False: (_C.amax(x, d, keepdim), _C.argmax(x, d, keepdim)),
    "argmax.default": lambda x, dim=None, keepdim=False: _C.argmax(x.reshape(-1), 0) if dim is None
    else _C.argmax(x, dim, keepdim),
    "norm.ScalarOpt_dim": _norm, "var.correction": _var, "var.dim": _var,
    # linear algebra
    "addmm.default": _addmm, "mm.default": _C.matmul, "bmm.default": _C.matmul, "baddbmm.default": _baddbmm,
    "t.default": _t,
    # neural-network ops
    "convolution.default": _convolution, "max_pool2d_with_indices.default": _max_pool2d,
    "avg_pool2d.default": _avg_pool2d, "_adaptive_avg_pool2d.default": _adaptive_avg_pool2d,
    "native_batch_norm.default": _batch_norm, "_native_batch_norm_legit.default": _batch_norm_legit,
    "_native_batch_norm_legit.no_stats": _batch_norm_no_stats, "native_layer_norm.default": _layer_norm,
    "native_group_norm.default": _group_norm,
    "_softmax.default": _softmax, "_log_softmax.default": _log_softmax, "embedding.default": _embedding,
    "index.Tensor": _index, "index_select.default": _index_select,
    # shapes and views
    "view.default": _reshape, "_unsafe_view.default": _reshape, "_reshape_alias.default": _reshape,
    "reshape.default": _reshape,
    "expand.default": lambda x, size, implicit=False: x.expand(*size),
    "permute.default": lambda x, dims: x.permute(*dims), "transpose.int": lambda x, a, b: x.transpose(a, b),
    "unsqueeze.default": lambda x, d: x.unsqueeze(d), "squeeze.dim": _squeeze, "squeeze.default": _squeeze,
    "squeeze.dims": _squeeze, "select.int": lambda x, d, i: x.select(d, i), "slice.Tensor": _slice,
    # unsafe_split's pieces are not views for autograd (PyTorch's recurrent cells write into them).
    "split.Tensor": _split, "unsafe_split.Tensor": _split, "split_with_sizes.default": _split_with_sizes,
    "unbind.int": _unbind,
    "cat.default": _cat, "stack.default": _stack, "clone.default": _clone, "detach.default": lambda x: x.detach(),
    "alias.default": lambda x: x, "lift_fresh_copy.default": _lift, "lift_fresh.default": lambda x: x,
    "constant_pad_nd.default": _constant_pad_nd, "roll.default": _roll,
    "as_strided.default": _as_strided_identity, "as_strided_.default": _as_strided_identity,
    # factories
    "empty.memory_format": _empty, "zeros.default": _empty, "empty_like.default": _empty_like,
    "zeros_like.default": _empty_like, "new_zeros.default": lambda x, size, **k: _new_full(x, size, 0, **k),
    "new_empty.default": lambda x, size, **k: _new_full(x, size, 0, **k),
    "new_ones.default": lambda x, size, **k: _new_full(x, size, 1, **k), "new_full.default": _new_full,
    "ones.default": lambda size, **k: _full_factory(size, 1.0, **k), "full.default": _full_factory,
    "ones_like.default": lambda x, dtype=None, **unused: _new_full(x, x.shape, 1, dtype),
    "full_like.default": lambda x, value, dtype=None, **unused: _new_full(x, x.shape, value, dtype),
    "scalar_tensor.default": lambda v, **k: _full_factory([], v, **k),
    "arange.default": _arange, "arange.start": _arange, "arange.start_step": _arange,
}

# Ops whose tensor arguments give only a shape and a dtype: their results never carry gradients.
_META_ONLY = {"empty_like.default", "zeros_like.default", "ones_like.default", "full_like.default",
              "new_zeros.default", "new_empty.default", "new_ones.default", "new_full.default"}

# In-place ops: the functional op they apply to their first argument.
_INPLACE = {
    "add_.Tensor": "add.Tensor", "add_.Scalar": "add.Scalar", "sub_.Tensor": "sub.Tensor",
    "sub_.Scalar": "sub.Scalar", "mul_.Tensor": "mul.Tensor", "mul_.Scalar": "mul.Scalar",
    "div_.Tensor": "div.Tensor", "div_.Scalar": "div.Scalar", "relu_.default": "relu.default",
    **{f"{n}_.default": f"{n}.default" for n in _TRIG},
    "sigmoid_.default": "sigmoid.default", "tanh_.default": "tanh.default", "silu_.default": "silu.default",
    "transpose_.default": "transpose.int",
    "leaky_relu_.default": "leaky_relu.default",
    "hardtanh_.default": "hardtanh.default", "hardsigmoid_.default": "hardsigmoid.default",
    "hardswish_.default": "hardswish.default", "clamp_.default": "clamp.default",
    "clamp_min_.default": "clamp_min.default", "clamp_max_.default": "clamp_max.default",
    "gelu_.default": "gelu.default", "masked_fill_.Scalar": "masked_fill.Scalar", "exp_.default": "exp.default",
    "neg_.default": "neg.default", "sqrt_.default": "sqrt.default", "pow_.Scalar": "pow.Tensor_Scalar",
    "fill_.Scalar": "<fill>", "fill_.Tensor": "<fill>", "zero_.default": "<zero>", "copy_.default": "<copy>",
    "bernoulli_.float": "<bernoulli>",
}

# View ops: their result shares the first argument's storage (in PyTorch and in the replay).
_VIEWS = {"view.default", "_unsafe_view.default", "_reshape_alias.default", "expand.default", "permute.default",
          "transpose.int", "t.default", "unsqueeze.default", "squeeze.dim", "squeeze.default", "squeeze.dims",
          "select.int", "slice.Tensor", "detach.default", "alias.default", "as_strided.default",
          "as_strided_.default", "lift_fresh.default", "split.Tensor", "split_with_sizes.default", "unbind.int"}

_RANDOM = {"bernoulli_.float", "bernoulli.p", "native_dropout.default"}


def _write_value(target, name, args, kwargs, generator):
    """The value an in-place write op leaves in ``target`` (a new tensor)."""
    if name == "<fill>":
        v = args[0]
        if isinstance(v, Tensor):
            return v.to(target.dtype).expand(*target.shape).clone() if target.dim() else v.to(target.dtype).clone()
        return _full(target.shape, v, target.dtype)
    if name == "<zero>":
        return _zeros(target.shape, target.dtype)
    if name == "<copy>":
        src = args[0]
        if src.dtype != target.dtype:
            src = src.to(target.dtype)
        return src.expand(*target.shape).clone() if tuple(src.shape) != tuple(target.shape) else src
    if name == "<bernoulli>":
        p = float(args[0]) if args else float(kwargs.get("p", 0.5))
        return _bernoulli_mask(list(target.shape), p, generator)
    raise AssertionError(name)


def _bernoulli_mask(shape, p, generator):
    """1.0 with probability p, else 0.0: lockstep's dropout mask of ones (rate 1 - p) from the call
    site's Philox stream."""
    if p >= 1.0:
        return _full(shape, 1.0)
    if p <= 0.0:
        return _zeros(shape)
    kept = _C.dropout(_full(shape, 1.0), 1.0 - p, True, generator)
    return _C.gt(kept, _full([], 0.0))
