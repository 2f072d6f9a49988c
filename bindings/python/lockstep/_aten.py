"""PyTorch models captured at the level of aten operations, run with lockstep's ops.

``convert(module, example_inputs, seed)`` records the module's forward with torch's proxy-tensor
tracing (``torch.fx.experimental.proxy_tensor.make_fx``, real tensors): every aten operation the
forward performs on the example inputs, whatever Python it takes to get there (loops, tuple
unpacking of sizes, branches on shapes, ``self.training``). It records the forward twice, in
evaluation and in training mode, and builds a lockstep module that

- holds the module's parameters and buffers under their ``state_dict`` names (a parameter shared
  by two modules, such as tied embeddings, stays one lockstep parameter under both names; buffers
  that are not in the state dict are constants of the converted module);
- runs the graph of its current mode (``train()``/``eval()``) with lockstep's ops, each aten op
  mapped to the lockstep op or composition of ops of the table ``_OPS`` (docs in each entry);
- never calls PyTorch once converted: an aten op outside the table is an ArgumentError naming the
  op and the path of the module whose forward called it.

Shapes: the graph records sizes as numbers. The forward is recorded at three batch sizes (the
example's and two more, made by repeating example rows); every size that changes with the batch
becomes an affine function of it, so the converted module takes any batch size. If the graphs
differ in structure (a forward that branches on the batch size), the module is specialised to the
example's shapes and says so when called with others.

Randomness: dropout-like draws (``bernoulli_`` masks: Dropout, functional dropout,
torchvision's StochasticDepth) come from lockstep's Philox streams, one per call site, named
"dropout/<module path>" (the path rule of docs/python.md), seeded by ``seed``.

In-place aten ops (``relu_``, ``add_``, ``x[a:b] = v``, ``bernoulli_``, the running statistics of
batch norm and ``num_batches_tracked``) are replayed as lockstep in-place writes on tensors outside
autograd (buffers, masks, constants built in forward), and as functional ops on tensors autograd
tracks; an in-place write whose target is read again through another alias afterwards is refused.
Integer tensors (positions, indices) are computed with NumPy; booleans are float32 0/1.
"""
import collections
import functools
import math
import operator

import numpy as np

