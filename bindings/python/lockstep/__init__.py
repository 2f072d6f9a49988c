"""lockstep: bitwise-reproducible deep learning with PyTorch's API.

The same model, data and seed give the same bits, and the same SHA-256 model hash, on every
platform lockstep runs on (x86 at every SIMD level, AArch64, WebAssembly, CUDA). A PyTorch user
starts with two lines::

    import lockstep
    model = lockstep.from_torch_module(model)

and then trains ``model`` with lockstep.optim and lockstep.fit (or a loop of their own). See
docs/python.md.
"""
from . import _C
from . import _errors
from ._errors import (ArgumentError, CancelledError, Error, FormatError, InternalError, IoError, ResourceError,
                      StateError, UnavailableError)

_C._register_errors(_errors.BY_KIND)

from ._tensor import (Tensor, arange, as_tensor, dtype, empty, float32, fmod, from_numpy, full, full_like, int32,
                      int64, ones, ones_like, rand, randn, remainder, stack, tensor, zeros, zeros_like)
from ._tensor import install as _install_tensor_methods

_install_tensor_methods()

from ._C import (Generator, argmax, cat, eq, exp, gt, log, manual_seed, initial_seed, matmul, maximum, mean,
                 minimum, pow, relu, sigmoid, softmax, sqrt, sum, tanh, get_num_threads, set_num_threads,
                 sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, floor, ceil, round,
                 log_softmax, sha256, canonicalize)
from ._runtime import cuda, current_device, device, info, is_grad_enabled, no_grad, set_device, trace
from ._io import encode, hash, load, load_bytes, load_safetensors, save, save_safetensors
from ._train import EvalResult, FitResult, Progress, VerifyResult, evaluate, fit, mnist_reference_run, verify_run
from . import nn, optim, data
from . import onnx
from ._torch import from_torch_module, to_torch_state_dict
from ._export import export
from ._version import __version__

float = float32
long = int64
int = int32
Generator.__module__ = "lockstep"

__all__ = [
    "Tensor", "tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "arange", "randn", "rand",
    "zeros_like", "ones_like", "full_like", "stack", "cat", "dtype", "float32", "int32", "int64", "Generator",
    "manual_seed", "initial_seed", "no_grad", "is_grad_enabled", "device", "set_device", "current_device", "cuda",
    "info", "trace", "save", "load", "hash", "encode", "load_bytes", "save_safetensors", "load_safetensors",
    "sha256", "canonicalize", "fit", "evaluate", "mnist_reference_run", "from_torch_module", "to_torch_state_dict",
    "nn", "optim", "data", "onnx", "Error", "ArgumentError", "FormatError", "IoError", "StateError", "UnavailableError",
    "ResourceError", "CancelledError", "InternalError", "set_num_threads", "get_num_threads", "matmul", "sum",
    "mean", "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "softmax", "log_softmax", "maximum", "minimum", "pow",
    "argmax", "eq", "gt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
    "floor", "ceil", "round", "fmod", "remainder", "FitResult", "EvalResult", "Progress", "export",
    "verify_run", "VerifyResult",
]
