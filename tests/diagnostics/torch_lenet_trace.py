#!/usr/bin/python3
"""LeNet-5 in PyTorch on lockstep's weights and batches, traced with tools/torch_trace.

  /usr/bin/python3 tests/diagnostics/torch_lenet_trace.py --dir OUT_DIR --out torch.trace [--steps N]
      [--threads T] [--values FILE [--values-steps A-B] [--values-match TEXT]] [--final FILE]

OUT_DIR is written by `lockstep_mnist_steps [--steps N] OUT_DIR` (tests/reference/mnist_steps.cc):
initial.safetensors (LeNet-5 seed 1) and steps.safetensors (the batches x.NN, y.NN). The model is
the nn.Sequential of tests/reference/torch_mnist_steps.py (lockstep's parameter names), trained in
float32 with Adam(lr=1e-3, foreach=False) on those batches. --final FILE writes a JSON object with
the hash (docs/diagnostics.md) of every final parameter and of all of them together.

Also a module: load(), lenet(), train() for the other scripts of tests/diagnostics.
Exit status 0, 1 on an error, 77 when torch cannot be imported.
"""
import argparse
import json
import os
import struct
import sys

import common

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "torch_trace"))


def read_safetensors(path):
    """{name: numpy array} of a safetensors file (F32, I32, I64, F64)."""
    import numpy as np
    data = open(path, "rb").read()
    n = struct.unpack_from("<Q", data, 0)[0]
    header = json.loads(data[8:8 + n].decode("utf-8"))
    dtypes = {"F32": "<f4", "I32": "<i4", "I64": "<i8", "F64": "<f8"}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        dt = np.dtype(dtypes[info["dtype"]])
        out[name] = np.frombuffer(data, dtype=dt, count=(end - begin) // dt.itemsize,
                                  offset=8 + n + begin).reshape(info["shape"]).copy()
    return out


def lenet(torch):
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84),
                         nn.ReLU(), nn.Linear(84, 10))


def train(folder, trace_path, steps, threads=None, values=None, values_steps=None, values_match="", source=""):
    """Trains `steps` steps and returns {parameter name: final numpy array}."""
    import torch
    from torch_trace import Tracer
    F = torch.nn.functional
    if threads:
        torch.set_num_threads(threads)
    initial = read_safetensors(os.path.join(folder, "initial.safetensors"))
    batches = read_safetensors(os.path.join(folder, "steps.safetensors"))
    model = lenet(torch)
    model.load_state_dict({k: torch.from_numpy(v) for k, v in initial.items()}, strict=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=False)
    tracer = Tracer(model, optimizer, trace_path, values_path=values, values_steps=values_steps,
                    values_match=values_match, source=source or "torch_lenet_trace %d steps" % steps)
    model.train()
    for step in range(1, steps + 1):
        x = torch.from_numpy(batches["x.%02d" % step])
        y = torch.from_numpy(batches["y.%02d" % step])
        with tracer.step(step):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
    tracer.close()
    return {n: p.detach().numpy().copy() for n, p in model.named_parameters()}


def final_hashes(params):
    from torch_trace import bits_hash
    import numpy as np
    out = {n: bits_hash(a) for n, a in params.items()}
    out["all"] = bits_hash(np.concatenate([a.reshape(-1).view(np.uint8) for a in params.values()]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True, help="lockstep_mnist_steps' output folder")
    ap.add_argument("--out", required=True, help="the trace to write")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    ap.add_argument("--values", help="values sidecar (safetensors)")
    ap.add_argument("--values-steps", default="1", help="A-B or N (default 1)")
    ap.add_argument("--values-match", default="")
    ap.add_argument("--final", help="write the final parameters' hashes here (JSON)")
    ap.add_argument("--source", default="")
    args = ap.parse_args()
    try:
        import torch  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as e:
        print("torch_lenet_trace: SKIPPED: %s cannot import torch or numpy (%s)" % (sys.executable, e))
        return common.SKIP  # 77, or 1 in make test
    a, _, b = args.values_steps.partition("-")
    params = train(args.dir, args.out, args.steps, args.threads, args.values, (int(a), int(b or a)),
                   args.values_match, args.source)
    hashes = final_hashes(params)
    if args.final:
        with open(args.final, "w") as f:
            json.dump(hashes, f, indent=1)
    print("torch_lenet_trace: %d steps traced to %s; final parameters %s" % (args.steps, args.out, hashes["all"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