from . import _C
from ._errors import ArgumentError
from ._tensor import TRIG as _TRIG, Tensor, float32, int32, int64
from ._runtime import no_grad
from . import nn
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
    exact zeros are common there: a ReLU6 after a convolution of zeros)."""
    x = _C.masked_fill(x, _binary("le", x, lo), float(lo))
    return _C.masked_fill(x, _binary("ge", x, hi), float(hi))


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


def _batch_norm(x, weight, bias, running_mean, running_var, training, momentum, eps):
    rank = x.dim()
    if rank == 3:  # [N, C, L] as [N, C, L, 1]
        out = F.batch_norm(x.unsqueeze(-1), running_mean, running_var, weight, bias, bool(training), momentum, eps)
        return (out.squeeze(-1), None, None)
    return (F.batch_norm(x, running_mean, running_var, weight, bias, bool(training), momentum, eps), None, None)


def _batch_norm_legit(x, weight, bias, running_mean, running_var, training, momentum, eps):
    return _batch_norm(x, weight, bias, running_mean, running_var, training, momentum, eps)


def _batch_norm_no_stats(x, weight, bias, training, momentum, eps):
    return _batch_norm(x, weight, bias, None, None, True, momentum, eps)


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


# ---- programs -----------------------------------------------------------------------------------

class _Ref:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "%" + self.name


class _Affine:
    """A size recorded from the example: k * batch + c."""
    __slots__ = ("k", "c")

    def __init__(self, k, c):
        self.k, self.c = k, c

    def __repr__(self):
        return "%d*B%+d" % (self.k, self.c)


class _Instr:
    __slots__ = ("name", "op", "fn", "args", "kwargs", "path", "kind", "write", "shape", "aux")

    def __init__(self, **kw):
        for k in self.__slots__:
            setattr(self, k, kw.get(k))


class AtenModule(nn.Module):
    """A torch module converted through its aten graph (lockstep/_aten.py): PyTorch's parameter
    and buffer names, two recorded programs (evaluation and training) run with lockstep's ops."""

    def __init__(self, class_name):
        super().__init__()
        d = self.__dict__
        d["_class_name"] = class_name
        d["_programs"] = {}          # training flag -> [_Instr]
        d["_outputs"] = {}           # training flag -> output structure of _Refs
        d["_tensors"] = {}           # get_attr name -> lockstep tensor (parameters, buffers, constants)
        d["_aliases"] = set()        # state_dict names of parameters registered a second time (tied)
        d["_generators"] = {}        # call site -> Generator
        d["_input_shapes"] = []      # per input: shape with None for the batch dimension when generalised
        d["_input_dtypes"] = []      # per input: "float" or "int64" (any integer type), as recorded
        d["_batch_free"] = None      # None until a mode is recorded
        d["_pending"] = None         # the _Converter (and torch module) until both modes are recorded
        d["_example"] = None         # the torch inputs the first mode was recorded on
        d["_seed"] = 0               # the seed of streams of call sites recorded later

    def _trace_name(self):
        return self.__dict__["_class_name"]

    def extra_repr(self):
        return "from aten ops"

    def __repr__(self):
        return "%s(from aten ops: %d ops in training, %d in evaluation)" % (
            self.__dict__["_class_name"], len(self.__dict__["_programs"].get(True, [])),
            len(self.__dict__["_programs"].get(False, [])))

    def named_parameters(self, prefix="", recurse=True):
        aliases = self.__dict__["_aliases"]
        return iter([(n, t) for n, t in nn.Module.named_parameters(self, prefix, recurse)
                     if n[len(prefix) + 1 if prefix else 0:] not in aliases])

    def seed_streams(self, seed):
        """Reseeds every random call site: stream "dropout/<site>" under ``seed``, offset 0."""
        self.__dict__["_seed"] = int(seed)
        gens = self.__dict__["_generators"]
        for site in list(gens):
            gens[site] = _C.Generator(int(seed), "dropout/" + site)

    def forward(self, *inputs):
        d = self.__dict__
        if bool(self.training) not in d["_programs"]:
            self._record(inputs)
        shapes = d["_input_shapes"]
        if len(inputs) != len(shapes):
            raise ArgumentError("%s: takes %d inputs (as recorded), got %d" % (d["_class_name"], len(shapes),
                                                                               len(inputs)))
        batch = None
        for i, (x, want) in enumerate(zip(inputs, shapes)):
            if not isinstance(x, Tensor):
                raise TypeError("%s: input %d is a %s, expected a lockstep tensor" % (d["_class_name"], i,
                                                                                       type(x).__name__))
            got = tuple(x.shape)
            ok = len(got) == len(want) and all(w is None or w == g for w, g in zip(want, got))
            if not ok:
                raise ArgumentError("%s: input %d has shape %s; the recorded graph takes %s%s" % (
                    d["_class_name"], i, list(got), ["B" if w is None else w for w in want],
                    "" if d["_batch_free"] else " (the graph depends on the batch size in a way lockstep does "
                    "not generalise: it runs at the example's shapes)"))
            if want and want[0] is None:
                batch = got[0]
        return _run(self, d["_programs"][bool(self.training)], d["_outputs"][bool(self.training)], inputs, batch)


    def _record(self, inputs):
        """Records the current mode's program: on the first call, from its inputs."""
        d = self.__dict__
        if d["_pending"] is None:
            raise ArgumentError("%s: no program recorded for %s mode" % (
                d["_class_name"], "training" if self.training else "evaluation"))
        torch = d["_pending"].torch
        example = d["_example"]
        if example is None:
            for i, x in enumerate(inputs):
                if not isinstance(x, Tensor):
                    raise TypeError("%s: input %d is a %s, expected a lockstep tensor" % (
                        d["_class_name"], i, type(x).__name__))
            example = tuple(torch.from_numpy(x.detach().numpy().copy()) for x in inputs)
        record(self, example, bool(self.training))


def _resolve(a, values, batch):
    if isinstance(a, _Ref):
        return values[a.name]
    if isinstance(a, _Affine):
        return a.k * batch + a.c
    if isinstance(a, list):
        return [_resolve(v, values, batch) for v in a]
    if isinstance(a, tuple):
        return tuple(_resolve(v, values, batch) for v in a)
    if isinstance(a, dict):
        return {k: _resolve(v, values, batch) for k, v in a.items()}
    return a


def _run(module, program, outputs, inputs, batch, check=False):
    d = module.__dict__
    values = {}
    position = 0
    for ins in program:
        try:
            if ins.kind == "input":
                values[ins.name] = inputs[position]
                position += 1
                continue
            if ins.kind == "tensor":
                values[ins.name] = d["_tensors"][ins.op]
                continue
            args = _resolve(ins.args, values, batch)
            kwargs = {k: _resolve(v, values, batch) for k, v in ins.kwargs.items()}
            generator = d["_generators"].get(ins.aux) if ins.aux is not None else None
            if ins.kind == "call":
                out = ins.fn(*args, **kwargs)
            elif ins.kind == "random":
                out = ins.fn(*args, generator=generator, **kwargs)
            else:  # an in-place op: compute the new value, then write it as classified
                target = args[0]
                if ins.fn is None:
                    new = _write_value(target, _INPLACE[ins.op], args[1:], kwargs, generator)
                else:
                    new = ins.fn(*args, **kwargs)
                if ins.write == "real":
                    with no_grad():
                        target.copy_(new)
                    out = target
                elif ins.write == "rebind":
                    out = new
                else:  # ("scatter", base, chain): the base with the view's region replaced
                    _, base, chain = ins.write
                    values[base] = _scatter(values[base], chain, new)
                    out = new
            values[ins.name] = out
            if check and ins.shape is not None and isinstance(out, Tensor) and tuple(out.shape) != ins.shape:
                raise _Unsupported("gave shape %s where PyTorch's gave %s (a conversion bug)" % (
                    list(out.shape), list(ins.shape)))
        except (_Unsupported, ArgumentError, TypeError, IndexError) as e:
            raise ArgumentError("%s: aten.%s at %s: %s" % (d["_class_name"], ins.op, _place(ins.path), e)) from None
    return _resolve(outputs, values, batch)


