"""Tensors: creation, NumPy interchange, indexing, printing and PyTorch's method names.

``lockstep.Tensor`` is the engine's class (lockstep._C.Tensor); this module adds the methods that
are only argument handling in Python. Every computation runs in the engine, so its bits follow the
numerical contract (docs/numerics.md) whichever way it is called.
"""
import collections
import operator

import numpy as np

from . import _C
from ._C import Tensor, dtype
from ._errors import ArgumentError, StateError

# The correctly rounded trigonometric and hyperbolic functions: the same names in torch and lockstep.
TRIG = ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh")

float32 = dtype.float32
int32 = dtype.int32
int64 = dtype.int64
_NUMPY = {float32: np.float32, int32: np.int32, int64: np.int64}

max_result = collections.namedtuple("max_result", ["values", "indices"])


def _sizes(args, what):
    """(2, 3), ((2, 3),) and ([2, 3],) all mean the shape [2, 3], as in torch.zeros."""
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        args = tuple(args[0])
    try:
        return [operator.index(a) for a in args]
    except TypeError:
        raise TypeError("%s: sizes must be ints, got %r" % (what, args)) from None


def _dtype_of(value, what):
    if value is None or isinstance(value, dtype):
        return value
    raise TypeError("%s: dtype must be lockstep.float32, int32 or int64, got %r" % (what, value))


def tensor(data, dtype=None, requires_grad=False):
    """A new tensor holding a copy of ``data`` (numbers, nested lists, a NumPy array or a tensor).

    Without ``dtype``, floating-point data becomes float32 (float64 values are rounded once to
    float32) and integers or booleans int64, as in PyTorch.
    """
    dtype = _dtype_of(dtype, "tensor")
    if isinstance(data, Tensor):
        data = data.detach().numpy()
    array = np.asarray(data)
    if dtype is None:
        if array.dtype.kind == "f":
            dtype = float32
        elif array.dtype.kind in "iub":
            dtype = int64
        else:
            raise TypeError("tensor: expected numbers, got data of NumPy dtype %s" % array.dtype)
    # np.require keeps a 0-d array 0-d (ascontiguousarray would make it [1], as torch.tensor(5) is not).
    t = _C.from_numpy(np.require(array, dtype=_NUMPY[dtype], requirements="C"))
    if requires_grad:
        t.requires_grad = True
    return t


def as_tensor(data, dtype=None):
    """``data`` itself when it is already a tensor of that dtype, else ``tensor(data, dtype)``."""
    if isinstance(data, Tensor) and (dtype is None or data.dtype == dtype):
        return data
    return tensor(data, dtype=dtype)


def from_numpy(array):
    """A tensor holding a copy of a float32, int32 or int64 NumPy array.

    Unlike torch.from_numpy this copies: the engine owns its (aligned, per-device) storage. Any
    strides and read-only arrays are fine. The other direction, ``tensor.numpy()``, shares memory.
    """
    if not isinstance(array, np.ndarray):
        raise TypeError("from_numpy: expected a numpy.ndarray, got %s" % type(array).__name__)
    return _C.from_numpy(array)


def _made(t, dtype, requires_grad):
    if dtype is not None and dtype != t.dtype:
        t = t._to_dtype(dtype)
    if requires_grad:
        t.requires_grad = True
    return t


def zeros(*size, dtype=None, requires_grad=False):
    """A tensor of zeros (float32 unless ``dtype``)."""
    return _made(_C._zeros(_sizes(size, "zeros"), _dtype_of(dtype, "zeros") or float32), None, requires_grad)


def empty(*size, dtype=None, requires_grad=False):
    """As zeros(): lockstep never hands out uninitialised memory."""
    return zeros(*size, dtype=dtype, requires_grad=requires_grad)


def ones(*size, dtype=None, requires_grad=False):
    """A tensor of ones (float32 unless ``dtype``)."""
    return _made(_C._ones(_sizes(size, "ones")), _dtype_of(dtype, "ones"), requires_grad)


