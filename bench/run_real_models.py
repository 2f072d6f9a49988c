#!/usr/bin/python3
"""The real-models table of `make bench`: torchvision networks with seeded random weights, lockstep
(on their ONNX exports) against PyTorch (on the same modules and weights) in the same run
(bench/peers/real_models.py measures one engine, one row, in a process of its own).

  /usr/bin/python3 bench/run_real_models.py [--rounds R] [--threads 1,2] [--quick] [--only native|gpt2|wasm]
      [--out FILE] [--npm-package DIR]

Rows: inference at batch 1 and 8 on 224x224 images (ResNet-18, ResNet-50, MobileNetV2,
EfficientNet-B0, ViT-B/16) and a training step of SGD with momentum at batch 32 on 64x64 images
(ResNet-18, MobileNetV2, EfficientNet-B0), each at 1 and 2 threads. Each round runs lockstep and
PyTorch back to back (odd rounds lockstep first, even rounds PyTorch first), so a busy machine hits
both alike; a row gives the medians over the rounds and the ratio PyTorch ms / lockstep ms (above
1: lockstep is faster) against its target (inference >= 1.2x, training >= 1.0x). PyTorch runs at
its best setting for the thread count and kind of row: every setting of bench/peers/torch_settings.py
with at most that many threads is screened on ResNet-18 rows of that kind (inference at batch 1,
at batch 8, the training step), each in the faster of the two memory layouts (contiguous and
channels-last, which oneDNN prefers for some shapes), and the fastest serves the rows of its kind,
each again in its faster layout.
The peak resident memory of each side's process is reported too. --quick: batch 1 inference and
the training step of ResNet-18 and MobileNetV2 only, one round unless --rounds says otherwise.

A second table: a GPT-2-small-shaped model (nanoGPT's architecture, 12 layers, 12 heads, 768
channels, a 256-token block, bytes as its vocabulary, dropout off), lockstep's own (bench/train_bench.cc
--model gpt2) against the same nanoGPT module in PyTorch (bench/peers/train_peers.py --model gpt2):
a training step (AdamW, batch 4 x 256 tokens, clipping; target >= 1.0x) and generation (a 64-token
prompt continued by 8 tokens, the whole context through the model for each, as nanoGPT's generate
does; reported), at 1 and 2 threads, with each process's peak resident memory. PyTorch's setting is
screened on the training step (one step of each setting) and serves both rows. --quick leaves the
table out; --only gpt2 runs it alone. It is written to bench/results/gpt2-small.md.

A third table: WebAssembly in Node (bench/wasm/real_models.mjs), the same ONNX exports of ResNet-18
and MobileNetV2 at batch 1, 224x224, lockstep's npm package (its SIMD128 build at 1 thread, its
threads build at 2) against ONNX Runtime Web (its WASM execution provider at as many threads), each
round both engines back to back (target >= 1.0x); and lockstep's training step of ResNet-18 at batch
32, 64x64, with the most its allocator held (target: within WebAssembly's 4 GiB). TensorFlow.js is
not in it: it loads TensorFlow's graphs, not ONNX files. --only wasm runs it alone; it is written to
bench/results/wasm-real-models.md. --only native runs the first table alone.
"""
import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"
PEER = os.path.join(ROOT, "bench", "peers", "real_models.py")
TRAIN_PEER = os.path.join(ROOT, "bench", "peers", "train_peers.py")
WASM_PEER = os.path.join(ROOT, "bench", "wasm", "real_models.mjs")
WASM_ROWS = [("resnet18", "infer", 1, 224), ("mobilenet_v2", "infer", 1, 224), ("resnet18", "train", 32, 64)]
WASM_MEMORY = 4 * 1024  # MB: a 32-bit WebAssembly memory
TARGET = {"infer": 1.2, "train": 1.0}
NAMES = {"resnet18": "ResNet-18", "resnet50": "ResNet-50", "mobilenet_v2": "MobileNetV2",
         "efficientnet_b0": "EfficientNet-B0", "vit_b_16": "ViT-B/16"}

sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
import torch_settings  # noqa: E402