def _scatter(base, region, value):
    """``base`` with a box replaced by ``value``: ``region`` is ((dims), [(dim, start, stop)],
    (squeezed dims)) in base's dimensions; ``value`` lacks the squeezed (selected) dimensions.
    Rebuilt with slices and cat: exact, and differentiable in both."""
    squeezed, boxes = region
    for d in squeezed:  # ascending: each unsqueeze puts a selected dimension back where it was
        value = value.unsqueeze(d)
    return _replace(base, boxes, value)


def _replace(base, boxes, value):
    if not boxes:
        return value.expand(*base.shape) if tuple(value.shape) != tuple(base.shape) else value
    d, start, stop = boxes[0]
    inner = _replace(base._slice(d, start, stop, 1), boxes[1:], value)
    parts = [base._slice(d, 0, start, 1), inner, base._slice(d, stop, base.shape[d], 1)]
    return _C.cat([p for p in parts if p.shape[d]], d)


def _place(path):
    return "the model itself" if not path else "'%s'" % path


# ---- capture ------------------------------------------------------------------------------------

def _fast_path_decompositions(torch):
    """PyTorch's fused evaluation kernels (MultiheadAttention's and TransformerEncoderLayer's fast
    paths, which it takes under no_grad or with frozen weights) recorded as the ops of the ordinary
    paths they stand for: the same values, whichever path the recording would take."""
    F = torch.nn.functional

    def attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight, proj_bias, mask=None,
                  need_weights=True, average_attn_weights=True, mask_type=None):
        q, k, v = (t.transpose(0, 1) for t in (query, key, value))  # batch first: the ordinary path's layout
        out, weights = F.multi_head_attention_forward(
            q, k, v, embed_dim, num_head, qkv_weight, qkv_bias, None, None, False, 0.0, proj_weight, proj_bias,
            training=False, key_padding_mask=mask if mask_type == 1 else None, need_weights=need_weights,
            attn_mask=mask if mask_type == 0 else None, average_attn_weights=average_attn_weights)
        return out.transpose(0, 1), weights if weights is not None else out.new_zeros(0)

    def encoder_layer(src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, use_gelu, norm_first,
                      eps, norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2, ffn_weight_1, ffn_bias_1,
                      ffn_weight_2, ffn_bias_2, mask=None, mask_type=None):
        def block(x):
            return attention(x, x, x, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, mask, False,
                             True, mask_type)[0]

        def feed_forward(x):
            h = F.linear(x, ffn_weight_1, ffn_bias_1)
            return F.linear(F.gelu(h) if use_gelu else F.relu(h), ffn_weight_2, ffn_bias_2)

        norm1 = lambda x: F.layer_norm(x, (embed_dim,), norm_weight_1, norm_bias_1, eps)  # noqa: E731
        norm2 = lambda x: F.layer_norm(x, (embed_dim,), norm_weight_2, norm_bias_2, eps)  # noqa: E731
        if norm_first:
            x = src + block(norm1(src))
            return x + feed_forward(norm2(x))
        x = norm1(src + block(src))
        return norm2(x + feed_forward(x))

    table = {}
    for name, fn in (("_native_multi_head_attention", attention), ("_transformer_encoder_layer_fwd", encoder_layer)):
        op = getattr(torch.ops.aten, name, None)
        if op is not None:
            table[op.default] = fn
    return table


