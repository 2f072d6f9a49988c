"""Optimizers from Python against torch.optim in float64 (the same update rules: a few roundings
apart), gradient clipping, schedules and parameter groups."""
import numpy as np
import pytest
import torch

import lockstep as ls
from lockstep import nn

from conftest import rel_error


def run_both(make_ls, make_torch, steps=3):
    rng = np.random.RandomState(0)
    w0 = rng.randn(5, 4).astype(np.float32)
    grads = [rng.randn(5, 4).astype(np.float32) for _ in range(steps)]
    w = ls.from_numpy(w0).requires_grad_()
    opt = make_ls([w])
    tw = torch.tensor(w0, dtype=torch.float64, requires_grad=True)
    topt = make_torch([tw])
    for g in grads:
        opt.zero_grad()
        w.grad = ls.from_numpy(g)
        opt.step()
        topt.zero_grad()
        tw.grad = torch.tensor(g, dtype=torch.float64)
        topt.step()
    return w.detach().numpy(), tw.detach().numpy()


@pytest.mark.parametrize("kind", ["sgd", "sgd_nesterov", "adam", "adamw"])
def test_updates_match_torch_in_float64(kind):
    makers = {
        "sgd": (lambda p: ls.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01),
                lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01)),
        "sgd_nesterov": (lambda p: ls.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
                         lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True)),
        "adam": (lambda p: ls.optim.Adam(p, lr=1e-2, weight_decay=0.1),
                 lambda p: torch.optim.Adam(p, lr=1e-2, weight_decay=0.1)),
        "adamw": (lambda p: ls.optim.AdamW(p, lr=1e-2), lambda p: torch.optim.AdamW(p, lr=1e-2)),
    }
    ours, exact = run_both(*makers[kind])
    assert rel_error(ours, exact) <= 16  # float32 parameters and constants against float64


def test_groups_names_and_state():
    model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    opt = ls.optim.AdamW([{"params": [model[0].weight, model[1].weight]},
                          {"params": [model[0].bias, model[1].bias], "weight_decay": 0.0}], lr=0.5)
    assert [g["weight_decay"] for g in opt.param_groups] == [0.01, 0.0]
    opt.param_groups[1]["lr"] = 0.25
    assert opt.lr == 0.25 and opt.param_groups[0]["lr"] == 0.25
    named = ls.optim.Adam(model.named_parameters())
    model(ls.ones(1, 3)).sum().backward()
    named.step()
    state = named.state_dict()
    assert state["step"] == 1 and "exp_avg.0.weight" in state["state"]
    with pytest.raises(ls.ArgumentError, match="per-group"):
        ls.optim.SGD([{"params": model.parameters(), "momentum": 0.5}])
    with pytest.raises(ls.ArgumentError, match="lr"):
        ls.optim.SGD(model.parameters(), lr=-1.0)


def test_clipping_and_schedules():
    w = ls.ones(4, requires_grad=True)
    w.grad = ls.full(4, 3.0)
    norm = ls.nn.utils.clip_grad_norm_([w], 1.0)
    assert norm.item() == 6.0
    assert np.allclose(w.grad.numpy(), 3.0 / (6.0 + 1e-6), rtol=1e-6)
    opt = ls.optim.SGD([w], lr=1.0)
    sched = ls.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    lrs = []
    for _ in range(4):
        sched.step()
        lrs.append(opt.lr)
    assert lrs == [1.0, 0.5, 0.5, 0.25]
    cosine = ls.optim.lr_scheduler.CosineWithWarmup(opt, warmup=2, decay_steps=10, min_lr=0.1)
    assert opt.lr == np.float32(0.25 / 3)  # nanoGPT's warmup: base * (step + 1) / (warmup + 1)
    cosine.step()
    assert opt.lr == np.float32(0.25 * 2 / 3)
    for _ in range(20):
        cosine.step()
    assert opt.lr == np.float32(0.1)