def rows(quick):
    """(model, mode, batch, size)."""
    if quick:
        return [(m, "infer", 1, 224) for m in ("resnet18", "mobilenet_v2")] + \
               [(m, "train", 32, 64) for m in ("resnet18", "mobilenet_v2")]
    out = [(m, "infer", b, 224) for b in (1, 8) for m in ("resnet18", "resnet50", "mobilenet_v2", "efficientnet_b0",
                                                          "vit_b_16")]
    return out + [(m, "train", 32, 64) for m in ("resnet18", "mobilenet_v2", "efficientnet_b0")]


PACKAGE = []  # --package, for the lockstep processes


def peer_env(env):
    """This process's environment with a setting's variables (LD_LIBRARY_PATH put in front)."""
    full_env = dict(os.environ)
    for var, value in (env or {}).items():
        full_env[var] = value + (":" + full_env[var] if var == "LD_LIBRARY_PATH" and full_env.get(var) else "")
    return full_env


def measure(engine, row, threads, models, env=None, flags=()):
    """(ms, peak RSS MB, PyTorch's layout) of one process."""
    model, mode, batch, size = row
    cmd = [PY, PEER, "--engine", engine, "--model", model, "--mode", mode, "--batch", str(batch), "--size", str(size),
           "--threads", str(threads), "--models", models, *flags, *(PACKAGE if engine == "lockstep" else [])]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=peer_env(env))
    if proc.returncode != 0:
        raise SystemExit("run_real_models: %s failed:\n%s%s" % (" ".join(cmd), proc.stdout, proc.stderr))
    ms = float(re.search(r"median=([0-9.]+)", proc.stdout).group(1))
    rss = float(re.search(r"rss MB=([0-9.]+)", proc.stdout).group(1))
    layout = re.search(r"layout=(\S+)", proc.stdout)
    return ms, rss, layout.group(1) if layout else ""


def best_torch_setting(threads, kind, models):
    """The fastest PyTorch setting with at most `threads` threads for rows of this kind (mode,
    batch, size), screened on ResNet-18 of that kind (each setting with its faster layout)."""
    probe = ("resnet18",) + kind
    timed = []
    for t in range(1, threads + 1):
        for label, env, flags in torch_settings.settings(t):
            ms, _, layout = measure("torch", probe, t, models, env, flags)
            timed.append((ms, t, label, env, flags))
            print("  screen torch threads=%d %s %s batch %d: %s: %.1f ms (%s)"
                  % (t, kind[0], "x".join([str(kind[2])] * 2), kind[1], label, ms, layout), flush=True)
    return min(timed, key=lambda s: s[0])


def gpt2_measure(engine, mode, threads, bench, env=None, flags=(), steps=2, samples=3):
    """(ms per step, or tokens/s; peak RSS MB) of one process."""
    if engine == "lockstep":
        cmd = [bench, "--model", "gpt2", "--threads", str(threads)]
    else:
        cmd = [PY, TRAIN_PEER, "--model", "gpt2", "--threads", str(threads), *flags]
    cmd += ["--warmup", "1", "--samples", str(samples)]
    cmd += ["--generate", "8"] if mode == "generate" else ["--steps", str(steps), "--rss", "1"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=peer_env(env))
    if proc.returncode != 0:
        raise SystemExit("run_real_models: %s failed:\n%s%s" % (" ".join(cmd), proc.stdout, proc.stderr))
    value = float(re.search(r"median=([0-9.]+)", proc.stdout).group(1))
    if mode == "train":
        value = 1000.0 / value
    m = re.search(r" peak_kb=([0-9]+)", proc.stdout)
    return value, float(m.group(1)) / 1024.0 if m else float("nan")