def _capture(torch, module, inputs, training):
    """make_fx's aten graph of module(*inputs) in the given mode, each node's meta naming the
    module path that called it; the module's buffers, modes and torch's RNG are left as they were."""
    from torch.fx.experimental.proxy_tensor import make_fx, proxy_slot
    saved = [(b, b.detach().clone()) for b in module.buffers()]
    modes = [(m, m.training) for m in module.modules()]
    stack = [""]
    hooks = []
    def enter(path):
        stack.append(path)  # a hook returns None: it changes neither inputs nor outputs

    def leave():
        if len(stack) > 1:
            stack.pop()

    for path, m in module.named_modules():
        hooks.append(m.register_forward_pre_hook(lambda mod, args, path=path: enter(path)))
        hooks.append(m.register_forward_hook(lambda mod, args, out: leave()))
    graph_cls = torch.fx.Graph
    original = graph_cls.create_node

    def create_node(self, *args, **kwargs):
        node = original(self, *args, **kwargs)
        node.meta["lockstep_path"] = stack[-1]
        return node

    graph_cls.create_node = create_node
    used = list(module.parameters()) + list(module.buffers()) + list(inputs)
    try:
        module.train(training)
        with torch.random.fork_rng():
            try:
                gm = make_fx(lambda *a: module(*a), _fast_path_decompositions(torch))(*inputs)
            except Exception as e:  # noqa: B902  (tracing raises many kinds; the message names the module)
                message = str(e).split("\n")[0]
                if "data-dependent" in message or "value out of a tracing tensor" in message:
                    message = "its forward branches on or reads tensor values (%s)" % message
                else:
                    message = "make_fx cannot record it (%s: %s)" % (type(e).__name__, message)
                raise _CaptureError(message, stack[-1]) from None
        used += [getattr(gm, n.target) for n in gm.graph.nodes if n.op == "get_attr"]
        return gm
    finally:
        # make_fx leaves its proxies in the __dict__ of every real tensor it saw (keeping the
        # tracer alive, and breaking copy.deepcopy of the module), and in-place ops leave one in
        # the attribute "proxy": take them out.
        for t in used:
            if isinstance(t, torch.Tensor):
                t.__dict__.pop(proxy_slot, None)
                if type(t.__dict__.get("proxy")).__name__ == "Proxy":
                    del t.__dict__["proxy"]
        graph_cls.create_node = original
        for h in hooks:
            h.remove()
        for m, mode in modes:
            m.training = mode
        with torch.no_grad():
            for b, value in saved:
                b.copy_(value)


class _CaptureError(Exception):
    def __init__(self, message, path):
        super().__init__(message)
        self.path = path


def _meta_shape(node):
    meta = node.meta.get("tensor_meta")
    shape = getattr(meta, "shape", None)
    return tuple(int(s) for s in shape) if shape is not None else None


def _op_name(target):
    name = str(target)
    return name[5:] if name.startswith("aten.") else name


def _batched(torch, inputs, extra):
    """The example inputs with ``extra`` more rows (copies of the first ones)."""
    out = []
    for x in inputs:
        reps = [x]
        need = extra
        while need > 0:
            take = min(need, x.shape[0])
            reps.append(x[:take])
            need -= take
        out.append(torch.cat(reps, 0))
    return tuple(out)


def _merge_graphs(graphs, batches):
    """Per node, the arguments with every number that changes with the batch as an _Affine; None
    when the graphs differ in structure or a number is not affine in the batch."""
    lists = [list(g.graph.nodes) for g in graphs]
    if len({len(n) for n in lists}) != 1:
        return None
    merged = {}

    def merge(vals):
        first = vals[0]
        if isinstance(first, dict):
            if any(not isinstance(v, dict) or sorted(v) != sorted(first) for v in vals):
                raise ValueError
            return {k: merge([v[k] for v in vals]) for k in first}
        if isinstance(first, (list, tuple)):
            if any(not isinstance(v, (list, tuple)) or len(v) != len(first) for v in vals):
                raise ValueError
            out = [merge([v[i] for v in vals]) for i in range(len(first))]
            return type(first)(out) if not hasattr(first, "_fields") else type(first)(*out)
        if isinstance(first, bool) or not isinstance(first, (int, float)):
            if any(type(v) is not type(first) for v in vals):
                raise ValueError
            if hasattr(first, "name") and hasattr(first, "op"):  # an fx Node
                if any(v.name != first.name for v in vals):
                    raise ValueError
                return first
            if any(v != first for v in vals if not isinstance(v, slice)):
                raise ValueError
            return first
        if all(v == first for v in vals):
            return first
        if isinstance(first, float):
            raise ValueError
        b0, b1 = batches[0], batches[1]
        k, rem = divmod(vals[1] - vals[0], b1 - b0)
        if rem:
            raise ValueError
        c = vals[0] - k * b0
        if any(k * b + c != v for b, v in zip(batches, vals)):
            raise ValueError
        return _Affine(k, c)

    try:
        for nodes in zip(*lists):
            first = nodes[0]
            if any(n.op != first.op or n.target != first.target or n.name != first.name for n in nodes):
                return None
            merged[first.name] = (merge([n.args for n in nodes]), merge([dict(n.kwargs) for n in nodes]))
    except ValueError:
        return None
    return merged


