#!/usr/bin/python3
"""A LayerNorm trained in PyTorch, traced: 1 and 2 threads differ in its bias gradient by construction.

  /usr/bin/python3 tests/diagnostics/torch_layernorm_trace.py --out ln.trace [--steps N] [--threads T]
      [--values FILE [--values-steps A-B]] [--final FILE] [--source TEXT]

The model is nn.LayerNorm(8) on a [4, 8] batch of exact rationals (no random numbers: the same bits
on every CPU), the loss sum(y * C), SGD with lr 2^-4. The bias gradient is then sum over rows of C
whatever the input, and ATen's CPU LayerNorm backward (1.13) sums it per thread over that thread's
contiguous share of the rows, then adds the threads' sums. C's first row is 1 and the others 2^-24
(half an ulp of 1):
  1 thread:  ((1 + 2^-24) + 2^-24) + 2^-24      each addition ties to even: 1
  2 threads: (1 + 2^-24) + (2^-24 + 2^-24)      1 + 2^-23
IEEE rounding alone decides this (elementwise float adds, no FMA, any vector width), so the two
configurations diverge at step 1 on every x86-64 CPU, and the bias updates keep them apart.
Same options as torch_lenet_trace.py (no --dir: the data is made here). Exit 0, 1, 77 (no torch).
"""
import argparse
import json
import os
import sys

import common

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "torch_trace"))
sys.path.insert(0, HERE)

ROWS, WIDTH, LR = 4, 8, 2.0 ** -4


def train(trace_path, steps, threads, values=None, values_steps=None, source=""):
    import torch
    from torch_trace import Tracer
    torch.set_num_threads(threads)
    model = torch.nn.Sequential(torch.nn.LayerNorm(WIDTH))
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    i = torch.arange(ROWS, dtype=torch.float32).reshape(ROWS, 1)
    j = torch.arange(WIDTH, dtype=torch.float32).reshape(1, WIDTH)
    x = ((i * 7 + j * 3) % 11 - 5) / 4  # exact in float32
    c = torch.full((ROWS, WIDTH), 2.0 ** -24)
    c[0] = 1.0
    tracer = Tracer(model, optimizer, trace_path, values_path=values, values_steps=values_steps,
                    source=source or "torch_layernorm_trace %d steps, %d threads" % (steps, threads))
    for step in range(1, steps + 1):
        with tracer.step(step):
            optimizer.zero_grad()
            (model(x) * c).sum().backward()
            optimizer.step()
    tracer.close()
    return {n: p.detach().numpy().copy() for n, p in model.named_parameters()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="the trace to write")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--values", help="values sidecar (safetensors)")
    ap.add_argument("--values-steps", default="1", help="A-B or N (default 1)")
    ap.add_argument("--final", help="write the final parameters' hashes here (JSON)")
    ap.add_argument("--source", default="")
    args = ap.parse_args()
    try:
        import torch  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as e:
        print("torch_layernorm_trace: SKIPPED: %s cannot import torch or numpy (%s)" % (sys.executable, e))
        return common.SKIP  # 77, or 1 in make test
    from torch_lenet_trace import final_hashes
    a, _, b = args.values_steps.partition("-")
    params = train(args.out, args.steps, args.threads, args.values, (int(a), int(b or a)), args.source)
    hashes = final_hashes(params)
    if args.final:
        with open(args.final, "w") as f:
            json.dump(hashes, f, indent=1)
    print("torch_layernorm_trace: %d steps, %d threads, traced to %s; bias %s; final parameters %s"
          % (args.steps, args.threads, args.out, params["0.bias"][:2].tolist(), hashes["all"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
