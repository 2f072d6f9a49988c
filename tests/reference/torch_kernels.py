#!/usr/bin/python3
"""lockstep's kernels against PyTorch's, on the same float32 inputs.

  /usr/bin/python3 tests/reference/torch_kernels.py --fixture FILE [--dump EXE [--emulator=CMD]]
                                                    [--markdown OUT.md]

With --dump, runs `EXE FILE` first (tests/reference/kernel_dump.cc writes the inputs and lockstep's
outputs). Then runs each PyTorch counterpart on the inputs, prints one table row per op and checks
it against the bound in BOUNDS below. Exit status: 0 when every op is within its bound, 1 when one
is not, 77 (ctest's SKIP) when torch cannot be imported (1 under LOCKSTEP_REQUIRE_ALL=1, as make
test sets: a failure there).

Metrics
- bit-identical %: elements whose float32 bits are equal; any NaN equals any NaN (lockstep stores
  the canonical 0x7FC00000, torch whatever the x86 instruction made, usually 0xFFC00000).
- max ulp: distance on the integer line of float32 values ordered by value, with -0 and +0 both at
  0 (so they are 0 ulp apart), subnormals 1 ulp apart, FLT_MAX and inf 1 apart, NaN vs NaN 0 and
  NaN vs a number infinite.
- the op's metric (column "err / bound"): ulp for elementwise ops; for sums and products, where the
  two libraries add in different orders, |lockstep - torch| in units of u * sum|terms| (u = 2^-24),
  the scale of the classical error bound (Higham, Accuracy and Stability, 3.1 and 4.2).
"""
import argparse
import math
import os
import shlex
import struct
import subprocess
import sys

try:  # checked in main(), after torch: only a missing torch skips the test
    import numpy as np
except ImportError:
    np = None

U = 2.0 ** -24          # unit roundoff of float32
TINY = 2.0 ** -126      # smallest normal float32


def reduce_constants():
    """kReduceLanes and kReduceBlock from simd/reduce.h (64 and 4096 when it cannot be read)."""
    import re
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "simd", "reduce.h")
    try:
        text = open(path).read()
        return (int(re.search(r"kReduceLanes\s*=\s*(\d+)", text).group(1)),
                int(re.search(r"kReduceBlock\s*=\s*(\d+)", text).group(1)))
    except (OSError, AttributeError):
        return 64, 4096


L, B = reduce_constants()  # lockstep's virtual lanes and block size


