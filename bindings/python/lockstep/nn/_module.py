"""lockstep.nn.Module: torch.nn.Module's Python surface over the engine's nn::Module.

Every module, built-in or written in Python, is an engine module: its parameters are registered in
the engine, so checkpoints, hashes and traces see them under PyTorch's names. A subclass written in
Python registers what it assigns (``self.fc = nn.Linear(...)``, ``self.w = nn.Parameter(...)``)
and its ``forward`` is called by the engine when the module sits inside an engine container
(Sequential) or runs under fit().

Each module keeps its children's Python objects in ``_modules`` (built on first use from the
engine), which keeps a Python subclass alive as long as its parent: the engine holds the module,
Python holds the code of its forward.
"""
import collections
import functools

from .. import _C
from .._errors import ArgumentError
from .._tensor import Tensor

Module = _C.nn.Module
_IGNORED = {"__dict__", "__weakref__", "__module__", "__qualname__", "__doc__"}


def extend(cls):
    """Class decorator: copies the decorated body's attributes onto the engine class ``cls`` (the
    engine's own constructor stays reachable as ``cls._cinit``) and returns ``cls``."""
    def apply(body):
        if "__init__" in vars(body) and "_cinit" not in vars(cls):
            cls._cinit = cls.__init__
        for name, value in vars(body).items():
            if name not in _IGNORED:
                setattr(cls, name, value)
        if body.__doc__:
            try:
                cls.__doc__ = body.__doc__
            except (AttributeError, TypeError):
                pass
        cls.__module__ = "lockstep.nn"
        return cls
    return apply


class Parameter(Tensor):
    """A tensor that a module registers as a parameter when assigned to it (requires grad)."""

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = _C._zeros([0], _C.dtype.float32)
        if not isinstance(data, Tensor):
            raise TypeError("Parameter: expected a lockstep tensor, got %s" % type(data).__name__)
        super().__init__(data.detach())
        self.requires_grad = requires_grad


Parameter.__module__ = "lockstep.nn"
_IncompatibleKeys = collections.namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


def _require_constructed(module, what):
    if not _C._constructed(module):
        raise TypeError("%s: %s.__init__ has not run yet: call super().__init__(...) first"
                        % (what, type(module).__name__))


def children_of(module):
    """The module's children's Python objects by name, cached in its __dict__."""
    d = module.__dict__.get("_modules")
    if d is None:
        d = collections.OrderedDict(module._children())
        module.__dict__["_modules"] = d
        annotate = getattr(type(module), "_annotate_children", None)
        if annotate is not None:  # settings the engine keeps private, for repr
            annotate(module, d)
    return d


def _as_state_tensor(name, value):
    if isinstance(value, Tensor):
        return value
    try:
        import numpy as np
        return _C.from_numpy(np.asarray(value))
    except TypeError:
        raise TypeError("load_state_dict: '%s' is a %s, expected a lockstep tensor or a NumPy array"
                        % (name, type(value).__name__)) from None


def _prepare_subclass(cls):
    """A Python subclass of Module gets its engine object before its own __init__ runs (so
    assigning layers before super().__init__() works instead of touching unconstructed memory).
    A subclass of a built-in layer cannot change its forward: the engine calls the built-in one."""
    base = next(c for c in cls.__mro__ if "_cinit" in c.__dict__)
    if base is not Module:
        if "forward" in cls.__dict__:
            raise TypeError("%s: a subclass of the built-in %s cannot override forward (the engine calls the "
                            "built-in one); subclass lockstep.nn.Module and hold a %s instead"
                            % (cls.__name__, base.__name__, base.__name__))
        return
    init = cls.__dict__.get("__init__")
    if init is None or getattr(init, "_lockstep_prepared", False):
        return

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        if not _C._constructed(self):
            Module._cinit(self)
            self.__dict__["_python_forward"] = True
        init(self, *args, **kwargs)

    __init__._lockstep_prepared = True
    cls.__init__ = __init__


def _keep_export_example(module, args):
    """A model converted from PyTorch module by module keeps its first call's inputs (as torch
    tensors): lockstep.export records the aten program from them."""
    if args and all(isinstance(a, Tensor) for a in args):
        import torch
        module.__dict__["_export_example"] = tuple(torch.from_numpy(a.detach().numpy().copy()) for a in args)


