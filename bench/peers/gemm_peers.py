#!/usr/bin/python3
"""GEMM speed of the peers, measured like bench/gemm_bench.cc measures lockstep.

  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 bench/peers/gemm_peers.py \
      --peer openblas|torch --threads N [--quick] [--sizes LIST] [--samples N] [--min-ms MS]
      [--clock wall|cpu] [--tsv]

--peer openblas: cblas_sgemm from libopenblas.so.0 through ctypes, on numpy float32 arrays.
--peer torch:    torch.matmul(a, b, out=c) on float32 tensors (torch calls sgemm_ of whatever BLAS
                 libblas.so.3 resolves to; the script says which one and which OpenBLAS core).

Fairness (docs: shared/design/PLATFORMS.md, "Measuring peers fairly"):
- OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE in the environment force a slower OpenBLAS kernel; the script
  refuses to run while they are set (run it under `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE`),
  unless --allow-coretype is given, and then it says so in its output.
- The thread count is fixed before numpy / torch / OpenBLAS are loaded: OPENBLAS_NUM_THREADS,
  OMP_NUM_THREADS and MKL_NUM_THREADS are set here, then openblas_set_num_threads and
  torch.set_num_threads are called, and the counts in force are printed.
- Buffers are allocated once per shape and reused (out=), as lockstep's benchmark does.

Timing: one warm-up call, a calibration that doubles the calls until a batch lasts --min-ms, then
--samples samples of that many calls; GFLOP/s = 2*m*n*k*calls/seconds; min / median / max over the samples. --clock cpu
uses the process CPU time divided by the thread count (as lockstep_gemm_bench --clock cpu; OpenBLAS
threads that spin while waiting count, which lowers the figure).
"""
import argparse
import ctypes
import os
import re
import sys
import time

DEFAULT_SIZES = "128,256,512,1024,2048,100x120x400,100x84x120,100x400x120,1024x384x128,1024x128x512"
QUICK_SIZES = "128,256,512,1024,100x120x400,100x84x120,100x400x120,1024x384x128,1024x128x512"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--peer", choices=["openblas", "torch"], required=True)
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--sizes", default=None, help="comma list of MxNxK[:TT] or N (square)")
    p.add_argument("--samples", type=int, default=None)
    p.add_argument("--min-ms", type=float, default=None)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--tsv", action="store_true")
    p.add_argument("--clock", choices=["wall", "cpu"], default="wall")
    p.add_argument("--openblas", default="libopenblas.so.0", help="library for --peer openblas")
    p.add_argument("--allow-coretype", action="store_true",
                   help="measure even though OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE are set (not a fair peer)")
    a = p.parse_args()
    if a.sizes is None:
        a.sizes = QUICK_SIZES if a.quick else DEFAULT_SIZES
    if a.samples is None:
        a.samples = 5 if a.quick else 7
    if a.min_ms is None:
        a.min_ms = 20.0 if a.quick else 50.0
    return a


ARGS = parse_args()
FORCED = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ}
if FORCED and not ARGS.allow_coretype:
    sys.exit("gemm_peers.py: %s set in the environment: OpenBLAS would run a forced, slower kernel. "
             "Run under `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE` (or pass --allow-coretype)."
             % ", ".join("%s=%s" % kv for kv in FORCED.items()))
# Before numpy, torch or OpenBLAS are loaded: they read these once, at load time.
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(ARGS.threads)

import numpy as np  # noqa: E402


def parse_shape(text):
    dims, ops = (text.split(":") + ["NN"])[:2]
    if len(ops) != 2 or any(c not in "NT" for c in ops):
        raise SystemExit("bad size %r" % text)
    v = [int(x) for x in dims.split("x")]
    if len(v) == 1:
        v = v * 3
    if len(v) != 3 or min(v) <= 0:
        raise SystemExit("bad size %r" % text)
    label = "%dx%dx%d" % tuple(v) + ("" if ops == "NN" else ":" + ops)
    return v[0], v[1], v[2], ops[0] == "T", ops[1] == "T", label


def loaded_libraries(*needles):
    """Paths of the shared objects mapped into this process whose name contains a needle."""
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and parts[5].startswith("/"):
                name = os.path.basename(parts[5])
                if any(n in name for n in needles) and parts[5] not in out:
                    out.append(parts[5])
    return out


def openblas_info(lib):
    """Core name, thread count and threading model of an OpenBLAS handle, or None."""
    try:
        lib.openblas_get_corename.restype = ctypes.c_char_p
        lib.openblas_get_config.restype = ctypes.c_char_p
        core = lib.openblas_get_corename().decode()
        config = lib.openblas_get_config().decode().strip()
        threads = lib.openblas_get_num_threads()
        parallel = {0: "sequential", 1: "pthreads", 2: "OpenMP"}.get(lib.openblas_get_parallel(), "?")
    except AttributeError:
        return None
    return {"core": core, "config": config, "threads": threads, "parallel": parallel}


def stats(values):
    v = sorted(values)
    n = len(v)
    median = v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])
    return v[0], median, v[-1]


