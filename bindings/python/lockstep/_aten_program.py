"""The aten route's programs (lockstep/_aten.py): the recorded instructions, the module that holds
a converted model's parameters and its evaluation and training programs (``AtenModule``), and the
interpreter that runs a program with lockstep's ops (``_run``).
"""
import numpy as np

from . import _C
from ._errors import ArgumentError
from ._tensor import Tensor
from ._runtime import no_grad
from . import nn
from ._aten_ops import _INPLACE, _Unsupported, _write_value


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
        from ._aten import record  # the capture imports this module
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
                    if new is not target:  # a folded activation's value is its target already
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
