"""Checkpoints: canonical safetensors files whose SHA-256 is the model hash (contract rule 8)."""
import collections
import os

from . import _C
from ._errors import ArgumentError
from ._tensor import Tensor


def _module(value, where):
    from .nn import Module
    if not isinstance(value, Module):
        raise TypeError("%s: expected a lockstep.nn.Module, got %s" % (where, type(value).__name__))
    return value


def save(model, path):
    """Writes the model's canonical checkpoint atomically; returns its hash (= `sha256sum path`)."""
    return _C._save(_module(model, "save"), os.fspath(path))


def load(path, model=None):
    """The tensors of a safetensors checkpoint (lockstep's or PyTorch's) as an OrderedDict, after
    validating the whole file; with ``model``, loads them into it instead (names, shapes and dtypes
    must match; nothing changes unless everything does) and returns the model."""
    if model is not None:
        _C._load_into(_module(model, "load"), os.fspath(path))
        return model
    _, tensors = _C._read_safetensors(os.fspath(path))
    return collections.OrderedDict(tensors)


def hash(value):
    """The model hash of a module (SHA-256 of its canonical checkpoint), or the SHA-256 of bytes or
    of a file given by path."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _C.sha256(bytes(value))
    if isinstance(value, (str, os.PathLike)):
        return _C.file_sha256(os.fspath(value))
    return _C._model_hash(_module(value, "hash"))


def encode(model):
    """The canonical checkpoint's bytes."""
    return _C._encode(_module(model, "encode"))


def load_bytes(model, data):
    """Loads checkpoint bytes into the model (validated first); returns the model."""
    _C._load_bytes_into(_module(model, "load_bytes"), bytes(data))
    return model


def save_safetensors(tensors, path, metadata=None):
    """Writes a mapping name -> tensor as a canonical safetensors file; returns its SHA-256."""
    named = []
    for name, t in tensors.items():
        if not isinstance(t, Tensor):
            raise TypeError("save_safetensors: '%s' is a %s, expected a lockstep tensor" % (name, type(t).__name__))
        named.append((str(name), t))
    meta = {str(k): str(v) for k, v in (metadata or {}).items()}
    if "__metadata__" in tensors:
        raise ArgumentError("save_safetensors: '__metadata__' is not a tensor name")
    return _C._write_safetensors(os.fspath(path), named, meta)


def load_safetensors(path):
    """(metadata, OrderedDict of tensors) of any valid safetensors file."""
    metadata, tensors = _C._read_safetensors(os.fspath(path))
    return metadata, collections.OrderedDict(tensors)
