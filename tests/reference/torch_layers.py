#!/usr/bin/python3
"""lockstep's layers and losses, forward and backward, against torch.nn.functional.

  /usr/bin/python3 tests/reference/torch_layers.py --fixture FILE [--dump EXE [--emulator=CMD]]
                                                   [--markdown OUT.md]

With --dump, runs `EXE FILE` first (tests/reference/layer_dump.cc writes inputs, weights,
lockstep's outputs and lockstep's gradients of sum(out * gout) for a fixed random weighting gout).
Then recomputes every case with torch.nn.functional on the CPU with one thread, in float64 (a
stand-in for the exact value) and in float32, and prints per case and per array (the forward
output, each gradient, updated buffers) the relative error

    rel = max |a - b| / max |b|        (float64 arithmetic, over the whole array)

of lockstep against float64 (checked: "ls-f64"), of torch float32 against float64 and of lockstep
against torch float32 (both reported, not checked). Exit status 0 when every array is within its
bound, 1 when one is not, 77 (ctest's SKIP) when torch cannot be imported (1 under
LOCKSTEP_REQUIRE_ALL=1, as make test sets: a failure there).

Why float64 is the judge. lockstep's bits are the same on every machine and torch's float64
result is within ~1e-16 of the exact value on every machine, so the check gives the same verdict on
any CPU. torch's float32 kernels are not: oneDNN and ATen pick kernels by the CPU's SIMD level (on
an AVX-512 Zen 5, oneDNN's convolution weight gradient is 1.2e-4 relative from float64, ~1e-6 with
its AVX2 kernel), so a bound on lockstep - torch would measure torch's kernel choice.

How the bounds were set. Each bound (units of u = 2^-24, float32's unit roundoff) comes from an
error model of the op and is about 4 times or more the largest value measured (lockstep vs
float64; the reasons below also give the torch float32 figures, measured on a Zen 3 with torch
1.13.0 from Debian, for scale). Arrays listed in `correctly_rounded` must, besides, equal
float64's result rounded to float32 (as values; the sign of a zero aside): ops with one rounding
(a sum of two floats, a product) or none (selection, a view, a gather). Neither library is the exact answer: both round,
in different orders (lockstep: canonical K-sequential sums and fixed 64-lane reductions; torch:
blocked FMA GEMM, vectorised reductions).
"""
import argparse
import os
import shlex
import struct
import subprocess
import sys

try:  # checked in main(), after torch: only a missing torch skips the test
    import numpy as np
except ImportError:
    np = None

U = 2.0 ** -24  # unit roundoff of float32