def gpt2_table(bench, thread_counts, rounds):
    """The GPT-2-small rows: [(mode, threads, setting, lockstep, PyTorch, ratio, rss_a, rss_b)]."""
    table = []
    for threads in thread_counts:
        timed = []
        for t in range(1, threads + 1):
            for label, env, flags in torch_settings.settings(t):
                ms = gpt2_measure("torch", "train", t, bench, env, flags, steps=1, samples=1)[0]
                timed.append((ms, t, label, env, flags))
                print("  screen torch threads=%d gpt2 train: %s: %.0f ms" % (t, label, ms), flush=True)
        _, t, label, env, flags = min(timed, key=lambda s: s[0])
        setting = "%d thread%s, %s" % (t, "" if t == 1 else "s", label)
        for mode in ("train", "generate"):
            ours, theirs = [], []
            for r in range(rounds):
                for engine in (["lockstep", "torch"] if r % 2 == 0 else ["torch", "lockstep"]):
                    if engine == "lockstep":
                        ours.append(gpt2_measure("lockstep", mode, threads, bench))
                    else:
                        theirs.append(gpt2_measure("torch", mode, t, bench, env, flags))
            a = statistics.median(v for v, _ in ours)
            b = statistics.median(v for v, _ in theirs)
            ratio = b / a if mode == "train" else a / b
            table.append((mode, threads, setting, a, b, ratio, max(r for _, r in ours), max(r for _, r in theirs)))
            unit = "ms" if mode == "train" else "tokens/s"
            print("GPT-2-small %-8s threads=%d  lockstep %8.1f %s  torch %8.1f %s  %.2fx%s" % (
                mode, threads, a, unit, b, unit, ratio,
                " (target 1.0x: %s)" % ("met" if ratio >= 1.0 else "not met") if mode == "train" else ""), flush=True)
    return table


def wasm_measure(engine, row, threads, models, npm_package):
    """(ms, the lockstep allocator's peak MB or None) of one Node process."""
    model, mode, batch, size = row
    export = subprocess.run([PY, PEER, "--engine", "lockstep", "--model", model, "--mode", mode, "--batch", str(batch),
                             "--size", str(size), "--models", models, "--export-only"], capture_output=True, text=True)
    if export.returncode != 0:
        raise SystemExit("run_real_models: exporting %s failed:\n%s%s" % (model, export.stdout, export.stderr))
    steps = ["--steps", "1", "--samples", "3"] if mode == "train" else ["--steps", "3", "--samples", "5"]
    cmd = ["node", WASM_PEER, "--engine", engine, "--model", export.stdout.strip(), "--mode", mode, "--batch", str(batch),
           "--size", str(size), "--threads", str(threads), "--package", npm_package, *steps]
    env = dict(os.environ, NODE_PATH=os.path.join(ROOT, "bench", "node_modules"))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=os.path.join(ROOT, "bench"))
    if proc.returncode != 0:
        raise SystemExit("run_real_models: %s failed:\n%s%s" % (" ".join(cmd), proc.stdout, proc.stderr))
    ms = float(re.search(r"median=([0-9.]+)", proc.stdout).group(1))
    heap = re.search(r"heap MB=([0-9.]+)", proc.stdout)
    return ms, float(heap.group(1)) if heap else None


def wasm_table(args, thread_counts, rounds):
    """[(row, threads, lockstep ms, ONNX Runtime Web ms or None, lockstep heap MB)]."""
    table = []
    for threads in thread_counts:
        for row in WASM_ROWS:
            ours, theirs = [], []
            engines = ["lockstep", "ort"] if row[1] == "infer" else ["lockstep"]
            for r in range(rounds):
                for engine in (engines if r % 2 == 0 else engines[::-1]):
                    (ours if engine == "lockstep" else theirs).append(
                        wasm_measure(engine, row, threads, args.models, args.npm_package))
            a = statistics.median(ms for ms, _ in ours)
            b = statistics.median(ms for ms, _ in theirs) if theirs else None
            heap = max(h for _, h in ours)
            table.append((row, threads, a, b, heap))
            model, mode, batch, size = row
            verdict = ("ONNX Runtime Web %.1f ms  %.2fx (target 1.0x: %s)" % (b, b / a, "met" if b >= a else "not met")
                       if b is not None else "heap %.0f MB (target: within %d MB: %s)"
                       % (heap, WASM_MEMORY, "met" if heap <= WASM_MEMORY else "not met"))
            print("WebAssembly %-12s %-5s batch %2d %3dx%-3d threads=%d  lockstep %8.1f ms  %s"
                  % (NAMES[model], mode, batch, size, size, threads, a, verdict), flush=True)
    return table


