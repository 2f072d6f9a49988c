"""Grad mode, devices, kernel threads, library information and op-level traces."""
import contextlib
import functools
import os

from . import _C
from ._errors import ArgumentError

is_grad_enabled = _C.is_grad_enabled


class no_grad:
    """Context manager (or decorator) that turns autograd off on this thread, as torch.no_grad."""

    def __enter__(self):
        self._scope = _C._NoGradScope()
        self._scope.enter()
        return self

    def __exit__(self, *exc):
        self._scope.exit()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with no_grad():
                return fn(*args, **kwargs)
        return wrapped


def set_device(name):
    """Makes "cpu", "cuda" or "cuda:N" this thread's current device: new tensors live there and
    every op's kernels run there (the same bits on every device)."""
    _C._set_device(str(name))


def current_device():
    """This thread's current device ("cpu", "cuda:0", ...)."""
    return _C._current_device()


@contextlib.contextmanager
def device(name):
    """Makes a device current for a ``with`` block, restoring the previous one after."""
    previous = _C._current_device()
    _C._set_device(str(name))
    try:
        yield
    finally:
        _C._set_device(previous)


class cuda:
    """CUDA devices through the plugin (liblockstep_cuda.so), when there is one."""

    @staticmethod
    def is_available():
        return bool(_C._cuda_devices()[1])

    @staticmethod
    def devices():
        """The devices the plugin reports ("cuda:0 (NVIDIA ..., compute 9.0, ...)"), or []."""
        return list(_C._cuda_devices()[1])

    @staticmethod
    def why_unavailable():
        """Why there are no devices (no plugin, no driver, ...); empty when there are."""
        return _C._cuda_devices()[2]


def info():
    """Version, contract version, SIMD target, platform, kernel threads, and the calling thread's
    floating-point mode ("floating_point"): where another library set flush-to-zero or another
    rounding mode (torch.set_flush_denormal), it says so; lockstep computes in the contract's mode
    regardless and gives the thread its own mode back."""
    return dict(_C._info())


class trace:
    """Records an op-level trace (docs/diagnostics.md) of what runs on this thread inside the
    ``with`` block: every op's step, phase, module path, hash and statistics; ``lockstep diff``
    compares two traces. ``model`` names the modules and parameters. Without ``path`` the trace
    stays in memory: ``bytes()`` (JSON lines) and ``values()`` (safetensors sidecar of the records
    chosen by values_from/values_to/values_pattern)."""

    def __init__(self, model=None, path=None, values_path=None, values_from=0, values_to=None, values_pattern="",
                 source="python"):
        options = _C._TraceOptions()
        options.path = "" if path is None else os.fspath(path)
        options.values_path = "" if values_path is None else os.fspath(values_path)
        options.values_from = int(values_from)
        options.values_to = int(values_from if values_to is None else values_to)
        options.values_pattern = str(values_pattern)
        options.source = str(source)
        self._options, self._model, self._scope = options, model, None

    def __enter__(self):
        if self._scope is not None:
            raise ArgumentError("trace: this trace has already been used; make a new one")
        self._scope = _C._TraceScope(self._options, self._model)
        return self

    def __exit__(self, *exc):
        self._scope.finish()
        return False

    def bytes(self):
        return self._scope.bytes()

    def values(self):
        return self._scope.values()

    @property
    def records(self):
        return self._scope.records