def full(size, fill_value, dtype=None, requires_grad=False):
    """A tensor filled with ``fill_value`` (rounded to float32; then converted to ``dtype``)."""
    return _made(_C._full(_sizes((size,), "full"), float(fill_value)), _dtype_of(dtype, "full"), requires_grad)


def zeros_like(t, dtype=None):
    """Zeros of t's shape (and dtype unless given)."""
    return zeros(t.shape, dtype=dtype or t.dtype)


def ones_like(t, dtype=None):
    """Ones of t's shape (and dtype unless given)."""
    return ones(t.shape, dtype=dtype or t.dtype)


def full_like(t, fill_value, dtype=None):
    """``fill_value`` in t's shape (and dtype unless given)."""
    return full(t.shape, fill_value, dtype=dtype or t.dtype)


def arange(start, end=None, step=1, dtype=None):
    """Values start, start + step, ... below end: int64 for int arguments, else float32 (each
    value computed in float64 and rounded once)."""
    if end is None:
        start, end = 0, start
    ints = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
    dtype = _dtype_of(dtype, "arange") or (int64 if ints else float32)
    if ints and start == 0 and step == 1 and end >= 0:
        return _C._arange(end, dtype)
    return tensor(np.arange(start, end, step, dtype=np.float64).astype(_NUMPY[dtype]), dtype=dtype)


def randn(*size, generator=None, requires_grad=False):
    """Standard normal draws (contract rule 7) from ``generator`` or the default stream "init"."""
    return _made(_C._randn(_sizes(size, "randn"), generator), None, requires_grad)


def rand(*size, generator=None, requires_grad=False):
    """Uniform draws in [0, 1) from ``generator`` or the default stream "init"."""
    return _made(_C._rand(_sizes(size, "rand"), generator), None, requires_grad)


def stack(tensors, dim=0):
    """Tensors of one shape joined along a new dimension."""
    tensors = list(tensors)
    if not tensors:
        raise ArgumentError("stack: expected at least one tensor")
    d = dim if dim >= 0 else dim + tensors[0].dim() + 1
    return _C.cat([_unsqueeze(t, d) for t in tensors], d)


# ---- methods --------------------------------------------------------------------------------------

def _numpy(self):
    """The tensor's data as a NumPy array that shares its memory (no copy, whatever the strides)."""
    if self.requires_grad:
        raise StateError("numpy: the tensor requires grad; use tensor.detach().numpy()")
    return self._numpy_view()


def _array(self, dtype=None, copy=None):
    a = _numpy(self)
    return a if dtype is None else a.astype(dtype)


def _tolist(self):
    return self.detach().numpy().tolist()


def _repr(self):
    data = np.array2string(self.detach().cpu().numpy(), separator=", ", prefix="tensor(", threshold=1000)
    extra = ""
    if self.dtype == int32:
        extra += ", dtype=lockstep.int32"
    if self.device != "cpu":
        extra += ", device='%s'" % self.device
    if self.grad_fn is not None:
        extra += ", grad_fn=<%s>" % self.grad_fn.name()
    elif self.requires_grad:
        extra += ", requires_grad=True"
    return "tensor(%s%s)" % (data, extra)


def _len(self):
    if self.dim() == 0:
        raise TypeError("len() of a 0-d tensor")
    return self.shape[0]


def _iter(self):
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (_select(self, 0, i) for i in range(self.shape[0]))


def _size(self, dim=None):
    return self.shape if dim is None else self.shape[dim]


def _reshape(self, *shape):
    return self._reshape(_sizes(shape, "reshape"))


def _view(self, *shape):
    return self._view(_sizes(shape, "view"))


def _permute(self, *dims):
    return self._permute(_sizes(dims, "permute"))


def _expand(self, *sizes):
    sizes = _sizes(sizes, "expand")
    lead = len(sizes) - self.dim()
    return self._expand([self.shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(sizes)])


# squeeze, unsqueeze and select are views here, whatever the strides, as in PyTorch (so that
# t[:, 2] = v writes into t): a size-1 dimension can always be added or dropped by a view.
def _drop_dims(self, dims):
    return self._view([n for i, n in enumerate(self.shape) if i not in dims])