def measure(call, flops, samples, min_ms):
    clock = time.process_time if ARGS.clock == "cpu" else time.perf_counter
    per_thread = ARGS.threads if ARGS.clock == "cpu" else 1
    call()  # warm-up
    calls = 1
    while True:  # calibration (more warm-up): double the calls until a batch lasts min_ms
        t0 = clock()
        for _ in range(calls):
            call()
        dt = (clock() - t0) / per_thread
        if dt >= 1e-3 * min_ms:
            break
        calls = int(calls * min(max(1.2e-3 * min_ms / dt if dt > 0 else 8.0, 2.0), 8.0))
    rates = []
    for _ in range(samples):
        t0 = clock()
        for _ in range(calls):
            call()
        dt = (clock() - t0) / per_thread
        rates.append(flops * calls / dt * 1e-9)
    return stats(rates) + (calls,)


def main():
    shapes = [parse_shape(s) for s in ARGS.sizes.split(",") if s]
    rng = np.random.default_rng(1234)
    notes = []
    if ARGS.peer == "openblas":
        lib = ctypes.CDLL(ARGS.openblas)
        lib.openblas_set_num_threads(ARGS.threads)
        info = openblas_info(lib)
        paths = loaded_libraries("openblas")
        target = info["core"]
        notes.append("OpenBLAS %s (%s) core=%s threads=%d (%s) via cblas_sgemm"
                     % (" ".join(paths), info["config"], info["core"], info["threads"], info["parallel"]))
        sgemm = lib.cblas_sgemm
        ptr = ctypes.c_void_p
        sz = ctypes.c_int
        sgemm.argtypes = [sz, sz, sz, sz, sz, sz, ctypes.c_float, ptr, sz, ptr, sz, ctypes.c_float, ptr, sz]
        sgemm.restype = None
        kRowMajor, kNoTrans, kTrans = 101, 111, 112
    else:
        import torch
        torch.set_num_threads(ARGS.threads)
        blas = loaded_libraries("blas", "mkl")
        handles = [openblas_info(ctypes.CDLL(p)) for p in blas if "openblas" in p]
        handles = [h for i, h in enumerate(handles) if h and h not in handles[:i]]
        blas_info = re.findall(r"BLAS_INFO=[^,\s]*", torch.__config__.show())
        target = handles[0]["core"] if handles else "?"
        notes.append("torch %s (%s) torch.get_num_threads()=%d; BLAS loaded: %s; %s"
                     % (torch.__version__, blas_info[0] if blas_info else "BLAS_INFO=?",
                        torch.get_num_threads(), " ".join(blas),
                        "; ".join("OpenBLAS core=%s threads=%d (%s)" % (h["core"], h["threads"], h["parallel"])
                                  for h in handles) or "no OpenBLAS"))
    notes.append("clock=%s" % ARGS.clock)
    if FORCED:
        notes.append("WARNING: measured with %s set (forced kernel, not a fair peer)" % FORCED)

    if ARGS.tsv:
        for n in notes:
            print("# " + n)
        print("impl\tsize\ttarget\tthreads\tgflops_min\tgflops_median\tgflops_max\tcalls_per_sample")
    else:
        for n in notes:
            print(n)
        print("%d samples of >= %g ms after a warm-up\n" % (ARGS.samples, ARGS.min_ms))
        print("%-18s %-10s %7s %10s %10s %10s %6s" % ("size MxNxK", "core", "threads", "min", "median", "max", "calls"))
    sys.stdout.flush()

    for m, n, k, ta, tb, label in shapes:
        a = rng.uniform(-1, 1, size=(k, m) if ta else (m, k)).astype(np.float32)
        b = rng.uniform(-1, 1, size=(n, k) if tb else (k, n)).astype(np.float32)
        c = np.zeros((m, n), dtype=np.float32)
        if ARGS.peer == "openblas":
            args = (kRowMajor, kTrans if ta else kNoTrans, kTrans if tb else kNoTrans, m, n, k, 1.0,
                    a.ctypes.data, a.shape[1], b.ctypes.data, b.shape[1], 0.0, c.ctypes.data, n)

            def call(args=args):
                sgemm(*args)
        else:
            ta_t = torch.from_numpy(a)
            tb_t = torch.from_numpy(b)
            opa = ta_t.t() if ta else ta_t
            opb = tb_t.t() if tb else tb_t
            tc = torch.from_numpy(c)

            def call(opa=opa, opb=opb, tc=tc):
                torch.matmul(opa, opb, out=tc)
        # Sanity: the peer computes the product it claims to.
        call()
        ref = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64)
        err = np.max(np.abs(c - ref)) / max(1.0, np.max(np.abs(ref)))
        if err > 1e-3:
            sys.exit("%s %s: wrong result (relative error %g)" % (ARGS.peer, label, err))
        lo, med, hi, calls = measure(call, 2.0 * m * n * k, ARGS.samples, ARGS.min_ms)
        if ARGS.tsv:
            print("%s\t%s\t%s\t%d\t%.2f\t%.2f\t%.2f\t%d" % (ARGS.peer, label, target, ARGS.threads, lo, med, hi, calls))
        else:
            print("%-18s %-10s %7d %10.1f %10.1f %10.1f %6d" % (label, target, ARGS.threads, lo, med, hi, calls))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
