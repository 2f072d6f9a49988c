#!/usr/bin/python3
"""lockstep against its peers in one run: training-step throughput, footprint, cold start and peak
memory. (GEMM has its own driver, bench/run-gemm.sh; `make bench` runs both.)

  /usr/bin/python3 bench/run_bench.py --build DIR [--rounds R] [--threads 1,2] [--quick] [--out FILE]

Each measurement runs as its own process, lockstep and peer alternating (odd rounds lockstep first,
even rounds the peer first), so a busy machine hits both alike; the table gives medians over the
rounds and the ratio lockstep / peer (above 1: lockstep is faster or smaller). Five rounds by
default: on a shared machine a 3-round median of the GPT step swung by 5% between runs of the same
code. PyTorch's training steps are first measured under each setting of
bench/peers/torch_settings.py at each thread count (--screen-rounds rounds, settings alternating;
a setting's best round counts, since a busy machine only ever slows a run down); lockstep on T
threads is then compared with the fastest of them on at most T threads, measured again in the
alternating rounds. Peak memory is the process's maximum resident set (ru_maxrss from
wait4, or the peak before the baseline where that was higher); training's working memory is the
peak after the baseline (after start-up or imports and the batch) minus the resident size at it,
read alike on both sides (bench/rss.h, bench/peers/rss.py).
"""
import argparse
import glob
import gzip
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"


def run(cmd, env=None):
    """(stdout, peak RSS in MB, wall seconds) of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out = proc.stdout.read().decode()
    err = proc.stderr.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit("run_bench: %s failed:\n%s%s" % (" ".join(cmd), out, err))
    return out, usage.ru_maxrss / 1024.0, wall


def rate_of(out):
    m = re.search(r"median=([0-9.]+)", out)
    return float(m.group(1))


def peer_env(extra=None):
    env = dict(os.environ)
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # they force a slower OpenBLAS kernel
        env.pop(var, None)
    for var, value in (extra or {}).items():
        env[var] = value + (":" + env[var] if var == "LD_LIBRARY_PATH" and env.get(var) else "")
    return env


def rss_of(out):
    """(whole-process peak before the baseline, baseline, peak after it) in MB from `rss ...`."""
    m = re.search(r"rss baseline_kb=([0-9]+) startup_peak_kb=([0-9]+) peak_kb=([0-9]+)", out)
    return int(m.group(2)) / 1024.0, int(m.group(1)) / 1024.0, int(m.group(3)) / 1024.0


def openblas_kernel(extra=None):
    """The OpenBLAS build and kernel PyTorch loads in the peers' environment."""
    probe = ("import ctypes, torch\n"
             "lib = ctypes.CDLL('libopenblas.so.0')\n"
             "lib.openblas_get_config.restype = ctypes.c_char_p\n"
             "print(lib.openblas_get_config().decode())\n")
    return subprocess.run([PY, "-c", probe], env=peer_env(extra), capture_output=True, text=True).stdout.strip()


def du(path):
    total = 0
    for base, _, files in os.walk(path):
        for f in files:
            p = os.path.join(base, f)
            if not os.path.islink(p):
                total += os.path.getsize(p)
    return total


def machine():
    cpu = "unknown CPU"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    return "%s, %d cores, %s" % (cpu, os.cpu_count(), platform.platform())


