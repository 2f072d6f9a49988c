"""lockstep.export(model, path): a model converted from PyTorch (an AtenModule, lockstep/_aten_program.py)
written as an ONNX file that lockstep's own importer (onnx/, docs/onnx.md) loads and trains.

The file holds the model's *training* program (the aten ops recorded with the module in training
mode), each aten op written as the ONNX operator(s) that the importer computes with the same
lockstep ops (docs/export.md has the table). The two mode-dependent parts switch with the
imported module's train()/eval(): batch norm is BatchNormalization (batch statistics while
training, the running ones otherwise), and dropout-like draws are Dropout nodes named after their
call site (identity in evaluation). Parameters and the running statistics are initializers under
their state_dict names (a tied parameter is one initializer); other buffers and the constants a
forward makes are Constant nodes, so they do not become parameters of the imported model.

The onnx Python package is needed only here (imported inside export). Anything the mapping does
not cover is an ArgumentError naming the aten op and the module path; the file is written to a
temporary name in the target's folder and renamed, so a refused export leaves nothing behind.
"""
import os
import tempfile

import numpy as np

from ._errors import ArgumentError
from ._tensor import TRIG as _TRIG

OPSET = 17
_DTYPES = {"float32": "float", "float": "float", "int64": "int64", "long": "int64", "bool": "bool"}


class _Refused(Exception):
    pass


def _refuse(message):
    raise _Refused(message)


def _place(path):
    return "the model itself" if not path else "'%s'" % path


def _refs_in(a):
    """The names of the graph values an instruction's arguments read."""
    if hasattr(a, "name") and type(a).__name__ == "_Ref":
        yield a.name
    elif isinstance(a, (list, tuple)):
        for v in a:
            yield from _refs_in(v)
    elif isinstance(a, dict):
        for v in a.values():
            yield from _refs_in(v)


def _storage(t):
    """A lockstep tensor's identity: its memory (numpy() shares it) and shape."""
    a = t.detach().numpy()
    return (a.__array_interface__["data"][0], a.shape, a.dtype.str)


class _Val:
    """A graph value: its ONNX name, element type ('float', 'int64', 'bool') and the example's shape
    (None when unknown). ``mask``: the keep probability of a dropout mask still to be divided by it."""
    __slots__ = ("name", "dtype", "shape", "mask")

    def __init__(self, name, dtype="float", shape=None, mask=None):
        self.name, self.dtype, self.shape, self.mask = name, dtype, shape, mask


class _Named:
    """An output that is a field of a named tuple the forward returns (already a graph value)."""
    __slots__ = ("val",)

    def __init__(self, val):
        self.val = val


