"""torch_trace: record a PyTorch training loop as a lockstep trace (format version 1).

    import sys; sys.path.insert(0, "tools/torch_trace"); from torch_trace import Tracer
    tracer = Tracer(model, optimizer, "run.trace")   # values_path=, values_steps=(a, b), values_match=""
    for step, (x, y) in enumerate(batches, 1):
        with tracer.step(step):
            optimizer.zero_grad(); loss = F.cross_entropy(model(x), y); loss.backward(); optimizer.step()
    tracer.close()    # writes the trace atomically, with its end line

Then `lockstep diff a.trace b.trace` compares it with another PyTorch trace or a lockstep trace.
The format, the hash and the op names are those of docs/diagnostics.md ("Tracing a PyTorch loop"
there says what is recorded and what is not). Standard library, numpy and torch (1.13 or newer:
torch.utils._python_dispatch.TorchDispatchMode); CPU tensors.
"""
import contextlib
import json
import math
import os
import platform
import tempfile

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

__version__ = "0.1.0"
FORMAT_VERSION = 1

# ---- the hash (core/trace/bits_hash.cc)

_P = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F)
_Q = (0xBF58476D1CE4E5B9, 0x94D049BB133111EB)
_MASK = (1 << 64) - 1
_CHUNK = 1 << 20  # words per vector pass (bounds the temporaries)


def _fmix64(k):
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & _MASK
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & _MASK
    k ^= k >> 33
    return k


def bits_hash(data):
    """lockstep's 128-bit hash of a byte buffer (bytes, memoryview or a contiguous numpy array, read
    as its little-endian bytes), as 32 hex digits."""
    b = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8) if not isinstance(data, np.ndarray) \
        else np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    n = b.size
    full = n // 8
    words = b[:full * 8].view("<u8")
    if n % 8:
        tail = np.zeros(8, dtype=np.uint8)
        tail[:n % 8] = b[full * 8:]
        words = np.concatenate([words, tail.view("<u8")])
    sums = [0, 0]
    with np.errstate(over="ignore"):
        for start in range(0, words.size, _CHUNK):
            w = words[start:start + _CHUNK]
            i = np.arange(start + 1, start + 1 + w.size, dtype=np.uint64)
            for lane in (0, 1):
                x = (w + i * np.uint64(_P[lane])) * np.uint64(_Q[lane])
                x ^= x >> np.uint64(31)
                sums[lane] = (sums[lane] + int(x.sum(dtype=np.uint64))) & _MASK
    h = [_fmix64(sums[lane] ^ ((n * _P[lane]) & _MASK)) for lane in (0, 1)]
    return "%016x%016x" % (h[0], h[1])


# ---- tensors as bytes and statistics

_SAME_SIZE_INT = {torch.bfloat16: torch.int16}
_SAFETENSORS_DTYPE = {"float32": "F32", "int32": "I32", "int64": "I64"}  # what lockstep's sidecar reader takes


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def tensor_array(t):
    """A tensor's contiguous CPU elements as a numpy array of the same bits (bfloat16 as int16)."""
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    t = t.resolve_conj().resolve_neg().contiguous()
    if t.dtype in _SAME_SIZE_INT:
        t = t.view(_SAME_SIZE_INT[t.dtype])
    return t.numpy().reshape(-1)


def _number(v):
    return "%.9g" % v if math.isfinite(v) else "null"


def statistics(a, dtype):
    """min, max, mean, l2 over the finite elements in float64, NaN and Inf counts, as lockstep
    computes them (sequential float64 sums: np.cumsum adds in order)."""
    if dtype == torch.bfloat16:
        v = torch.from_numpy(a).view(torch.bfloat16).double().numpy()
    elif a.dtype.kind == "c":
        v = np.abs(a).astype(np.float64)
    else:
        v = a.astype(np.float64)
    nan = int(np.count_nonzero(np.isnan(v)))
    finite_mask = np.isfinite(v)
    inf = int(v.size - nan - np.count_nonzero(finite_mask))
    f = v if nan == 0 and inf == 0 else v[finite_mask]
    if f.size == 0:
        return ("null", "null", "null", "0", nan, inf)
    total = float(np.cumsum(f)[-1])
    squares = float(np.cumsum(f * f)[-1])
    return (_number(float(f.min())), _number(float(f.max())), _number(total / f.size),
            _number(math.sqrt(squares)), nan, inf)


