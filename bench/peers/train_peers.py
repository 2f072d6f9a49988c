#!/usr/bin/python3
"""Training-step throughput of PyTorch on the models and synthetic batches of
bench/train_bench.cc: LeNet-5 (batch 100, Adam), the GPT example's "small" configuration
(nanoGPT's model, batch 16 x 2 micro-batches of 64 tokens, AdamW with decay groups, clipping) and
the GPT-2-small shape ("gpt2": 12 layers, 12 heads, 768 channels, block 256, bytes; batch 4 x 256).

  /usr/bin/python3 bench/peers/train_peers.py --model lenet|gpt|gpt2 --threads T [--steps N]
      [--warmup W] [--samples S] [--blas-threads B] [--interop-threads I] [--mkldnn on|off]
      [--rss 1] [--generate N]

Prints `torch <model> threads=T steps/s median=M min=A max=B` like lockstep_train_bench; with
--generate N (gpt, gpt2) nanoGPT's generate instead, continuing a 64-token prompt by N tokens
(temperature 1, top 200, the whole context through the model for each token) and
`torch <model> threads=T generate tokens/s median=M min=A max=B`. The
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
ap.add_argument("--model", choices=["lenet", "gpt", "gpt2"], required=True)
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--steps", type=int, default=20)
ap.add_argument("--warmup", type=int, default=3)
ap.add_argument("--samples", type=int, default=5)
ap.add_argument("--blas-threads", type=int, default=0, help="OpenBLAS's own threads (default: --threads)")
ap.add_argument("--interop-threads", type=int, default=0, help="torch.set_num_interop_threads (default: untouched)")
ap.add_argument("--mkldnn", choices=["on", "off"], default="on", help="torch.backends.mkldnn.enabled")
ap.add_argument("--rss", type=int, default=0, help="print the resident memory after imports and data")
ap.add_argument("--generate", type=int, default=0, help="tokens/s of generation (gpt, gpt2) instead of training")
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


def nanogpt_adamw(model, lr, beta2):
    """nanoGPT's AdamW: weight decay 0.1 on tensors of 2 or more dimensions, none on the rest."""
    params = list(model.parameters())
    return torch.optim.AdamW([{"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.1},
                              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}],
                             lr=lr, betas=(0.9, beta2))


def gpt_step(mark):
    from gpt_torch import gpt  # the same nanoGPT model the reference test builds
    xs = [(torch.arange(16 * 64) * 31 + m * 17).remainder(96).view(16, 64) for m in range(2)]
    ys = [(torch.arange(16 * 64) * 31 + m * 17 + 5).remainder(96).view(16, 64) for m in range(2)]
    mark()
    cfg = [96, 64, 4, 4, 128]
    model = gpt(torch, cfg, torch.float32)
    model.train()
    opt = nanogpt_adamw(model, 1e-3, 0.99)

    def step():
        for x, y in zip(xs, ys):
            logits = model(x)
            (F.cross_entropy(logits.view(-1, 96), y.view(-1)) * 0.5).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
    step.model = model
    return step


def gpt2_step(mark):
    from gpt_torch import gpt
    ids = (torch.arange(4 * 256) * 31 + 7).remainder(256).view(4, 256)
    nxt = (torch.arange(4 * 256) * 31 + 12).remainder(256).view(4, 256)
    mark()
    model = gpt(torch, [256, 256, 12, 12, 768], torch.float32)
    model.train()
    opt = nanogpt_adamw(model, 6e-4, 0.95)

    def step():
        F.cross_entropy(model(ids).view(-1, 256), nxt.view(-1)).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
    step.model = model
    return step


def generate(model, vocab, block, tokens, seed):
    """nanoGPT's GPT.generate: the cropped context through the model for each new token."""
    torch.manual_seed(seed)
    idx = (torch.arange(64) * 13 + 5).remainder(vocab).view(1, 64)
    with torch.no_grad():
        for _ in range(tokens):
            logits = model(idx[:, -block:])[:, -1, :] / 1.0
            v, _ = torch.topk(logits, min(200, vocab))
            logits[logits < v[:, [-1]]] = -float("inf")
            idx = torch.cat((idx, torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)), dim=1)


baseline = rss.Baseline()
builders = {"lenet": lenet_step, "gpt": gpt_step, "gpt2": gpt2_step}
step = builders[args.model](baseline.mark if args.rss else lambda: None)
if args.generate:
    if args.model == "lenet":
        raise SystemExit("train_peers: --generate is for gpt and gpt2")
    model = step.model
    model.eval()
    vocab, block = (96, 64) if args.model == "gpt" else (256, 256)
    for _ in range(args.warmup):
        generate(model, vocab, block, args.generate, 0)
    rates = []
    for s in range(args.samples):
        start = time.perf_counter()
        generate(model, vocab, block, args.generate, s + 1)
        rates.append(args.generate / (time.perf_counter() - start))
    rates.sort()
    print("torch %s threads=%d generate tokens/s median=%.6g min=%.6g max=%.6g" % (
        args.model, args.threads, rates[len(rates) // 2], rates[0], rates[-1]))
    if args.rss:
        print(baseline.report())
    sys.exit(0)
for _ in range(args.warmup):
    step()
rates = []
for _ in range(args.samples):
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    rates.append(args.steps / (time.perf_counter() - start))
rates.sort()
print("torch %s threads=%d steps/s median=%.6g min=%.6g max=%.6g" % (args.model, args.threads, rates[len(rates) // 2],
                                                                      rates[0], rates[-1]))
if args.rss:
    print(baseline.report())
