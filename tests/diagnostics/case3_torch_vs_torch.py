#!/usr/bin/python3
"""Case 3, PyTorch against itself: does `lockstep diff` find where two CPU configurations part?

  /usr/bin/python3 tests/diagnostics/case3_torch_vs_torch.py BUILD_DIR OUT_DIR [--steps N]

lockstep_mnist_steps writes LeNet-5's initial weights and N batches; torch_lenet_trace.py trains
on them, traced (values of step 1 kept), once per configuration, each in its own process (oneDNN
and ATen read their environment variables when torch is imported):

  DNNL_MAX_CPU_ISA=SSE41 vs DNNL_MAX_CPU_ISA=AVX2   oneDNN's convolution kernels
  default vs DNNL_MAX_CPU_ISA=AVX2                  (with AVX-512, oneDNN's default picks AVX-512)
  ATEN_CPU_CAPABILITY=default vs =avx2              ATen's vectorised kernels
  1 vs 2 threads                                    torch.set_num_threads
  default vs default again                          the control: must be identical
  LayerNorm, 1 vs 2 threads                         must diverge (torch_layernorm_trace.py: its
                                                    bias gradient is summed in another order by
                                                    construction, on every x86-64 CPU)

For each pair, `lockstep diff A B --a-values --b-values` must agree with the ground truth computed
here without it: the final parameters (bits) differ => diff exits 1, the report has a first
divergence and no "IDENTICAL" verdict; diff exits 0 => the final parameters are equal and every
aligned record has the same hash; diff exits 1 => some aligned record differs, the first divergence
it reports is a record of both traces, the first differing aligned record in A's order, and its
step is <= the first step whose "update" records differ. (Final parameters equal while an
intermediate record differs would be a correct exit 1: reported, not failed.) The LayerNorm pair
must have different final parameters and its first divergence at step 1 in the LayerNorm's
backward; the control pair must be identical. Reports go to OUT_DIR/case3/. Exit 0 pass, 1 fail,
77 skip (no torch, no build; 1 instead under LOCKSTEP_REQUIRE_ALL=1, as in make test).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

LAYERNORM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_layernorm_trace.py")
CONFIGS = {  # name: (environment, threads, model: LeNet-5 on lockstep's batches or the LayerNorm)
    "default": ({}, 1, "lenet"),
    "default, again": ({}, 1, "lenet"),
    "DNNL_MAX_CPU_ISA=SSE41": ({"DNNL_MAX_CPU_ISA": "SSE41"}, 1, "lenet"),
    "DNNL_MAX_CPU_ISA=AVX2": ({"DNNL_MAX_CPU_ISA": "AVX2"}, 1, "lenet"),
    "ATEN_CPU_CAPABILITY=default": ({"ATEN_CPU_CAPABILITY": "default"}, 1, "lenet"),
    "ATEN_CPU_CAPABILITY=avx2": ({"ATEN_CPU_CAPABILITY": "avx2"}, 1, "lenet"),
    "2 threads": ({}, 2, "lenet"),
    "LayerNorm, 1 thread": ({}, 1, "layernorm"),
    "LayerNorm, 2 threads": ({}, 2, "layernorm"),
}
# (A, B, expected): "diverge" and "identical" are required; None: whatever this CPU does.
PAIRS = [("DNNL_MAX_CPU_ISA=SSE41", "DNNL_MAX_CPU_ISA=AVX2", None), ("default", "DNNL_MAX_CPU_ISA=AVX2", None),
         ("ATEN_CPU_CAPABILITY=default", "ATEN_CPU_CAPABILITY=avx2", None), ("default", "2 threads", None),
         ("default", "default, again", "identical"), ("LayerNorm, 1 thread", "LayerNorm, 2 threads", "diverge")]


def slug(text):
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=5)
    args = ap.parse_args()
    if not common.torch_available():
        print("case3: SKIPPED: %s cannot import torch or numpy" % common.PYTHON)
        return common.SKIP
    steps_exe, cli, missing = common.programs(args.build)
    if missing:
        print("case3: SKIPPED: missing %s" % ", ".join(missing))
        return common.SKIP
    check = common.Checks("case3")
    out = os.path.join(args.out, "case3")
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="lockstep-case3-")
    try:
        r = subprocess.run([steps_exe, "--data", common.DATA, "--steps", str(args.steps), work],
                           stdout=subprocess.DEVNULL)
        if not check(r.returncode == 0, "lockstep_mnist_steps --steps %d: weights and batches" % args.steps):
            return check.finish()
        base_env = {k: v for k, v in os.environ.items()
                    if k not in ("DNNL_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
        runs = {}
        for name, (env, threads, model) in CONFIGS.items():
            trace = os.path.join(out, slug(name) + ".trace")
            values = os.path.join(work, slug(name) + ".values")
            final = os.path.join(work, slug(name) + ".final.json")
            start = time.time()
            helper = [common.HELPER, "--dir", work] if model == "lenet" else [LAYERNORM]
            r = subprocess.run([common.PYTHON] + helper + ["--out", trace, "--steps", str(args.steps),
                                "--threads", str(threads), "--values", values, "--values-steps", "1",
                                "--final", final, "--source", "case3: " + name],
                               env=dict(base_env, **env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if not check(r.returncode == 0, "%s: traced %d steps (%.1f s)" % (name, args.steps, time.time() - start)):
                print(r.stdout)
                return check.finish()
            runs[name] = (trace, values, json.load(open(final)))
        summary = []
        for a_name, b_name, expected in PAIRS:
            (a, a_values, a_final), (b, b_values, b_final) = runs[a_name], runs[b_name]
            print("\n%s vs %s" % (a_name, b_name))
            report_path = os.path.join(out, "%s__vs__%s" % (slug(a_name), slug(b_name)))
            status, report = common.run_diff(cli, a, b, a_values, b_values, html=report_path + ".html")
            open(report_path + ".txt", "w").write(report)
            _, a_records = common.read_trace(a)
            _, b_records = common.read_trace(b)
            aligned, first, first_update = common.compare(a_records, b_records)
            finals_differ = a_final["all"] != b_final["all"]
            line, detail, described = common.first_divergence(report)
            print("  lockstep diff exit %d; final parameters %s; independently: %d aligned records, %s"
                  % (status, "differ" if finals_differ else "equal", len(aligned),
                     "the first differing: " + common.describe(first) if first else "all identical"))
            if line:
                print("  " + line)
                print("  " + detail.strip())
            if not check(status in (0, 1), "diff exits 0 or 1 (got %d)" % status):
                print(report)
                continue
            if finals_differ:
                check(status == 1 and line is not None and not common.says_identical(report),
                      "final parameters differ => diff exits 1 with a first divergence, not \"IDENTICAL\"")
            if expected == "identical":
                check(status == 0 and not finals_differ, "the control: identical, diff exits 0")
            if expected == "diverge":
                check(finals_differ and status == 1, "this pair must diverge: final parameters differ, diff exits 1")
                check(described is not None and described.get("step") == 1 and described.get("phase") == "backward"
                      and described.get("module") == "0" and described.get("op") == "layer_norm_backward",
                      "its first divergence is step 1 backward 0 layer_norm_backward (the gradients' sums)")
                bias = [[r["hash"] for r in records if (r["step"], r["phase"], r["op"], r.get("out", 0))
                         == (1, "backward", "layer_norm_backward", 2)] for records in (a_records, b_records)]
                check(len(bias[0]) == 1 and bias[0] != bias[1],
                      "the bias gradient (layer_norm_backward output 2) differs at step 1, as constructed")
            if status == 0:
                check(not finals_differ and first is None, "diff exits 0 => final parameters equal and every "
                      "aligned record identical")
            else:
                if not finals_differ:
                    print("  note: final parameters equal, but intermediate records differ: exit 1 is right")
                check(first is not None, "diff exits 1 => some aligned record differs")
                in_a = any(common.matches(described, r) for r in a_records)
                in_b = any(common.matches(described, r) for r in b_records)
                check(in_a and in_b, "the reported first divergence is a record of both traces")
                check(first is not None and common.matches(described, first),
                      "it is the first differing aligned record in A's order")
                check(described is not None and (first_update is None or described["step"] <= first_update),
                      "its step (%s) <= the first step whose updates differ (%s)"
                      % (described and described["step"], first_update))
            summary.append((a_name, b_name, status, line, detail))
        with open(os.path.join(out, "summary.txt"), "w") as f:
            for a_name, b_name, status, line, detail in summary:
                f.write("%s vs %s: exit %d\n  %s\n  %s\n" % (a_name, b_name, status, line or "IDENTICAL",
                                                            (detail or "").strip()))
        print("\nreports: %s" % out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