class _Converter:
    def __init__(self, torch, module, class_name):
        self.torch, self.module, self.class_name = torch, module, class_name
        self.attention = {p for p, m in module.named_modules() if isinstance(m, torch.nn.MultiheadAttention)}

    def place(self, path):
        """'<path>' (<class>) of a module in the converted one."""
        m = dict(self.module.named_modules()).get(path)
        return _place(path) + ("" if m is None or not path else " (%s)" % type(m).__name__)

    def fail(self, message, node=None):
        where = "" if node is None else " at %s" % self.place(node.meta.get("lockstep_path", ""))
        return ArgumentError("from_torch_module (aten route): %s%s: %s" % (self.class_name, where, message))

    def state(self, out):
        """Registers the module's parameters and buffers on ``out`` under their state_dict names;
        returns {id(torch tensor): name}."""
        torch, module = self.torch, self.module
        names, holders = {}, {"": out}
        persistent = module.state_dict(keep_vars=True)
        params = {id(p) for p in module.parameters()}
        registered = {}

        def holder(path):
            if path in holders:
                return holders[path]
            parent, _, leaf = path.rpartition(".")
            h = nn.Module()
            holder(parent).add_module(leaf, h)
            holders[path] = h
            return h

        for name, t in persistent.items():
            if t.is_floating_point() and t.dtype != torch.float32:
                raise self.fail("'%s' is %s; lockstep models are float32 (call .float() first)" % (name, t.dtype))
            parent, _, leaf = name.rpartition(".")
            if id(t) in registered:  # tied: the same lockstep tensor under a second name
                value = registered[id(t)]
                if isinstance(value, nn.Parameter):
                    out.__dict__["_aliases"].add(name)
                    holder(parent).register_parameter(leaf, value)
                else:
                    holder(parent).register_buffer(leaf, value)
                continue
            value = _tensor_from_torch(torch, t.detach())
            if id(t) in params:
                value = nn.Parameter(value, requires_grad=bool(t.requires_grad))
                holder(parent).register_parameter(leaf, value)
            else:
                holder(parent).register_buffer(leaf, value)
            registered[id(t)] = value
            names[id(t)] = name
        for name, t in module.named_buffers():
            if id(t) not in names:  # not in the state dict: a constant of the converted module
                names[id(t)] = name
                registered[id(t)] = _tensor_from_torch(torch, t.detach())
        self.registered = registered
        return names

    def compile(self, gm, merged, out, training):
        torch = self.torch
        nodes = list(gm.graph.nodes)
        order = {n: i for i, n in enumerate(nodes)}
        tensors = out.__dict__["_tensors"]
        grad = {}      # node -> True when its value may carry gradients (inputs, parameters)
        const_of = {}  # get_attr node -> name in _tensors
        params = {id(p) for p in self.module.parameters()}

        for n in nodes:
            if n.op == "get_attr":
                t = getattr(gm, n.target)
                key = id(t)
                if key in self.registered:
                    name = self.names[key]
                    tensors[name] = self.registered[key]
                    grad[n] = key in params
                else:  # a tensor made in forward (torch.tensor(...)): a constant
                    name = "const:%s" % n.target
                    if t.is_floating_point() and t.dtype != torch.float32:
                        raise self.fail("the forward makes a %s tensor; lockstep computes float32" % t.dtype, n)
                    tensors[name] = _tensor_from_torch(torch, t.detach())
                    grad[n] = False
                const_of[n] = name
            elif n.op == "placeholder":
                grad[n] = True
            elif n.op == "call_function":
                name = _op_name(n.target)
                if name in _META_ONLY or name in _RANDOM and name != "native_dropout.default":
                    grad[n] = False
                else:
                    grad[n] = any(grad.get(a, False) for a in n.all_input_nodes)

        # Linear: addmm(bias, x, t(w)) and mm(x, t(w)) with w a parameter run as Linear's op.
        linear = {}
        for n in nodes:
            if n.op == "call_function" and _op_name(n.target) in ("addmm.default", "mm.default") and not n.kwargs:
                w = n.args[-1]
                if isinstance(w, torch.fx.Node) and w.op == "call_function" and _op_name(w.target) == "t.default" \
                        and isinstance(w.args[0], torch.fx.Node) and w.args[0].op == "get_attr":
                    linear[n] = w.args[0]

        # Users (after the Linear rewrite), then dead code: pure nodes nothing reads.
        users = collections.defaultdict(list)
        for n in nodes:
            inputs = list(n.all_input_nodes)
            if n in linear:
                inputs = [a for a in inputs if a is not n.args[-1]] + [linear[n]]
            for a in inputs:
                users[a].append(n)
        live = set()
        for n in reversed(nodes):
            name = _op_name(n.target) if n.op == "call_function" else ""
            effect = n.op in ("output", "placeholder") or name in _INPLACE or name in _RANDOM
            if effect or any(u in live for u in users[n]):
                live.add(n)

        root_of = {}
        for n in nodes:
            if n.op == "call_function" and (_op_name(n.target) in _VIEWS or n.target is operator.getitem and
                                            isinstance(n.args[0], torch.fx.Node) and
                                            _op_name(n.args[0].target) in _VIEWS):
                src = n.args[0]
                root_of[n] = root_of.get(src, src)

        program = []
        sites = collections.Counter()
        for n in nodes:
            if n not in live:
                continue
            path = n.meta.get("lockstep_path", "")
            shape = _meta_shape(n)
            args, kwargs = merged[n.name] if merged is not None else (n.args, dict(n.kwargs))
            args, kwargs = _refs(torch, args), {k: _refs(torch, v) for k, v in kwargs.items()}
            if n.op == "placeholder":
                program.append(_Instr(name=n.name, op="input", kind="input", path=path))
                continue
            if n.op == "get_attr":
                program.append(_Instr(name=n.name, op=const_of[n], kind="tensor", path=path))
                continue
            if n.op == "output":
                out.__dict__["_outputs"][training] = args[0]
                continue
            if n.op != "call_function":
                raise self.fail("a graph node of kind %s" % n.op, n)
            target = n.target
            if target is operator.getitem:
                src = n.args[0]
                if isinstance(src, torch.fx.Node) and src.op == "call_function" and \
                        _op_name(src.target) in ("max_pool2d_with_indices.default", "native_batch_norm.default",
                                                 "_native_batch_norm_legit.default", "native_layer_norm.default",
                                                 "native_group_norm.default", "native_dropout.default") \
                        and n.args[1] != 0:
                    raise self.fail("aten.%s's output %d is used (lockstep computes output 0 only)"
                                    % (_op_name(src.target), n.args[1]), n)
                program.append(_Instr(name=n.name, op="getitem", fn=operator.getitem, args=args, kwargs=kwargs,
                                      kind="call", path=path, shape=shape))
                continue
            if isinstance(target, type) and issubclass(target, tuple) and hasattr(target, "_fields"):
                program.append(_Instr(name=n.name, op=target.__name__, fn=target, args=args, kwargs=kwargs,
                                      kind="call", path=path))
                continue
            name = _op_name(target)
            if n in linear:
                w = _Ref(linear[n].name)
                fn_args = (args[1], w, args[0]) if name == "addmm.default" else (args[0], w)
                program.append(_Instr(name=n.name, op=name + " (as linear)", fn=_linear_t, args=fn_args, kwargs={},
                                      kind="call", path=path, shape=shape))
                continue
            if name in ("as_strided.default", "as_strided_.default"):
                self.check_as_strided(n)
            if name in _RANDOM or name == "bernoulli_.float":
                # The path rule: the stream of the Dropout module at P is "dropout/P";
                # MultiheadAttention's functional dropout is its child "dropout" in lockstep.
                base = path + ".dropout" if path in self.attention else path
                site = base + ("" if not sites[base] else ".aten_%s" % n.name)
                sites[base] += 1
                out.__dict__["_generators"][site] = None
            else:
                site = None
            if name in _INPLACE:
                functional = _INPLACE[name]
                fn = None if functional.startswith("<") else _OPS[functional]
                write = self.classify_write(n, nodes, order, users, grad, root_of)
                program.append(_Instr(name=n.name, op=name, fn=fn, args=args, kwargs=kwargs, kind="inplace",
                                      path=path, write=write, shape=shape, aux=site))
                continue
            if name == "bernoulli.p":
                program.append(_Instr(name=n.name, op=name, args=args, kwargs=kwargs, kind="random", path=path,
                                      shape=shape, aux=site,
                                      fn=lambda x, p=0.5, generator=None: _bernoulli_mask(list(x.shape), p,
                                                                                           generator)))
                continue
            if name == "native_dropout.default":
                program.append(_Instr(name=n.name, op=name, args=args, kwargs=kwargs, kind="random", path=path,
                                      aux=site, fn=lambda x, p, train, generator=None: (  # train None: True
                                          F.dropout(x, p, train is not False, generator), None)))
                continue
            fn = _OPS.get(name)
            if fn is None:
                raise self.fail("calls aten.%s, which lockstep cannot convert (yet)" % name, n)
            program.append(_Instr(name=n.name, op=name, fn=fn, args=args, kwargs=kwargs, kind="call", path=path,
                                  shape=shape))
        out.__dict__["_programs"][training] = program

    def check_as_strided(self, n):
        """as_strided is accepted only where it keeps every element where it is (PyTorch restriding
        a result whose only changed strides are those of size-1 dimensions)."""
        src = n.args[0]
        size, stride = list(n.args[1]), list(n.args[2])
        offset = n.args[3] if len(n.args) > 3 else None
        meta = src.meta.get("tensor_meta")
        if meta is None or list(meta.shape) != size or offset not in (None, 0) or \
                any(s > 1 and a != b for s, a, b in zip(size, stride, meta.stride)):
            raise self.fail("calls aten.as_strided with sizes %s and strides %s, which lockstep does not compute "
                            "(only a restride that moves no element)" % (size, stride), n)

    def classify_write(self, n, nodes, order, users, grad, root_of):
        """How an in-place op's result is replayed: 'real' (a lockstep in-place write, outside
        autograd), 'rebind' (the node's value replaces the target's), or ('scatter', base, chain)
        (the base rebuilt with the view's region replaced); refuses writes that other aliases
        would read afterwards."""
        torch = self.torch
        target = n.args[0]
        name = _op_name(n.target)
        if not isinstance(target, torch.fx.Node):
            raise self.fail("aten.%s writes into a non-tensor" % name, n)
        root = root_of.get(target, target)
        if not grad.get(n, False) and not grad.get(root, False):
            return "real"
        if root.op in ("placeholder",) or root.op == "get_attr" and grad.get(root, False):
            raise self.fail("aten.%s writes into %s, which lockstep does not do (a converted model does not "
                            "change its inputs or parameters in forward)" % (
                                name, "an input" if root.op == "placeholder" else "a parameter"), n)
        if root.op == "get_attr":  # a buffer written with a value that carries gradients
            raise self.fail("aten.%s writes a value that carries gradients into a buffer" % name, n)
        # Views of the root taken before n (other than the target's own chain) must not be read
        # after n: they would see the old values. Views taken after n read the rebuilt root.
        chain_nodes, x = [], target
        while x is not root:
            chain_nodes.append(x)
            x = x.args[0]
        late = [u for a, r in root_of.items() if r is root and order[a] < order[n] and a not in chain_nodes
                for u in users[a] if order[u] > order[n]]
        if late:
            raise self.fail("aten.%s writes into a tensor that another view of it reads afterwards (%s)" % (
                name, late[0].name), n)
        root_late = [u for u in users[root] if order[u] > order[n] and u not in chain_nodes]
        chain_late = [u for c in chain_nodes for u in users[c] if order[u] > order[n] and u not in chain_nodes]
        if chain_late:
            raise self.fail("aten.%s writes into a view that is read again afterwards" % name, n)
        if target is root or not root_late:
            return "rebind"
        dims = list(range(len(_meta_shape(root) or ())))  # the view's dimensions, as base dimensions
        boxes, squeezed = [], []
        for c in reversed(chain_nodes):
            op = _op_name(c.target)
            size = _meta_shape(c.args[0])
            if op not in ("slice.Tensor", "select.int") or size is None:
                raise self.fail("aten.%s writes through aten.%s into a tensor read afterwards" % (name, op), n)
            dim = (c.args[1] if len(c.args) > 1 else 0) % len(size)
            if op == "slice.Tensor":
                start = c.args[2] if len(c.args) > 2 else None
                end = c.args[3] if len(c.args) > 3 else None
                step = c.args[4] if len(c.args) > 4 else 1
                if step != 1:
                    raise self.fail("aten.%s writes into a strided slice of a tensor read afterwards" % name, n)
                s, e, _ = slice(start, end, 1).indices(size[dim])
                boxes.append((dims[dim], s, max(s, e)))
            else:
                i = c.args[2] % size[dim]
                boxes.append((dims[dim], i, i + 1))
                squeezed.append(dims.pop(dim))
        chain = (sorted(squeezed), boxes)
        return ("scatter", root.name, chain)