class _Builder:
    def __init__(self, module, onnx):
        from ._aten_ops import _INPLACE, _VIEWS
        from ._aten_program import _Affine, _Ref
        self.Ref, self.Affine, self.INPLACE, self.VIEWS = _Ref, _Affine, _INPLACE, _VIEWS
        self.views = set()  # program names of values that are views of others (in PyTorch and the replay)
        self.onnx = onnx
        self.helper = onnx.helper
        self.module = module
        self.d = module.__dict__
        self.nodes, self.initializers, self.inputs = [], [], []
        self.values = {}
        self.counter = 0
        self.batch = None       # the ONNX value of the batch size ([1] int64), made on first need
        self.batch_input = None
        self.constant_cache = {}

    # ---- names and nodes ----
    def fresh(self, hint):
        self.counter += 1
        return "%s_%d" % (hint, self.counter)

    def node(self, op, inputs, hint=None, name=None, **attrs):
        out = self.fresh(hint or op.lower())
        self.nodes.append(self.helper.make_node(op, list(inputs), [out], name=name or out, **attrs))
        return out

    def const(self, array, dtype=None):
        """A Constant node holding ``array`` (numpy), cached by value."""
        a = np.asarray(array)
        if dtype is not None:
            a = a.astype(dtype)
        elif a.dtype.kind in "iu":
            a = a.astype(np.int64)
        elif a.dtype.kind == "f":
            a = a.astype(np.float32)
        key = (a.dtype.str, a.shape, a.tobytes())
        if key not in self.constant_cache:
            out = self.fresh("const")
            self.nodes.append(self.helper.make_node("Constant", [], [out], name=out,
                                                    value=self.onnx.numpy_helper.from_array(a, out)))
            self.constant_cache[key] = out
        return self.constant_cache[key]

    def fconst(self, v):
        return _Val(self.const(np.float32(v)), "float", ())

    # ---- sizes: ints and _Affine (k * batch + c) ----
    def batch_value(self):
        if self.batch is None:
            if self.batch_input is None:
                _refuse("a size that depends on the batch, but no input has a batch dimension")
            shape = self.node("Shape", [self.batch_input], "shape")
            self.batch = self.node("Gather", [shape, self.const(np.array([0]))], "batch", axis=0)
        return self.batch

    def dims(self, sizes):
        """An int64 [len] value of sizes (ints and _Affine)."""
        sizes = list(sizes)
        if all(isinstance(s, int) for s in sizes):
            return self.const(np.array(sizes, dtype=np.int64).reshape(len(sizes)))
        parts = []
        for s in sizes:
            if isinstance(s, self.Affine):
                v = self.batch_value()
                if s.k != 1:
                    v = self.node("Mul", [v, self.const(np.array([s.k]))])
                if s.c != 0:
                    v = self.node("Add", [v, self.const(np.array([s.c]))])
                parts.append(v)
            else:
                parts.append(self.const(np.array([int(s)])))
        return self.node("Concat", parts, "dims", axis=0)

    def reshape_dims(self, x, sizes):
        sizes = list(sizes)
        affine = [i for i, s in enumerate(sizes) if isinstance(s, self.Affine)]
        if len(affine) == 1 and -1 not in sizes:  # the one batch-dependent size inferred
            sizes[affine[0]] = -1
        return self.dims(sizes)

    # ---- values ----
    def val(self, a):
        if isinstance(a, self.Ref):
            v = self.values.get(a.name)
            if v is None:
                _refuse("reads %%%s, which the export does not hold" % a.name)
            return v
        if isinstance(a, (list, tuple)):
            return [self.val(x) for x in a]
        return a

    def tensor(self, a, like="float"):
        """A tensor value for an argument that may be a Python number."""
        if isinstance(a, _Val):
            return a
        if isinstance(a, bool):
            return _Val(self.const(np.array(a)), "bool", ())
        if isinstance(a, int) and like != "float":
            return _Val(self.const(np.int64(a)), "int64", ())
        if isinstance(a, (int, float)):
            return self.fconst(a)
        _refuse("an argument of type %s where a tensor or number is expected" % type(a).__name__)

    def as_float(self, v):
        if v.dtype == "float":
            return v
        return _Val(self.node("Cast", [v.name], "cast", to=self.onnx.TensorProto.FLOAT), "float", v.shape)

    def as_bool(self, v):
        if v.dtype == "bool":
            return v
        if v.dtype == "float":
            return _Val(self.node("Not", [self.node("Equal", [v.name, self.const(np.float32(0))])]), "bool", v.shape)
        return _Val(self.node("Cast", [v.name], "cast", to=self.onnx.TensorProto.BOOL), "bool", v.shape)

    def rank(self, v):
        if v.shape is None:
            _refuse("a value of unknown rank")
        return len(v.shape)

    # ---- the program ----
    def state_names(self):
        """id(lockstep tensor) -> its state_dict name (tied parameters: the first name)."""
        names = {}
        for n, t in self.module.named_parameters():
            names.setdefault(_storage(t), ("param", n))
        for n, t in self.module.named_buffers():
            names.setdefault(_storage(t), ("buffer", n))
        return names

    def build(self, input_dtypes):
        d = self.d
        program, outputs = d["_programs"][True], d["_outputs"][True]
        state = self.state_names()
        tensors = d["_tensors"]
        shapes = d["_input_shapes"]
        # the inputs' element types: int64 where the program reads the input as indices
        input_instrs = [ins for ins in program if ins.kind == "input"]
        if input_dtypes is None:  # as recorded: integer inputs (token ids) as int64
            input_dtypes = d["_input_dtypes"]
        elem = {"float": self.onnx.TensorProto.FLOAT, "int64": self.onnx.TensorProto.INT64}
        input_dtypes = list(input_dtypes)
        if len(input_dtypes) != len(input_instrs) or any(t not in elem for t in input_dtypes):
            raise ArgumentError("export: input_dtypes must give 'float' or 'int64' for each of the model's %d inputs, "
                                "got %r" % (len(input_instrs), input_dtypes))
        for k, (ins, shape, dtype) in enumerate(zip(input_instrs, shapes, input_dtypes)):
            name = "input" if len(input_instrs) == 1 else "input_%d" % k
            dims = ["batch" if s is None else int(s) for s in shape]
            self.inputs.append(self.helper.make_tensor_value_info(name, elem[dtype], dims))
            if shape and shape[0] is None and self.batch_input is None:
                self.batch_input = name
            self.values[ins.name] = _Val(name, dtype, tuple(1 if s is None else s for s in shape))
        written = set()
        self.view_src, self.last_use = {}, {}
        for k, ins in enumerate(program):
            for a in _refs_in((ins.args, ins.kwargs)):
                self.last_use[a] = k
        for a in _refs_in(outputs):
            self.last_use[a] = len(program)
        for self.position, ins in enumerate(program):
            if ins.kind == "input":
                continue
            try:
                if ins.kind == "tensor":
                    self.values[ins.name] = self.state_tensor(ins, tensors[ins.op], state, written)
                    continue
                self.instr(ins)
            except _Refused as e:
                raise ArgumentError("export: %s: aten.%s at %s: %s" % (
                    d["_class_name"], ins.op, _place(ins.path), e)) from None
        outs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
        named = None
        if len(outs) == 1 and isinstance(outs[0], self.Ref) and hasattr(self.values.get(outs[0].name), "_fields"):
            named = self.values[outs[0].name]  # a named tuple: one output per field, named after it
            outs = [_Named(v) for v in named]
        graph_outputs = []
        for k, ref in enumerate(outs):
            if not isinstance(ref, (self.Ref, _Named)):
                raise ArgumentError("export: %s: the forward returns a %s; export writes tensors (or a tuple of "
                                    "them)" % (d["_class_name"], type(ref).__name__))
            v = ref.val if isinstance(ref, _Named) else self.values[ref.name]
            name = named._fields[k] if named else "output" if len(outs) == 1 else "output_%d" % k
            self.nodes.append(self.helper.make_node("Identity", [v.name], [name], name=name))
            graph_outputs.append(self.helper.make_tensor_value_info(
                name, {"float": self.onnx.TensorProto.FLOAT, "int64": self.onnx.TensorProto.INT64,
                       "bool": self.onnx.TensorProto.BOOL}[v.dtype], None))
        return graph_outputs

    def state_tensor(self, ins, t, state, written):
        kind, name = state.get(_storage(t), (None, None))
        a = t.detach().numpy()
        dtype = "float" if a.dtype == np.float32 else "int64"
        if kind == "param" or (kind == "buffer" and name.endswith(("running_mean", "running_var"))):
            if name not in written:
                written.add(name)
                self.initializers.append(self.onnx.numpy_helper.from_array(np.ascontiguousarray(a), name))
            return _Val(name, dtype, tuple(a.shape))
        if a.dtype != np.float32:
            a = a.astype(np.int64)
        return _Val(self.const(a), dtype, tuple(a.shape))  # other buffers and constants made in forward

    def instr(self, ins):
        op = ins.op
        args = [self.val(a) for a in ins.args]
        kwargs = {k: self.val(v) for k, v in ins.kwargs.items()}
        if ins.kind == "inplace":
            target = ins.args[0]
            region = None  # (root name, (squeezed dims, boxes)): a write into a view, replayed on its root
            if isinstance(ins.write, tuple):
                region = (ins.write[1], ins.write[2])
            elif ins.write == "real" and isinstance(target, self.Ref) and target.name in self.views:
                region = self.view_region(target.name, ins)
            if op == "add_.Tensor" and isinstance(target, self.Ref) and args[0].dtype == "int64" and \
                    args[0].shape == () and ins.write == "real":
                self.values[ins.name] = args[0]  # num_batches_tracked += 1: ONNX has no such buffer
                return
            if op == "bernoulli_.float":
                keep = float(args[1]) if len(args) > 1 else float(kwargs.get("p", 0.5))
                out = self.dropout_mask(args[0], keep, ins)
            elif op in ("div_.Scalar", "div_.Tensor") and args[0].mask is not None and \
                    isinstance(args[1], (int, float)) and float(args[1]) == args[0].mask:
                out = _Val(args[0].name, "float", args[0].shape)  # the Dropout node's mask is already scaled
            else:
                functional = self.INPLACE[op]
                if functional.startswith("<"):
                    out = self.write_value(functional, args)
                else:
                    out = self.call(functional, args, kwargs, ins)
            if region is not None:
                root, (squeezed, boxes) = region
                value = out
                for d in squeezed:
                    value = _Val(self.node("Unsqueeze", [value.name, self.const(np.array([d]))]), value.dtype)
                base = self.values[root]
                self.values[root] = self.replace(base, boxes, value)
            elif ins.write == "real":
                self.values[target.name] = out
            self.values[ins.name] = out
            return
        if ins.kind == "random":
            if op == "native_dropout.default":
                x, p = args[0], float(args[1])
                train = args[2] if len(args) > 2 else kwargs.get("train", True)
                if train is False or p == 0.0:
                    self.values[ins.name] = (x, None)
                    return
                y = self.node("Dropout", [x.name, self.const(np.float32(p))], "dropout", name=ins.aux)
                self.values[ins.name] = (_Val(y, "float", x.shape), None)
                return
            _refuse("a random draw (%s) export has no ONNX form for" % op)
        if isinstance(ins.fn, type) and issubclass(ins.fn, tuple):  # a named tuple of outputs (GoogLeNet's in training)
            self.values[ins.name] = ins.fn(*args, **kwargs)
            return
        out = self.call(op, args, kwargs, ins)
        src = ins.args[0] if ins.args else None
        if op in self.VIEWS or (op == "getitem" and isinstance(src, self.Ref) and src.name in self.views):
            self.views.add(ins.name)
            if isinstance(src, self.Ref):
                self.view_src[ins.name] = (src.name, op, list(ins.args[1:]), self.position)
        if isinstance(out, _Val) and out.shape is None and ins.shape is not None:
            out.shape = tuple(ins.shape)
        self.values[ins.name] = out

    def view_region(self, name, ins):
        """(root, (squeezed dims, boxes)) of a chain of slice/select views from a tensor made in
        forward (as _aten's classify_write computes for its scatter writes); refuses other chains and
        views of the root taken before the write that are read after it (they would see old values)."""
        chain = []
        while name in self.view_src:
            src, op, rest, at = self.view_src[name]
            chain.append((name, src, op, rest))
            name = src
        root = name
        if root in self.views or not chain:
            _refuse("an in-place write into a view of a view lockstep cannot follow")
        chain_names = {c[0] for c in chain}
        for other, (src, op, rest, at) in self.view_src.items():
            r = other
            while r in self.view_src:
                r = self.view_src[r][0]
            if r == root and other not in chain_names and self.last_use.get(other, -1) > self.position:
                _refuse("an in-place write into a view of a tensor that another view of it (%%%s) reads afterwards"
                        % other)
        dims = list(range(len(self.values[root].shape)))
        boxes, squeezed = [], []
        for _, src, op, rest in reversed(chain):
            size = self.values[src].shape
            if op not in ("slice.Tensor", "select.int") or size is None:
                _refuse("an in-place write through aten.%s into a tensor made in forward" % op)
            dim = (rest[0] if rest else 0) % len(size)
            if any(isinstance(v, self.Affine) for v in rest):
                _refuse("an in-place write into a slice whose bounds depend on the batch")
            if op == "slice.Tensor":
                start = rest[1] if len(rest) > 1 else None
                end = rest[2] if len(rest) > 2 else None
                step = rest[3] if len(rest) > 3 else 1
                if step != 1:
                    _refuse("an in-place write into a strided slice")
                a, b, _ = slice(start, end, 1).indices(size[dim])
                boxes.append((dims[dim], a, max(a, b)))
            else:
                i = rest[1] % size[dim]
                boxes.append((dims[dim], i, i + 1))
                squeezed.append(dims.pop(dim))
        return root, (sorted(squeezed), boxes)

    def replace(self, base, boxes, value):
        """``base`` with a box replaced by ``value`` (slices and concatenation: _aten_program._replace)."""
        if not boxes:
            if value.shape is not None and tuple(value.shape) == tuple(base.shape):
                return _Val(value.name, base.dtype, base.shape)
            shape = self.node("Shape", [base.name], "shape")
            return _Val(self.node("Expand", [value.name, shape]), base.dtype, base.shape)
        d, start, stop = boxes[0]
        n = base.shape[d]
        def part(a, b):
            v = self.slice_val(base, d, a, b, 1)
            v.shape = tuple(b - a if i == d else s for i, s in enumerate(base.shape))
            return v
        inner = self.replace(part(start, stop), boxes[1:], value)
        parts = [p for p in (part(0, start) if start else None, inner, part(stop, n) if stop < n else None) if p]
        if value.dtype != base.dtype:
            _refuse("an in-place write of a %s value into a %s tensor" % (value.dtype, base.dtype))
        if len(parts) == 1:
            return _Val(parts[0].name, base.dtype, base.shape)
        return _Val(self.node("Concat", [p.name for p in parts], axis=d), base.dtype, base.shape)

    def dropout_mask(self, target, keep, ins):
        """bernoulli_(keep) on a fresh tensor, later divided by keep: a Dropout of ones (ratio 1 - keep)
        named after the call site, whose kept elements are 1 / (1 - ratio) in float32 (where that is
        not 1 / keep in float32, two Wheres make them so); ones while the imported model evaluates."""
        ratio = np.float32(1.0 - keep)  # the rate the aten route draws with: the same keep threshold
        shape = self.node("Shape", [target.name], "shape")
        ones = self.node("ConstantOfShape", [shape], "ones",
                         value=self.onnx.numpy_helper.from_array(np.array([1.0], dtype=np.float32)))
        if keep >= 1.0:
            return _Val(ones, "float", target.shape, mask=keep)
        y = self.node("Dropout", [ones, self.const(ratio)], "mask", name=ins.aux)
        scale, want = np.float32(1.0) / (np.float32(1.0) - ratio), np.float32(1.0) / np.float32(keep)
        if scale != want:  # (0.91: 1/(1 - 0.09f) is not 1/0.91f) kept elements made 1/keep, ones left ones
            kept = self.node("Where", [self.node("Greater", [y, self.const(np.float32(0))]), self.const(want),
                                       self.const(np.float32(0))])
            y = self.node("Where", [self.node("Equal", [y, self.const(np.float32(1))]), self.const(np.float32(1)),
                                    kept])
        return _Val(y, "float", target.shape, mask=keep)

    def write_value(self, name, args):
        target = args[0]
        if name in ("<zero>", "<fill>") and (name == "<zero>" or not isinstance(args[1], _Val)):
            shape = self.node("Shape", [target.name], "shape")
            value = 0 if name == "<zero>" else args[1]
            a = np.array([value], dtype=np.float32 if target.dtype == "float" else np.int64)
            return _Val(self.node("ConstantOfShape", [shape], "fill", value=self.onnx.numpy_helper.from_array(a)),
                        target.dtype, target.shape)
        if name == "<fill>":  # a 0-d tensor's value everywhere
            src = args[1]
            if src.dtype != target.dtype:
                if target.dtype != "float":
                    _refuse("a fill of a %s tensor" % target.dtype)
                src = self.as_float(src)
            shape = self.node("Shape", [target.name], "shape")
            return _Val(self.node("Expand", [src.name, shape]), target.dtype, target.shape)
        if name == "<copy>":
            src = args[1]
            if src.dtype != target.dtype:
                if target.dtype != "float":
                    _refuse("a copy into a %s tensor" % target.dtype)
                src = self.as_float(src)
            if src.shape != target.shape:
                src = _Val(self.node("Expand", [src.name, self.node("Shape", [target.name], "shape")]), src.dtype,
                           target.shape)
            return src
        _refuse("an in-place %s" % name)

    # ---- the table ----
    def call(self, op, args, kwargs, ins):
        h = self
        shape = ins.shape
        f = op.split(" (as ")[0]
        fl = lambda name, inputs, **attrs: _Val(h.node(name, inputs, **attrs), "float", shape)

        if f == "getitem":
            return args[0][args[1]]
        if op == "addmm.default (as linear)":
            x, w, b = args
            return fl("Gemm", [x.name, w.name, b.name], transB=1)
        if op == "mm.default (as linear)":
            x, w = args
            return fl("Gemm", [x.name, w.name], transB=1)
        if f in ("add.Tensor", "add.Scalar", "sub.Tensor", "sub.Scalar", "mul.Tensor", "mul.Scalar", "div.Tensor",
                 "div.Scalar", "rsub.Scalar", "rsub.Tensor"):
            a, b = args[0], args[1]
            alpha = kwargs.get("alpha", args[2] if len(args) > 2 else 1)
            if f.startswith("rsub"):
                a, b = b, a
            base = f.split(".")[0].replace("rsub", "sub")
            ints = all((isinstance(v, _Val) and v.dtype == "int64") or (isinstance(v, int) and not isinstance(v, bool))
                       for v in (a, b))
            if ints and base == "div":
                _refuse("integer division")
            like = "int64" if ints else "float"
            if alpha != 1:
                b = h.call("mul.Tensor", [h.tensor(b, like), alpha], {}, ins)
            a, b = h.tensor(a, like), h.tensor(b, like)
            if not ints:
                a, b = h.as_float(a), h.as_float(b)
            onnx_op = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div"}[base]
            return _Val(h.node(onnx_op, [a.name, b.name]), like, shape)
        if f in ("fmod.Tensor", "fmod.Scalar", "remainder.Tensor", "remainder.Scalar"):
            a, b = h.as_float(h.tensor(args[0], "float")), h.as_float(h.tensor(args[1], "float"))
            m = h.node("Mod", [a.name, b.name], fmod=1)
            if f.startswith("fmod"):
                return _Val(m, "float", shape)
            # Python's sign: fmod, plus b where it is nonzero and its sign differs from b's (one
            # rounded addition, as lockstep's remainder kernel).
            zero = h.const(np.float32(0))
            differs = h.node("Xor", [h.node("Less", [m, zero]), h.node("Less", [b.name, zero])])
            fix = h.node("And", [h.node("Not", [h.node("Equal", [m, zero])]), differs])
            return fl("Where", [fix, h.node("Add", [m, b.name]), m])
        if f in ("eq.Scalar", "eq.Tensor", "ne.Scalar", "ne.Tensor", "gt.Scalar", "gt.Tensor", "lt.Scalar",
                 "lt.Tensor", "ge.Scalar", "ge.Tensor", "le.Scalar", "le.Tensor"):
            a = args[0]
            like = "int64" if a.dtype == "int64" and not isinstance(args[1], float) else "float"
            b = h.tensor(args[1], like)
            if like == "float":
                a, b = h.as_float(a), h.as_float(b)
            base = f.split(".")[0]
            onnx_op = {"eq": "Equal", "ne": "Equal", "gt": "Greater", "lt": "Less", "ge": "GreaterOrEqual",
                       "le": "LessOrEqual"}[base]
            out = h.node(onnx_op, [a.name, b.name])
            if base == "ne":
                out = h.node("Not", [out])
            return _Val(out, "bool", shape)
        unary = {"relu.default": "Relu", "sigmoid.default": "Sigmoid", "tanh.default": "Tanh", "exp.default": "Exp",
                 "log.default": "Log", "sqrt.default": "Sqrt", "neg.default": "Neg",
                 "reciprocal.default": "Reciprocal",
                 "floor.default": "Floor", "ceil.default": "Ceil", "round.default": "Round",
                 **{f"{n}.default": n[0].upper() + n[1:] for n in _TRIG}}
        if f in unary:
            return fl(unary[f], [args[0].name])
        if f == "rsqrt.default":
            return fl("Reciprocal", [h.node("Sqrt", [args[0].name])])
        if f == "abs.default":  # relu(x) + relu(-x), as the aten route
            x = args[0].name
            return fl("Add", [h.node("Relu", [x]), h.node("Relu", [h.node("Neg", [x])])])
        if f == "silu.default":
            x = args[0].name
            return fl("Mul", [x, h.node("Sigmoid", [x])])
        if f == "gelu.default":
            approximate = kwargs.get("approximate", args[1] if len(args) > 1 else "none")
            return h.gelu(args[0], approximate, shape)
        if f == "hardtanh.default":
            lo = float(args[1]) if len(args) > 1 else -1.0
            hi = float(args[2]) if len(args) > 2 else 1.0
            return h.hardtanh(args[0].name, lo, hi, shape)
        if f == "hardsigmoid.default":
            t = h.hardtanh(h.node("Add", [args[0].name, h.const(np.float32(3))]), 0.0, 6.0, shape)
            return fl("Div", [t.name, h.const(np.float32(6))])
        if f == "hardswish.default":
            x = args[0].name
            t = h.node("Add", [x, h.const(np.float32(3))])
            t = h.node("Where", [h.node("Less", [t, h.const(np.float32(0))]), h.const(np.float32(0)), t])
            t = h.node("Where", [h.node("GreaterOrEqual", [t, h.const(np.float32(6))]), h.const(np.float32(6)), t])
            return fl("Div", [h.node("Mul", [x, t]), h.const(np.float32(6))])
        if f in ("clamp.default", "clamp_min.default", "clamp_max.default"):
            lo = args[1] if f != "clamp_max.default" else None
            hi = args[2] if f == "clamp.default" and len(args) > 2 else (args[1] if f == "clamp_max.default" else None)
            if isinstance(lo, _Val) or isinstance(hi, _Val):
                _refuse("clamp with tensor bounds")
            y = args[0].name
            if lo is not None:  # the aten route's masked fills: x < lo, then x > hi
                y = h.node("Where", [h.node("Less", [y, h.const(np.float32(lo))]), h.const(np.float32(lo)), y])
            if hi is not None:
                y = h.node("Where", [h.node("Greater", [y, h.const(np.float32(hi))]), h.const(np.float32(hi)), y])
            return _Val(y, "float", shape)
        if f == "leaky_relu.default":
            x = args[0].name
            slope = float(args[1]) if len(args) > 1 else 0.01
            return fl("Where", [h.node("Greater", [x, h.const(np.float32(0))]), x,
                                h.node("Mul", [x, h.const(np.float32(slope))])])
        if f == "pow.Tensor_Scalar":
            return fl("Pow", [args[0].name, h.const(np.float32(args[1]))])
        if f in ("masked_fill.Scalar", "masked_fill.Tensor"):
            x, m, v = args
            v = h.tensor(v) if not isinstance(v, _Val) else v
            return fl("Where", [h.as_bool(m).name, v.name, x.name])
        if f == "where.self":
            c, a, b = args
            a, b = h.as_float(h.tensor(a)), h.as_float(h.tensor(b))
            return fl("Where", [h.as_bool(c).name, a.name, b.name])
        if f == "_to_copy.default":
            dtype = kwargs.get("dtype")
            x = args[0]
            if dtype is None:
                return x
            target = _DTYPES.get(dtype)
            if target is None:
                _refuse("a conversion to %s" % dtype)
            if target == x.dtype:
                return x
            if target == "bool":
                return h.as_bool(x)
            to = {"float": h.onnx.TensorProto.FLOAT, "int64": h.onnx.TensorProto.INT64}[target]
            return _Val(h.node("Cast", [x.name], to=to), target, shape)
        # reductions
        if f in ("mean.dim", "sum.dim_IntList", "mean.default", "sum.default", "amax.default"):
            x = args[0]
            if kwargs.get("dtype") is not None:
                _refuse("a reduction with dtype")
            dims = args[1] if len(args) > 1 and f.endswith(("dim", "IntList", "amax.default")) else None
            keep = bool(args[2]) if len(args) > 2 else bool(kwargs.get("keepdim", False))
            if isinstance(dims, int):
                dims = [dims]
            r = h.rank(x)
            axes = sorted({d % r for d in dims}) if dims else list(range(r))
            if f.startswith("sum"):
                return fl("ReduceSum", [x.name, h.const(np.array(axes))], keepdims=int(keep))
            name = "ReduceMean" if f.startswith("mean") else "ReduceMax"
            return fl(name, [x.name], axes=axes, keepdims=int(keep))
        if f == "norm.ScalarOpt_dim":  # the aten route's 2-norm: sqrt(sum(x * x))
            x = args[0]
            p = args[1] if len(args) > 1 else 2
            dims = args[2] if len(args) > 2 else None
            keep = bool(args[3]) if len(args) > 3 else bool(kwargs.get("keepdim", False))
            if p not in (2, 2.0) or kwargs.get("dtype") is not None:
                _refuse("norm with p=%r" % (p,))
            dims = [dims] if isinstance(dims, int) else dims
            r = h.rank(x)
            axes = sorted({d % r for d in dims}) if dims else list(range(r))
            sq = h.node("Mul", [x.name, x.name])
            s = h.node("ReduceSum", [sq, h.const(np.array(axes))], keepdims=int(keep))
            # at 0: sqrt of 1, then 0 (PyTorch's gradient there is 0, as the aten route computes it)
            zero = h.node("Equal", [s, h.const(np.float32(0.0))])
            root = h.node("Sqrt", [h.node("Where", [zero, h.const(np.float32(1.0)), s])])
            return fl("Where", [zero, h.const(np.float32(0.0)), root])
        # linear algebra
        if f in ("mm.default", "bmm.default"):
            return fl("MatMul", [args[0].name, args[1].name])
        if f == "addmm.default":
            beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
            if beta != 1 or alpha != 1:
                _refuse("addmm with beta or alpha")
            return fl("Add", [h.node("MatMul", [args[1].name, args[2].name]), args[0].name])
        if f == "baddbmm.default":
            beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
            y = h.node("MatMul", [args[1].name, args[2].name])
            if alpha != 1:
                y = h.node("Mul", [y, h.const(np.float32(alpha))])
            if beta == 0:
                return _Val(y, "float", shape)
            b = args[0].name if beta == 1 else h.node("Mul", [args[0].name, h.const(np.float32(beta))])
            return fl("Add", [y, b])
        if f == "t.default":
            x = args[0]
            return x if h.rank(x) < 2 else _Val(h.node("Transpose", [x.name], perm=[1, 0]), x.dtype, shape)
        # network ops
        if f == "convolution.default":
            x, w, b, stride, padding, dilation, transposed, output_padding, groups = args
            if len(stride) not in (1, 2):
                _refuse("%d-D convolution" % len(stride))
            inputs = [x.name, w.name] + ([b.name] if b is not None else [])
            if transposed:
                return fl("ConvTranspose", inputs, strides=list(stride), pads=list(padding) * 2,
                          dilations=list(dilation), output_padding=list(output_padding), group=int(groups))
            return fl("Conv", inputs, strides=list(stride), pads=list(padding) * 2, dilations=list(dilation),
                      group=int(groups))
        if f == "max_pool2d_with_indices.default":
            x, kernel = args[0], args[1]
            k = h.two(kernel)
            s = h.two(args[2]) if len(args) > 2 and args[2] else k
            p = h.two(args[3]) if len(args) > 3 else (0, 0)
            dil = h.two(args[4]) if len(args) > 4 else (1, 1)
            ceil = bool(args[5]) if len(args) > 5 else False
            if dil != (1, 1):
                _refuse("dilated max pooling")
            return (fl("MaxPool", [x.name], kernel_shape=list(k), strides=list(s), pads=list(p) * 2,
                       ceil_mode=int(ceil)), None)
        if f == "avg_pool2d.default":
            x = args[0]
            k = h.two(args[1])
            s = h.two(args[2]) if len(args) > 2 and args[2] else k
            p = h.two(args[3]) if len(args) > 3 else (0, 0)
            ceil = len(args) > 4 and args[4]
            if ceil or (len(args) > 5 and not args[5]) or (len(args) > 6 and args[6] is not None):
                _refuse("avg_pool2d with ceil_mode, count_include_pad=False or divisor_override")
            return fl("AveragePool", [x.name], kernel_shape=list(k), strides=list(s), pads=list(p) * 2,
                      count_include_pad=1)
        if f == "_adaptive_avg_pool2d.default":
            x = args[0]
            oh, ow = h.two(args[1])
            hh, ww = x.shape[-2], x.shape[-1]
            if (oh, ow) == (1, 1):
                return fl("GlobalAveragePool", [x.name])
            if hh % oh == 0 and ww % ow == 0:
                k = [hh // oh, ww // ow]
                return fl("AveragePool", [x.name], kernel_shape=k, strides=k)
            # PyTorch's windows (rows floor(i*H/oh) .. ceil((i+1)*H/oh)), each the mean of its elements,
            # as the aten route computes them: a mean per output cell, cells and rows concatenated
            rows = []
            lead = [0] * (h.rank(x) - 2)
            for i in range(oh):
                r0, r1 = (i * hh) // oh, -((-(i + 1) * hh) // oh)
                cells = []
                for j in range(ow):
                    c0, c1 = (j * ww) // ow, -((-(j + 1) * ww) // ow)
                    window = h.node("Slice", [x.name, h.const(np.array([r0, c0])), h.const(np.array([r1, c1])),
                                              h.const(np.array([-2, -1]))])
                    flat = h.node("Reshape", [window, h.const(np.array(lead + [-1]))])
                    cells.append(h.node("ReduceMean", [flat], axes=[-1], keepdims=1))
                row = h.node("Concat", cells, axis=-1)
                rows.append(h.node("Unsqueeze", [row, h.const(np.array([-2]))]))
            return fl("Concat", rows, axis=-2)
        if f in ("native_batch_norm.default", "_native_batch_norm_legit.default"):
            x, w, b, rm, rv, training, momentum, eps = args
            if rm is None or rv is None:
                _refuse("batch norm without running statistics")
            c = x.shape[1]
            w = w if w is not None else _Val(h.const(np.ones(c, np.float32)))
            b = b if b is not None else _Val(h.const(np.zeros(c, np.float32)))
            shape = x.shape
            y = fl("BatchNormalization", [x.name, w.name, b.name, rm.name, rv.name], epsilon=float(eps),
                   momentum=float(1.0 - momentum))
            return (y, None, None)
        if f == "native_layer_norm.default":
            x, normalized = args[0], list(args[1])
            w = args[2] if len(args) > 2 else None
            b = args[3] if len(args) > 3 else None
            eps = float(args[4]) if len(args) > 4 else 1e-5
            if w is None:
                w = _Val(h.const(np.ones(normalized, np.float32)))
            inputs = [x.name, w.name] + ([b.name] if b is not None else [])
            shape = x.shape
            return (fl("LayerNormalization", inputs, axis=-len(normalized), epsilon=eps), None, None)
        if f == "_softmax.default":
            return fl("Softmax", [args[0].name], axis=int(args[1]))
        if f == "_log_softmax.default":
            return fl("LogSoftmax", [args[0].name], axis=int(args[1]))
        if f == "embedding.default":
            w, idx = args[0], args[1]
            if (len(args) > 2 and args[2] not in (-1, None)) or any(bool(a) for a in args[3:]):
                _refuse("embedding with padding_idx, scale_grad_by_freq or sparse")
            return fl("Gather", [w.name, idx.name], axis=0)
        if f == "index.Tensor":
            idx = args[1]
            if len(idx) != 1 or idx[0] is None:
                _refuse("advanced indexing other than x[index]")
            return _Val(h.node("Gather", [args[0].name, idx[0].name], axis=0), args[0].dtype, shape)
        if f == "index_select.default":
            return _Val(h.node("Gather", [args[0].name, args[2].name], axis=int(args[1])), args[0].dtype, shape)
        # shapes and views
        if f in ("view.default", "_unsafe_view.default", "_reshape_alias.default", "reshape.default"):
            x = args[0]
            return _Val(h.node("Reshape", [x.name, h.reshape_dims(x, args[1])]), x.dtype, shape)
        if f == "expand.default":
            x = args[0]
            sizes = [1 if (isinstance(s, int) and s == -1) else s for s in args[1]]
            return _Val(h.node("Expand", [x.name, h.dims(sizes)]), x.dtype, shape)
        if f == "permute.default":
            x = args[0]
            r = h.rank(x)
            return _Val(h.node("Transpose", [x.name], perm=[int(p) % r for p in args[1]]), x.dtype, shape)
        if f == "transpose.int":
            x = args[0]
            r = h.rank(x)
            perm = list(range(r))
            a, b = int(args[1]) % r, int(args[2]) % r
            perm[a], perm[b] = perm[b], perm[a]
            return _Val(h.node("Transpose", [x.name], perm=perm), x.dtype, shape)
        if f == "unsqueeze.default":
            x = args[0]
            d = int(args[1]) % (h.rank(x) + 1)
            return _Val(h.node("Unsqueeze", [x.name, h.const(np.array([d]))]), x.dtype, shape)
        if f in ("squeeze.dim", "squeeze.dims", "squeeze.default"):
            x = args[0]
            dims = args[1] if len(args) > 1 else None
            if dims is None:
                dims = [i for i, n in enumerate(x.shape) if n == 1]
            dims = [dims] if isinstance(dims, int) else list(dims)
            r = h.rank(x)
            dims = [d % r for d in dims if x.shape[d % r] == 1]
            if not dims:
                return x
            return _Val(h.node("Squeeze", [x.name, h.const(np.array(dims))]), x.dtype, shape)
        if f == "select.int":
            x = args[0]
            r = h.rank(x)
            d, i = int(args[1]) % r, int(args[2])
            i = i % x.shape[d]
            s = h.slice_val(x, d, i, i + 1, 1)
            return _Val(h.node("Squeeze", [s.name, h.const(np.array([d]))]), x.dtype, shape)
        if f == "slice.Tensor":
            x = args[0]
            d = int(args[1]) if len(args) > 1 else 0
            start = args[2] if len(args) > 2 else None
            end = args[3] if len(args) > 3 else None
            step = args[4] if len(args) > 4 else 1
            v = h.slice_val(x, d % h.rank(x), 0 if start is None else start,
                            np.iinfo(np.int64).max if end is None else end, step)
            v.shape = shape
            return v
        if f in ("split.Tensor", "unsafe_split.Tensor", "split_with_sizes.default"):
            x = args[0]
            d = (int(args[2]) if len(args) > 2 else 0) % h.rank(x)
            n = x.shape[d]
            if f != "split_with_sizes.default":
                size = int(args[1])
                bounds = [(i, min(i + size, n)) for i in range(0, n, size)]
            else:
                bounds, at = [], 0
                for s in args[1]:
                    bounds.append((at, at + int(s)))
                    at += int(s)
            out = []
            for a, b in bounds:
                v = h.slice_val(x, d, a, b, 1)
                v.shape = tuple(b - a if i == d else s for i, s in enumerate(x.shape))
                out.append(v)
            return out
        if f == "unbind.int":
            x = args[0]
            d = (int(args[1]) if len(args) > 1 else 0) % h.rank(x)
            out = []
            for i in range(x.shape[d]):
                s = h.slice_val(x, d, i, i + 1, 1)
                out.append(_Val(h.node("Squeeze", [s.name, h.const(np.array([d]))]), x.dtype,
                                tuple(n for k, n in enumerate(x.shape) if k != d)))
            return out
        if f in ("cat.default", "stack.default"):
            ts = [t for t in args[0]]
            d = int(args[1]) if len(args) > 1 else int(kwargs.get("dim", 0))
            if f == "cat.default":
                ts = [t for t in ts if not (t.shape is not None and len(t.shape) == 1 and t.shape[0] == 0)] or ts[:1]
            else:
                d %= h.rank(ts[0]) + 1
                ts = [_Val(h.node("Unsqueeze", [t.name, h.const(np.array([d]))]), t.dtype) for t in ts]
            dtype = "float" if any(t.dtype == "float" for t in ts) else ts[0].dtype
            if dtype == "float":
                ts = [h.as_float(t) for t in ts]
            return _Val(h.node("Concat", [t.name for t in ts], axis=d), dtype, shape)
        if f in ("clone.default", "alias.default", "lift_fresh_copy.default", "lift_fresh.default", "detach.default",
                 "as_strided.default", "as_strided_.default"):
            return _Val(args[0].name, args[0].dtype, shape or args[0].shape, args[0].mask)
        if f == "roll.default":  # the aten route's slices and concatenation
            x = args[0]
            shifts = args[1] if len(args) > 1 else kwargs.get("shifts")
            dims = args[2] if len(args) > 2 else kwargs.get("dims", [])
            shifts = [shifts] if isinstance(shifts, int) else list(shifts)
            dims = [dims] if isinstance(dims, int) else list(dims)
            if not dims:
                _refuse("roll without dims")
            y = x
            for sh, d in zip(shifts, dims):
                d %= h.rank(x)
                n = x.shape[d]
                if isinstance(n, h.Affine) or (d == 0 and h.batch_input is not None and h.d["_batch_free"]):
                    _refuse("roll along the batch dimension")
                sh %= n if n else 1
                if sh:
                    a = h.slice_val(y, d, n - sh, n, 1)
                    b = h.slice_val(y, d, 0, n - sh, 1)
                    y = _Val(h.node("Concat", [a.name, b.name], axis=d), x.dtype, x.shape)
            return y
        if f == "constant_pad_nd.default":
            x, pad = args[0], list(args[1])
            value = float(args[2]) if len(args) > 2 else 0.0
            r = h.rank(x)
            begins, ends = [0] * r, [0] * r
            for i in range(len(pad) // 2):
                begins[r - 1 - i], ends[r - 1 - i] = pad[2 * i], pad[2 * i + 1]
            if min(begins + ends) < 0:
                _refuse("negative padding")
            return fl("Pad", [x.name, h.const(np.array(begins + ends)), h.const(np.float32(value))], mode="constant")
        # factories
        if f in ("empty.memory_format", "zeros.default", "ones.default", "full.default", "new_zeros.default",
                 "new_empty.default", "new_ones.default", "new_full.default", "empty_like.default",
                 "zeros_like.default", "ones_like.default", "full_like.default", "scalar_tensor.default"):
            return h.factory(f, args, kwargs, shape)
        if f in ("arange.default", "arange.start", "arange.start_step"):
            if any(isinstance(a, (h.Affine, _Val)) for a in args):
                _refuse("arange over a size that depends on the batch")
            nums = [a for a in args if isinstance(a, (int, float))]
            start, end, step = (0, nums[0], 1) if len(nums) == 1 else (nums + [1])[:3]
            dtype = kwargs.get("dtype")
            ints = all(isinstance(v, int) for v in (start, end, step)) and dtype in (None, "int64", "long")
            a = np.arange(start, end, step, dtype=np.int64 if ints else np.float64)
            return _Val(h.const(a if ints else a.astype(np.float32)), "int64" if ints else "float", shape)
        _refuse("calls aten.%s, which export has no ONNX mapping for" % op)

    def factory(self, f, args, kwargs, shape):
        h = self
        like = args[0] if f.endswith(("_like.default",)) or f.startswith("new_") else None
        if f == "scalar_tensor.default":
            v = args[0]
            ints = isinstance(v, int) and kwargs.get("dtype") in (None, "int64")
            return _Val(h.const(np.int64(v) if ints else np.float32(v)), "int64" if ints else "float", ())
        value = {"zeros": 0, "empty": 0, "ones": 1, "new_zeros": 0, "new_empty": 0, "new_ones": 1,
                 "zeros_like": 0, "empty_like": 0, "ones_like": 1}.get(f.split(".")[0])
        if value is None:  # full, new_full, full_like
            value = args[-1] if f != "new_full.default" else args[2]
            value = args[1] if f in ("full.default", "full_like.default") else value
        dtype = kwargs.get("dtype")
        if dtype is None:
            if like is not None:
                dt = like.dtype
            elif f == "full.default" and isinstance(value, int) and not isinstance(value, float):
                dt = "int64"
            else:
                dt = "float"
        else:
            dt = _DTYPES.get(dtype)
            if dt is None:
                _refuse("a tensor of dtype %s" % dtype)
        np_dt = {"float": np.float32, "int64": np.int64, "bool": np.bool_}[dt]
        if like is not None and f.endswith("_like.default"):
            dims = h.node("Shape", [like.name], "shape")
        else:
            sizes = list(args[1] if f.startswith("new_") else args[0])
            if all(isinstance(s, int) for s in sizes):
                return _Val(h.const(np.full(sizes, value, dtype=np_dt)), dt, tuple(sizes))
            dims = h.dims(sizes)
        out = h.node("ConstantOfShape", [dims], "full",
                     value=h.onnx.numpy_helper.from_array(np.array([value], dtype=np_dt)))
        return _Val(out, dt, shape)

    def slice_val(self, x, d, start, end, step):
        if step < 1:
            _refuse("slice with step %d" % step)
        if isinstance(start, self.Affine) or isinstance(end, self.Affine):
            starts, ends = self.dims([start]), self.dims([end])
        else:
            starts, ends = self.const(np.array([int(start)])), self.const(np.array([int(end)]))
        return _Val(self.node("Slice", [x.name, starts, ends, self.const(np.array([d])),
                                        self.const(np.array([int(step)]))]), x.dtype, None)

    def hardtanh(self, x, lo, hi, shape):
        """The aten route's masked fills: x <= lo gives lo, then x >= hi gives hi."""
        h = self
        y = h.node("Where", [h.node("LessOrEqual", [x, h.const(np.float32(lo))]), h.const(np.float32(lo)), x])
        y = h.node("Where", [h.node("GreaterOrEqual", [y, h.const(np.float32(hi))]), h.const(np.float32(hi)), y])
        return _Val(y, "float", shape)

    def gelu(self, x, approximate, shape):
        """GELU written out (the importer reads opsets up to 18; Gelu is opset 20's): erf form
        x * 0.5 * (1 + erf(x / sqrt 2)) as torch.onnx writes it, or the tanh form. Not lockstep's
        fused GELU kernel: values agree to a few units in the last place, not bit for bit."""
        h = self
        if approximate == "tanh":
            c = np.float32(np.sqrt(2.0 / np.pi))
            cube = h.node("Mul", [h.node("Mul", [x.name, x.name]), x.name])
            inner = h.node("Add", [x.name, h.node("Mul", [cube, h.const(np.float32(0.044715))])])
            t = h.node("Tanh", [h.node("Mul", [inner, h.const(c)])])
            y = h.node("Mul", [h.node("Mul", [x.name, h.const(np.float32(0.5))]),
                               h.node("Add", [t, h.const(np.float32(1))])])
            return _Val(y, "float", shape)
        e = h.node("Erf", [h.node("Div", [x.name, h.const(np.float32(np.sqrt(2.0)))])])
        y = h.node("Mul", [h.node("Mul", [x.name, h.node("Add", [e, h.const(np.float32(1))])]),
                           h.const(np.float32(0.5))])
        return _Val(y, "float", shape)

    @staticmethod
    def two(v):
        if isinstance(v, int):
            return (v, v)
        v = list(v)
        return (int(v[0]), int(v[0])) if len(v) == 1 else (int(v[0]), int(v[1]))


# An ONNX file is one protobuf message, at most 2 GiB: that less room for the graph, for the weights.
_MAX_WEIGHT_BYTES = 2 ** 31 - (1 << 24)


def _recorded(model):
    """A model converted module by module (from_torch_module's first route), recorded through the
    aten route: its PyTorch structure (the skeleton kept at conversion) with the model's current
    values, on the inputs of its first call."""
    import copy
    import torch
    from . import _aten
    from ._torch import to_torch_state_dict
    d = model.__dict__
    example = d.get("_export_example")
    if example is None:
        raise ArgumentError("export: %s has not been called yet: call it once (its inputs' shapes are the "
                            "file's), or convert it with example_inputs=" % type(model).__name__)
    skeleton, state, memo = d["_torch_skeleton"], to_torch_state_dict(model), {}
    for name, meta in skeleton.state_dict(keep_vars=True).items():
        if id(meta) not in memo:
            real = state[name]
            memo[id(meta)] = torch.nn.Parameter(real, meta.requires_grad) if isinstance(meta, torch.nn.Parameter) \
                else real
    module = copy.deepcopy(skeleton, memo).train(model.training)
    out = _aten.prepare(module, d["_export_seed"])
    for training in (model.training, not model.training):
        _aten.record(out, example, training)
    return out


def export(model, path, input_dtypes=None):
    """Writes ``model`` (converted from PyTorch: lockstep/_aten_program.py's AtenModule) as an ONNX file at
    ``path`` that lockstep's importer (``lockstep.onnx.load``, the npm package's ``ls.onnx.load``,
    the C ABI and ``lockstep run``) loads and trains. ``input_dtypes``: per input 'float' or 'int64'
    (default: int64 where the recorded input was an integer tensor). Returns ``path``."""
    d = getattr(model, "__dict__", {})
    if "_programs" not in d and "_torch_skeleton" in d:
        model = _recorded(model)
        d = model.__dict__
    if "_programs" not in d:
        raise TypeError("export: expected a model converted from PyTorch (lockstep.from_torch_module), got a %s; "
                        "models built from lockstep.nn modules are saved with lockstep.save" % type(model).__name__)
    if True not in d["_programs"] and d.get("_pending") is not None and d.get("_example") is not None:
        from . import _aten  # recorded in evaluation mode only: the training program from the same inputs
        _aten.record(model, d["_example"], True)
    if True not in d["_programs"]:
        raise ArgumentError("export: %s has no recorded training program yet: call the model once in training "
                            "mode (or convert it with example_inputs=) before exporting" % d["_class_name"])
    try:
        import onnx
        import onnx.helper  # noqa: F401
        import onnx.numpy_helper  # noqa: F401
    except ImportError:
        raise ImportError("lockstep.export needs the onnx Python package (pip install onnx, or Debian's "
                          "python3-onnx)") from None
    b = _Builder(model, onnx)
    outputs = b.build(input_dtypes)
    size = sum(t.ByteSize() for t in b.initializers)
    if size >= _MAX_WEIGHT_BYTES:
        raise ArgumentError("export: %s holds %.2f GiB of weights; an ONNX file is one protobuf message of at most "
                            "2 GiB (lockstep's importer does not read external data files)"
                            % (d["_class_name"], size / 2.0 ** 30))
    graph = onnx.helper.make_graph(b.nodes, d["_class_name"], b.inputs, outputs, b.initializers)
    proto = onnx.helper.make_model(graph, producer_name="lockstep.export",
                                   opset_imports=[onnx.helper.make_opsetid("", OPSET)])
    proto.ir_version = 8
    data = proto.SerializeToString()
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".export-", suffix=".onnx", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path
