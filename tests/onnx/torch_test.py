#!/usr/bin/python3
"""The reference ONNX models against PyTorch (Debian's python3-torch), through the `lockstep` tool.

Agreement: each model's output computed by lockstep (`lockstep run`) and by PyTorch in float32 are
each compared with PyTorch in float64 on the same weights and input. The error is counted in
units in the last place of the output's largest magnitude: max |y - y64| / ulp32(max |y64|).
lockstep must stay within the bound docs/onnx.md's table states for each model (the table is the one
list of bounds, and the figure it prints for lockstep must be the one measured); PyTorch's own float32
error is printed beside it for comparison, never used as the bound (it depends on which kernels
PyTorch picks on this CPU).

Round trip (the PyTorch route of docs/onnx.md): LeNet-5 fine-tuned by `lockstep train onnx`, its
checkpoint loaded into the PyTorch module with load_state_dict (the names are the state_dict's),
exported again to ONNX and converted by `lockstep convert`: the checkpoint hash must be the
fine-tuned hash, bit for bit; and PyTorch's forward on the loaded weights must agree with the
fine-tuned model's within the same bound.

Usage: torch_test.py BUILD_DIR
"""
import hashlib
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "onnx", "models"))
import export_models  # noqa: E402



def agreement_table():
    """{model: (lockstep's figure as printed, bound)} from docs/onnx.md's "Agreement with PyTorch"
    table, the one list of the bounds: each row names its model as `name` in its first cell."""
    rows = {}
    with open(os.path.join(ROOT, "docs", "onnx.md")) as f:
        for line in f:
            m = re.match(r"\| [^|]*\(`(\w+)`\) \|[^|]*\| ([0-9.]+) \| [0-9.]+ \| ([0-9]+) \|$", line.strip())
            if m:
                rows[m.group(1)] = (m.group(2), int(m.group(3)))
    return rows


def ulp32(x):
    return float(np.spacing(np.float32(x)))


def error_ulps(y, y64):
    scale = np.abs(y64).max()
    return float(np.abs(y.astype(np.float64) - y64).max()) / ulp32(scale)


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        dtype = {"F32": "<f4", "I64": "<i8", "I32": "<i4"}[info["dtype"]]
        out[name] = torch.from_numpy(np.frombuffer(data[8 + n + start:8 + n + end], dtype=dtype).reshape(info["shape"]).copy())
    return out


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    lockstep = os.path.join(argv[1], "bindings", "native", "cli", "lockstep")
    models_dir = os.path.join(ROOT, ".deps", "onnx")
    torch.set_num_threads(1)
    failures = 0
    table = agreement_table()
    with tempfile.TemporaryDirectory() as work:
        for name, model, x, _, _ in export_models.models():
            if name not in table:
                print(f"FAILED: {name}: no row (`{name}`) in docs/onnx.md's \"Agreement with PyTorch\" table")
                failures += 1
                continue
            printed, bound = table[name]
            out = os.path.join(work, name)
            os.makedirs(out)
            subprocess.run([lockstep, "run", f"{models_dir}/{name}.onnx", "--input", f"{models_dir}/{name}.input.npy",
                            "--output-dir", out], check=True, capture_output=True)
            y = np.load(os.path.join(out, "logits.npy"))
            model.eval()
            with torch.no_grad():
                y32 = model(torch.from_numpy(x)).numpy()
                x64 = torch.from_numpy(x).double() if x.dtype == np.float32 else torch.from_numpy(x)
                y64 = model.double()(x64).numpy()
            ours, theirs = error_ulps(y, y64), error_ulps(y32, y64)
            # lockstep's bits are the same on every platform, so its figure is the one docs/onnx.md prints.
            ok = ours <= bound and f"{ours:.2f}" == printed
            failures += not ok
            print(f"{'ok' if ok else 'FAILED'}: {name}: lockstep {ours:.2f} ulps from float64 (bound {bound}, "
                  f"docs/onnx.md prints {printed}), PyTorch float32 {theirs:.2f}")

        # The round trip through PyTorch's state_dict.
        tuned = os.path.join(work, "tuned.safetensors")
        run = subprocess.run([lockstep, "train", "onnx", f"{models_dir}/lenet5.onnx", "--data",
                              os.path.join(ROOT, ".deps", "data", "mnist"), "--steps", "3", "--out", tuned],
                             check=True, capture_output=True, text=True).stdout
        tuned_hash = [l.split()[2] for l in run.splitlines() if l.startswith("trained hash")][0]
        lenet = export_models.LeNet5()
        state = read_safetensors(tuned)
        lenet.load_state_dict(state, strict=True)  # every name matches, none missing or extra
        exported = os.path.join(work, "tuned.onnx")
        with open(exported, "wb") as f:
            f.write(export_models.export(lenet, np.load(f"{models_dir}/lenet5.input.npy"), "images", "logits"))
        converted = subprocess.run([lockstep, "convert", exported, os.path.join(work, "again.safetensors")],
                                   check=True, capture_output=True, text=True).stdout.split()[0]
        ok = converted == tuned_hash and hashlib.sha256(open(tuned, "rb").read()).hexdigest() == tuned_hash
        failures += not ok
        print(f"{'ok' if ok else 'FAILED'}: lenet5 fine-tuned by lockstep, loaded by load_state_dict (strict), "
              f"exported again: checkpoint {converted} {'==' if ok else '!='} fine-tuned {tuned_hash}")
        out = os.path.join(work, "tuned_run")
        os.makedirs(out)
        subprocess.run([lockstep, "run", exported, "--input", f"{models_dir}/lenet5.input.npy", "--output-dir", out],
                       check=True, capture_output=True)
        x = np.load(f"{models_dir}/lenet5.input.npy")
        with torch.no_grad():
            y64 = lenet.double()(torch.from_numpy(x).double()).numpy()
        ours = error_ulps(np.load(os.path.join(out, "logits.npy")), y64)
        ok = ours <= table["lenet5"][1]
        failures += not ok
        print(f"{'ok' if ok else 'FAILED'}: the fine-tuned lenet5 in lockstep is {ours:.2f} ulps from PyTorch's float64")
    print(f"torch_test: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
