#!/usr/bin/python3
"""50 AdamW steps of lockstep's GPT example ("small", dropout off), replayed in PyTorch.

  /usr/bin/python3 tests/reference/gpt_torch.py --dir OUT_DIR [--run EXE [--emulator=CMD]]
                                                [--data TEXT] [--markdown OUT.md]

With --run, runs `EXE --data TEXT OUT_DIR` first (tests/reference/gpt_steps.cc). Then builds
nanoGPT's model in PyTorch (the manual attention path: q @ k^T * (1/sqrt(hs)), causal mask,
softmax, @ v; exact GELU; tied head), loads lockstep's initial.safetensors, and trains on
lockstep's micro-batches with nanoGPT's loop: loss / grad_accum backward per micro-batch,
clip_grad_norm_(1.0), torch.optim.AdamW (weight decay on tensors of 2+ dimensions only,
foreach=False) with lockstep's per-step learning rates, on the CPU with one thread, in float64
(the judge) and in float32 (the peer, reported). Per step it checks lockstep's loss against the
float64 run's, |lockstep - f64| / |f64|, and the largest relative parameter difference
max_t max|lockstep_t - f64_t| / max|f64_t|, and fails past LOSS_BOUND or PARAM_BOUND (below, with
the measurements behind them); torch float32's distances from float64 and from lockstep are
printed beside them. float64 judges because it is the same on every CPU, while torch's float32
kernels are chosen by the CPU's SIMD level.

Exit status 0 within the bounds, 1 otherwise, 77 (ctest's SKIP) when torch cannot be imported or
the text is missing (1 under LOCKSTEP_REQUIRE_ALL=1, as make test sets: a failure there).
"""
import argparse
import math
import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_mnist_steps import np, read_safetensors, tensor_rel  # noqa: E402  (shared readers)

# Bounds on lockstep against float64, from measurements (lockstep's bits are the same on every
# machine), with margins:
# - Losses: the float32 and float64 runs start from identical weights and data; afterwards they
#   hold slightly different weights and the losses differ by at most 1.24e-7 relative (1-2
#   float32 ulps) over the 50 steps. Bound LOSS_BOUND = 1e-6 (~8x).
# - Parameters: max_t max|lockstep_t - f64_t| / max|f64_t| is 1.4e-4 after step 1 and grows to
#   3.2e-4 by step 50. It comes from AdamW's first steps: m / (sqrt(v) + eps) is about sign(g)
#   for every element, so a gradient element near zero whose rounding differs moves by a whole
#   +-lr in one computation and less in the other. torch float32 against float64 shows the same
#   effect (1.4e-4 after step 1, 2.2e-4 after step 50 on a Zen 3): float32 training, not a
#   lockstep defect. Bound PARAM_BOUND = 1.5e-3 (~4.6x).
LOSS_BOUND = 1e-6
PARAM_BOUND = 1.5e-3


def lr_schedule_ok(lrs, hyper, cfg):
    """lockstep's rates against nanoGPT's get_lr (warmup, cosine to min_lr), in float64."""
    lr, min_lr = float(hyper[0]), float(hyper[1])
    warmup, decay = int(cfg[7]), int(cfg[8])
    worst = 0.0
    for it, got in enumerate(lrs):
        if it < warmup:
            want = lr * (it + 1) / (warmup + 1)
        elif it > decay:
            want = min_lr
        else:
            ratio = (it - warmup) / (decay - warmup)
            want = min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (lr - min_lr)
        worst = max(worst, abs(float(got) - want) / want)
    return worst