def _refs(torch, a):
    if isinstance(a, torch.fx.Node):
        return _Ref(a.name)
    if isinstance(a, list):
        return [_refs(torch, v) for v in a]
    if isinstance(a, tuple) and not hasattr(a, "_fields"):
        return tuple(_refs(torch, v) for v in a)
    if isinstance(a, dict):
        return {k: _refs(torch, v) for k, v in a.items()}
    if isinstance(a, torch.dtype):
        return str(a).replace("torch.", "")
    if isinstance(a, (torch.device, torch.layout, torch.memory_format)):
        return None
    return a


def _tensor_from_torch(torch, t):
    t = t.detach().cpu()
    if t.dtype == torch.bool or t.dtype == torch.uint8:
        t = t.float()
    if t.dtype not in (torch.float32, torch.int64, torch.int32):
        raise ArgumentError("from_torch_module (aten route): a %s tensor; lockstep computes float32, int64 and "
                            "int32" % t.dtype)
    return _C.from_numpy(t.numpy())  # a copy


def prepare(module, seed=None):
    """The aten route's converted module before anything is recorded: ``module``'s parameters and
    buffers under their state_dict names, in ``module``'s mode. Each mode's program is recorded at
    the first call in that mode (from that call's inputs), or by ``record``; the module keeps a
    reference to ``module`` until both are recorded."""
    import torch
    if not isinstance(module, torch.nn.Module):
        raise TypeError("from_torch_module: expected a torch.nn.Module, got %s" % type(module).__name__)
    modes = {m.training for m in module.modules()}
    if len(modes) > 1:
        raise ArgumentError("from_torch_module (aten route): the module's submodules are in different training "
                            "modes; the aten route records all-training and all-evaluation graphs")
    for path, m in module.named_modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and m.momentum is None and m.track_running_stats:
            raise ArgumentError("from_torch_module (aten route): %s (%s) has momentum=None (a cumulative average "
                                "the recorded graph would freeze)" % (_place(path), type(m).__name__))
    class_name = type(module).__name__
    conv = _Converter(torch, module, class_name)
    out = AtenModule(class_name)
    conv.names = conv.state(out)
    d = out.__dict__
    d["_pending"] = conv
    d["_seed"] = _C.initial_seed() if seed is None else int(seed)
    out._set_training(bool(module.training))
    return out