def _squeeze(self, dim=None):
    if dim is None:
        return _drop_dims(self, {d for d, n in enumerate(self.shape) if n == 1})
    d = dim + self.dim() if dim < 0 else dim
    if not 0 <= d < self.dim():
        raise IndexError("squeeze: dimension %d out of range for rank %d" % (dim, self.dim()))
    return _drop_dims(self, {d}) if self.shape[d] == 1 else self


def _unsqueeze(self, dim):
    d = dim + self.dim() + 1 if dim < 0 else dim
    if not 0 <= d <= self.dim():
        raise IndexError("unsqueeze: dimension %d out of range for rank %d" % (dim, self.dim()))
    shape = list(self.shape)
    shape.insert(d, 1)
    return self._view(shape)


def _select(self, dim, index):
    d = dim + self.dim() if dim < 0 else dim
    if not 0 <= d < self.dim():
        raise IndexError("select: dimension %d out of range for rank %d" % (dim, self.dim()))
    n = self.shape[d]
    if not -n <= index < n:
        raise IndexError("index %d is out of range for dimension %d of size %d" % (index, d, n))
    index %= n
    return _drop_dims(self._slice(d, index, index + 1, 1), {d})


def _to(self, *args, **kwargs):
    """to(dtype), to(device), to(device, dtype) or to(other): a converted copy, or the tensor itself."""
    target_dtype, device = kwargs.pop("dtype", None), kwargs.pop("device", None)
    if kwargs:
        raise TypeError("to: unexpected arguments %s" % sorted(kwargs))
    for a in args:
        if isinstance(a, dtype):
            target_dtype = a
        elif isinstance(a, str):
            device = a
        elif isinstance(a, Tensor):
            target_dtype, device = a.dtype, a.device
        else:
            raise TypeError("to: expected a dtype, a device name or a tensor, got %r" % (a,))
    out = self
    if device is not None and device != out.device:
        out = out._to_device(device)
    if target_dtype is not None and target_dtype != out.dtype:
        out = out._to_dtype(target_dtype)
    return out


def _backward(self, gradient=None, retain_graph=None, create_graph=False):
    """Gradients of this tensor into the leaves' ``grad`` (accumulating). Without retain_graph the
    graph is freed, and a second backward through it raises StateError (PyTorch's rule)."""
    if create_graph:
        raise ArgumentError("backward: create_graph (higher-order gradients) is not supported")
    self._backward(gradient, bool(retain_graph))


def _requires_grad_(self, requires_grad=True):
    self.requires_grad = requires_grad
    return self


def _copy_(self, src):
    """Writes ``src`` (a tensor, an array or a number, broadcast to this shape) into this tensor in
    place, outside autograd: inside lockstep.no_grad() for tensors that take part in it."""
    if not isinstance(src, Tensor):
        src = full(self.shape, src) if np.isscalar(src) else tensor(src)
    if src.dtype != self.dtype:
        src = src._to_dtype(self.dtype)
    if src.shape != self.shape:
        src = src._expand(list(self.shape))
    self._copy_from(src)
    return self


def _fill_(self, value):
    return _copy_(self, value)


def _zero_(self):
    return _copy_(self, 0.0)


def _inplace(op):
    def method(self, other):
        return _copy_(self, op(self, other))
    return method


def _max(self, dim=None, keepdim=False):
    if dim is None:
        return _C.amax(self.flatten(), 0)
    return max_result(_C.amax(self, dim, keepdim), _C.argmax(self, dim, keepdim))


def _argmax(self, dim=None, keepdim=False):
    return _C.argmax(self.flatten(), 0) if dim is None else _C.argmax(self, dim, keepdim)


def _var(self, dim, unbiased=True, keepdim=False, correction=None):
    return _C.var(self, dim, (1 if unbiased else 0) if correction is None else correction, keepdim)


