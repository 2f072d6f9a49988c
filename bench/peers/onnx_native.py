#!/usr/bin/python3
"""Native inference of the reference ONNX models: lockstep (the Python package, lockstep.onnx, on
the .onnx file) or PyTorch eager (the same module and weights, tests/onnx/models/export_models.py),
single-threaded, on the same input as bench/wasm/onnx_infer.mjs. Prints
`ENGINE MODEL infer ms median=M min=A max=B`.

  /usr/bin/python3 bench/peers/onnx_native.py --engine lockstep|torch --model lenet5|transformer
      --models DIR [--batch N] [--steps N] [--samples S] [--package DIR]
"""
import argparse
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--engine", choices=["lockstep", "torch"], required=True)
    p.add_argument("--model", choices=["lenet5", "transformer"], required=True)
    p.add_argument("--models", required=True)
    p.add_argument("--batch", type=int, default=100)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--samples", type=int, default=5)
    p.add_argument("--package", default=os.path.join(ROOT, "build", "native", "python"))
    a = p.parse_args()
    shape = (a.batch, 1, 28, 28) if a.model == "lenet5" else (a.batch, 16)
    count = int(np.prod(shape))
    if a.model == "lenet5":
        x = np.sin(np.arange(count, dtype=np.float64)).astype(np.float32).reshape(shape)
    else:
        x = ((np.arange(count) * 7) % 64).astype(np.int64).reshape(shape)
    if a.engine == "lockstep":
        sys.path.insert(0, a.package)
        import lockstep
        lockstep.set_num_threads(1)
        model = lockstep.onnx.load(os.path.join(a.models, a.model + ".onnx"))
        xt = lockstep.from_numpy(x)

        def run():
            with lockstep.no_grad():
                model(xt).numpy()
    else:
        import torch
        torch.set_num_threads(1)
        sys.path.insert(0, os.path.join(ROOT, "tests", "onnx", "models"))
        import export_models
        module = {m[0]: m[1] for m in export_models.models()}[a.model].eval()
        xt = torch.from_numpy(x)

        def run():
            with torch.no_grad():
                module(xt).numpy()
    for _ in range(3):
        run()
    times = []
    for _ in range(a.samples):
        start = time.perf_counter()
        for _ in range(a.steps):
            run()
        times.append((time.perf_counter() - start) / a.steps * 1e3)
    times.sort()
    print("%s %s infer ms median=%.3f min=%.3f max=%.3f" % (a.engine, a.model, times[len(times) // 2], times[0], times[-1]))


if __name__ == "__main__":
    main()