def lockstep_depth(n):
    """Longest chain of float additions in lockstep's canonical sum of n terms (simd/reduce.h):
    a lane adds ceil(min(n, B) / L) terms, the L lanes fold in log2(L) levels, ceil(log2(blocks))
    levels combine the blocks."""
    blocks = max(1, -(-n // B))
    per_lane = -(-min(n, B) // L)
    return max(per_lane - 1, 0) + int(math.log2(L)) + (math.ceil(math.log2(blocks)) if blocks > 1 else 0)


def ceil_log2(x):
    return 1 if x <= 2 else (int(x) - 1).bit_length()


def torch_sum_depth(n):
    """Longest chain of float additions in torch's CPU sum of n terms (ATen native/cpu/SumKernel.cpp,
    cascade summation): row_sum splits the row into 4 interleaved partial sums
    (ILP), each a multi_row_sum over m <= n/4 terms with 4 levels of chunks of s = 2^max(4,
    ceil(log2 m) / 4) terms (the last level takes what is left, ceil(m / s^3) at most); then the 4
    partials, the level sums, up to 16 vector lanes and up to 15 tail elements are added in. Taking
    m = n/4 and 16 lanes covers the scalar, AVX2 and AVX-512 paths (an upper bound for each)."""
    m = max(1, n // 4)
    s = 2 ** max(4, ceil_log2(m) // 4)
    return 3 * s + -(-m // s ** 3) + 3 + 3 + 3 + 16 + 15


def torch_softmax_depth(n):
    """torch's softmax row sum (ATen native/cpu/SoftMaxKernel.cpp, vec::map_reduce_all): one
    vector accumulator over the row, then its lanes; with 4-lane vectors (the smallest) at most
    ceil(n / 4) + 2 + 3 additions on any path."""
    return -(-n // 4) + 5


# ---------------------------------------------------------------------------------------------
# The bounds. Each op: metric, bound (a number or a function of the case), why (the reason), and
# optionally secondary rules that accept an element exceeding the ulp bound for a documented cause,
# and `documented`: known semantic differences, listed and excluded (never silently).
#   secondary 'tiny':     |lockstep - torch| < 2^-126 (torch underflows to 0 early)
#   secondary 'abs_x':    |lockstep - torch| <= c * u * |x| (cancellation inside torch's formula)
# ---------------------------------------------------------------------------------------------
IEEE = ("IEEE basic operation: correctly rounded (or exact) in both libraries, so 0 ulp. -0 and +0 "
        "are 0 ulp apart: lockstep orders -0 < +0 in max/min and gives relu(-0) = +0 (contract "
        "rule 6), torch returns its first argument / -0, so bit-identical can be below 100%.")
BOUNDS = {
    "add": dict(metric="ulp", bound=0, why=IEEE),
    "sub": dict(metric="ulp", bound=0, why=IEEE),
    "mul": dict(metric="ulp", bound=0, why=IEEE),
    "div": dict(metric="ulp", bound=0, why=IEEE),
    "max": dict(metric="ulp", bound=0, why=IEEE + " NaN propagates in both."),
    "min": dict(metric="ulp", bound=0, why=IEEE + " NaN propagates in both."),
    "relu": dict(metric="ulp", bound=0, why=IEEE),
    "sqrt": dict(metric="ulp", bound=0, why=IEEE),
    "neg": dict(metric="ulp", bound=0, why="Sign flip: exact."),
    "abs": dict(metric="ulp", bound=0, why="Sign clear: exact."),
    "pow_2": dict(metric="ulp", bound=0, why="torch computes x*x, one IEEE multiply, correctly rounded; "
                  "lockstep's PowInt is correctly rounded: 0 ulp."),
    "pow_0.5": dict(metric="ulp", bound=0,
                    why="torch implements pow(x, 0.5) as sqrt (correctly rounded), as is lockstep's "
                        "PowHalf: 0 ulp. pow(-0, 0.5) = +0 in lockstep (IEEE pow), -0 in torch (0 ulp).",
                    documented=[("pow(-inf, 0.5): lockstep +inf (IEEE 754 pow), torch NaN (sqrt(-inf))",
                                 lambda x, ls, t: (x == -np.inf) & (ls == np.inf) & np.isnan(t))]),
    # Correctly rounded lockstep (<= 0.5 ulp from the exact value) against torch's approximations
    # (<= E ulp): at most 0.5 + E ulp apart, so floor(0.5 + E) whole ulps, + 1 in case the two
    # results straddle a power of 2 (where the ulp halves). E is SLEEF's documented bound where
    # torch uses SLEEF, else torch's largest error seen on a dense scan (400001 points over the
    # range, torch 1.13 on AVX2; the numbers are kept in each reason).
    "exp": dict(metric="ulp", bound=2,
                why="torch's vectorised exp is SLEEF expf_u10 (E = 1.0 ulp documented; scan: 0.98), "
                    "its scalar tail glibc (< 1 ulp): bound floor(0.5 + 1) + 1 = 2 ulp."),
    "log": dict(metric="ulp", bound=2, why="SLEEF logf_u10 (E = 1.0 ulp; scan 0.55): bound 2 ulp."),
    "tanh": dict(metric="ulp", bound=2, why="SLEEF tanhf_u10 (E = 1.0 ulp; scan 1.00): bound 2 ulp."),
    "erf": dict(metric="ulp", bound=2,
                why="torch's vectorised erf is ATen's own approximation, accuracy undocumented; "
                    "scan over [-5, 5]: E = 0.82 ulp: bound floor(1.32) + 1 = 2 ulp."),
    "softplus": dict(metric="ulp", bound=2,
                     why="torch: x > 20 ? x : log1p(exp(x)) in float32; scan over [-100, 40]: "
                         "E = 1.48 ulp: bound floor(1.98) + 1 = 2 ulp."),
    "rsqrt": dict(metric="ulp", bound=2,
                  why="torch: 1 / sqrt(x), two correct roundings (E < 1 ulp): bound 2 ulp."),
    "sigmoid": dict(metric="ulp", bound=3,
                    why="torch: 1 / (1 + exp(-x)) in float32 with SLEEF exp; scan over [-88, 30]: "
                        "E = 2.32 ulp: bound floor(2.82) + 1 = 3 ulp. For x < -88.7, exp(-x) "
                        "overflows and torch returns 0 where the true value is subnormal: "
                        "accepted when the difference is below 2^-126 (secondary rule).",
                    secondary=[("tiny", None)]),
    "gelu_erf": dict(metric="ulp", bound=10,
                     why="torch: x * 0.5 * (1 + erf(x / sqrt 2)) in float32 with its own erf; scan "
                         "over [-8, 8]: E = 9.1 ulp (at x = -0.065) where 1 + erf does not cancel: "
                         "bound floor(9.6) + 1 = 10 ulp. For x < 0, 1 + erf(x / sqrt 2) cancels: "
                         "torch's absolute error reaches 4.67 u|x| (it returns 0 below x = -5.4, "
                         "where the value is ~1e-7), so an element is also accepted when "
                         "|difference| <= (4.67 + 1) u|x| -> 6 u|x| (secondary rule).",
                     secondary=[("abs_x", 6.0)],
                     documented=[("gelu(-inf): lockstep -0 (the limit), torch NaN (-inf * 0)",
                                  lambda x, ls, t: (x == -np.inf) & (ls == 0) & np.isnan(t))]),
    "gelu_tanh": dict(metric="ulp", bound=3,
                      why="torch: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) in float32; scan "
                          "over [-6, 6]: E = 1.5 ulp where 1 + tanh does not cancel: bound 3 ulp; "
                          "where it cancels (x < 0) torch's absolute error reaches 1.77 u|x|: "
                          "also accepted when |difference| <= 3 u|x| (secondary rule).",
                      secondary=[("abs_x", 3.0)],
                      documented=[("gelu_tanh(-inf): lockstep -0 (the limit), torch NaN (-inf * 0)",
                                   lambda x, ls, t: (x == -np.inf) & (ls == 0) & np.isnan(t))]),
    "sum": dict(metric="sum", bound=lambda n: lockstep_depth(n) + torch_sum_depth(n),
                bound_text="depth_ls(n) + depth_torch(n), units of u * sum|x|",
                why="Different addition orders. A sum whose longest chain of additions has d steps is "
                    "within d u sum|x| of the exact sum (Higham 4.2, to first order), so the two "
                    "differ by at most (d_ls + d_torch) u sum|x|. lockstep: ceil(min(n, 4096) / 64) - "
                    "1 + 6 + ceil(log2 blocks) (simd/reduce.h); torch: cascade sum (ATen "
                    "SumKernel.cpp), 3s + ceil(m / s^3) + 40 with m = n/4, s = 2^max(4, "
                    "ceil(log2 m) / 4): 89 for n = 1000 (lockstep: 21)."),
    "mean": dict(metric="mean", bound=lambda n: lockstep_depth(n) + torch_sum_depth(n) + 2,
                 bound_text="depth_ls(n) + depth_torch(n) + 2, units of u * sum|x| / n",
                 why="Both divide their sum by n (torch's CPU mean is sum().div_(n), checked: "
                     "bit-equal to torch.sum / n): the sum's bound divided by n, plus each "
                     "division's rounding (<= u |mean| <= u sum|x| / n)."),
    "var": dict(metric="var", bound=None,
                bound_text="depth_ls(n) + 5 + n (mean error)^2 / (u sum (x - mean)^2), units of u * var",
                why="lockstep: two passes in float32 (mean; canonical sum of (x - mean)^2; one "
                    "division by n - 1): each squared deviation is within 3u, their positive sum "
                    "within depth_ls u, the division u, so (depth_ls + 4) u relative, plus the "
                    "second-order effect of the mean's own error e <= (depth_ls + 1) u sum|x| / n: "
                    "n e^2 / sum (x - mean)^2. torch accumulates Welford in float64 (ATen "
                    "ReduceOpsKernel.cpp, WelfordOps<scalar_t, double, ...>; measured here: <= 0.5 "
                    "ulp from the exact variance), + 1 u. Inputs: uniform [2, 4]."),
    "max_axis": dict(metric="ulp", bound=0, why="Selection, no rounding: equal values (NaN "
                     "propagates: the first slice holds NaNs; -0/+0 ties are avoided in the input)."),
    "argmax": dict(metric="index", bound=0,
                   why="Exact: ties broken by the lowest index in both, NaN is the maximum and its "
                       "first index wins in both (inputs avoid -0/+0 ties, which lockstep orders "
                       "and torch does not)."),
    "gemm": dict(metric="dot", bound=lambda k: 2 * k / (1 - k * U),
                 bound_text="2k / (1 - ku), units of u * sum_k |a_ik||b_kj|",
                 why="lockstep sums the k products in increasing k without FMA; torch calls OpenBLAS "
                     "sgemm (FMA, blocked). Each is within gamma_k sum|a||b| of the exact product "
                     "(Higham 3.1): units of u * sum_k |a_ik||b_kj|, bound 2k / (1 - ku)."),
    "softmax": dict(metric="softmax", bound=4,
                    why="Per element, after removing each row's common scale (the ratio of the two "
                        "row sums, which differ by summation order: checked separately against "
                        "(depth_ls + depth_torch_softmax + 2) u, the sums being of positive terms, "
                        "each exp within 1 ulp): exp (<= 0.5 and <= 1 ulp), the division (0.5 ulp "
                        "each) and the rescaling (0.5 ulp): bound 4 ulp. depth_torch_softmax = "
                        "ceil(n / 4) + 5 (ATen SoftMaxKernel.cpp: one vector accumulator per row)."),
    "log_softmax": dict(metric="log_softmax", bound=2,
                        why="y = (x - max) - log(sum): the same float x - max in both, then each "
                            "subtracts its own log(sum) (torch: SLEEF log, <= 1 ulp; lockstep: "
                            "correctly rounded), whose two values differ by a per-row shift "
                            "(the row sums differ by summation order: checked separately against "
                            "(depth_ls + depth_torch_softmax + 2) u + 1.5 ulp(log sum)). Per "
                            "element, after removing the row's shift: the two final roundings "
                            "(0.5 ulp each) + 1 ulp: bound 2 ulp."),
}


def family(name):
    """The BOUNDS key of a fixture case: "sum_last" -> "sum", "max_middle" -> "max_axis", ..."""
    if name.startswith("max_"):
        return "max_axis"  # "max" alone is the elementwise maximum
    for prefix in ("sum", "mean", "var", "argmax", "gemm", "log_softmax", "softmax"):
        if name == prefix or name.startswith(prefix + "_"):
            return prefix
    return name


def read_fixture(path):
    data = open(path, "rb").read()
    if data[:8] != b"LSKDUMP1":
        raise SystemExit("%s: not a lockstep kernel dump" % path)
    pos = 8

    def u32():
        nonlocal pos
        v = struct.unpack_from("<I", data, pos)[0]
        pos += 4
        return v

    def i64():
        nonlocal pos
        v = struct.unpack_from("<q", data, pos)[0]
        pos += 8
        return v

    def string():
        nonlocal pos
        n = u32()
        v = data[pos:pos + n].decode()
        pos += n
        return v

    cases = []
    for _ in range(u32()):
        name = string()
        params = {}
        for _ in range(u32()):
            k = string()
            params[k] = i64()
        arrays = {}
        for _ in range(u32()):
            aname = string()
            dtype = np.dtype("<f4") if data[pos] == 0 else np.dtype("<i8")
            pos += 1
            dims = [i64() for _ in range(u32())]
            count = int(np.prod(dims)) if dims else 1
            arrays[aname] = np.frombuffer(data, dtype=dtype, count=count, offset=pos).reshape(dims).copy()
            pos += count * dtype.itemsize
        cases.append((name, params, arrays))
    return cases


def ordered(x):
    b = x.astype(np.float32).view(np.int32).astype(np.int64)
    return np.where(b >= 0, b, -(b & 0x7FFFFFFF))


def ulp_distance(a, b):
    na, nb = np.isnan(a), np.isnan(b)
    d = np.abs(ordered(a) - ordered(b)).astype(np.float64)
    d[na & nb] = 0
    d[na ^ nb] = np.inf
    return d


def identical(a, b):
    same = a.view(np.uint32) == b.view(np.uint32)
    return same | (np.isnan(a) & np.isnan(b))


def torch_result(torch, name, params, arr):
    F = torch.nn.functional
    fam = family(name)
    T = torch.from_numpy
    unary = {
        "relu": torch.relu, "sqrt": torch.sqrt, "neg": torch.neg, "abs": torch.abs, "exp": torch.exp,
        "log": torch.log, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "erf": torch.erf,
        "gelu_erf": lambda x: F.gelu(x, approximate="none"),
        "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
        "softplus": F.softplus, "rsqrt": torch.rsqrt,
        "pow_2": lambda x: torch.pow(x, 2), "pow_0.5": lambda x: torch.pow(x, 0.5),
    }
    binary = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
              "max": torch.maximum, "min": torch.minimum}
    if name in unary:
        return unary[name](T(arr["x"])).numpy()
    if name in binary:
        return binary[name](T(arr["a"]), T(arr["b"])).numpy()
    if fam in ("sum", "mean", "var", "max_axis", "argmax"):
        x = T(arr["x"])
        outer, length, inner = x.shape
        if inner == 1:  # the last axis, contiguous, as a model reduces it
            x, dim = x.reshape(outer, length), -1
        else:
            dim = 1
        if fam == "sum":
            r = torch.sum(x, dim=dim)
        elif fam == "mean":
            r = torch.mean(x, dim=dim)
        elif fam == "var":
            r = torch.var(x, dim=dim, unbiased=params.get("correction", 1) == 1)
        elif fam == "max_axis":
            r = torch.max(x, dim=dim).values
        else:
            r = torch.argmax(x, dim=dim)
        return r.reshape(outer, inner).numpy()
    if fam == "gemm":
        a, b = T(arr["a"]), T(arr["b"])
        return torch.matmul(a.t() if params["trans_a"] else a, b.t() if params["trans_b"] else b).numpy()
    if fam == "softmax":
        return torch.softmax(T(arr["x"]), dim=-1).numpy()
    if fam == "log_softmax":
        return torch.log_softmax(T(arr["x"]), dim=-1).numpy()
    raise KeyError(name)


def evaluate(name, params, arr, t):
    """Returns a dict: n, ident, max_ulp, err, bound, secondary, documented (list), ok, worst."""
    fam = family(name)
    spec = BOUNDS[fam]
    ls = arr["out"]
    res = dict(n=ls.size, documented=[], secondary=0, worst="")
    if spec["metric"] == "index":
        res["ident"] = 100.0 * np.mean(ls == t)
        res["max_ulp"] = None
        res["err"] = float(np.sum(ls != t))
        res["bound"] = 0
        res["ok"] = res["err"] == 0
        res["unit"] = "indices differing"
        return res
    res["ident"] = 100.0 * np.mean(identical(ls, t))
    ulps = ulp_distance(ls, t)
    res["max_ulp"] = float(ulps.max()) if ulps.size else 0.0
    x = arr.get("x", arr.get("a"))
    bad = np.zeros(ls.shape, dtype=bool)
    metric = spec["metric"]
    if metric == "ulp":
        bound = spec["bound"]
        err = ulps.copy()
        excluded = np.zeros(ls.shape, dtype=bool)
        for label, pred in spec.get("documented", []):
            m = pred(x, ls, t)
            if m.any():
                res["documented"].append("%s (%d element%s)" % (label, m.sum(), "" if m.sum() == 1 else "s"))
            excluded |= m
        over = (err > bound) & ~excluded
        accepted = np.zeros(ls.shape, dtype=bool)
        diff = np.abs(ls.astype(np.float64) - t.astype(np.float64))
        for kind, c in spec.get("secondary", []):
            finite = np.isfinite(diff)
            if kind == "tiny":
                accepted |= over & finite & (diff < TINY)
            elif kind == "abs_x":
                accepted |= over & finite & (diff <= c * U * np.abs(x.astype(np.float64)))
        res["secondary"] = int(accepted.sum())
        bad = over & ~accepted
        shown = err.copy()
        shown[excluded | accepted] = 0
        res["err"] = float(shown.max()) if shown.size else 0.0
        res["bound"] = bound
        res["unit"] = "ulp"
    elif metric in ("sum", "mean", "var"):
        xs = arr["x"].astype(np.float64)
        n = xs.shape[1]
        if metric == "var":
            scale = np.var(xs, axis=1, ddof=1)
            dev2 = scale * (n - 1)
            mean_err = (lockstep_depth(n) + 1) * U * np.sum(np.abs(xs), axis=1) / n
            bound = lockstep_depth(n) + 5 + n * mean_err ** 2 / (U * dev2)
        else:
            scale = np.sum(np.abs(xs), axis=1) / (n if metric == "mean" else 1)
            bound = np.full(scale.shape, float(spec["bound"](n)))
        err = np.abs(ls.astype(np.float64) - t.astype(np.float64)) / (U * scale)
        res["bound"] = float(bound.max())
        bad = ~(err <= bound)
        res["err"] = float(np.nanmax(err))
        res["unit"] = {"sum": "u*sum|x|", "mean": "u*sum|x|/n", "var": "u*var"}[metric]
    elif metric == "dot":
        a = arr["a"].astype(np.float64)
        b = arr["b"].astype(np.float64)
        a = a.T if params["trans_a"] else a
        b = b.T if params["trans_b"] else b
        k = a.shape[1]
        scale = np.abs(a) @ np.abs(b)
        err = np.abs(ls.astype(np.float64) - t.astype(np.float64)) / (U * scale)
        res["bound"] = spec["bound"](k)
        bad = ~(err <= res["bound"])
        res["err"] = float(err.max())
        res["unit"] = "u*sum|a||b|"
    elif metric == "softmax":
        n = ls.shape[-1]
        ls64, t64 = ls.astype(np.float64), t.astype(np.float64)
        usable = (ls64 > TINY) & (t64 > TINY)
        scale = np.array([np.median(t64[r][usable[r]] / ls64[r][usable[r]]) if usable[r].any() else 1.0
                          for r in range(ls.shape[0])])
        rescaled = (ls64 * scale[:, None]).astype(np.float32)
        err = ulp_distance(rescaled, t)
        row_bound = (lockstep_depth(n) + torch_softmax_depth(n) + 2) * U
        row_dev = np.abs(scale - 1)
        res["bound"] = spec["bound"]
        res["err"] = float(err.max())
        res["unit"] = "ulp after row scale"
        res["documented"].append("row-sum ratio |torch/lockstep - 1| max %.2g (bound %.2g)"
                                 % (row_dev.max(), row_bound))
        bad = (err > res["bound"]) | (row_dev[:, None] > row_bound)
    elif metric == "log_softmax":
        n = ls.shape[-1]
        ls64, t64 = ls.astype(np.float64), t.astype(np.float64)
        shift = np.median(t64 - ls64, axis=1)
        # log(sum) per row, from lockstep's output: (x - max) - y.
        xs = arr["x"]
        log_sum = np.median((xs - xs.max(axis=1, keepdims=True)).astype(np.float64) - ls64, axis=1)
        spacing = np.spacing(np.abs(t).astype(np.float32)).astype(np.float64)
        err = np.abs(t64 - ls64 - shift[:, None]) / spacing
        row_bound = ((lockstep_depth(n) + torch_softmax_depth(n) + 2) * U +
                     1.5 * np.spacing(np.abs(log_sum).astype(np.float32)).astype(np.float64))
        res["bound"] = spec["bound"]
        res["err"] = float(err.max())
        res["unit"] = "ulp after row shift"
        res["documented"].append("row shift |log sum torch - lockstep| max %.2g (bound %.2g)"
                                 % (np.abs(shift).max(), row_bound.min()))
        bad = (err > res["bound"]) | (np.abs(shift) > row_bound)[:, None]
    res["ok"] = not bad.any()
    if bad.any():
        i = np.unravel_index(np.argmax(bad), bad.shape)
        xi = "" if x is None or x.shape != ls.shape else "x=%r " % float(x[i])
        res["worst"] = "first failure at %s: %slockstep=%r torch=%r" % (i, xi, float(ls[i]), float(t[i]))
    return res


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fixture", required=True)
    p.add_argument("--dump", help="lockstep_kernel_dump to run first (writes --fixture)")
    p.add_argument("--emulator", default="", help="command (words split like a shell) to run --dump under")
    p.add_argument("--markdown", help="also write the table here")
    a = p.parse_args()

    try:
        import torch
    except Exception as e:  # noqa: BLE001
        print("torch_reference: SKIPPED: %s cannot import torch (%s: %s)" % (sys.executable, type(e).__name__, e))
        return 1 if os.environ.get("LOCKSTEP_REQUIRE_ALL") == "1" else 77  # make test: a failure
    if np is None:
        print("torch_reference: %s has torch but not numpy" % sys.executable)
        return 1
    torch.set_num_threads(1)  # one order for torch's own reductions, run to run

    if a.dump:
        cmd = shlex.split(a.emulator) + [a.dump, a.fixture]
        r = subprocess.run(cmd)
        if r.returncode != 0:
            print("torch_reference: %s failed with status %d" % (" ".join(cmd), r.returncode))
            return 1
    cases = read_fixture(a.fixture)

    rows, failures = [], []
    for name, params, arr in cases:
        fam = family(name)
        if fam not in BOUNDS:
            failures.append("%s: no bound defined" % name)
            continue
        t = torch_result(torch, name, params, arr)
        if t.shape != arr["out"].shape:
            failures.append("%s: shape %s vs torch %s" % (name, arr["out"].shape, t.shape))
            continue
        with np.errstate(all="ignore"):
            res = evaluate(name, params, arr, t)
        if fam == "gemm":
            shape = "%dx%dx%d (MxNxK)" % (t.shape[0], t.shape[1], arr["a"].shape[0 if params["trans_a"] else 1])
        else:
            shape = "x".join(str(d) for d in (arr.get("x", arr.get("a")).shape))
        other = []
        if res["secondary"]:
            other.append("%d by the secondary rule" % res["secondary"])
        other += res["documented"]
        verdict = "ok" if res["ok"] else "FAIL"
        rows.append((name, shape, res["n"], "%.2f" % res["ident"],
                     "-" if res["max_ulp"] is None else ("inf" if math.isinf(res["max_ulp"]) else "%g" % res["max_ulp"]),
                     "%.3g / %.4g %s" % (res["err"], res["bound"], res["unit"]), "; ".join(other), verdict))
        if not res["ok"]:
            failures.append("%s: %s" % (name, res["worst"]))

    import re
    capability = re.search(r"CPU capability usage: (\S+)", torch.__config__.show())
    torch_info = "torch %s, %d thread(s), CPU capability %s" % (
        torch.__version__, torch.get_num_threads(), capability.group(1) if capability else "?")
    header = ("op", "input shape", "outputs", "bit-identical %", "max ulp", "err / bound (unit)",
              "accepted / documented differences", "verdict")
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    widths[6] = min(widths[6], 60)
    print("lockstep vs PyTorch (%s); fixture %s" % (torch_info, a.fixture))
    print("  ".join(str(h).ljust(w) for h, w in zip(header, widths)))
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    print()
    for f in failures:
        print("FAIL " + f)
    print("%d ops, %d within their bounds" % (len(rows), sum(r[-1] == "ok" for r in rows)))

    if a.markdown:
        md = ["# lockstep vs PyTorch: kernel reference", "",
              "%s. Generated by tests/reference/torch_kernels.py from the fixture of "
              "lockstep_kernel_dump; bit-identical counts any NaN equal to any NaN; ulp distances put "
              "-0 and +0 at the same point." % torch_info, "",
              "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for r in rows:
            md.append("| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |")
        md += ["", "## Bounds and their reasons", ""]
        for fam, spec in BOUNDS.items():
            b = spec["bound"]
            unit = {"ulp": "ulp", "index": "indices", "softmax": "ulp after the row scale",
                    "log_softmax": "ulp after the row shift"}.get(spec["metric"], "")
            btxt = spec.get("bound_text", "%s %s" % (b, unit))
            md.append("- **%s** (%s): %s" % (fam, btxt, spec["why"]))
        if failures:
            md += ["", "## Failures", ""] + ["- " + f for f in failures]
        with open(a.markdown, "w") as f:
            f.write("\n".join(md) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
