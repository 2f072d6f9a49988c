"""ONNX models (docs/onnx.md): ``lockstep.onnx.load(path_or_bytes)`` imports an .onnx file as a
lockstep module. Its initializers are parameters under their ONNX names (for a model exported from
PyTorch, its state_dict names), its graph runs lockstep's ops: the same file and input give the
same output bits as the native ``lockstep run``, in WebAssembly and on every platform, and
fine-tuning it (fit, any optimizer) gives the same checkpoint hash everywhere.

An operator, attribute or type lockstep does not compute exactly raises UnavailableError at load,
naming the node, its operator and opset; a malformed file raises FormatError.
"""
import collections
import os

from . import _C
from ._tensor import Tensor, from_numpy
from .nn._module import extend

Io = collections.namedtuple("Io", ["name", "dtype", "shape"])
Io.__doc__ = ("A graph input or output: name, dtype ('float', 'int64', 'int32', 'bool', 'float64', ...; 'sequence of "
          "float' and the like for sequences and optionals), shape (a str per named dimension).")
Io.__module__ = "lockstep.onnx"


def _tensor_of(value, where):
    if isinstance(value, Tensor):
        return value
    import numpy as np
    if isinstance(value, np.ndarray):
        return from_numpy(value)
    raise TypeError("%s: expected a lockstep.Tensor or a numpy.ndarray, got %s" % (where, type(value).__name__))


@extend(_C.onnx.OnnxModel)
class OnnxModel:
    """An ONNX graph imported as a module: forward (one-input graphs), run (any), and everything a
    lockstep module does (parameters, state_dict, train/eval, fit, evaluate, save, hash)."""

    inputs = property(lambda self: [Io(*i) for i in self._inputs()], doc="The graph's inputs, in order.")
    outputs = property(lambda self: [Io(*o) for o in self._outputs()], doc="The graph's outputs, in order.")

    def run(self, inputs):
        """Runs the graph on every input: a dict by name (or a list in ``inputs`` order) of tensors or
        NumPy arrays (int64 arrays feed integer inputs, float32 0/1 bool ones, float32 float64 ones,
        widened exactly). Returns a dict of every output by name (bool outputs as float32 0/1, float64
        outputs as float32, each rounded once to nearest even)."""
        names = [i.name for i in self.inputs]
        if isinstance(inputs, dict):
            unknown = sorted(set(inputs) - set(names))
            if unknown:
                raise TypeError("run: the model has no input %s (its inputs: %s)" % (", ".join(map(repr, unknown)),
                                                                                   ", ".join(names)))
            missing = [n for n in names if n not in inputs]
            if missing:
                raise TypeError("run: missing input %s (its inputs: %s)" % (", ".join(map(repr, missing)), ", ".join(names)))
            values = [inputs[n] for n in names]
        else:
            values = list(inputs)
            if len(values) != len(names):
                raise TypeError("run: the model takes %d inputs (%s), got %d" % (len(names), ", ".join(names), len(values)))
        tensors = [_tensor_of(v, "run: input '%s'" % n) for n, v in zip(names, values)]
        return collections.OrderedDict(zip([o.name for o in self.outputs], self._run(tensors)))

    def extra_repr(self):
        return "opset=%d, inputs=%s, outputs=%s" % (self.opset, [i.name for i in self.inputs],
                                                     [o.name for o in self.outputs])


OnnxModel.__module__ = "lockstep.onnx"


def load(model, seed=0):
    """Imports an ONNX model from a path or from the file's bytes. ``seed`` seeds the graph's
    Dropout streams (used only while the module trains). The module starts in evaluation mode."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        data = bytes(model)
    elif isinstance(model, (str, os.PathLike)):
        with open(model, "rb") as f:
            data = f.read()
    else:
        raise TypeError("onnx.load: expected a path or the bytes of an .onnx file, got %s" % type(model).__name__)
    return _C.onnx._load(data, int(seed))


def from_torch(module, example_inputs, seed=0):
    """A torch.nn.Module through PyTorch's ONNX exporter (torch.onnx.export, opset 17, batch
    dimension dynamic, weights under their state_dict names, BatchNormalization kept as a node) and
    back as an OnnxModel in the module's training mode. ``example_inputs``: a tensor or a tuple of
    tensors for the export. Eval-mode exports drop Dropout (docs/onnx.md)."""
    import io
    import torch
    if not isinstance(example_inputs, tuple):
        example_inputs = (example_inputs,)
    was_training = module.training
    names = ["input_%d" % i for i in range(len(example_inputs))] if len(example_inputs) > 1 else ["input"]
    buffer = io.BytesIO()
    module.eval()
    try:
        with torch.no_grad():
            torch.onnx.export(module, example_inputs, buffer, opset_version=17, do_constant_folding=False,
                              training=torch.onnx.TrainingMode.PRESERVE, input_names=names,
                              dynamic_axes={n: {0: "batch"} for n in names})
    finally:
        module.train(was_training)
    out = load(buffer.getvalue(), seed)
    out.train(was_training)
    return out
