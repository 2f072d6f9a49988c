#!/usr/bin/python3
"""Two builds' training steps per second in one run: the benchmark of each build (bench/train_bench.cc)
run in alternating rounds on the same machine, so a change to the engine can be held to "no step
slower than before". Prints, per model and thread count, the median of each build's per-round
medians, their ratio (after / before) and the spread of the per-round ratios.

usage: bench/compare_builds.py BEFORE_TRAIN_BENCH AFTER_TRAIN_BENCH [--rounds N] [--models lenet,gpt]
                               [--threads 1,2]
Build a before binary from a commit with, e.g.:
  git worktree add /tmp/before <commit> && cmake -G Ninja -S /tmp/before -B /tmp/before/build \\
    -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_BUILD_BENCH=ON && ninja -C /tmp/before/build lockstep_train_bench
"""
import argparse
import re
import statistics
import subprocess
import sys

STEPS = {"lenet": 200, "gpt": 20}


def steps_per_second(binary, model, threads):
    out = subprocess.run([binary, "--model", model, "--threads", str(threads), "--steps", str(STEPS[model]),
                          "--warmup", "5"], capture_output=True, text=True, check=True).stdout
    found = re.search(r"median=([0-9.]+)", out)
    if not found:
        sys.exit("no steps/s in the output of %s:\n%s" % (binary, out))
    return float(found.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--models", default="lenet,gpt")
    parser.add_argument("--threads", default="1,2")
    args = parser.parse_args()
    print("%-6s %7s %12s %12s %7s %15s" % ("model", "threads", "before", "after", "ratio", "round ratios"))
    for model in args.models.split(","):
        for threads in (int(t) for t in args.threads.split(",")):
            before, after = [], []
            for _ in range(args.rounds):  # alternating, so drifts of the machine hit both builds alike
                before.append(steps_per_second(args.before, model, threads))
                after.append(steps_per_second(args.after, model, threads))
            ratios = sorted(a / b for a, b in zip(after, before))
            b, a = statistics.median(before), statistics.median(after)
            print("%-6s %7d %10.2f/s %10.2f/s %7.3f %7.3f..%.3f" % (model, threads, b, a, a / b, ratios[0], ratios[-1]))


if __name__ == "__main__":
    main()
