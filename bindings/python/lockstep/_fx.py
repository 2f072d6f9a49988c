"""Modules with a forward of their own (``class Net(torch.nn.Module)``), for from_torch_module.

torch.fx records the forward as a graph of calls: submodules (converted like any other), torch
functions and tensor methods. Each call must be one lockstep computes exactly as PyTorch defines
it (the tables below); anything else is an error naming the call, the module's class and path.
The converted module keeps PyTorch's children and parameter names and runs the graph with
lockstep's ops. fx evaluates Python control flow (``if self.training``) once, when it traces;
functional dropout follows the converted module's training flag and draws from a Dropout child
added per call ("fx_<node>"), so its masks follow the stream rule too.
"""
import operator

from . import _C
from ._errors import ArgumentError
from ._tensor import TRIG as _TRIG, float32, fmod, int32, int64, remainder, stack
from . import nn
from .nn import functional as F


def _no_extra(where, kwargs, **allowed):
    """Refuses keyword arguments whose value is not the accepted default."""
    for key, value in kwargs.items():
        if key not in allowed or (allowed[key] is not _ANY and value != allowed[key]):
            raise ArgumentError("%s: %s=%r is not supported" % (where, key, value))


_ANY = object()


def _function_table(torch):
    tF = torch.nn.functional

    def softmax(log):
        def apply(x, dim=None, _stacklevel=3, dtype=None):
            if dim is None or dtype is not None:
                raise ArgumentError("softmax: needs dim and no dtype")
            return F.log_softmax(x, dim) if log else F.softmax(x, dim)
        return apply

    def pool(fn, where):
        def apply(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False,
                  count_include_pad=True, divisor_override=None):
            if dilation not in (1, (1, 1)) or ceil_mode or return_indices or not count_include_pad or divisor_override:
                raise ArgumentError("%s: only kernel_size, stride and padding are supported" % where)
            return fn(x, kernel_size, stride or None, padding)
        return apply

    def relu(x, inplace=False):
        return F.relu(x)

    def add(a, b, alpha=1):
        if alpha != 1:
            raise ArgumentError("add: alpha is not supported")
        return a + b

    def sub(a, b, alpha=1):
        if alpha != 1:
            raise ArgumentError("sub: alpha is not supported")
        return a - b

    def div(a, b, rounding_mode=None):
        if rounding_mode is not None:
            raise ArgumentError("div: rounding_mode is not supported")
        return a / b

    def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
        return F.layer_norm(x, normalized_shape, weight, bias, eps)

    def embedding(x, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        if padding_idx is not None or max_norm is not None or scale_grad_by_freq or sparse:
            raise ArgumentError("embedding: only input and weight are supported")
        return F.embedding(x, weight)

    table = {
        operator.add: operator.add, operator.sub: operator.sub, operator.mul: operator.mul,
        operator.truediv: operator.truediv, operator.floordiv: operator.floordiv, operator.neg: operator.neg,
        operator.matmul: operator.matmul, operator.getitem: operator.getitem, operator.pow: operator.pow,
        torch.add: add, torch.sub: sub, torch.mul: operator.mul, torch.div: div, torch.matmul: operator.matmul,
        torch.relu: relu, tF.relu: relu, torch.tanh: F.tanh, tF.tanh: F.tanh, torch.sigmoid: F.sigmoid,
        tF.sigmoid: F.sigmoid, tF.gelu: lambda x, approximate="none": F.gelu(x, approximate),
        tF.softmax: softmax(False), tF.log_softmax: softmax(True), torch.softmax: softmax(False),
        torch.log_softmax: softmax(True), torch.exp: lambda x: x.exp(), torch.log: lambda x: x.log(),
        torch.sqrt: lambda x: x.sqrt(), torch.fmod: fmod, torch.remainder: remainder, operator.mod: remainder,
        **{getattr(torch, n): getattr(_C, n) for n in _TRIG},
        torch.flatten: lambda x, start_dim=0, end_dim=-1: x.flatten(start_dim, end_dim),
        torch.cat: lambda tensors, dim=0: _C.cat(list(tensors), dim), torch.stack: lambda ts, dim=0: stack(ts, dim),
        torch.transpose: lambda x, a, b: x.transpose(a, b), torch.reshape: lambda x, shape: x.reshape(shape),
        torch.permute: lambda x, dims: x.permute(dims), torch.unsqueeze: lambda x, d: x.unsqueeze(d),
        torch.squeeze: lambda x, d=None: x.squeeze(d),
        torch.mean: lambda x, dim=None, keepdim=False: x.mean(dim, keepdim),
        torch.sum: lambda x, dim=None, keepdim=False: x.sum(dim, keepdim),
        tF.linear: lambda x, w, b=None: F.linear(x, w, b), tF.conv2d: F.conv2d, tF.conv_transpose2d: F.conv_transpose2d,
        tF.max_pool2d: pool(F.max_pool2d, "max_pool2d"), tF.avg_pool2d: pool(F.avg_pool2d, "avg_pool2d"),
        tF.layer_norm: layer_norm, tF.embedding: embedding,
    }
    return table


# Tensor methods a converted forward may call, by name (lockstep's have PyTorch's signatures).
_METHODS = {"view", "reshape", "flatten", "size", "dim", "transpose", "permute", "unsqueeze", "squeeze",
            "contiguous", "relu", "tanh", "sigmoid", "exp", "log", "sqrt", "mean", "sum", "softmax", "log_softmax",
            "matmul", "expand", "float", "detach", "clone", "max", "argmax", "masked_fill", "pow", "fmod", "remainder", *_TRIG}


def _dtype(value, torch):
    mapping = {torch.float32: float32, torch.int64: int64, torch.int32: int32}
    return mapping.get(value, value) if isinstance(value, torch.dtype) else value


class FxModule(nn.Module):
    """A converted torch module whose forward is torch.fx's graph of it, run with lockstep's ops."""

    def __init__(self, class_name, program):
        super().__init__()
        self.__dict__["_class_name"] = class_name
        self.__dict__["_program"] = program  # [(op, target, args, kwargs, name)]

    def _trace_name(self):
        return self.__dict__["_class_name"]

    def extra_repr(self):
        return "from torch.fx"

    def __repr__(self):
        return nn.Module.__repr__(self).replace("FxModule(", self.__dict__["_class_name"] + "(", 1)

    def _attribute(self, target):
        obj = self
        for part in target.split("."):
            obj = getattr(obj, part)
        return obj

    def forward(self, *inputs):
        values, position = {}, 0

        def value(a):
            if isinstance(a, _Ref):
                return values[a.name]
            if isinstance(a, (tuple, list)):
                return type(a)(value(v) for v in a)
            if isinstance(a, dict):
                return {k: value(v) for k, v in a.items()}
            if isinstance(a, slice):
                return slice(value(a.start), value(a.stop), value(a.step))
            return a

        for op, target, args, kwargs, name in self.__dict__["_program"]:
            if op == "placeholder":
                values[name] = inputs[position] if position < len(inputs) else args[0]
                position += 1
            elif op == "get_attr":
                values[name] = self._attribute(target)
            elif op == "call_module":
                values[name] = self._attribute(target)(*value(args), **value(kwargs))
            elif op == "call_function":
                values[name] = target(*value(args), **value(kwargs))
            elif op == "call_method":
                a = value(args)
                values[name] = getattr(a[0], target)(*a[1:], **value(kwargs))
            else:
                return value(args[0])
        raise ArgumentError("%s: the graph has no output" % self.__dict__["_class_name"])


class _Ref:
    """A reference to an earlier node's value in a program."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


def convert_custom(converter, m, path, where):
    """A lockstep module for a torch module with a forward of its own (see the module docstring)."""
    torch = converter.torch
    cls = "%s.%s" % (type(m).__module__, type(m).__name__)
    try:
        graph = torch.fx.symbolic_trace(m).graph
    except Exception as e:  # noqa: B902  (fx raises many kinds; the message names this module)
        raise ArgumentError("from_torch_module: %s is a %s whose forward torch.fx cannot trace (%s: %s); lockstep "
                            "converts modules it can read" % (where, cls, type(e).__name__, e)) from None
    table = _function_table(torch)

    def arg(a):
        if isinstance(a, torch.fx.Node):
            return _Ref(a.name)
        if isinstance(a, (tuple, list)):
            return type(a)(arg(v) for v in a)
        if isinstance(a, dict):
            return {k: arg(v) for k, v in a.items()}
        if isinstance(a, slice):
            return slice(arg(a.start), arg(a.stop), arg(a.step))
        if isinstance(a, torch.Tensor):
            raise ArgumentError("from_torch_module: %s (%s) uses a tensor constant in its forward; register it as a "
                                "buffer or parameter" % (where, cls))
        return _dtype(a, torch)

    out = FxModule(type(m).__name__, [])
    for name, child in m.named_children():
        out.add_module(name, converter.convert(child, path + ("." if path else "") + name))
    for name, p in m.named_parameters(recurse=False):
        out.register_parameter(name, nn.Parameter(_C._zeros(list(p.shape), float32)))
    for name, b in m.named_buffers(recurse=False):
        out.register_buffer(name, _C._zeros(list(b.shape), int64 if b.dtype == torch.int64 else float32))
    program = []
    for node in graph.nodes:
        args, kwargs, target = arg(node.args), arg(dict(node.kwargs)), node.target
        if node.op == "call_function":
            if target is torch.nn.functional.dropout:
                p = (list(node.args[1:2]) + [node.kwargs.get("p", 0.5)])[0]
                if isinstance(p, torch.fx.Node):
                    raise ArgumentError("from_torch_module: %s (%s): a dropout rate computed in forward is not "
                                        "supported" % (where, cls))
                child = "fx_" + node.name
                out.add_module(child, nn.Dropout(p, generator=converter.gen))
                program.append(("call_module", child, (args[0],), {}, node.name))
                continue
            fn = table.get(target)
            if fn is None:
                raise ArgumentError("from_torch_module: %s (%s) calls %s in its forward, which lockstep cannot convert"
                                    % (where, cls, getattr(target, "__name__", target)))
            target = fn
        elif node.op == "call_method" and target not in _METHODS:
            raise ArgumentError("from_torch_module: %s (%s) calls the tensor method .%s() in its forward, which "
                                "lockstep cannot convert" % (where, cls, target))
        program.append((node.op, target, args, kwargs, node.name))
    out.__dict__["_program"] = program
    return out
