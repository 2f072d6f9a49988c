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
  mapped to the lockstep op or composition of ops of the table ``_OPS`` (lockstep/_aten_ops.py, docs
  in each entry), run by the programs of lockstep/_aten_program.py;
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
import operator

import numpy as np

from . import _C
from ._errors import ArgumentError
from ._runtime import no_grad
from . import nn
from .nn import functional as F
from ._aten_ops import _INPLACE, _META_ONLY, _OPS, _RANDOM, _VIEWS, _bernoulli_mask, _linear_t, _passthrough
from ._aten_program import AtenModule, _Affine, _Instr, _Ref, _place, _run


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


_BATCH_NORMS = ("native_batch_norm.default", "_native_batch_norm_legit.default", "_native_batch_norm_legit.no_stats")


def _fold_activations(torch, nodes, users, live):
    """{batch norm node: (name, lo, hi)} and {activation node: its batch norm node} for each ReLU,
    hardtanh or SiLU whose input is a batch norm's output 0 that nothing else reads (the norm's other
    outputs unread too): core's BatchNorm then applies it as it stores its output and forms its
    gradient inside its own (the bits and gradients of the two ops)."""
    folded, absorbed = {}, {}
    for n in nodes:
        if n not in live or n.op != "call_function" or n.target is operator.getitem:
            continue
        name = _op_name(n.target).replace("_.default", ".default")
        if name not in ("relu.default", "hardtanh.default", "silu.default") or not n.args:
            continue
        item = n.args[0]
        if not isinstance(item, torch.fx.Node) or item.target is not operator.getitem or item.args[1] != 0:
            continue
        norm = item.args[0]
        if not isinstance(norm, torch.fx.Node) or norm.op != "call_function" or _op_name(norm.target) not in _BATCH_NORMS:
            continue
        if [u for u in users[item] if u in live] != [n] or [u for u in users[norm] if u in live] != [item]:
            continue
        if name == "hardtanh.default":
            lo = float(n.args[1]) if len(n.args) > 1 else float(n.kwargs.get("min_val", -1.0))
            hi = float(n.args[2]) if len(n.args) > 2 else float(n.kwargs.get("max_val", 1.0))
            if not lo <= hi:
                continue  # PyTorch gives hi everywhere: the fills, not the kernel
            folded[norm] = ("hardtanh", lo, hi)
        else:
            folded[norm] = (name.split(".")[0], 0.0, 0.0)
        absorbed[n] = norm
    return folded, absorbed


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

        folded, absorbed = _fold_activations(torch, nodes, users, live)
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
                fn = None if functional.startswith("<") else _passthrough if n in absorbed else _OPS[functional]
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
            if n in folded:
                fn = functools.partial(fn, activation=folded[n])
            elif n in absorbed:
                fn = _passthrough
            elif name == "silu.default" and isinstance(n.args[0], torch.fx.Node) and len(users[n.args[0]]) == 1:
                # SiLU as one op (its gradient one pass): the bits of x * sigmoid(x) and its gradient
                # when nothing else reads x, so that x's two gradients are all its gradient (the ONNX
                # export's Sigmoid and Mul give the same bits wherever it runs).
                fn = F.silu
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
