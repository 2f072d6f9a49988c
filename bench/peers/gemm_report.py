#!/usr/bin/python3
"""Turns the TSV files written by bench/run-gemm.sh into one markdown report (stdout).

Per (shape, threads) and implementation, the rounds' min / median / max lines are pooled: the
table shows the median of the per-round medians (the centre) and the overall min-max range.
"""
import argparse
import glob
import os
import platform
import re
import statistics
import subprocess


def read_tsv(path):
    comments, rows = [], []
    with open(path) as f:
        header = None
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            if line.startswith("#"):
                comments.append(line[1:].strip())
                continue
            fields = line.split("\t")
            if header is None:
                header = fields
                continue
            rows.append(dict(zip(header, fields)))
    return comments, rows


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = re.search(r"Model name:\s*(.*)", out).group(1).strip()
        cores = re.search(r"^CPU\(s\):\s*(\d+)", out, re.M).group(1)
        fam = re.search(r"CPU family:\s*(\d+)", out)
        mod = re.search(r"Model:\s*(\d+)", out)
        flags = re.search(r"Flags:\s*(.*)", out).group(1).split()
        simd = [f for f in ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_bf16") if f in flags]
        extra = " (family %s model %s)" % (fam.group(1), mod.group(1)) if fam and mod else ""
        return "%s%s, %s logical CPUs, %s" % (model, extra, cores, " ".join(simd))
    except Exception:  # noqa: BLE001
        return platform.processor() or "?"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dir", required=True)
    p.add_argument("--rounds", type=int, required=True)
    p.add_argument("--mode", default="full")
    p.add_argument("--clock", default="wall")
    a = p.parse_args()

    results = {}  # (impl, size, threads) -> list of (min, median, max)
    sizes, thread_counts, notes = [], [], {}
    lockstep_targets = {}
    runnable = "?"
    bits_ok = True
    for path in sorted(glob.glob(os.path.join(a.dir, "r*-t*-*.tsv"))):
        comments, rows = read_tsv(path)
        for c in comments:
            if c.startswith("lockstep_gemm_bench"):
                m = re.search(r"runnable=(\S+)", c)
                runnable = m.group(1) if m else runnable
            elif c.startswith("bits_identical=no"):
                bits_ok = False
            elif not c.startswith("bits_identical") and not c.startswith("clock="):
                impl = os.path.basename(path).split("-")[-1][:-4]
                notes.setdefault(impl, set()).add(c)
        for r in rows:
            key = (r["impl"], r["size"], int(r["threads"]))
            results.setdefault(key, []).append(
                (float(r["gflops_min"]), float(r["gflops_median"]), float(r["gflops_max"])))
            if r["size"] not in sizes:
                sizes.append(r["size"])
            if int(r["threads"]) not in thread_counts:
                thread_counts.append(int(r["threads"]))
            if r["impl"] == "lockstep":
                lockstep_targets[r["target"]] = True
    _, peak_rows = read_tsv(os.path.join(a.dir, "peak.tsv"))
    peak = {int(r["threads"]): float(r["gflops"]) for r in peak_rows if r["chains"] == "best"}
    peak_detail = {}
    for r in peak_rows:
        peak_detail.setdefault(int(r["threads"]), []).append("%s chains %s" % (r["chains"], r["gflops"]))
    peak_target = peak_rows[0]["target"] if peak_rows else "?"
    load = open(os.path.join(a.dir, "load")).read().strip().replace("\n", "; ")

    def centre(impl, size, t):
        v = results.get((impl, size, t))
        return statistics.median(x[1] for x in v) if v else None

    def span(impl, size, t):
        v = results.get((impl, size, t))
        return (min(x[0] for x in v), max(x[2] for x in v)) if v else None

    def fmt(x, digits=1):
        return "-" if x is None else "%.*f" % (digits, x)

    out = []
    out.append("# GEMM: lockstep vs OpenBLAS vs PyTorch (float32, row-major, C = A B)")
    out.append("")
    out.append("- CPU: %s" % cpu_model())
    out.append("- lockstep targets runnable: %s; measured: %s (the best, as dispatched)" %
               (runnable, ", ".join(lockstep_targets)))
    out.append("- threads: %s; mode: %s; %d rounds, peers and lockstep alternating as separate processes"
               % (", ".join(map(str, thread_counts)), a.mode, a.rounds))
    out.append("- lockstep bits identical across thread counts: %s" % ("yes" if bits_ok else "NO"))
    for impl in ("openblas", "torch"):
        for n in sorted(notes.get(impl, ())):
            out.append("- %s: %s" % (impl, n))
    out.append("- peak (lockstep_peak_flops, %s, multiply then add, no FMA, best chain count): %s"
               % (peak_target, "; ".join("%d thread(s) %.1f GFLOP/s [%s]" % (t, peak[t], ", ".join(peak_detail[t]))
                                          for t in sorted(peak))))
    out.append("- %s" % load)
    out.append("")
    clock = ("wall-clock time" if a.clock == "wall" else
             "process CPU time / threads (the machine was shared: this removes the time other "
             "processes took; spin-waiting threads still count)")
    out.append("GFLOP/s = 2mnk / time, time = %s; median over rounds of each process's median. "
               "ratio = lockstep / peer; %%peak = lockstep / measured peak at that thread count." % clock)
    out.append("")
    out.append("| size MxNxK | threads | lockstep | OpenBLAS | PyTorch | ls/OpenBLAS | ls/PyTorch | lockstep % peak |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    for s in sizes:
        for t in thread_counts:
            ls, ob, pt = centre("lockstep", s, t), centre("openblas", s, t), centre("torch", s, t)
            ratio = lambda x, y: None if x is None or not y else x / y  # noqa: E731
            pk = peak.get(t)
            out.append("| %s | %d | %s | %s | %s | %s | %s | %s |" % (
                s, t, fmt(ls), fmt(ob), fmt(pt), fmt(ratio(ls, ob), 2), fmt(ratio(ls, pt), 2),
                "-" if ls is None or not pk else "%.0f%%" % (100 * ls / pk)))
    out.append("")
    out.append("Spread (min-max GFLOP/s over every sample of every round):")
    out.append("")
    out.append("| size MxNxK | threads | lockstep | OpenBLAS | PyTorch |")
    out.append("|---|---:|---:|---:|---:|")
    for s in sizes:
        for t in thread_counts:
            cells = []
            for impl in ("lockstep", "openblas", "torch"):
                sp = span(impl, s, t)
                cells.append("-" if sp is None else "%.1f-%.1f" % sp)
            out.append("| %s | %d | %s |" % (s, t, " | ".join(cells)))
    tpath = os.path.join(a.dir, "targets.tsv")
    if os.path.exists(tpath):
        _, rows = read_tsv(tpath)
        if rows:
            out.append("")
            out.append("lockstep per Highway target (one process; median [min-max] GFLOP/s):")
            out.append("")
            targets = []
            for r in rows:
                if r["target"] not in targets:
                    targets.append(r["target"])
            out.append("| size MxNxK | threads | " + " | ".join(targets) + " |")
            out.append("|---|---:|" + "---:|" * len(targets))
            cell = {(r["size"], int(r["threads"]), r["target"]): r for r in rows}
            keys = []
            for r in rows:
                k = (r["size"], int(r["threads"]))
                if k not in keys:
                    keys.append(k)
            for s, t in keys:
                cs = []
                for tg in targets:
                    r = cell.get((s, t, tg))
                    cs.append("-" if r is None else "%s [%s-%s]" % (r["gflops_median"], r["gflops_min"], r["gflops_max"]))
                out.append("| %s | %d | %s |" % (s, t, " | ".join(cs)))
    print("\n".join(out))


if __name__ == "__main__":
    main()
