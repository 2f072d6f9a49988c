#!/usr/bin/python3
"""Data-parallel training over Open MPI (docs/distributed.md): the GPT example's trainer ("small":
4 layers, 128 channels, 2 micro-batches of 16 x 64 tokens per step) alone and under mpirun with 2
and 4 ranks, steps per second and what rank 0 sends per step against a ring all-reduce of the
same gradients; then PyTorch DDP's contrast (bench/peers/ddp_contrast.py).

  /usr/bin/python3 bench/run_distributed_bench.py --build DIR [--rounds R] [--quick] [--out FILE]

Each configuration runs as its own processes, the configurations in a rotating order every round,
so a busy machine hits them alike; the table gives medians over the rounds. The target: on this
2-core machine, 2 ranks of 1 thread reach at least 0.9 times the steps per second of 1 rank of 2
threads.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from run_bench import machine, peer_env  # noqa: E402

MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "--mca", "btl", "self,vader"]
# (ranks, threads per rank)
CONFIGS = [(1, 1), (1, 2), (2, 1), (4, 1)]


def run(cmd, env=None):
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit("run_distributed_bench: %s failed:\n%s%s" % (" ".join(cmd), proc.stdout, proc.stderr))
    return proc.stdout


def measure(bench, ranks, threads, quick):
    cmd = [bench, "--config", "small", "--threads", str(threads), "--steps", "2" if quick else "3",
           "--samples", "2" if quick else "3", "--data", os.path.join(ROOT, ".deps", "data", "fortunes", "input.txt")]
    if ranks > 1:
        cmd = MPIRUN + ["-np", str(ranks)] + cmd
    out = run(cmd)
    m = re.search(r"steps/s median=([0-9.]+) .* bytes/step=([0-9]+) ring/step=([0-9]+) transport-ms/step=([0-9.]+)", out)
    return float(m.group(1)), int(m.group(2)), int(m.group(3)), float(m.group(4))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="a Release build with lockstep_data_parallel_bench")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="one round, fewer steps")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "distributed.md"))
    args = ap.parse_args()
    bench = os.path.join(args.build, "bench", "lockstep_data_parallel_bench")
    rounds = 1 if args.quick else args.rounds
    results = {c: [] for c in CONFIGS}
    for r in range(rounds):
        for i in range(len(CONFIGS)):
            ranks, threads = CONFIGS[(i + r) % len(CONFIGS)]
            results[(ranks, threads)].append(measure(bench, ranks, threads, args.quick))
            print("  round %d: %d rank(s) x %d thread(s): %s" % (r + 1, ranks, threads, results[(ranks, threads)][-1]),
                  flush=True)

    rows = []
    rate = {c: statistics.median(v[0] for v in results[c]) for c in CONFIGS}
    for ranks, threads in CONFIGS:
        samples = results[(ranks, threads)]
        sent, ring = samples[0][1], samples[0][2]
        transport = statistics.median(v[3] for v in samples)
        rows.append(("GPT small, %d rank%s x %d thread%s%s" % (ranks, "s" if ranks > 1 else "", threads,
                                                              "s" if threads > 1 else "",
                                                              " (oversubscribed: 4 processes on 2 cores)" if ranks == 4 else ""),
                     "%.2f steps/s" % rate[(ranks, threads)],
                     "%.2f MB" % (sent / 1e6) if ranks > 1 else "-",
                     "%.2f MB" % (ring / 1e6) if ranks > 1 else "-",
                     "%.0f ms" % transport if ranks > 1 else "-"))
    ratio = rate[(2, 1)] / rate[(1, 2)]

    contrast = run(["/usr/bin/python3", os.path.join(ROOT, "bench", "peers", "ddp_contrast.py"), "--steps",
                    "40" if args.quick else "160"], env=peer_env())
    ddp = re.findall(r"ddp lenet steps=(\d+) (.*?): max_abs=(\S+) max_rel=(\S+) differing=(\d+)/(\d+) "
                     r"accuracy=(\S+) vs (\S+)", contrast)

    lines = ["# Data-parallel training over Open MPI", "",
             "Machine: %s. Open MPI: %s. %d round(s), configurations in rotating order; medians. Bytes: what rank 0 "
             "handed the transport per optimizer step (2 micro-batches); ring: a ring all-reduce of the same "
             "gradients once per step, 2 (R - 1) / R of their bytes; transport: rank 0's time in the transport's "
             "calls, waiting included." % (machine(), run(["mpirun", "--version"]).splitlines()[0], rounds), "",
             "| configuration | steps/s | sent per step (rank 0) | ring all-reduce per step | transport per step |",
             "|---|---|---|---|---|"]
    lines += ["| %s | %s | %s | %s | %s |" % row for row in rows]
    lines += ["", "2 ranks x 1 thread against 1 rank x 2 threads: **%.2f** (target: at least 0.90)." % ratio, "",
              "## PyTorch DDP (gloo) against itself: LeNet-5, global batch 100, the same initial weights and data", "",
              "| runs | steps | max abs difference | relative to the largest weight | weights whose bits differ | "
              "test accuracy |", "|---|---|---|---|---|---|"]
    for steps, label, max_abs, max_rel, differing, total, acc_a, acc_b in ddp:
        lines.append("| %s | %s | %s | %s | %s of %s | %s vs %s |" % (label, steps, max_abs, max_rel, differing, total,
                                                                       acc_a, acc_b))
    lines += ["", "lockstep: 1, 2, 3 and 4 ranks end on one hash (tests/distributed/run.sh)."]
    report = "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(report)
    print(report)


if __name__ == "__main__":
    main()