def write_wasm(args, table, rounds, seconds):
    lines = ["# Real models in WebAssembly: lockstep against ONNX Runtime Web", "",
             "Written by `bench/run_real_models.py` (part of `make bench`) on %s, %d CPUs, %s; Node %s; %d round%s, "
             "the engines alternating, medians of each side's per-process medians. The run took %.0f minutes."
             % (platform.processor() or platform.machine(), os.cpu_count(), cpu_name(), node_version(), rounds,
                "" if rounds == 1 else "s", seconds / 60.0), "",
             "The ONNX exports of the real-models table (torchvision, seeded random weights) in Node "
             "(`bench/wasm/real_models.mjs`): lockstep's npm package (`ls.onnx.load`; its SIMD128 build at 1 "
             "thread, its threads build at 2) against ONNX Runtime Web %s (its WASM execution provider, "
             "`numThreads` as many), on the same file and input; ratio = ONNX Runtime Web ms / lockstep ms. "
             "Inference: evaluation mode, no gradients. Training (lockstep alone: ONNX Runtime Web does not "
             "train): one SGD-with-momentum step on the cross-entropy of fixed labels; heap: the most lockstep's "
             "allocator held, sampled after the forward and the backward pass, against WebAssembly's 4 GiB. "
             "TensorFlow.js is not measured: it loads TensorFlow's graph formats, not ONNX, and the converters to "
             "them (tensorflowjs_converter, onnx-tf) are Python packages outside Debian's archive." % ort_version(), "",
             "| model | mode | batch | threads | lockstep ms | ONNX Runtime Web ms | ratio | target | met "
             "| lockstep heap MB |", "|---|---|---|---|---|---|---|---|---|---|"]
    for (model, mode, batch, size), threads, a, b, heap in table:
        if b is not None:
            cells = "%.1f | %.2fx | 1.0x | %s" % (b, b / a, "yes" if b >= a else "no")
        else:
            cells = "- | - | within %d MB | %s" % (WASM_MEMORY, "yes" if heap <= WASM_MEMORY else "no")
        lines.append("| %s | %s %dx%d | %d | %d | %.1f | %s | %.0f |" % (NAMES[model], mode, size, size, batch, threads,
                                                                        a, cells, heap))
    tmp = args.wasm_out + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, args.wasm_out)


def node_version():
    return subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()


def ort_version():
    try:
        with open(os.path.join(ROOT, "bench", "node_modules", "onnxruntime-web", "package.json")) as f:
            import json
            return json.load(f)["version"]
    except OSError:
        return "(not installed)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=None, help="rounds per row (default 3; 1 with --quick)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--models", default=os.path.join(ROOT, "build", "bench", "real-models"))
    ap.add_argument("--package", default=os.path.join(ROOT, "build", "native", "python"),
                    help="the lockstep Python package to measure")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "real-models.md"))
    ap.add_argument("--train-bench", default=os.path.join(ROOT, "build", "native", "bench", "lockstep_train_bench"),
                    help="lockstep_train_bench, for the GPT-2-small rows")
    ap.add_argument("--peak-flops", default=os.path.join(ROOT, "build", "native", "bench", "lockstep_peak_flops"),
                    help="lockstep_peak_flops (lockstep_fused_peak_flops beside it), for this CPU's multiply-then-add "
                         "and FMA peaks in the table's header")
    ap.add_argument("--gpt2-out", default=os.path.join(ROOT, "bench", "results", "gpt2-small.md"))
    ap.add_argument("--npm-package", default=os.path.join(ROOT, "build", "npm", "package"),
                    help="lockstep's npm package, for the WebAssembly rows")
    ap.add_argument("--wasm-out", default=os.path.join(ROOT, "bench", "results", "wasm-real-models.md"))
    ap.add_argument("--only", choices=["native", "gpt2", "wasm"],
                    help="only the native vision table, the GPT-2-small or the WebAssembly table")
    args = ap.parse_args()
    rounds = args.rounds if args.rounds is not None else 1 if args.quick else 3
    PACKAGE[:] = ["--package", args.package]
    thread_counts = [int(t) for t in args.threads.split(",")]
    started = time.time()
    table = []
    vision_rows = [] if args.only in ("gpt2", "wasm") else rows(args.quick)
    gpt2_rows = not args.quick and args.only in (None, "gpt2")
    peaks = peak_rates(args.peak_flops) if vision_rows or gpt2_rows else None
    for threads in thread_counts if vision_rows else []:
        best = {}
        for row in vision_rows:
            kind = row[1:]
            if kind not in best:
                best[kind] = best_torch_setting(threads, kind, args.models)
                print("threads=%d: PyTorch at its best for %s batch %d: %d thread(s), %s (%.1f ms)"
                      % (threads, kind[0], kind[1], best[kind][1], best[kind][2], best[kind][0]), flush=True)
            ms, t, label, env, flags = best[kind]
            setting = "%d thread%s, %s" % (t, "" if t == 1 else "s", label)
            ours, theirs = [], []
            for r in range(rounds):
                order = ["lockstep", "torch"] if r % 2 == 0 else ["torch", "lockstep"]
                for engine in order:
                    if engine == "lockstep":
                        ours.append(measure("lockstep", row, threads, args.models))
                    else:
                        theirs.append(measure("torch", row, t, args.models, env, flags))
            a = statistics.median(m for m, _, _ in ours)
            b = statistics.median(m for m, _, _ in theirs)
            ratio = b / a
            layouts = sorted(set(lay for _, _, lay in theirs))
            entry = (row, threads, setting + ", " + "/".join(layouts), a, b, ratio, max(r for _, r, _ in ours),
                     max(r for _, r, _ in theirs))
            table.append(entry)
            model, mode, batch, size = row
            print("%-16s %-5s batch %2d %3dx%-3d threads=%d  lockstep %9.1f ms  torch %9.1f ms  %.2fx (target %.1fx: %s)"
                  % (NAMES[model], mode, batch, size, size, threads, a, b, ratio, TARGET[mode],
                     "met" if ratio >= TARGET[mode] else "not met"), flush=True)
            # Written after every row: a run stopped early leaves the rows it measured, marked so.
            write(args, table, rounds, time.time() - started, len(vision_rows) * len(thread_counts), peaks)
    if vision_rows:
        print("run_real_models: wrote %s" % args.out)
    if args.only in (None, "wasm"):  # not for --only native
        started = time.time()
        write_wasm(args, wasm_table(args, thread_counts, rounds), rounds, time.time() - started)
        print("run_real_models: wrote %s" % args.wasm_out)
    if gpt2_rows:
        started = time.time()
        write_gpt2(args, gpt2_table(args.train_bench, thread_counts, rounds), rounds, time.time() - started, peaks)
        print("run_real_models: wrote %s" % args.gpt2_out)


