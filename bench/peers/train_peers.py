#!/usr/bin/python3
"""Training-step throughput of PyTorch on the models and synthetic batches of
bench/train_bench.cc: LeNet-5 (batch 100, Adam) and the GPT example's "small" configuration
(nanoGPT's model, batch 16 x 2 micro-batches of 64 tokens, AdamW with decay groups, clipping).

  /usr/bin/python3 bench/peers/train_peers.py --model lenet|gpt --threads T [--steps N]
      [--warmup W] [--samples S] [--blas-threads B] [--interop-threads I] [--mkldnn on|off]
      [--rss 1]

Prints `torch <model> threads=T steps/s median=M min=A max=B` like lockstep_train_bench. The
thread counts are set before torch loads (OMP_NUM_THREADS and MKL_NUM_THREADS to T,
OPENBLAS_NUM_THREADS to B, default T) and with torch.set_num_threads (and
torch.set_num_interop_threads when I is given); other settings (OMP_WAIT_POLICY, which OpenBLAS
build is loaded, ATEN_CPU_CAPABILITY) come from the environment bench/run_bench.py gives it
(bench/peers/torch_settings.py lists them). PyTorch runs as shipped by Debian (its BLAS is
OpenBLAS once libopenblas0 is installed, see PLATFORMS.md), in float32, without torch.compile.
With --rss 1 a second line gives the resident memory after imports and data (bench/peers/rss.py).
"""
import argparse
import os
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--model", choices=["lenet", "gpt"], required=True)
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--steps", type=int, default=20)
ap.add_argument("--warmup", type=int, default=3)
ap.add_argument("--samples", type=int, default=5)
ap.add_argument("--blas-threads", type=int, default=0, help="OpenBLAS's own threads (default: --threads)")
ap.add_argument("--interop-threads", type=int, default=0, help="torch.set_num_interop_threads (default: untouched)")
ap.add_argument("--mkldnn", choices=["on", "off"], default="on", help="torch.backends.mkldnn.enabled")
ap.add_argument("--rss", type=int, default=0, help="print the resident memory after imports and data")
args = ap.parse_args()
for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(args.threads)
os.environ["OPENBLAS_NUM_THREADS"] = str(args.blas_threads or args.threads)

import torch  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "tests", "reference"))
sys.path.insert(0, here)
import rss  # noqa: E402

torch.set_num_threads(args.threads)
if args.interop_threads:
    torch.set_num_interop_threads(args.interop_threads)
torch.backends.mkldnn.enabled = args.mkldnn == "on"
F = torch.nn.functional


# Each builder makes its batch first, then marks the resident baseline (imports and data), then
# builds the model and optimizer, whose memory counts as training's like the steps' own.
def lenet_step(mark):
    nn = torch.nn
    x = torch.randn(100, 1, 28, 28)
    y = torch.arange(100) % 10
    mark()
    model = nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84),
                          nn.ReLU(), nn.Linear(84, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return step


def gpt_step(mark):
    from gpt_torch import gpt  # the same nanoGPT model the reference test builds
    xs = [(torch.arange(16 * 64) * 31 + m * 17).remainder(96).view(16, 64) for m in range(2)]
    ys = [(torch.arange(16 * 64) * 31 + m * 17 + 5).remainder(96).view(16, 64) for m in range(2)]
    mark()
    cfg = [96, 64, 4, 4, 128]
    model = gpt(torch, cfg, torch.float32)
    model.train()
    params = dict(model.named_parameters())
    opt = torch.optim.AdamW([{"params": [p for p in params.values() if p.dim() >= 2], "weight_decay": 0.1},
                             {"params": [p for p in params.values() if p.dim() < 2], "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.99))

    def step():
        for x, y in zip(xs, ys):
            logits = model(x)
            (F.cross_entropy(logits.view(-1, 96), y.view(-1)) * 0.5).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


baseline = rss.Baseline()
step = (lenet_step if args.model == "lenet" else gpt_step)(baseline.mark if args.rss else lambda: None)
for _ in range(args.warmup):
    step()
rates = []
for _ in range(args.samples):
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    rates.append(args.steps / (time.perf_counter() - start))
rates.sort()
print("torch %s threads=%d steps/s median=%.2f min=%.2f max=%.2f" % (args.model, args.threads, rates[len(rates) // 2],
                                                                      rates[0], rates[-1]))
if args.rss:
    print(baseline.report())