# Per op (the case name's prefix before ':'): the bound on lockstep against float64 for the forward
# output ("out"), for the gradients ("grad"), and for updated buffers ("buffer"), in units of u
# (rel <= bound * u), with the reason; `correctly_rounded` names the kinds ("out", "grad") that
# must equal float64's result rounded to float32 (as values: -0 equals +0).
TOLERANCES = {
    "matmul": dict(
        out=16, grad=16,
        why="Batched products of the attention (q @ k^T with k a transposed view, att @ v): dot "
            "products of K = head size 5 or sequence 8 forward, K = 5 or 8 backward. lockstep sums "
            "in increasing k without FMA; torch's batched GEMM blocks and may fuse. Within gamma_K. "
            "Bound 16 u."),
    "causal_softmax": dict(
        out=8, grad=16,
        why="masked_fill with -inf on future keys, then softmax over the keys: exp is correctly "
            "rounded in lockstep (torch's vectorised exp is within ~1-2 ulp), one division. The "
            "backward is y * (g - sum(g * y)). Bound 8 u / 16 u."),
    "add": dict(
        out=1, grad=2, correctly_rounded=("out",),
        why="One rounding per element: the forward is float64's sum rounded to float32 (the sum "
            "of two floats is exact in float64), bit for bit; the broadcast operand's gradient "
            "sums 2 rows. Measured vs float64: 0 / 0 u (torch the same). Bound 1 / 2 u."),
    "mul_scalar": dict(
        out=2, grad=2,
        why="One multiplication by float32(scale) in lockstep (and in torch float32); float64 "
            "multiplies by the unrounded Python scale, so the two differ by the product's rounding "
            "(<= 1 u of the element) plus the scale's (<= 0.5 u). Measured vs float64: 0.55 / "
            "0.56 u. Bound 2 u."),
    "heads": dict(
        out=0, grad=0, correctly_rounded=("out", "grad"),
        why="Views, a transpose and a copy: no arithmetic but a multiplication by 1. Exact: "
            "bit-identical to float64's result."),
    "linear": dict(
        out=16, grad=32,
        why="Dot products: forward and input gradient K = in features <= 33, weight and bias "
            "gradients K = the batch rows (70 rows: two batch groups of 32 and a rest). Each "
            "library is within gamma_K sum|a||b| of the exact value (Higham 3.1), typically "
            "~sqrt(K) u. Measured: out 3.7 u, grad 4.2 u; each library vs float64 <= 4.2 u. "
            "Bound 16 u / 32 u."),
    "conv2d": dict(
        out=16, grad=64,
        why="Forward and input gradient: dot products of K = C_in/groups * kh * kw <= 36; weight "
            "and bias gradients: K = N * H_out * W_out, up to 40 * 12 * 12 = 5760 (the batch-40 "
            "case), with cancellation (gout has random signs). lockstep sums in increasing k "
            "(batch groups of 32 in a fixed tree), torch with oneDNN / im2col + BLAS (FMA, "
            "blocked). Measured: out 3.5 u; grad 15.6 u (batch-40 weight and bias gradients, "
            "where torch is 27 u and lockstep 17 u from float64; <= 8 u elsewhere). Bound 16 u "
            "/ 64 u."),
    "max_pool2d": dict(
        out=0, grad=4, correctly_rounded=("out",),
        why="Selection without arithmetic: the forward is exact (bit-identical to float64's), "
            "and the gradient routes each output's weight to its argmax (inputs are distinct "
            "24-bit uniforms: no ties) and adds the <= 9 contributions an input gets from "
            "overlapping windows in increasing output order, one rounding each. Measured vs "
            "float64: 0 / 0.82 u (lockstep and torch float32 bit-identical). Bound 0 / 4 u."),
    "avg_pool2d": dict(
        out=8, grad=8,
        why="A sum of kh*kw <= 9 terms and a division by the window size (padding counted) in "
            "both, the sum possibly in another order: <= ~10 u relative to the terms. Measured: "
            "out 2.1 u (torch 2.3 u, lockstep 1.0 u from float64), grad bit-identical. Bound 8 u."),
    "relu": dict(out=0, grad=0, correctly_rounded=("out", "grad"),
                 why="Exact in both: x > 0 ? x : 0 and x > 0 ? g : 0. Only the sign of some "
                     "zeros differs (relu(-0): lockstep +0 (contract rule 6), torch -0; the "
                     "gradient where x <= 0 and g < 0: lockstep -0, torch +0), which the "
                     "metric, like ==, treats as equal. Exact: equal to float64's result. "
                     "Measured: 0."),
    "gelu_erf": dict(
        out=8, grad=16,
        why="lockstep: correctly rounded erf/exp in float64, then float32 x * Phi; torch: its own "
            "float32 erf (up to ~9 ulp near 0, torch_kernels.py). Relative to max|out| ~ 6, "
            "max|grad| ~ 1.1. Measured: out 1.3 u, grad 2.7 u (torch vs float64 3.0 u, lockstep "
            "1.6 u). Bound 8 u / 16 u."),
    "gelu_tanh": dict(
        out=8, grad=64,
        why="Both evaluate 0.5 x (1 + tanh(z)), z = sqrt(2/pi)(x + 0.044715 x^3), in float32 "
            "with the same constants (tanh: correctly rounded vs SLEEF <= 1 ulp). The gradient "
            "adds 0.5 x (1 - tanh(z)^2) z': for |x| ~ 5, tanh(z) rounds to within an ulp of +-1, "
            "so 1 - tanh^2 keeps only its absolute error (~2 u) and 0.5 |x| z' ~ 14 multiplies "
            "it: ~28 u of max|grad| per library. Measured: out 1.3 u; grad 15.9 u at x = -5.13 "
            "(torch 13.9 u and lockstep 6.9 u from float64, both at |x| ~ 5.1). Bound 8 u / 64 u."),
    "tanh": dict(
        out=4, grad=8,
        why="tanh correctly rounded vs SLEEF (<= 1 ulp); gradient g (1 - y^2) in both, 1 - y^2 "
            "carrying y's absolute rounding (<= u) near saturation. Measured: out 0.5 u, grad "
            "1.0 u. Bound 4 u / 8 u."),
    "sigmoid": dict(
        out=4, grad=16,
        why="sigmoid: correctly rounded vs torch's 1 / (1 + exp(-x)) in float32 (<= 3 ulp). "
            "Gradient g y (1 - y): for y near 1, 1 - y keeps only y's absolute rounding error "
            "(<= u, torch's up to 3 u) while max y (1 - y) = 1/4, so up to ~4 u (lockstep) and "
            "~12 u (torch) of max|grad|. Measured: out 1.0 u, grad 3.9 u at x = 5.98 (torch 5.0 "
            "u, lockstep 2.0 u from float64). Bound 4 u / 16 u."),
    "softmax": dict(
        out=16, grad=32,
        why="Per row: exp(x - max) (<= 1 ulp each), a sum of <= 300 positive terms (lockstep: 64 "
            "lanes, depth <= 10; torch: vector accumulators), one division; the gradient y (g - "
            "sum(g y)) adds a second sum with cancellation. Dimensions 0, middle and last. "
            "Measured: out 2.2 u, grad 3.4 u. Bound 16 u / 32 u."),
    "log_softmax": dict(
        out=16, grad=32,
        why="(x - max) - log(sum exp(x - max)): the sum as in softmax, log correctly rounded vs "
            "SLEEF; gradient g - exp(y) sum(g), a sum with cancellation. Measured: out 1.3 u, "
            "grad 4.5 u. Bound 16 u / 32 u."),
    "dropout": dict(
        out=1, grad=1, correctly_rounded=("out", "grad"),
        why="Compared by applying lockstep's mask (PyTorch's RNG differs by design): x * mask "
            "and g * mask are single products, exact in float64: lockstep equals float64's "
            "result rounded to float32, bit for bit. The "
            "mask is checked separately: values in {0, float32(1 / (1 - p))} with torch's own "
            "scale, and a kept fraction within 5 sigma of 1 - p."),
    "layer_norm": dict(
        out=32, grad=32,
        why="Mean and biased variance over D <= 768 elements (lockstep: two passes, canonical "
            "64-lane sums, correctly rounded rsqrt; torch: its own vectorised moments), then "
            "(x - mean) rstd w + b: a few u, amplified by |x - mean| / sigma <= ~2. Gradients: "
            "two more row sums (of g w and g w xhat) with cancellation. Measured: out 5.3 u "
            "(torch 4.7 u, lockstep 3.2 u from float64), grad 5.1 u. Bound 32 u."),
    "batch_norm": dict(
        out=32, grad=32, buffer=8,
        why="Per-channel mean and variance over N*H*W <= 560 values (lockstep: batch groups of "
            "32 samples in a fixed tree, canonical sums; torch: its own CPU kernel), "
            "normalisation as layer_norm; gradients in training mode use three per-channel sums "
            "with cancellation, in eval mode a per-channel scale and two sums (weight, bias). "
            "Running statistics (1 - m) r + m s (unbiased variance), the statistic's error "
            "damped by m = 0.1. Measured: out 7.2 u (torch 4.7 u, lockstep 5.4 u from float64), "
            "grad 5.2 u, buffers 1.1 u. Bound 32 / 32 / 8 u."),
    "embedding": dict(
        out=0, grad=8, correctly_rounded=("out",),
        why="A gather (exact: bit-identical to float64's) and a scatter-add of <= 5 rows per "
            "weight row, added in index order, one rounding each. Measured vs float64: 0 / 1.33 "
            "u (lockstep and torch float32 bit-identical). Bound 0 / 8 u."),
    "cross_entropy": dict(
        out=16, grad=16,
        why="log_softmax over C = 10 classes per row, then a sum over N = 37 rows (lockstep: "
            "batch groups of 32 in a fixed tree; torch: its own order) and a division by the "
            "number of counted rows; label smoothing adds a row sum of log-probabilities. "
            "Positive terms: the sum's error is <= depth u relative. Gradient: (softmax - "
            "(smoothed) one-hot) g / count, a few roundings per element. Measured: out 1.9 u, "
            "grad 1.4 u. Bound 16 u."),
    "nll_loss": dict(
        out=16, grad=1,
        why="A gather (exact) and a sum of N = 37 positive terms in different orders, then a "
            "division: <= ~6 u typical. Gradient: -g / count (mean) or -g (sum) at the target, "
            "one division at most (float64 rounds it once more, to float32). Measured vs float64: "
            "out 1.0 u, grad 0.47 u (vs torch float32: 3.5 u, bit-identical). Bound 16 / 1 u."),
    "mse_loss": dict(
        out=8, grad=8,
        why="(x - t)^2, one rounding each, then a sum of 117 positive terms (lockstep: 64 lanes, "
            "depth 7; torch: cascade sum) and a division. Gradient 2 (x - t) g / n: three or four "
            "roundings, perhaps in another order. Measured: out 1.6 u, grad 1.5 u. Bound 8 u."),
}