def record(out, example_inputs, training, generalize_batch=True):
    """Records ``out``'s program for one mode from ``example_inputs`` (torch tensors; kept for the
    other mode), checks it on them against PyTorch's shapes, and leaves buffers and random streams
    as they were."""
    d = out.__dict__
    conv = d["_pending"]
    torch = conv.torch
    if not isinstance(example_inputs, tuple):
        example_inputs = (example_inputs,)
    for x in example_inputs:
        if not isinstance(x, torch.Tensor):
            raise TypeError("from_torch_module: example inputs must be torch tensors, got %s" % type(x).__name__)
    if d["_example"] is None:
        d["_example"] = example_inputs
    example_inputs = d["_example"]
    batch = example_inputs[0].shape[0] if example_inputs and example_inputs[0].dim() else 0
    # _batch_free: None before the first recording; False once a mode is at the example's shapes.
    generalize = generalize_batch and batch >= 1 and all(x.dim() and x.shape[0] == batch for x in example_inputs) \
        and d["_batch_free"] is not False
    modes = [training]
    free = generalize
    try:
        graphs = [_capture(torch, conv.module, example_inputs, training)]
        merged = None
        if generalize:
            batches = [batch, batch + 1, batch + 3]
            graphs += [_capture(torch, conv.module, _batched(torch, example_inputs, b - batch), training)
                       for b in batches[1:]]
            merged = _merge_graphs(graphs, batches)
            free = merged is not None
    except _CaptureError as e:
        raise ArgumentError("from_torch_module (aten route): %s at %s: %s" % (conv.class_name, conv.place(e.path), e)) \
            from None
    conv.compile(graphs[0], merged, out, training)
    if not free and d["_batch_free"]:  # the other mode generalised, this one not: both at the example's shapes
        for other in list(d["_programs"]):
            if other != training:
                conv.compile(_capture(torch, conv.module, example_inputs, other), None, out, other)
                modes.append(other)
    d["_batch_free"] = free
    d["_input_shapes"] = [tuple([None] + list(x.shape[1:])) if free else tuple(x.shape) for x in example_inputs]
    d["_input_dtypes"] = ["float" if x.is_floating_point() else "int64" for x in example_inputs]
    # A check run on the example (shapes against PyTorch's) with throwaway streams; state restored after.
    buffers = [(t, t.detach().clone()) for _, t in out.named_buffers()]  # parameters do not change here
    streams = d["_generators"]
    d["_generators"] = {site: _C.Generator(0, "dropout/" + site) for site in streams}
    lockstep_inputs = [_tensor_from_torch(torch, x) for x in example_inputs]
    try:
        with no_grad():
            for mode in modes:
                _run(out, d["_programs"][mode], d["_outputs"][mode], lockstep_inputs,
                     batch if free else None, check=True)
    finally:
        d["_generators"] = {site: streams.get(site) or _C.Generator(d["_seed"], "dropout/" + site)
                            for site in d["_generators"]}
        with no_grad():
            for t, value in buffers:
                t.copy_(value)
    if len(d["_programs"]) == 2:  # both modes recorded: the torch module is no longer needed
        d["_pending"] = None
        d["_example"] = None


def convert(module, example_inputs, seed=None, generalize_batch=True):
    """The aten route of from_torch_module: ``module`` (a torch.nn.Module) recorded on
    ``example_inputs`` (a tensor or a tuple of tensors) in evaluation and training mode, as a
    lockstep module (see the module docstring)."""
    out = prepare(module, seed)
    for training in (False, True):
        record(out, example_inputs, training, generalize_batch)
    return out