def _json_string(s):
    return json.dumps(s, ensure_ascii=False)


def _write_atomic(path, chunks):
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        try:  # mkstemp's 0600 -> a replaced file's mode, else the umask's default
            mode = os.stat(path).st_mode & 0o7777
        except OSError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as f:
            for c in chunks:
                f.write(c)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def safetensors_bytes(tensors):
    """[(name, dtype name, shape, numpy array)] as safetensors bytes (canonical NaNs are not
    enforced: the values are the recorded bits)."""
    header, offset = {}, 0
    for name, dtype, shape, a in tensors:
        n = a.nbytes
        header[name] = {"dtype": _SAFETENSORS_DTYPE[dtype], "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    out = [len(text).to_bytes(8, "little"), text]
    out.extend(np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False).tobytes() for _, _, _, a in tensors)
    return out


# ---- op names (docs/diagnostics.md, "Op names")

# aten ops that do not compute: views and metadata, copies, constants and bookkeeping.
SKIPPED = frozenset("""
view _unsafe_view reshape _reshape_alias view_as t transpose permute expand expand_as squeeze unsqueeze
slice select as_strided detach alias lift lift_fresh lift_fresh_copy flatten unflatten unbind split
split_with_sizes chunk narrow diagonal unfold movedim numpy_T contiguous clone copy copy_ _copy_from
_copy_from_and_resize detach_ zero_ zero fill fill_ set_ resize_ resize_as_ empty empty_like empty_strided
new_empty new_empty_strided zeros zeros_like ones ones_like full full_like new_zeros new_ones new_full
scalar_tensor _local_scalar_dense item _has_compatible_shallow_copy_type is_same_size sym_size sym_stride
sym_numel sym_storage_offset size stride _version record_stream
""".split())

RENAMED = {
    "addmm": "linear", "linear": "linear",
    "mm": "matmul", "bmm": "matmul", "matmul": "matmul",
    "relu": "relu", "threshold_backward": "relu_backward",
    "max_pool2d_with_indices": "max_pool2d", "max_pool2d_with_indices_backward": "max_pool2d_backward",
    "_log_softmax": "log_softmax", "_log_softmax_backward_data": "log_softmax_backward",
    "_softmax": "softmax", "_softmax_backward_data": "softmax_backward",
    "nll_loss_forward": "nll_loss", "nll_loss_backward": "nll_loss_backward",
    "native_layer_norm": "layer_norm", "native_layer_norm_backward": "layer_norm_backward",
    "embedding": "embedding", "embedding_dense_backward": "embedding_backward",
    "native_dropout": "dropout", "native_dropout_backward": "dropout_backward",
}
for _name in "gelu tanh sigmoid exp log sqrt add mul div sub neg pow".split():
    RENAMED[_name] = _name
for _name in "gelu tanh sigmoid".split():
    RENAMED[_name + "_backward"] = _name + "_backward"


def op_name(func, args):
    """lockstep's name of an aten op (the table of docs/diagnostics.md), else "aten.<name>"; an
    in-place variant of a named op takes the op's name (relu_ -> relu)."""
    namespace, _, name = func._schema.name.partition("::")
    if namespace != "aten":
        return namespace + "." + name
    if name in ("convolution", "convolution_backward"):  # conv1d, conv2d, conv_transpose2d, ... by the input's rank
        try:
            x = args[0] if name == "convolution" else args[1]
            transposed = args[6] if name == "convolution" else args[7]
            base = "conv%s%dd" % ("_transpose" if transposed else "", x.dim() - 2)
        except (IndexError, AttributeError):
            base = "conv"
        return base + ("_backward" if name == "convolution_backward" else "")
    if name in RENAMED:
        return RENAMED[name]
    if name.endswith("_") and name[:-1] in RENAMED:
        return RENAMED[name[:-1]]
    return "aten." + name


def _is_view(func):
    return any(r.alias_info is not None and not r.alias_info.is_write for r in func._schema.returns)


