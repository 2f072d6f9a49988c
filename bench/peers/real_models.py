#!/usr/bin/python3
"""One measurement of the real-models table (bench/run_real_models.py): a torchvision network with
seeded random weights (tests/onnx/models/export_models.py's fill, no download), run by lockstep
on its ONNX export (lockstep.onnx.load, the door a model from elsewhere comes in by) or by PyTorch
eager on the same module and weights.

  /usr/bin/python3 bench/peers/real_models.py --engine lockstep|torch --model NAME --mode infer|train
      --batch B --size S --threads T --models DIR [--steps N] [--warmup W] [--samples K]
      [--blas-threads B] [--interop-threads I] [--mkldnn on|off] [--channels-last on|off] [--package DIR]

infer: evaluation mode without gradients, one forward pass of a [B, 3, S, S] batch. train: one
step of SGD with momentum 0.9 (lr 0.01) on the cross-entropy of random labels: zero the
gradients, forward in training mode (batch statistics), backward, update. Prints
`ENGINE MODEL MODE ms median=M min=A max=B` (the median of K samples, each the mean over N steps,
or one step where a step takes over a second;
for PyTorch with the memory layout that gave it, by default the faster of the two) and `rss MB=R`
(the peak resident memory). The ONNX file DIR/NAME-S.onnx is written by the first
process that needs it (atomically). Thread settings as bench/peers/train_peers.py takes them.
"""
import argparse
import os
import resource
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = ["resnet18", "resnet50", "mobilenet_v2", "efficientnet_b0", "vit_b_16"]

ap = argparse.ArgumentParser()
ap.add_argument("--engine", choices=["lockstep", "torch"], required=True)
ap.add_argument("--model", choices=MODELS, required=True)
ap.add_argument("--mode", choices=["infer", "train"], required=True)
ap.add_argument("--batch", type=int, required=True)
ap.add_argument("--size", type=int, required=True)
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--models", required=True, help="where the ONNX exports are kept")
ap.add_argument("--steps", type=int, default=3)
ap.add_argument("--warmup", type=int, default=1)
ap.add_argument("--samples", type=int, default=3)
ap.add_argument("--blas-threads", type=int, default=0)
ap.add_argument("--interop-threads", type=int, default=0)
ap.add_argument("--mkldnn", choices=["on", "off"], default="on")
ap.add_argument("--channels-last", choices=["on", "off", "best"], default="best",
                help="PyTorch: the model and batch in channels-last memory format (oneDNN's preferred layout for "
                     "some shapes, slower for others); best: both measured, the faster reported")
ap.add_argument("--package", default=os.path.join(ROOT, "build", "native", "python"))
ap.add_argument("--export-only", action="store_true",
                help="write DIR/NAME-S.onnx if it is not there, print its path and stop (for the WebAssembly rows)")
args = ap.parse_args()
for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(args.threads)
os.environ["OPENBLAS_NUM_THREADS"] = str(args.blas_threads or args.threads)

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tests", "onnx", "models"))
import export_models  # noqa: E402


def torch_model():
    import torchvision
    return export_models.fill(getattr(torchvision.models, args.model)(weights=None), 10)


def onnx_file():
    """DIR/NAME-S.onnx, exported once (evaluation mode, batch dynamic: the file trains too)."""
    path = os.path.join(args.models, "%s-%d.onnx" % (args.model, args.size))
    if not os.path.exists(path):
        os.makedirs(args.models, exist_ok=True)
        example = np.zeros((1, 3, args.size, args.size), np.float32)
        data = export_models.export(torch_model(), example, "images", "logits")
        tmp = "%s.%d.tmp" % (path, os.getpid())
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    return path


def inputs():
    rng = np.random.default_rng(1)
    x = rng.uniform(-1.0, 1.0, (args.batch, 3, args.size, args.size)).astype(np.float32)
    y = rng.integers(0, 1000, args.batch).astype(np.int64)
    return x, y


def lockstep_step():
    sys.path.insert(0, args.package)
    import lockstep as ls
    ls.set_num_threads(args.threads)
    model = ls.onnx.load(onnx_file())
    x_np, y_np = inputs()
    x, y = ls.from_numpy(x_np), ls.from_numpy(y_np)
    if args.mode == "infer":
        model.eval()

        def step():
            with ls.no_grad():
                model(x)
        return step
    model.train()
    opt = ls.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step():
        opt.zero_grad()
        ls.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return step


def torch_threads():
    """PyTorch's thread settings, once, before any parallel work (interop threads can be set only then)."""
    torch.set_num_threads(args.threads)
    if args.interop_threads:
        torch.set_num_interop_threads(args.interop_threads)
    torch.backends.mkldnn.enabled = args.mkldnn == "on"


def torch_step(channels_last):
    model = torch_model()
    x_np, y_np = inputs()
    x, y = torch.from_numpy(x_np), torch.from_numpy(y_np)
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    if args.mode == "infer":
        model.eval()

        def step():
            with torch.inference_mode():
                model(x)
        return step
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step():
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return step


def timed(step):
    """Sorted per-sample milliseconds per step. A sample of a step that takes over a second is
    that one step (ViT-B/16 at batch 8): the samples' median is as steady, in a third of the time."""
    start = time.perf_counter()
    for _ in range(args.warmup):
        step()
    slow = (time.perf_counter() - start) / max(args.warmup, 1) > 1.0
    steps = 1 if slow else args.steps
    times = []
    for _ in range(args.samples):
        start = time.perf_counter()
        for _ in range(steps):
            step()
        times.append((time.perf_counter() - start) * 1000.0 / steps)
    return sorted(times)


def main():
    if args.export_only:
        print(onnx_file())
        return
    layout = ""
    if args.engine == "lockstep":
        times = timed(lockstep_step())
    else:
        torch_threads()
        layouts = {"on": [True], "off": [False], "best": [False, True]}[args.channels_last]
        runs = [(timed(torch_step(cl)), cl) for cl in layouts]
        times, cl = min(runs, key=lambda r: r[0][len(r[0]) // 2])
        layout = " layout=%s" % ("channels_last" if cl else "contiguous")
    print("%s %s %s ms median=%.3f min=%.3f max=%.3f%s" % (args.engine, args.model, args.mode, times[len(times) // 2],
                                                          times[0], times[-1], layout))
    print("rss MB=%.1f" % (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0))


if __name__ == "__main__":
    main()