def _index(self, key):
    """Basic indexing: ints, slices with a positive step, None and Ellipsis (views, no copy)."""
    if not isinstance(key, tuple):
        key = (key,)
    explicit = sum(1 for k in key if k is not None and k is not Ellipsis)
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("an index can only have one ellipsis")
    out, d = self, 0
    for k in key:
        if k is Ellipsis:
            d += self.dim() - explicit
        elif k is None:
            out = _unsqueeze(out, d)
            d += 1
        elif isinstance(k, slice):
            start, stop, step = k.indices(out.shape[d])
            if step < 1:
                raise ArgumentError("index: slices need a positive step, got %d" % step)
            out = out._slice(d, start, max(start, stop), step)
            d += 1
        elif isinstance(k, (int, np.integer)):
            if d >= out.dim():
                raise IndexError("too many indices for a tensor of rank %d" % self.dim())
            out = _select(out, d, operator.index(k))
        else:
            raise TypeError("index: lockstep tensors take ints, slices, None and ..., got %s (use "
                            "lockstep.nn.functional.embedding or masks for gathers)" % type(k).__name__)
    return out


def _setitem(self, key, value):
    _copy_(_index(self, key), value)


def _remainder(name):
    """fmod or remainder of a tensor and a tensor or a number (a number is a float32 scalar)."""
    fn = getattr(_C, name)

    def op(a, b):
        a = a if isinstance(a, Tensor) else _C._full([], float(a))
        b = b if isinstance(b, Tensor) else _C._full([], float(b))
        return fn(a, b)
    op.__name__, op.__doc__ = name, fn.__doc__
    return op


fmod, remainder = _remainder("fmod"), _remainder("remainder")


def _method(name, fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__, method.__doc__ = name, fn.__doc__
    return method


def install():
    """Adds the Python-level methods to lockstep.Tensor."""
    T = Tensor
    T.__module__ = "lockstep"
    T.numpy, T.__array__, T.tolist, T.__repr__ = _numpy, _array, _tolist, _repr
    T.__len__, T.__iter__, T.size = _len, _iter, _size
    T.__bool__ = lambda self: bool(self.item())
    T.__float__ = lambda self: float(self.item())
    T.__int__ = lambda self: int(self.item())
    T.__index__ = lambda self: operator.index(self.item())
    T.reshape, T.view, T.permute, T.expand, T.squeeze = _reshape, _view, _permute, _expand, _squeeze
    T.unsqueeze, T.select = _unsqueeze, _select
    T.T = property(lambda self: self.transpose(0, 1) if self.dim() == 2 else self.permute(*reversed(range(self.dim()))))
    T.to, T.float, T.long, T.int = _to, lambda s: _to(s, float32), lambda s: _to(s, int64), lambda s: _to(s, int32)
    T.cpu, T.cuda = lambda s: _to(s, "cpu"), lambda s, device="cuda": _to(s, device)
    T.type_as = lambda self, other: _to(self, other.dtype)
    T.backward, T.requires_grad_ = _backward, _requires_grad_
    T.copy_, T.fill_, T.zero_ = _copy_, _fill_, _zero_
    T.add_, T.sub_ = _inplace(operator.add), _inplace(operator.sub)
    T.mul_, T.div_ = _inplace(operator.mul), _inplace(operator.truediv)
    T.__iadd__, T.__isub__, T.__imul__, T.__itruediv__ = T.add_, T.sub_, T.mul_, T.div_
    T.__getitem__, T.__setitem__ = _index, _setitem
    T.sum = lambda self, dim=None, keepdim=False: _C.sum(self, dim, keepdim)
    T.mean = lambda self, dim=None, keepdim=False: _C.mean(self, dim, keepdim)
    T.var, T.max, T.argmax = _var, _max, _argmax
    for name in ("exp", "log", "sqrt", "tanh", "sigmoid", "relu", "neg", "matmul", "maximum", "minimum",
                 "masked_fill", "pow", "eq", "gt", "floor", "ceil", "round", *TRIG):
        setattr(T, name, _method(name, getattr(_C, name)))
    T.fmod, T.remainder = _method("fmod", fmod), _method("remainder", remainder)
    T.__mod__ = remainder
    T.__rmod__ = lambda self, other: remainder(other, self)
    T.softmax = lambda self, dim: _C.softmax(self, dim)
    T.log_softmax = lambda self, dim: _C.log_softmax(self, dim)
    T.ne = lambda self, other: self != other
    T.lt = lambda self, other: self < other