def onnx_rows(args, simd, ort_ready, rows, notes):
    """The ONNX rows (docs/onnx.md): the same .onnx file in each engine, single-threaded."""
    models = os.path.join(ROOT, ".deps", "onnx")
    onnx_cases = [("lenet5", "images", 100, "ONNX LeNet-5 inference, batch 100"),
                  ("transformer", "tokens", 16, "ONNX transformer encoder (2 layers) inference, batch 16 x 16 tokens")]
    npm_onnx = os.path.exists(os.path.join(ROOT, "build", "npm", "package", "onnx.js"))
    if ort_ready and npm_onnx and os.path.exists(os.path.join(models, "transformer.onnx")):
        infer = os.path.join(ROOT, "bench", "wasm", "onnx_infer.mjs")
        isteps = ["--steps", "5" if args.quick else "20", "--samples", "3"]
        for name, kind, batch, title in onnx_cases:
            ours, theirs = [], []
            for r in range(args.rounds):
                for who in (["lockstep", "ort"] if r % 2 == 0 else ["ort", "lockstep"]):
                    out = run(["node", infer, "--engine", who, "--model", os.path.join(models, name + ".onnx"),
                               "--input", kind, "--batch", str(batch)] + isteps)[0]
                    (ours if who == "lockstep" else theirs).append(rate_of(out))
            a, b = statistics.median(ours), statistics.median(theirs)
            rows.append(("WebAssembly (Node, SIMD, 1 thread): %s vs ONNX Runtime Web (WASM, 1 thread), the same file"
                         % title, "%.2f ms" % a, "%.2f ms" % b, b / a))
    else:
        notes.append("ONNX Runtime Web, the ONNX models (.deps/onnx) or an npm package with ls.onnx "
                     "(tools/build-npm-package) is missing: no WebAssembly ONNX rows.")
    package = os.path.join(args.build, "python")
    if glob.glob(os.path.join(package, "lockstep", "_C*.so")) and os.path.exists(os.path.join(models, "lenet5.onnx")):
        native = os.path.join(ROOT, "bench", "peers", "onnx_native.py")
        nsteps = ["--steps", "5" if args.quick else "20", "--samples", "3"]
        for name, _, batch, title in onnx_cases:
            ours, theirs = [], []
            for r in range(args.rounds):
                for who in (["lockstep", "torch"] if r % 2 == 0 else ["torch", "lockstep"]):
                    out = run([PY, "-W", "ignore", native, "--engine", who, "--model", name, "--models", models,
                               "--batch", str(batch), "--package", package] + nsteps, env=peer_env())[0]
                    (ours if who == "lockstep" else theirs).append(rate_of(out))
            a, b = statistics.median(ours), statistics.median(theirs)
            rows.append(("native (%s, 1 thread): %s vs PyTorch eager (1 thread), the same weights" % (simd, title),
                         "%.2f ms" % a, "%.2f ms" % b, b / a))
    else:
        notes.append("The Python extension (%s) or the ONNX models are missing: no native ONNX rows." % package)