@extend(Module)
class _Module:
    """Base class of every layer and model: PyTorch's Module API over the engine's modules."""

    def __init__(self):
        if not _C._constructed(self):
            Module._cinit(self)
        self.__dict__["_python_forward"] = True

    def __init_subclass__(cls, **kwargs):
        _prepare_subclass(cls)

    def __call__(self, *args, **kwargs):
        if "_torch_skeleton" in self.__dict__ and "_export_example" not in self.__dict__:
            _keep_export_example(self, args)
        if len(args) == 1 and not kwargs and isinstance(args[0], Tensor):
            # Through the engine (module scopes in traces) unless the forward is Python code that
            # may return something other than one tensor and no trace is recording.
            if not self.__dict__.get("_python_forward") or _C._trace_active():
                return self._call(args[0])
        return self.forward(*args, **kwargs)

    def _trace_name(self):
        return type(self).__name__

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if _C._constructed(self):  # else the engine object does not exist yet (before __init__)
            children = children_of(self)
            if name in children:
                return children[name]
            t = self._own_tensor(name)
            if t is not None:
                return t
        raise AttributeError("'%s' object has no attribute '%s'" % (type(self).__name__, name))

    def __setattr__(self, name, value):
        if isinstance(value, Module):
            self.add_module(name, value)
        elif isinstance(value, Parameter):
            self.register_parameter(name, value)
        else:
            if "_modules" in self.__dict__ and name in self.__dict__["_modules"]:
                raise TypeError("cannot replace the submodule '%s' with a %s" % (name, type(value).__name__))
            registered = _C._constructed(self) and self._own_tensor(name) is not None
            if registered and name not in self.__dict__:
                raise TypeError("cannot assign a %s to '%s', a tensor of this %s (write into it with copy_ inside "
                                "lockstep.no_grad())" % (type(value).__name__, name, type(self).__name__))
            object.__setattr__(self, name, value)

    def add_module(self, name, module):
        """Registers ``module`` as the child ``name`` (subclasses, Sequential, ModuleList)."""
        _require_constructed(self, "add_module")
        if not isinstance(module, Module):
            raise TypeError("add_module: expected a lockstep.nn.Module, got %s" % type(module).__name__)
        self._register_module(name, module)
        children_of(self)[name] = module
        object.__setattr__(self, name, module)

    register_module = add_module

    def register_parameter(self, name, param):
        """Registers ``param`` (requires grad) under ``name``; Python subclasses only."""
        _require_constructed(self, "register_parameter")
        if not isinstance(param, Tensor):
            raise TypeError("register_parameter: expected a tensor, got %s" % type(param).__name__)
        self._register_parameter(name, param)
        object.__setattr__(self, name, param)

    def register_buffer(self, name, tensor, persistent=True):
        """Registers ``tensor`` as a buffer (saved in checkpoints, not trained); Python subclasses only."""
        if not persistent:
            raise ArgumentError("register_buffer: every buffer is part of the checkpoint (persistent=False is "
                                "not supported); keep a plain attribute instead")
        _require_constructed(self, "register_buffer")
        if not isinstance(tensor, Tensor):
            raise TypeError("register_buffer: expected a tensor, got %s" % type(tensor).__name__)
        self._register_buffer(name, tensor)
        object.__setattr__(self, name, tensor)

    # ---- traversal (PyTorch's names and orders)
    def named_parameters(self, prefix="", recurse=True):
        named = self._named_parameters() if recurse else [(n, t) for n, t in self._named_parameters() if "." not in n]
        return iter([(prefix + ("." if prefix else "") + n, t) for n, t in named])

    def parameters(self, recurse=True):
        return iter([t for _, t in self.named_parameters(recurse=recurse)])

    def named_buffers(self, prefix="", recurse=True):
        named = self._named_buffers() if recurse else [(n, t) for n, t in self._named_buffers() if "." not in n]
        return iter([(prefix + ("." if prefix else "") + n, t) for n, t in named])

    def buffers(self, recurse=True):
        return iter([t for _, t in self.named_buffers(recurse=recurse)])

    def named_children(self):
        return iter(list(children_of(self).items()))

    def children(self):
        return iter(list(children_of(self).values()))

    def named_modules(self, prefix=""):
        out = [(prefix, self)]
        for name, child in children_of(self).items():
            out.extend(child.named_modules(prefix + ("." if prefix else "") + name))
        return iter(out)

    def modules(self):
        return iter([m for _, m in self.named_modules()])

    # ---- state
    def state_dict(self):
        """Parameters and buffers by name, sorted (what a checkpoint holds), detached."""
        return collections.OrderedDict((n, t.detach()) for n, t in self._state_dict())

    def load_state_dict(self, state_dict, strict=True):
        """Copies values in; names, shapes and dtypes must match exactly, and nothing changes
        unless everything does."""
        if not strict:
            raise ArgumentError("load_state_dict: strict=False is not supported; every tensor must match")
        self._load_state_dict([(n, _as_state_tensor(n, v)) for n, v in state_dict.items()])
        return _IncompatibleKeys([], [])

    def train(self, mode=True):
        self._set_training(bool(mode))
        return self

    def eval(self):
        return self.train(False)

    def zero_grad(self, set_to_none=True):
        """Drops every parameter's gradient (the next backward starts from none)."""
        self._zero_grad()

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad = requires_grad
        return self

    def hash(self):
        """The model hash: SHA-256 of its canonical checkpoint (what `sha256sum` prints of save())."""
        return _C._model_hash(self)

    def to(self, *args, **kwargs):
        for a in list(args) + list(kwargs.values()):
            if a not in ("cpu", _C.dtype.float32, None) and a != _C._current_device():
                raise ArgumentError("to: a model is built where it runs: make the device current first "
                                    "(with lockstep.device(%r): ...) and build it there" % (a,))
        return self

    def cpu(self):
        return self.to("cpu")

    def float(self):
        return self

    def extra_repr(self):
        return ""

    def __repr__(self):
        children = children_of(self)
        head = "%s(%s" % (type(self).__name__, self.extra_repr())
        if not children:
            return head + ")"
        lines = [head]
        for name, child in children.items():
            text = repr(child).replace("\n", "\n  ")
            lines.append("  (%s): %s" % (name, text))
        return "\n".join(lines) + "\n)"

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | set(children_of(self)) |
                      {n for n, _ in self._state_dict() if "." not in n})