def gpt(torch, cfg, dtype):
    nn, F = torch.nn, torch.nn.functional
    vocab, block, n_layer, n_head, n_embd = (int(v) for v in cfg[:5])

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = nn.Linear(n_embd, n_embd)

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(n_embd, dim=2)
            q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            mask = torch.tril(torch.ones(T, T)).view(1, 1, T, T)
            att = F.softmax(att.masked_fill(mask == 0, float("-inf")), dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(n_embd, 4 * n_embd)
            self.c_proj = nn.Linear(4 * n_embd, n_embd)

        def forward(self, x):
            return self.c_proj(F.gelu(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn = nn.LayerNorm(n_embd), Attention()
            self.ln_2, self.mlp = nn.LayerNorm(n_embd), Mlp()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class Gpt(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(vocab, n_embd), wpe=nn.Embedding(block, n_embd),
                h=nn.ModuleList([Block() for _ in range(n_layer)]), ln_f=nn.LayerNorm(n_embd)))

        def forward(self, idx):
            t = self.transformer
            x = t.wte(idx) + t.wpe(torch.arange(idx.size(1)))
            for b in t.h:
                x = b(x)
            logits = F.linear(t.ln_f(x), t.wte.weight)  # the tied head
            return logits

    return Gpt().to(dtype)


def run(torch, ls_initial, steps, cfg, hyper, lrs, n_steps, dtype):
    F = torch.nn.functional
    model = gpt(torch, cfg, dtype)
    state = {k: torch.from_numpy(v).to(dtype) for k, v in ls_initial.items()}
    model.load_state_dict(state, strict=True)
    params = dict(model.named_parameters())
    decay = [p for n, p in params.items() if p.dim() >= 2]
    no_decay = [p for n, p in params.items() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": float(hyper[2])},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=float(hyper[0]), betas=(float(hyper[3]), float(hyper[4])), eps=1e-8, foreach=False)
    accum = int(cfg[6])
    losses, snapshots = [], []
    for s in range(1, n_steps + 1):
        for g in opt.param_groups:
            g["lr"] = float(lrs[s - 1])
        total = 0.0
        for m in range(accum):
            x = torch.from_numpy(steps["x.%02d.%d" % (s, m)])
            y = torch.from_numpy(steps["y.%02d.%d" % (s, m)])
            logits = model(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
            (loss / accum).backward()
            total += float(loss)
        torch.nn.utils.clip_grad_norm_(model.parameters(), float(hyper[5]))
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(total / accum)
        snapshots.append({k: v.detach().numpy().copy() for k, v in model.state_dict().items()})
    return losses, snapshots


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True, help="lockstep_gpt_steps' output folder")
    ap.add_argument("--run", help="lockstep_gpt_steps executable to run first")
    ap.add_argument("--emulator", default="", help="command prefix for --run (cross builds)")
    ap.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                   ".deps", "data", "fortunes", "input.txt"))
    ap.add_argument("--markdown", help="write the per-step table here")
    args = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        print("gpt_torch: SKIPPED: %s cannot import torch (%s)" % (sys.executable, e))
        return 1 if os.environ.get("LOCKSTEP_REQUIRE_ALL") == "1" else 77  # make test: a failure
    if not os.path.isfile(args.data):
        print("gpt_torch: SKIPPED: the text %s is missing (tools/setup.sh makes it)" % args.data)
        return 1 if os.environ.get("LOCKSTEP_REQUIRE_ALL") == "1" else 77  # make test: a failure
    torch.set_num_threads(1)
    if args.run:
        os.makedirs(args.dir, exist_ok=True)
        cmd = shlex.split(args.emulator) + [args.run, "--data", args.data, args.dir]
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL)
        if r.returncode != 0:
            print("gpt_torch: %s failed with status %d" % (" ".join(cmd), r.returncode))
            return 1
    initial = read_safetensors(os.path.join(args.dir, "initial.safetensors"))
    steps = read_safetensors(os.path.join(args.dir, "steps.safetensors"))
    cfg, hyper, lrs, ls_loss = steps["config"], steps["hyper"], steps["lr"], steps["loss"]
    n = len(ls_loss)
    failures = []
    lr_err = lr_schedule_ok(lrs, hyper, cfg)
    print("learning rates: largest relative difference from nanoGPT's get_lr (float64): %.2e" % lr_err)
    if lr_err > 1e-6:
        failures.append("the learning-rate schedule differs from nanoGPT's by %.2e" % lr_err)

    t32_loss, t32 = run(torch, initial, steps, cfg, hyper, lrs, n, torch.float32)
    t64_loss, t64 = run(torch, initial, steps, cfg, hyper, lrs, n, torch.float64)
    rows = ["| step | lockstep loss | float64 loss | lockstep loss vs f64 | lockstep params vs f64 "
            "| torch f32: loss / params vs f64 | lockstep vs torch f32: loss / params |",
            "|---|---|---|---|---|---|---|"]
    print("checked: lockstep vs float64 (ls-f64); reported: torch float32 vs float64 (t32-f64) and "
          "lockstep vs torch float32 (ls-t32)")
    print("%4s %14s %14s %10s %10s %10s %10s %10s %10s" % (
        "step", "lockstep", "float64", "loss", "params", "t32-f64 l", "t32-f64 p", "ls-t32 l", "ls-t32 p"))
    worst_loss = worst_param = 0.0
    for s in range(n):
        ls_params = {k[len("params.%02d/" % (s + 1)):]: v for k, v in steps.items()
                     if k.startswith("params.%02d/" % (s + 1))}
        loss_rel = lambda a, b: abs(float(a) - float(b)) / abs(float(b))
        params_rel = lambda a, b: max(tensor_rel(a[k], b[k]) for k in ls_params)
        ll, pl = loss_rel(ls_loss[s], t64_loss[s]), params_rel(ls_params, t64[s])
        tl, tp = loss_rel(t32_loss[s], t64_loss[s]), params_rel(t32[s], t64[s])
        xl, xp = loss_rel(ls_loss[s], t32_loss[s]), params_rel(ls_params, t32[s])
        worst_loss, worst_param = max(worst_loss, ll), max(worst_param, pl)
        print("%4d %14.9g %14.9g %10.2e %10.2e %10.2e %10.2e %10.2e %10.2e"
              % (s + 1, ls_loss[s], t64_loss[s], ll, pl, tl, tp, xl, xp))
        rows.append("| %d | %.9g | %.9g | %.2e | %.2e | %.2e / %.2e | %.2e / %.2e |"
                    % (s + 1, ls_loss[s], t64_loss[s], ll, pl, tl, tp, xl, xp))
    if worst_loss > LOSS_BOUND:
        failures.append("loss vs float64 %.3g > %.3g" % (worst_loss, LOSS_BOUND))
    if worst_param > PARAM_BOUND:
        failures.append("parameters vs float64 %.3g > %.3g" % (worst_param, PARAM_BOUND))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("# lockstep GPT vs torch %s: %d AdamW steps, dropout off\n\n" % (torch.__version__, n))
            f.write("lockstep vs float64: largest loss rel diff %.2e (bound %.0e); largest param rel diff "
                    "%.2e (bound %.0e)\n\n"
                    % (worst_loss, LOSS_BOUND, worst_param, PARAM_BOUND))
            f.write("\n".join(rows) + "\n")
    print("lockstep vs float64: largest loss rel diff %.3e (bound %.0e), largest parameter rel diff %.3e "
          "(bound %.0e)"
          % (worst_loss, LOSS_BOUND, worst_param, PARAM_BOUND))
    if failures:
        print("gpt_torch: FAILED:\n  " + "\n  ".join(failures))
        return 1
    print("gpt_torch: all %d steps within the bounds" % n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