def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="a Release build with lockstep_train_bench and the CLI")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--screen-rounds", type=int, default=3, help="rounds over PyTorch's settings")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--quick", action="store_true", help="fewer steps per sample")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "train.md"))
    args = ap.parse_args()
    bench = os.path.join(args.build, "bench", "lockstep_train_bench")
    cli = os.path.join(args.build, "bindings", "native", "cli", "lockstep")
    target = run([cli, "info"])[0]
    simd = re.search(r"SIMD target in use: (\S+)", target).group(1)
    threads = [int(t) for t in args.threads.split(",")]
    steps = {"lenet": 10 if args.quick else 30, "gpt": 2 if args.quick else 10}
    rows, notes = [], []

    # --- PyTorch's settings: each one at each thread count, to find its fastest here ---------------
    sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
    import torch_settings
    peer = [PY, os.path.join(ROOT, "bench", "peers", "train_peers.py")]
    screen = {}  # (model, threads, label) -> steps/s of each round
    for model in ("lenet", "gpt"):
        for r in range(1 if args.quick else args.screen_rounds):
            for t in threads:
                candidates = torch_settings.settings(t)
                for label, extra, flags in (candidates if r % 2 == 0 else candidates[::-1]):
                    out = run(peer + ["--model", model, "--threads", str(t), "--steps", str(steps[model]),
                                      "--samples", "3"] + flags, env=peer_env(extra))[0]
                    screen.setdefault((model, t, label), []).append(rate_of(out))
        for t in threads:
            print("  torch %s %d thread(s): %s" % (model, t, ", ".join(
                "%s %s" % (label, screen[(model, t, label)]) for label, _, _ in torch_settings.settings(t))), flush=True)

    def best_setting(model, most):
        """(threads, label, env, args) of PyTorch's fastest setting on at most `most` threads."""
        tried = [(max(screen[(model, t, label)]), t, label, extra, flags)
                 for t in threads if t <= most for label, extra, flags in torch_settings.settings(t)]
        return max(tried, key=lambda x: x[0])[1:]

    # --- training steps per second: lockstep on T threads, PyTorch at its best on at most T -------
    for model in ("lenet", "gpt"):
        for t in threads:
            pt, label, extra, flags = best_setting(model, t)
            ours, theirs, mem_ours, mem_theirs = [], [], [], []
            common = ["--model", model, "--steps", str(steps[model]), "--samples", "3"] + (["--rss", "1"] if t == 1 else [])
            for r in range(args.rounds):
                order = ["ls", "torch"] if r % 2 == 0 else ["torch", "ls"]
                for who in order:
                    if who == "ls":
                        out, mem, _ = run([bench, "--threads", str(t)] + common)
                        ours.append(rate_of(out))
                        mem_ours.append((mem, out))
                    else:
                        out, mem, _ = run(peer + ["--threads", str(pt)] + common + flags, env=peer_env(extra))
                        theirs.append(rate_of(out))
                        mem_theirs.append((mem, out))
            print("  %s %d thread(s): lockstep %s, torch (%d thread(s), %s) %s steps/s"
                  % (model, t, ours, pt, label, theirs), flush=True)
            a, b = statistics.median(ours), statistics.median(theirs)
            name = "MNIST LeNet-5 training step (batch 100)" if model == "lenet" else \
                "GPT small training step (2 x 16 x 64 tokens)"
            rows.append((name + ", %d thread%s; PyTorch at its fastest setting on at most %d thread%s"
                         % (t, "s" if t > 1 else "", t, "s" if t > 1 else ""), "%.1f steps/s" % a,
                         "%.1f steps/s on %d thread%s, %s" % (b, pt, "s" if pt > 1 else "", label), a / b))
            if t == 1:
                run_name = "LeNet" if model == "lenet" else "GPT"
                whole, working = [], []
                for side in (mem_ours, mem_theirs):
                    whole.append(statistics.median(max(mem, rss_of(out)[0]) for mem, out in side))
                    working.append(statistics.median(rss_of(out)[2] - rss_of(out)[1] for _, out in side))
                rows.append(("peak memory, %s run" % run_name, "%.0f MB" % whole[0], "%.0f MB" % whole[1],
                             whole[1] / whole[0]))
                rows.append(("working memory, %s run (peak minus the resident size after start-up or imports "
                             "and the batch)" % run_name, "%.1f MB" % working[0], "%.1f MB" % working[1],
                             working[1] / working[0]))

    # --- tracing (docs/diagnostics.md): the LeNet-5 step traced against untraced, same process ------
    for t in threads:
        out = run([bench, "--model", "lenet", "--threads", str(t), "--steps", str(steps["lenet"]), "--samples", "9",
                   "--trace-overhead", "1"])[0]
        m = re.search(r"traced steps/s median=([0-9.]+) untraced median=([0-9.]+) overhead=(-?[0-9.]+)% "
                      r"bytes/step=([0-9]+)", out)
        traced, plain, overhead, per_step = float(m.group(1)), float(m.group(2)), float(m.group(3)), int(m.group(4))
        print("  lenet traced %d thread(s): %.1f vs %.1f steps/s untraced (%+.1f%%), %d bytes/step"
              % (t, traced, plain, overhead, per_step), flush=True)
        rows.append(("LeNet-5 step traced (hash + statistics of every op; target <= 15%% slower), %d thread%s"
                     % (t, "s" if t > 1 else ""), "%.1f steps/s" % traced, "%.1f steps/s untraced" % plain,
                     1.0 / (1.0 + overhead / 100.0)))  # the median of back-to-back pairs
        if t == threads[0]:
            rows.append(("trace of one LeNet-5 epoch (80 steps; target < 20 MB)", "%.1f MB" % (per_step * 80 / 1e6),
                         "20 MB", 20e6 / (per_step * 80)))

    # --- WebAssembly in Node: lockstep's npm package against TensorFlow.js's WASM backend ---------
    tfjs_ready = os.path.exists(os.path.join(ROOT, "bench", "node_modules", "@tensorflow", "tfjs-backend-wasm"))
    if tfjs_ready:
        wsteps = ["--steps", "5" if args.quick else "15", "--samples", "3"]
        train_ours, train_theirs, inf_ours, inf_theirs = [], [], [], []
        for r in range(args.rounds):
            order = ["ls", "tfjs"] if r % 2 == 0 else ["tfjs", "ls"]
            for who in order:
                script = "lenet_lockstep.mjs" if who == "ls" else "lenet_tfjs.mjs"
                out = run(["node", os.path.join(ROOT, "bench", "wasm", script)] + wsteps)[0]
                train_rate = float(re.search(r"train steps/s median=([0-9.]+)", out).group(1))
                infer_ms = float(re.search(r"infer ms median=([0-9.]+)", out).group(1))
                (train_ours if who == "ls" else train_theirs).append(train_rate)
                (inf_ours if who == "ls" else inf_theirs).append(infer_ms)
        a, b = statistics.median(train_ours), statistics.median(train_theirs)
        rows.append(("WebAssembly (Node, SIMD): LeNet-5 training step, batch 100, vs TensorFlow.js WASM*",
                     "%.1f steps/s" % a, "%.1f steps/s" % b, a / b))
        a, b = statistics.median(inf_ours), statistics.median(inf_theirs)
        rows.append(("WebAssembly (Node, SIMD): LeNet-5 inference of 100 images vs TensorFlow.js WASM",
                     "%.1f ms" % a, "%.1f ms" % b, b / a))
    ort_ready = os.path.exists(os.path.join(ROOT, "bench", "node_modules", "onnxruntime-web"))
    if tfjs_ready and ort_ready:
        onnx = os.path.join(args.build, "lenet.onnx")
        run([PY, os.path.join(ROOT, "bench", "peers", "export_lenet_onnx.py"), onnx], env=peer_env())
        ours, theirs = [], []
        for r in range(args.rounds):
            order = ["ls", "ort"] if r % 2 == 0 else ["ort", "ls"]
            for who in order:
                if who == "ls":
                    out = run(["node", os.path.join(ROOT, "bench", "wasm", "lenet_lockstep.mjs")] + wsteps)[0]
                    ours.append(float(re.search(r"infer ms median=([0-9.]+)", out).group(1)))
                else:
                    out = run(["node", os.path.join(ROOT, "bench", "wasm", "lenet_ort.mjs"), "--model", onnx] + wsteps)[0]
                    theirs.append(float(re.search(r"infer ms median=([0-9.]+)", out).group(1)))
        a, b = statistics.median(ours), statistics.median(theirs)
        rows.append(("WebAssembly (Node, SIMD): LeNet-5 inference of 100 images vs ONNX Runtime Web (WASM, 1 thread, "
                     "model exported by PyTorch)", "%.1f ms" % a, "%.1f ms" % b, b / a))
        notes.append("* TensorFlow.js 4.22's WASM backend has no Conv2DBackpropFilter kernel: "
                     "bench/wasm/lenet_tfjs.mjs builds the convolutions' weight gradient from the backend's own "
                     "Conv2D kernel (input and output gradient with batch and channels swapped), so every op "
                     "still runs in WASM. Single-threaded WASM on both sides (no SharedArrayBuffer threads).")
    else:
        notes.append("TensorFlow.js is not installed (tools/setup.sh --bench): the WebAssembly rows are missing.")

    onnx_rows(args, simd, ort_ready, rows, notes)

    # --- WebAssembly threads (docs/wasm-threads.md): the LeNet-5 step on 2 workers against 1 ------
    if os.path.exists(os.path.join(ROOT, "build", "npm", "package", "lockstep-threads.wasm")):
        # The speed-up: both thread counts in one process, timed in alternating rounds, the ratio per
        # round (bench/wasm/lenet_threads_pair.mjs): separate processes gave 1.1-1.8x for one package.
        pair = run(["node", os.path.join(ROOT, "bench", "wasm", "lenet_threads_pair.mjs"),
                    "--rounds", "6" if args.quick else str(4 * args.rounds), "--steps", "10"])[0]
        print("  " + pair.strip().replace("\n", "\n  "), flush=True)
        rate1 = float(re.search(r"1 thread steps/s median=([0-9.]+)", pair).group(1))
        rate2 = float(re.search(r"2 threads steps/s median=([0-9.]+)", pair).group(1))
        speedup = float(re.search(r"speed-up per round median=([0-9.]+)", pair).group(1))
        hashes = re.search(r"model hash 1 thread (\w+) 2 threads (\w+)", pair)
        if hashes.group(1) != hashes.group(2):
            sys.exit("lenet_threads_pair.mjs: the 1- and 2-thread models differ: %s vs %s" % hashes.groups())
        rows.append(("WebAssembly threads build (Node): LeNet-5 training step on 2 threads vs 1, one process, "
                     "alternating rounds (ratio: median of the per-round ratios; target >= 1.6)",
                     "%.1f steps/s" % rate2, "%.1f steps/s on 1 thread" % rate1, speedup))
        # The 1-thread step pinned to each of the first two cores: where a neighbour slows one core
        # (a virtual machine's), 2 threads can gain at most the slower core's share over a 1-thread
        # run that happened to land on the faster one.
        wsteps = ["--steps", "5" if args.quick else "15", "--samples", "5"]
        step_script = ["node", os.path.join(ROOT, "bench", "wasm", "lenet_lockstep.mjs"), "--build", "threads"]
        pin = shutil.which("taskset") is not None and (os.cpu_count() or 1) >= 2
        rates = {"cpu0": [], "cpu1": []}
        for r in range(args.rounds if pin else 0):
            for t in ["cpu0", "cpu1"]:
                out = run(["taskset", "-c", t[3:]] + step_script + ["--threads", "1"] + wsteps)[0]
                rates[t].append(float(re.search(r"train steps/s median=([0-9.]+)", out).group(1)))
        if pin:
            c0, c1 = statistics.median(rates["cpu0"]), statistics.median(rates["cpu1"])
            print("  wasm 1 thread pinned: %s (CPU 0) vs %s (CPU 1) steps/s" % (rates["cpu0"], rates["cpu1"]),
                  flush=True)
            # Which core is the slower one can change between rounds: the ratio is per round.
            slower = statistics.median(min(x, y) / max(x, y) for x, y in zip(rates["cpu0"], rates["cpu1"]))
            rows.append(("WebAssembly threads build, 1 thread pinned to CPU 0 vs CPU 1 (this machine's two cores; "
                         "ratio: the slower core's speed / the faster's, median of the rounds)",
                         "%.1f steps/s on CPU 0" % c0, "%.1f steps/s on CPU 1" % c1, slower))
    else:
        notes.append("The npm package has no threads module (tools/build-npm-package): no WebAssembly threads row.")

    # --- Python: per-call overhead of a small op (10^5 calls of a + b on 4 elements) -------------
    package = os.path.join(args.build, "python")
    extension = glob.glob(os.path.join(package, "lockstep", "_C*.so"))
    if extension:
        snippet = ("import time, {0} as m\n"
                   "a, b = m.ones(4), m.ones(4)\n"
                   "for _ in range(10000): a + b\n"
                   "best = 1e9\n"
                   "for _ in range(5):\n"
                   "    t = time.perf_counter()\n"
                   "    for _ in range(100000): a + b\n"
                   "    best = min(best, time.perf_counter() - t)\n"
                   "print('ns/call=%.1f' % (best / 100000 * 1e9))\n")
        ls_env = dict(peer_env(), PYTHONPATH=package)
        ours, theirs = [], []
        for r in range(args.rounds):
            for who in (["ls", "torch"] if r % 2 == 0 else ["torch", "ls"]):
                out = run([PY, "-c", snippet.format("lockstep" if who == "ls" else "torch")],
                          env=ls_env if who == "ls" else peer_env())[0]
                (ours if who == "ls" else theirs).append(float(re.search(r"ns/call=([0-9.]+)", out).group(1)))
        a, b = statistics.median(ours), statistics.median(theirs)
        rows.append(("Python: per-call overhead of `a + b` on 4-element tensors (10^5 calls; target: ratio >= 0.5)",
                     "%.0f ns" % a, "%.0f ns" % b, b / a))
    else:
        notes.append("The Python extension is not built (%s/lockstep/_C*.so): no Python rows." % package)

    # --- cold start -----------------------------------------------------------------------------
    ours = [run([cli, "info"])[2] for _ in range(10)]
    theirs = [run([PY, "-c", "import torch"], env=peer_env())[2] for _ in range(5)]
    a, b = statistics.median(ours) * 1000, statistics.median(theirs) * 1000
    rows.append(("cold start: `lockstep info` vs `python3 -c \"import torch\"`", "%.1f ms" % a, "%.0f ms" % b, b / a))

    # --- footprint ------------------------------------------------------------------------------
    lib = os.path.join(args.build, "bindings", "native", "liblockstep.so")
    stripped = "/tmp/lockstep-bench-stripped.so"
    subprocess.run(["strip", "-o", stripped, lib], check=True)
    ls_size = os.path.getsize(stripped)
    # PyTorch as Debian installs it: the Python package and the libtorch it loads (Installed-Size of
    # python3-torch and libtorch1.13, in KiB); OpenBLAS and other shared dependencies not counted.
    sizes = subprocess.run(["dpkg-query", "-W", "-f=${Installed-Size}\\n", "python3-torch", "libtorch1.13"],
                           capture_output=True, text=True).stdout.split()
    torch_size = sum(int(v) for v in sizes) * 1024
    rows.append(("native library: stripped liblockstep.so vs PyTorch installed (python3-torch + libtorch1.13)",
                 "%.2f MB" % (ls_size / 1e6), "%.0f MB" % (torch_size / 1e6), torch_size / ls_size))
    if extension:  # the Python extension holds the whole engine too (core + pybind11 bindings)
        subprocess.run(["strip", "-o", stripped, extension[0]], check=True)
        ext_size = os.path.getsize(stripped)
        rows.append(("Python extension: stripped lockstep/_C*.so vs PyTorch installed", "%.2f MB" % (ext_size / 1e6),
                     "%.0f MB" % (torch_size / 1e6), torch_size / ext_size))
    pkg = os.path.join(ROOT, "build", "npm", "package")
    for flavour in ("simd", "scalar", "threads"):
        wasm = os.path.join(pkg, "lockstep-%s.wasm" % flavour)
        if os.path.exists(wasm):
            raw = open(wasm, "rb").read()
            rows.append(("lockstep-%s.wasm, raw / gzipped" % flavour, "%.0f KB / %.0f KB" % (len(raw) / 1e3,
                         len(gzip.compress(raw, 9)) / 1e3), "-", None))
    tfjs = os.path.join(ROOT, "bench", "node_modules", "@tensorflow", "tfjs-backend-wasm", "dist",
                        "tfjs-backend-wasm-simd.wasm")
    if os.path.exists(tfjs):
        raw = open(tfjs, "rb").read()
        rows.append(("TensorFlow.js WASM backend (SIMD module), raw / gzipped", "-",
                     "%.0f KB / %.0f KB" % (len(raw) / 1e3, len(gzip.compress(raw, 9)) / 1e3), None))
    else:
        notes.append("TensorFlow.js's WASM module is not installed here (bench/node_modules): not measured.")
    ort_wasm = os.path.join(ROOT, "bench", "node_modules", "onnxruntime-web", "dist", "ort-wasm-simd-threaded.wasm")
    if os.path.exists(ort_wasm):
        raw = open(ort_wasm, "rb").read()
        rows.append(("ONNX Runtime Web's WASM module (SIMD), raw / gzipped", "-",
                     "%.0f KB / %.0f KB" % (len(raw) / 1e3, len(gzip.compress(raw, 9)) / 1e3), None))

    # --- report ---------------------------------------------------------------------------------
    lines = ["# lockstep against PyTorch: training steps, memory, start-up, size", "",
             "Machine: %s. lockstep SIMD target %s. PyTorch %s. %d rounds, lockstep and peer alternating; "
             "medians. Ratio: lockstep's advantage (rate / rate, or peer size / lockstep size); above 1 is "
             "better for lockstep." % (machine(), simd, subprocess.run([PY, "-c", "import torch; print(torch.__version__)"],
                                                                     capture_output=True, text=True).stdout.strip(),
                                      args.rounds), "",
             "| measure | lockstep | PyTorch / peer | ratio |", "|---|---|---|---|"]
    for name, a, b, ratio in rows:
        lines.append("| %s | %s | %s | %s |" % (name, a, b, "%.2f" % ratio if ratio is not None else "-"))
    lines += [""] + notes
    lines += ["", "## PyTorch's training steps under each setting", "",
              "Steps per second, the best of %d round%s, settings alternating (bench/peers/torch_settings.py; "
              "\"as shipped\": OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and torch.set_num_threads set to the thread "
              "count, the other settings change only what they name). The rows above compare lockstep with the "
              "fastest of these on at most as many threads, measured again. OpenBLAS as PyTorch loads it here: %s; "
              "with its OpenMP build: %s." % (1 if args.quick else args.screen_rounds,
                                             "" if args.quick or args.screen_rounds == 1 else "s",
                                             openblas_kernel(), openblas_kernel({"LD_LIBRARY_PATH": torch_settings.OPENBLAS_OPENMP})),
              "", "| PyTorch setting | threads | LeNet-5 steps/s | GPT steps/s |", "|---|---|---|---|"]
    for t in threads:
        for label, _, _ in torch_settings.settings(t):
            lines.append("| %s | %d | %.1f | %.2f |" % (label, t, max(screen[("lenet", t, label)]),
                                                       max(screen[("gpt", t, label)])))
    report = "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(report)
    print(report)


if __name__ == "__main__":
    sys.exit(main())