def read_fixture(path):
    data = open(path, "rb").read()
    if data[:8] != b"LSLAYER1":
        raise SystemExit("%s: not a lockstep layer dump" % path)
    pos = 8

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from(fmt, data, pos)[0]
        pos += struct.calcsize(fmt)
        return v

    def string():
        nonlocal pos
        n = take("<I")
        v = data[pos:pos + n].decode()
        pos += n
        return v

    cases = []
    for _ in range(take("<I")):
        name = string()
        params = {}
        for _ in range(take("<I")):
            key = string()
            params[key] = take("<d")
        arrays = {}
        for _ in range(take("<I")):
            aname = string()
            dtype = np.dtype("<f4") if data[pos] == 0 else np.dtype("<i8")
            pos += 1
            dims = [take("<q") for _ in range(take("<I"))]
            count = int(np.prod(dims)) if dims else 1
            arrays[aname] = np.frombuffer(data, dtype=dtype, count=count, offset=pos).reshape(dims).copy()
            pos += count * dtype.itemsize
        cases.append((name, params, arrays))
    return cases


REDUCTIONS = {0: "mean", 1: "sum", 2: "none"}  # core/ops.h enum class Reduction


def torch_case(torch, op, p, arr, dtype):
    """Recomputes one case with float arrays in `dtype` (torch.float32: the comparison;
    torch.float64: the near-exact reference); returns {array name: result as numpy}."""
    F = torch.nn.functional
    grads = [k[len("grad."):] for k in arr if k.startswith("grad.")]
    special = {"out", "gout", "mask"}
    t = {}
    for name, a in arr.items():
        if name in special or name.startswith("grad.") or name.endswith(".after"):
            continue
        t[name] = torch.from_numpy(a.copy())
        if t[name].is_floating_point():
            t[name] = t[name].to(dtype)
        if name in grads:
            t[name].requires_grad_(True)
    extra = {}
    i = lambda key: int(p[key])
    if op == "linear":
        out = F.linear(t["x"], t["weight"], t.get("bias"))
    elif op == "conv2d":
        out = F.conv2d(t["x"], t["weight"], t.get("bias"), stride=(i("stride_h"), i("stride_w")),
                       padding=(i("padding_h"), i("padding_w")),
                       dilation=(i("dilation_h"), i("dilation_w")), groups=i("groups"))
    elif op in ("max_pool2d", "avg_pool2d"):
        fn = F.max_pool2d if op == "max_pool2d" else F.avg_pool2d
        out = fn(t["x"], (i("kernel_h"), i("kernel_w")), (i("stride_h"), i("stride_w")),
                 (i("padding_h"), i("padding_w")))
    elif op == "relu":
        out = F.relu(t["x"])
    elif op == "gelu_erf":
        out = F.gelu(t["x"], approximate="none")
    elif op == "gelu_tanh":
        out = F.gelu(t["x"], approximate="tanh")
    elif op == "tanh":
        out = torch.tanh(t["x"])
    elif op == "sigmoid":
        out = torch.sigmoid(t["x"])
    elif op == "softmax":
        out = F.softmax(t["x"], dim=i("dim"))
    elif op == "log_softmax":
        out = F.log_softmax(t["x"], dim=i("dim"))
    elif op == "dropout":
        out = t["x"] * torch.from_numpy(arr["mask"].copy()).to(dtype)
    elif op == "layer_norm":
        nd = i("normalized_dims")
        out = F.layer_norm(t["x"], tuple(t["x"].shape[-nd:]), t.get("weight"), t.get("bias"), eps=p["eps"])
    elif op == "batch_norm":
        rm, rv = t["running_mean"].clone(), t["running_var"].clone()
        out = F.batch_norm(t["x"], rm, rv, t["weight"], t["bias"], training=bool(i("training")),
                           momentum=p["momentum"], eps=p["eps"])
        if i("training"):
            extra["running_mean.after"], extra["running_var.after"] = rm.numpy(), rv.numpy()
    elif op == "embedding":
        out = F.embedding(t["indices"], t["weight"])
    elif op == "cross_entropy":
        out = F.cross_entropy(t["logits"], t["target"], reduction=REDUCTIONS[i("reduction")],
                              ignore_index=i("ignore_index"), label_smoothing=p["label_smoothing"])
    elif op == "nll_loss":
        out = F.nll_loss(t["log_probs"], t["target"], reduction=REDUCTIONS[i("reduction")],
                         ignore_index=i("ignore_index"))
    elif op == "mse_loss":
        out = F.mse_loss(t["input"], t["target"], reduction=REDUCTIONS[i("reduction")])
    elif op == "matmul":
        out = t["a"] @ (t["b_t"].transpose(-2, -1) if "b_t" in t else t["b"])
    elif op == "causal_softmax":
        n = t["x"].shape[-1]
        future = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
        out = F.softmax(t["x"].masked_fill(future, float("-inf")), dim=-1)
    elif op == "add":
        out = t["a"] + t["b"]
    elif op == "mul_scalar":
        out = t["x"] * p["scale"]  # a Python float: torch rounds it to the tensor's dtype first
    elif op == "heads":
        x = t["x"]
        B, T, C = x.shape
        h = i("heads")
        out = (x.view(B, T, h, C // h).transpose(1, 2) * 1.0).transpose(1, 2).contiguous().view(B, T, C)
    else:
        raise KeyError(op)
    out.backward(torch.from_numpy(arr["gout"].copy()).to(dtype))
    res = {"out": out.detach().numpy()}
    for g in grads:
        res["grad." + g] = t[g].grad.numpy()
    res.update(extra)
    return res


def rel_error(ls, ref):
    ls = ls.astype(np.float64)
    ref = ref.astype(np.float64)
    if ls.shape != ref.shape:
        return float("inf")
    if not (np.all(np.isfinite(ls)) and np.all(np.isfinite(ref))):
        return float("inf")
    if ref.size == 0:
        return 0.0
    scale = np.max(np.abs(ref))
    diff = np.max(np.abs(ls - ref))
    return float(diff / scale) if scale > 0 else (0.0 if diff == 0 else float("inf"))


def equal_values(ls, ref):
    """Equal shapes and equal values (== semantics: -0 equals +0; any NaN equals any NaN)."""
    if ls.shape != ref.shape:
        return False
    both_nan = np.isnan(ls) & np.isnan(ref)
    return bool(np.all((ls == ref) | both_nan))


def bit_identical(ls, ref):
    if ls.shape != ref.shape:
        return 0.0
    if ls.size == 0:
        return 100.0
    return 100.0 * float(np.mean(ls.astype(np.float32).view(np.uint32) == ref.astype(np.float32).view(np.uint32)))


def max_ulp(ls, ref):
    """The largest distance in float32 ulps (steps between adjacent floats; -0 and +0 are one
    point) between two arrays of the same shape, over the elements whose reference magnitude is at
    least 2^-8 of the array's largest: near zero, where cancellation leaves few significant bits,
    an ulp count says nothing (the rel column covers those elements)."""
    if ls.shape != ref.shape or ls.size == 0:
        return 0 if ls.shape == ref.shape else float("inf")
    keep = np.abs(ref) >= np.max(np.abs(ref)) * 2.0 ** -8
    ls, ref = ls[keep], ref[keep]

    def ordered(a):
        i = a.astype(np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)

    return int(np.max(np.abs(ordered(ls) - ordered(ref))))


# The ops of the GPT example (core/models/gpt.cc) in the order a training step meets them, with
# what each computes there; --gpt-table writes their comparison (docs/gpt-ops.md).
GPT_OPS = [
    ("embedding", "token and position embeddings (wte, wpe)"),
    ("add", "token + position embedding (broadcast), residual connections"),
    ("dropout", "after the embeddings, on attention probabilities, after projections"),
    ("layer_norm", "ln_1, ln_2, ln_f"),
    ("linear", "c_attn, c_proj, c_fc, the tied head"),
    ("heads", "splitting q, k, v into heads and merging them back"),
    ("matmul", "q @ k^T and att @ v"),
    ("mul_scalar", "the attention scale 1/sqrt(head size)"),
    ("causal_softmax", "causal mask (-inf) and softmax over the keys"),
    ("gelu_erf", "the MLP's activation (exact erf form)"),
    ("cross_entropy", "the loss over the vocabulary"),
    ("softmax", "sampling probabilities"),
]


def kind_of(array_name):
    if array_name == "out":
        return "out"
    if array_name.endswith(".after"):
        return "buffer"
    return "grad"


def check_dropout(torch, p, arr):
    """lockstep's mask: values in {0, scale} with torch's scale, kept fraction near 1 - p."""
    prob = p["p"]
    mask = arr["mask"]
    scale = float(torch.ones(1).div_(1.0 - prob)[0])  # what F.dropout multiplies kept elements by
    values_ok = bool(np.all((mask == 0) | (mask == np.float32(scale))))
    n = mask.size
    kept = float(np.mean(mask != 0))
    sigma = (prob * (1 - prob) / n) ** 0.5
    frac_ok = abs(kept - (1 - prob)) <= 5 * sigma
    line = ("dropout mask: values {0, %.9g} (torch scale %.9g): %s; kept %.4f of %d (1 - p = %.2f, "
            "5 sigma = %.4f): %s" % (float(mask.max()), scale, "ok" if values_ok else "FAIL", kept, n,
                                     1 - prob, 5 * sigma, "ok" if frac_ok else "FAIL"))
    return values_ok and frac_ok, line


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fixture", required=True)
    ap.add_argument("--dump", help="lockstep_layer_dump executable to run first")
    ap.add_argument("--emulator", default="", help="command prefix for --dump (cross builds)")
    ap.add_argument("--markdown", help="write the results table here")
    ap.add_argument("--gpt-table", help="write the GPT op table (docs/gpt-ops.md's) here")
    args = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        print("torch_layers: SKIPPED: %s cannot import torch (%s)" % (sys.executable, e))
        return 1 if os.environ.get("LOCKSTEP_REQUIRE_ALL") == "1" else 77  # make test: a failure
    if np is None:
        print("torch_layers: numpy is missing although torch imports")
        return 1
    torch.set_num_threads(1)
    if args.dump:
        cmd = shlex.split(args.emulator) + [args.dump, args.fixture]
        r = subprocess.run(cmd)
        if r.returncode != 0:
            print("torch_layers: %s failed with status %d" % (" ".join(cmd), r.returncode))
            return 1
    cases = read_fixture(args.fixture)
    print("torch %s, %d thread; %d cases; rel(a, b) = max|a - b| / max|b|, in units of u = 2^-24; "
          "checked: lockstep vs float64 (ls-f64) against the bound; reported: torch float32 vs "
          "float64 (t32-f64), lockstep vs torch float32 (ls-t32) and their bit-identical share"
          % (torch.__version__, torch.get_num_threads(), len(cases)))
    header = ("| case | array | shape | lockstep vs f64 (u) | bound (u) | torch f32 vs f64 (u) "
              "| lockstep vs torch f32 (u) | bit-identical to torch f32 % | |")
    rows = [header, "|---|---|---|---|---|---|---|---|---|"]
    print("%-46s %-20s %9s %7s %9s %9s %8s" % ("case", "array", "ls-f64", "bound", "t32-f64", "ls-t32",
                                                "ident%"))
    failures = []
    worst = {}  # (op, kind) -> largest rel seen
    worst64 = {}  # (op, kind) -> (lockstep vs float64, torch float32 vs float64), largest each
    gpt = {}  # (op, kind) -> [least bit-identical %, largest ulp distance, largest rel (u)]
    notes = []
    for name, params, arr in cases:
        op = name.split(":")[0]
        spec = TOLERANCES[op]
        ref = torch_case(torch, op, params, arr, torch.float32)
        ref64 = torch_case(torch, op, params, arr, torch.float64)
        for aname in ["out"] + sorted(k for k in ref if k != "out"):
            kind = kind_of(aname)
            ls = arr[aname]
            # Checked: lockstep against float64. Reported: torch float32 against float64 and
            # lockstep against torch float32 (machine-dependent: torch's kernels vary by CPU).
            r = rel_error(ls, ref[aname])
            e_ls, e_t = rel_error(ls, ref64[aname]), rel_error(ref[aname], ref64[aname])
            bound = spec[kind]
            ok = e_ls <= bound * U
            if kind in spec.get("correctly_rounded", ()):
                ok = ok and equal_values(ls, ref64[aname].astype(np.float32))
            ident = bit_identical(ls, ref[aname])
            g = gpt.setdefault((op, kind), [100.0, 0, 0.0])
            g[0], g[1], g[2] = min(g[0], ident), max(g[1], max_ulp(ls, ref[aname])), max(g[2], r / U)
            worst[(op, kind)] = max(worst.get((op, kind), 0.0), r / U)
            w = worst64.get((op, kind), (0.0, 0.0))
            worst64[(op, kind)] = (max(w[0], e_ls / U), max(w[1], e_t / U))
            flag = "" if ok else "FAIL"
            print("%-46s %-20s %9.3f %7g %9.3f %9.3f %8.2f %s" % (name, aname, e_ls / U, bound, e_t / U,
                                                                 r / U, ident, flag))
            rows.append("| %s | %s | %s | %.3f | %g | %.3f | %.3f | %.2f | %s |" % (
                name, aname, "x".join(str(d) for d in ls.shape) or "scalar", e_ls / U, bound, e_t / U,
                r / U, ident, flag))
            if not ok:
                failures.append("%s %s: lockstep vs float64 %.3g u > %g u%s (torch float32 vs float64 "
                                "%.3g u, lockstep vs torch float32 %.3g u)"
                                % (name, aname, e_ls / U, bound,
                                   " or not float64's result rounded to float32"
                                   if kind in spec.get("correctly_rounded", ()) else "", e_t / U, r / U))
        if op == "dropout":
            ok, line = check_dropout(torch, params, arr)
            print(line)
            notes.append(line)
            if not ok:
                failures.append(line)
    print()
    print("largest rel per op (units of u): lockstep vs float64 (checked) / torch float32 vs float64; "
          "lockstep vs torch float32")
    summary = ["| op | bounds out/grad/buffer (u) | lockstep vs f64: out / grad / buffer (u) "
               "| torch f32 vs f64: out / grad / buffer (u) | lockstep vs torch f32: out / grad / buffer (u) |",
               "|---|---|---|---|---|"]
    for op in TOLERANCES:
        if not any(k[0] == op for k in worst):
            continue
        spec = TOLERANCES[op]
        kinds = ("out", "grad", "buffer")
        bounds = "/".join(str(spec[k]) for k in kinds if k in spec)
        cell = lambda values: " / ".join("%.2f" % v if v is not None else "-" for v in values)
        ls64 = cell(worst64[(op, k)][0] if (op, k) in worst64 else None for k in kinds)
        t64 = cell(worst64[(op, k)][1] if (op, k) in worst64 else None for k in kinds)
        vs_torch = cell(worst.get((op, k)) for k in kinds)
        print("  %-14s bounds %-8s  lockstep vs f64 %-20s  torch vs f64 %-20s  lockstep vs torch %s"
              % (op, bounds, ls64, t64, vs_torch))
        summary.append("| %s | %s | %s | %s | %s |" % (op, bounds, ls64, t64, vs_torch))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("# lockstep layers vs float64 and torch %s (rel(a, b) = max|a - b| / max|b|, units of "
                    "u = 2^-24)\n\n"
                    % torch.__version__)
            f.write("\n".join(summary) + "\n\n" + "\n".join(notes) + "\n\n" + "\n".join(rows) + "\n")
    if args.gpt_table:
        with open(args.gpt_table, "w") as f:
            f.write("| op | in the GPT | forward: bit-identical % | forward: max ulp | forward: rel (u) "
                    "| backward: bit-identical % | backward: max ulp | backward: rel (u) |\n"
                    "|---|---|---|---|---|---|---|---|\n")
            for op, use in GPT_OPS:
                cells = []
                for kind in ("out", "grad"):
                    if (op, kind) in gpt:
                        cells += ["%.2f" % gpt[(op, kind)][0], "%d" % gpt[(op, kind)][1], "%.2f" % gpt[(op, kind)][2]]
                    else:
                        cells += ["-", "-", "-"]
                f.write("| %s | %s | %s |\n" % (op, use, " | ".join(cells)))
    if failures:
        print("\ntorch_layers: FAILED:")
        for line in failures:
            print("  " + line)
        return 1
    print("\ntorch_layers: all %d cases within their bounds" % len(cases))
    return 0


if __name__ == "__main__":
    sys.exit(main())
