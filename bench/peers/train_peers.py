#!/usr/bin/python3
"""Training-step throughput of PyTorch on the models and synthetic batches of
bench/train_bench.cc: LeNet-5 (batch 100, Adam) and the GPT example's "small" configuration
(nanoGPT's model, batch 16 x 2 micro-batches of 64 tokens, AdamW with decay groups, clipping).

  /usr/bin/python3 bench/peers/train_peers.py --model lenet|gpt --threads T [--steps N]
                                                [--warmup W] [--samples S]

Prints `torch <model> threads=T steps/s median=M min=A max=B` like lockstep_train_bench. The
thread count is set before torch loads (OMP_NUM_THREADS, MKL_NUM_THREADS) and with
torch.set_num_threads; PyTorch runs as shipped by Debian (its BLAS is OpenBLAS once
libopenblas0 is installed, see PLATFORMS.md), in float32, without torch.compile.
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
args = ap.parse_args()
for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[var] = str(args.threads)

import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "reference"))
torch.set_num_threads(args.threads)
F = torch.nn.functional


def lenet_step():
    nn = torch.nn
    model = nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84),
                          nn.ReLU(), nn.Linear(84, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(100, 1, 28, 28)
    y = torch.arange(100) % 10

    def step():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return step


def gpt_step():
    from gpt_torch import gpt  # the same nanoGPT model the reference test builds
    cfg = [96, 64, 4, 4, 128]
    model = gpt(torch, cfg, torch.float32)
    model.train()
    params = dict(model.named_parameters())
    opt = torch.optim.AdamW([{"params": [p for p in params.values() if p.dim() >= 2], "weight_decay": 0.1},
                             {"params": [p for p in params.values() if p.dim() < 2], "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.99))
    xs = [(torch.arange(16 * 64) * 31 + m * 17).remainder(96).view(16, 64) for m in range(2)]
    ys = [(torch.arange(16 * 64) * 31 + m * 17 + 5).remainder(96).view(16, 64) for m in range(2)]

    def step():
        for x, y in zip(xs, ys):
            logits = model(x)
            (F.cross_entropy(logits.view(-1, 96), y.view(-1)) * 0.5).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


step = lenet_step() if args.model == "lenet" else gpt_step()
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