def write_gpt2(args, gpt2, rounds, seconds, peaks):
    import torch
    lines = ["# GPT-2-small: lockstep against PyTorch", "",
             "Written by `bench/run_real_models.py` (part of `make bench`) on %s, %d CPUs, %s; PyTorch %s; %d round%s, "
             "lockstep and PyTorch alternating, medians of each side's per-process medians. The run took %.0f minutes. %s"
             % (platform.processor() or platform.machine(), os.cpu_count(), cpu_name(), torch.__version__, rounds,
                "" if rounds == 1 else "s", seconds / 60.0, peak_sentence(peaks)), "",
             "nanoGPT's architecture at GPT-2-small's shape (12 layers, 12 heads, 768 channels; a 256-token block "
             "and bytes as its vocabulary, dropout off): lockstep's own model (`lockstep_train_bench --model gpt2`) "
             "against the same module in PyTorch (`bench/peers/train_peers.py --model gpt2`). Training: "
             "one AdamW step (betas 0.9/0.95, weight decay 0.1 on the matrices, clipping at 1) on 4 x 256 tokens, "
             "ratio = PyTorch ms / lockstep ms. Generation: a 64-token prompt continued by 8 tokens (temperature 1, "
             "top 200, the whole context through the model for each token, as nanoGPT's generate does), ratio = "
             "lockstep tokens/s / PyTorch tokens/s. PyTorch at the setting fastest on its training step. Peak RSS: "
             "the training process's resident peak.", "",
             "| row | threads | lockstep | PyTorch | ratio | target | met | lockstep peak RSS MB | PyTorch peak RSS MB "
             "| PyTorch setting |", "|---|---|---|---|---|---|---|---|---|---|"]
    for mode, threads, setting, a, b, ratio, rss_a, rss_b in gpt2:
        unit = "ms" if mode == "train" else "tokens/s"
        target = "1.0x" if mode == "train" else "-"
        met_cell = ("yes" if ratio >= 1.0 else "no") if mode == "train" else "-"
        rss_cells = ("%.0f | %.0f" % (rss_a, rss_b)) if mode == "train" else "- | -"
        lines.append("| %s | %d | %.1f %s | %.1f %s | %.2fx | %s | %s | %s | %s |" % (
            "training step" if mode == "train" else "generation", threads, a, unit, b, unit, ratio, target,
            met_cell, rss_cells, setting))
    tmp = args.gpt2_out + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, args.gpt2_out)