def _tensors(value):
    """The elements of an op's or module's output, flattened in order (nested tuples, lists and
    dict values); the position in this list is the record's "out"; None and non-tensors are kept
    here and skipped when recording, so that they keep their positions."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        out = []
        for v in value:
            out.extend(_tensors(v) if isinstance(v, (tuple, list, dict)) else [v])
        return out
    return []


# ---- the tracer

class _Mode(TorchDispatchMode):
    def __init__(self, tracer):
        super().__init__()
        self.tracer = tracer

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.tracer._on_op(func, args, out)
        return out


class Tracer:
    """Records the ops of `model`'s training steps into a lockstep trace written to `path`.

    values_path: a safetensors sidecar with the full values of the records of steps
    values_steps=(a, b) (default (1, 1) when values_path is given) whose "module/op" ("param/op"
    for gradients and updates: "0.weight/grad") contains values_match. source: free text for the
    header.
    """

    def __init__(self, model, optimizer, path, values_path=None, values_steps=None, values_match="", source=""):
        self.model, self.optimizer, self.path = model, optimizer, path
        self.values_path = values_path
        if values_path and values_steps is None:
            values_steps = (1, 1)
        self.values_steps = tuple(values_steps) if values_path else (0, 0)
        if self.values_steps[0] > self.values_steps[1]:
            raise ValueError("torch_trace: values steps %r are empty" % (self.values_steps,))
        self.values_match = values_match
        for p in (path, values_path):
            if p:
                folder = os.path.dirname(os.path.abspath(p))
                if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
                    raise OSError("torch_trace: cannot write %s (no writable folder %s)" % (p, folder))
        self._module_path = {}
        for name, m in model.named_modules():
            self._module_path.setdefault(id(m), name)
        module_paths = set(self._module_path.values())
        named = {id(p): n for n, p in model.named_parameters()}
        self._params = []  # (name, module path, parameter) in the optimizer's order
        position = 0
        for group in (optimizer.param_groups if optimizer is not None else []):
            for p in group["params"]:
                name = named.get(id(p), str(position))
                prefix = name.rpartition(".")[0]
                self._params.append((name, prefix if prefix in module_paths else "", p))
                position += 1
        self._lines = [self._header(source)]
        self._values = []
        self._records = 0
        self._state = "open"  # open, closed, aborted
        self._in_step = False
        self._step = 0
        self._phase = "forward"
        self._calls = {}
        self._stack = []
        self._busy = False       # the tracer's own tensor work (not recorded)
        self._quiet = 0          # inside optimizer.step: nothing but grad/update records
        self._backward_depth = 0
        self._backward_module = ""
        self._grad_ids = {}
        self._claimed = {}       # id -> autograd node (or leaf tensor) given a backward hook this step
        self._tensor_hooks = []
        self._module_hooks = []
        for m in model.modules():
            self._module_hooks.append(m.register_forward_pre_hook(self._pre_hook))
            self._module_hooks.append(m.register_forward_hook(self._post_hook))
        self._patches = []
        self._optimizer_step = None
        if optimizer is not None:
            self._install_optimizer_wrapper()
        self._mode = None

    # -- header and records

    def _header(self, source):
        capability = ""
        if hasattr(torch.backends, "cpu") and hasattr(torch.backends.cpu, "get_cpu_capability"):
            capability = torch.backends.cpu.get_cpu_capability()
        else:
            for line in torch.__config__.show().splitlines():
                if "CPU capability usage:" in line:
                    capability = line.split(":", 1)[1].strip()
        isa = os.environ.get("DNNL_MAX_CPU_ISA", "")
        aten = os.environ.get("ATEN_CPU_CAPABILITY", "")
        simd = "ATen " + capability + (", DNNL_MAX_CPU_ISA=" + isa if isa else "")
        fields = [("lockstep_trace", str(FORMAT_VERSION)), ("producer", _json_string("torch_trace")),
                  ("version", _json_string(__version__)), ("torch_version", _json_string(torch.__version__)),
                  ("threads", str(torch.get_num_threads())), ("cpu_capability", _json_string(capability)),
                  ("DNNL_MAX_CPU_ISA", _json_string(isa)), ("ATEN_CPU_CAPABILITY", _json_string(aten)),
                  ("platform", _json_string(platform.machine())), ("simd", _json_string(simd)),
                  ("source", _json_string(source))]
        return "{" + ",".join('"%s":%s' % kv for kv in fields) + "}\n"

    def _record(self, module, op, out_index, new_call, t, param=None):
        key = (self._phase, module, op)
        if new_call:
            call = self._calls.get(key, 0)
            self._calls[key] = call + 1
        else:
            call = self._calls[key] - 1
        a = tensor_array(t)
        dtype = _dtype_name(t.dtype)
        stats = statistics(a, t.dtype)
        line = ['{"step":%d,"phase":"%s","module":%s,"op":%s,"call":%d,"out":%d'
                % (self._step, self._phase, _json_string(module), _json_string(op), call, out_index)]
        if param is not None:
            line.append(',"param":' + _json_string(param))
        line.append(',"dtype":"%s","shape":[%s],"hash":"%s"' % (dtype, ",".join(str(d) for d in t.shape), bits_hash(a)))
        line.append(',"min":%s,"max":%s,"mean":%s,"l2":%s,"nan":%d,"inf":%d' % stats)
        name = (param if param is not None else module) + "/" + op  # "0/conv2d", "0.weight/grad"
        if (self.values_steps[0] > 0 and self.values_steps[0] <= self._step <= self.values_steps[1]
                and self.values_match in name and dtype in _SAFETENSORS_DTYPE):
            tag = "r%d" % self._records
            line.append(',"values":"%s"' % tag)
            self._values.append((tag, dtype, tuple(t.shape), a.copy()))
        line.append("}\n")
        self._lines.append("".join(line))
        self._records += 1

    def _record_all(self, module, op, tensors):
        first = True
        for position, t in enumerate(tensors):
            if not isinstance(t, torch.Tensor) or t.layout != torch.strided or t.device.type == "meta":
                continue
            self._record(module, op, position, first, t)
            first = False

    def _recording(self):
        return self._in_step and not self._busy and not self._quiet and self._state == "open"

    # -- the dispatch mode

    def _on_op(self, func, args, out):
        if not self._recording():
            return
        namespace, _, name = func._schema.name.partition("::")
        if name in SKIPPED or namespace == "profiler" or _is_view(func):
            return
        if name == "_to_copy" and args and isinstance(args[0], torch.Tensor) and isinstance(out, torch.Tensor) \
                and out.dtype == args[0].dtype:
            return  # a copy (device or layout), not a conversion
        if self._phase == "backward" and name.endswith("_") and args and id(args[0]) in self._grad_ids \
                and self._grad_ids[id(args[0])] is args[0]:
            return  # gradient accumulation into an existing .grad: its result is the "grad" record
        tensors = _tensors(out)
        if not tensors:
            return
        module = self._backward_module if self._phase == "backward" else (self._stack[-1] if self._stack else "")
        self._busy = True
        try:
            self._record_all(module, op_name(func, args), tensors)
        finally:
            self._busy = False

    # -- modules

    def _pre_hook(self, module, inputs):
        if self._in_step and self._state == "open":
            self._stack.append(self._module_path.get(id(module), self._stack[-1] if self._stack else ""))

    def _post_hook(self, module, inputs, output):
        if not (self._in_step and self._state == "open"):
            return
        path = self._stack[-1] if self._stack else self._module_path.get(id(module), "")
        if self._recording() and self._phase == "forward":
            self._busy = True
            try:
                tensors = _tensors(output)
                self._record_all(path, "output", tensors)
                # Backward attribution: a hook that runs when the gradient of t arrives, before
                # the autograd node that made t runs; only for the innermost module that produced
                # t (an outer module returning the same tensor does not take it over; a module
                # that modified it in place, giving it a new node, does).
                for t in tensors:
                    if isinstance(t, torch.Tensor) and t.requires_grad:
                        self._claim(t, path)
            finally:
                self._busy = False
        if self._stack:
            self._stack.pop()

    def _claim(self, t, path):
        node = t.grad_fn
        if node is not None and hasattr(node, "register_prehook"):
            if id(node) in self._claimed:
                return
            self._claimed[id(node)] = node
            self._tensor_hooks.append(node.register_prehook(self._gradient_arrives(path)))
        else:  # a leaf, or a torch without Node.register_prehook: a tensor hook
            if id(t) in self._claimed:
                return
            self._claimed[id(t)] = t
            self._tensor_hooks.append(t.register_hook(self._gradient_arrives(path)))

    def _gradient_arrives(self, path):
        def hook(*grads):
            if self._in_step and self._state == "open":
                self._backward_module = path
        return hook

    # -- backward and the optimizer

    def _wrap_backward(self, original):
        tracer = self

        def backward(*args, **kwargs):
            if not (tracer._in_step and tracer._state == "open"):
                return original(*args, **kwargs)
            saved = (tracer._phase, tracer._backward_module)
            if tracer._backward_depth == 0:
                tracer._phase, tracer._backward_module = "backward", ""
                tracer._grad_ids = {id(p.grad): p.grad for _, _, p in tracer._params if p.grad is not None}
            tracer._backward_depth += 1
            try:
                return original(*args, **kwargs)
            finally:
                tracer._backward_depth -= 1
                if tracer._backward_depth == 0:
                    tracer._phase, tracer._backward_module = saved
                    tracer._grad_ids = {}
        backward.__wrapped__ = original
        return backward

    def _install_backward_wrappers(self):
        for owner, attr in ((torch.Tensor, "backward"), (torch.autograd, "backward"), (torch.autograd, "grad")):
            original = getattr(owner, attr)
            wrapper = self._wrap_backward(original)
            setattr(owner, attr, wrapper)
            self._patches.append((owner, attr, original, wrapper))

    def _remove_backward_wrappers(self):
        while self._patches:
            owner, attr, original, wrapper = self._patches.pop()
            if getattr(owner, attr) is wrapper:
                setattr(owner, attr, original)

    def _install_optimizer_wrapper(self):
        optimizer, tracer = self.optimizer, self
        had_own = "step" in optimizer.__dict__
        previous = optimizer.__dict__.get("step")
        original = optimizer.step

        def step(*args, **kwargs):
            if not (tracer._in_step and tracer._state == "open"):
                return original(*args, **kwargs)
            tracer._parameters("grad")
            tracer._quiet += 1
            try:
                result = original(*args, **kwargs)
            finally:
                tracer._quiet -= 1
            tracer._parameters("update")
            return result
        optimizer.step = step
        self._optimizer_step = (had_own, previous, step)

    def _remove_optimizer_wrapper(self):
        if self._optimizer_step is None:
            return
        had_own, previous, wrapper = self._optimizer_step
        self._optimizer_step = None
        if self.optimizer.__dict__.get("step") is wrapper:  # else someone wrapped it since: it now passes through
            if had_own:
                self.optimizer.step = previous
            else:
                del self.optimizer.step

    def _parameters(self, phase):
        if self._busy or self._quiet:
            return
        saved = self._phase
        self._phase = phase
        self._busy = True
        try:
            for name, module, p in self._params:
                t = p.grad if phase == "grad" else p
                if t is not None:
                    self._record(module, phase, 0, True, t, param=name)
        finally:
            self._busy = False
            self._phase = saved

    # -- steps

    @contextlib.contextmanager
    def step(self, step):
        """Records the ops run inside as training step `step` (1-based). An exception (Ctrl-C
        included) inside aborts the trace: every hook and patch is removed, nothing is written,
        and the exception goes on."""
        if self._state != "open":
            raise RuntimeError("torch_trace: the tracer is %s" % self._state)
        if self._in_step:
            raise RuntimeError("torch_trace: step %d is still open" % self._step)
        self._step, self._phase, self._calls, self._stack = int(step), "forward", {}, []
        self._backward_module, self._backward_depth = "", 0
        try:
            self._install_backward_wrappers()
            self._mode = _Mode(self)
            self._in_step = True
            with self._mode:
                yield self
        except BaseException:
            self._in_step = False
            self._abort()
            raise
        finally:
            self._in_step = False
            self._end_step()

    def _end_step(self):
        self._remove_backward_wrappers()
        for h in self._tensor_hooks:
            h.remove()
        self._tensor_hooks, self._claimed, self._stack, self._grad_ids = [], {}, [], {}
        self._mode = None

    def _abort(self):
        self._state = "aborted"
        self._end_step()
        self._remove_hooks()
        self._lines, self._values = [], []

    def _remove_hooks(self):
        for h in self._module_hooks:
            h.remove()
        self._module_hooks = []
        self._remove_optimizer_wrapper()

    @property
    def records(self):
        return self._records

    def trace_bytes(self):
        return ("".join(self._lines) + '{"end":true,"records":%d}\n' % self._records).encode("utf-8")

    def close(self):
        """Removes the hooks and writes the trace (and the values sidecar when it holds values)
        atomically. Does nothing after an abort or a first close."""
        if self._state != "open":
            return
        self._remove_hooks()
        self._state = "closed"
        if self.path:
            _write_atomic(self.path, [self.trace_bytes()])
        if self.values_path and self._values:
            _write_atomic(self.values_path, safetensors_bytes(self._values))

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        elif self._state == "open":
            self._abort()
        return False