def peak_rates(binary):
    """This CPU's float32 peaks at 1 thread on its best target, (multiply-then-add, fused multiply-add)
    in GFLOP/s: lockstep_peak_flops and lockstep_fused_peak_flops beside it; None where not built."""
    rates = []
    for exe in (binary, os.path.join(os.path.dirname(binary), "lockstep_fused_peak_flops")):
        try:
            out = subprocess.run([exe, "--targets", "best", "--threads", "1", "--ms", "100", "--tsv"],
                                 capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            print("run_real_models: no peak rates (%s)" % e, flush=True)
            return None
        best = [line.split("\t") for line in out.splitlines() if line.split("\t")[4:5] == ["best"]]
        try:
            rates.append(float(best[0][5]))
        except (IndexError, ValueError):
            print("run_real_models: no peak rates (%s printed no \"best\" line with a rate)" % exe, flush=True)
            return None
    print("this CPU's peaks at 1 thread: multiply-then-add %.1f GFLOP/s, fused multiply-add %.1f" % tuple(rates),
          flush=True)
    return tuple(rates)


def peak_sentence(peaks):
    if peaks is None:
        return "This CPU's multiply-then-add and FMA peaks were not measured (lockstep_peak_flops not built or not run)."
    return ("This CPU's float32 peaks at 1 thread (`lockstep_peak_flops`, its best target): %.0f GFLOP/s multiplying "
            "then adding, the contract's two roundings, and %.0f with fused multiply-adds, which PyTorch's kernels "
            "use: where both sides' time is products (convolutions, matrix products) at the same share of their peak, the ratio is %.2fx "
            "(docs/performance.md, \"Machines differ\")." % (peaks[0], peaks[1], peaks[0] / peaks[1]))


def write(args, table, rounds, seconds, planned, peaks):
    import torch
    lines = ["# Real models: lockstep against PyTorch", "",
             "Written by `bench/run_real_models.py`%s (part of `make bench`) on %s, %d CPUs, %s; PyTorch %s. "
             "Each row: %d round%s, lockstep and PyTorch alternating, medians of each side's per-process "
             "medians; ratio = PyTorch ms / lockstep ms (above 1: lockstep is faster). Inference: evaluation "
             "mode, no gradients, 224x224; training: one SGD-with-momentum step on the cross-entropy of random "
             "labels, 64x64. lockstep runs the model's ONNX export (lockstep.onnx.load); PyTorch the same module "
             "and weights, eager, float32, at its best setting for the thread count and kind of row (screened on "
             "ResNet-18: bench/peers/torch_settings.py) in the faster memory layout (contiguous or channels-last). Peak RSS: the process's maximum resident memory. The run took "
             "%.0f minutes. %s" % (" --quick" if args.quick else "", platform.processor() or platform.machine(),
                                os.cpu_count(), cpu_name(), torch.__version__, rounds, "" if rounds == 1 else "s",
                                seconds / 60.0, peak_sentence(peaks)), "",
             "| model | mode | batch | threads | lockstep ms | PyTorch ms | ratio | target | met | lockstep peak RSS MB "
             "| PyTorch peak RSS MB | PyTorch setting |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (model, mode, batch, size), threads, setting, a, b, ratio, rss_a, rss_b in table:
        lines.append("| %s | %s %dx%d | %d | %d | %.1f | %.1f | %.2fx | %.1fx | %s | %.0f | %.0f | %s |"
                     % (NAMES[model], mode, size, size, batch, threads, a, b, ratio, TARGET[mode],
                        "yes" if ratio >= TARGET[mode] else "no", rss_a, rss_b, setting))
    met = sum(1 for e in table if e[5] >= TARGET[e[0][1]])
    lines += ["", "Targets met: %d of %d rows." % (met, len(table))]
    if len(table) < planned:
        lines += ["", "**Incomplete**: the run stopped after %d of its %d rows." % (len(table), planned)]
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, args.out)


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "an unknown CPU"


if __name__ == "__main__":
    main()
