"""The torchvision zoo through from_torch_module(model) alone: every classification model of the
installed torchvision (torchvision.models.list_models), default configuration, seeded random
weights (no download), converted and run in evaluation mode natively.

Per model:
- agreement: the output at batch 2 against PyTorch's in float64, max |a - b| / max |b| in
  u = 2^-24, within BOUND_U (torch's float32 error is reported beside it, never used as the bound:
  how exact the peer is depends on the CPU); every parameter's gradient (of a random weighting of
  the outputs, in evaluation mode) likewise, per tensor;
- batch invariance (docs/python.md): a sample's output has the same bits whatever the batch size
  and its position in the batch (batch 2, batch 3 with the sample moved, batch 1 alone).

`make test` runs every model but those of LARGE (over 30M parameters: memory and minutes that
make test does not have), each at the smallest input it takes (INPUT); `make zoo`
(LOCKSTEP_ZOO=all) runs all of them, ViT-H/14 and RegNetY-128GF included.
"""
import copy
import os

import numpy as np
import pytest
import torch

import lockstep as ls

from conftest import AGREEMENT, rel_error

try:
    import torchvision
    from torchvision import models as tvm
except ImportError:  # a failure below, never a skip
    torchvision = tvm = None

EVERY = os.environ.get("LOCKSTEP_ZOO") == "all"
LARGE = {"alexnet", "convnext_base", "convnext_large", "convnext_small", "efficientnet_b5", "efficientnet_b6",
         "efficientnet_b7", "efficientnet_v2_l", "efficientnet_v2_m", "maxvit_t", "regnet_x_16gf", "regnet_x_32gf",
         "regnet_x_8gf", "regnet_y_128gf", "regnet_y_16gf", "regnet_y_32gf", "regnet_y_8gf", "resnet101",
         "resnet152", "resnext101_32x8d", "resnext101_64x4d", "swin_b", "swin_s", "swin_v2_b", "swin_v2_s", "vgg11",
         "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn", "vit_b_16", "vit_b_32",
         "vit_h_14", "vit_l_16", "vit_l_32", "wide_resnet101_2", "wide_resnet50_2"}
# Smallest square input each model takes (its pooling and patching): 32 unless listed.
INPUT = {"alexnet": 64, "inception_v3": 80, "maxvit_t": 224, "vit_b_16": 224, "vit_b_32": 224,
         "vit_h_14": 224, "vit_l_16": 224, "vit_l_32": 224}
BOUND_U = 256  # outputs; about twice the largest measured (swin_v2_t's 134 u)
# Gradients, per tensor: the backward chain is twice the forward's. Largest measured: swin_v2_t's
# attention (logit_scale, one scalar per head summing every logit's gradient times a cosine
# similarity: 313 u; its continuous position bias MLP: 348 u); the convolutional models 20-90 u.
GRAD_BOUND_U = 1024
# Input seeds other than 1 where seed 1 puts a ReLU input within float32's rounding of 0: the
# gradient is then not defined to float32's precision (PyTorch's float32 gradient differs from
# float64 alike, by 10^6 u on regnet_x_3_2gf's block3), and the check would judge the kink.
INPUT_SEED = {"regnet_x_3_2gf": 2}


def model_names(every=True):
    if tvm is None:
        return ["torchvision-missing"]
    return [n for n in tvm.list_models(module=tvm) if every or n not in LARGE]


def build(name):
    if tvm is None:
        pytest.fail("torchvision is missing: tools/setup.sh installs Debian's python3-torchvision")
    torch.manual_seed(0)
    model = tvm.get_model(name, weights=None).eval()
    # Initialisations that leave the output constant, which would make the check vacuous:
    if name == "googlenet" or name.startswith("shufflenet"):  # signals that fade (convolutions of std 0.01)
        for m in model.modules():
            if isinstance(m, torch.nn.Conv2d):
                torch.nn.init.kaiming_normal_(m.weight)
    if name.startswith("vit_"):  # a zero head
        torch.nn.init.normal_(model.heads.head.weight, std=0.02)
    return model


def test_the_zoo_is_the_installed_torchvision():
    names = model_names()
    assert len(names) >= 20 and "resnet18" in names and "vit_b_16" in names, names
    assert LARGE <= set(names), sorted(LARGE - set(names))  # the list names installed models


@pytest.mark.parametrize("name", model_names(EVERY))
def test_zoo_model_converts_agrees_and_is_batch_invariant(name):
    model = build(name)
    count = sum(p.numel() for p in model.parameters())
    size = INPUT.get(name, 32)
    g = torch.Generator().manual_seed(INPUT_SEED.get(name, 1))
    x = torch.randn(3, 3, size, size, generator=g)
    converted = ls.from_torch_module(model)  # no example inputs: recorded at the first call
    assert sorted(converted.state_dict()) == sorted(model.state_dict())
    with ls.no_grad():
        two = converted(ls.from_numpy(x[:2].numpy())).numpy()
        three = converted(ls.from_numpy(x[[2, 0, 1]].numpy())).numpy()
        one = converted(ls.from_numpy(x[1:2].numpy())).numpy()
    # Gradients of a random weighting of the outputs, in evaluation mode (batch norm affine, no
    # dropout: well conditioned, unlike batch statistics over two 1x1 maps).
    w = torch.randn(two.shape, generator=g)
    out = converted(ls.from_numpy(x[:2].numpy()))
    (out * ls.from_numpy(w.numpy())).sum().backward()
    double = copy.deepcopy(model).double()
    want_out = double(x[:2].double())
    (want_out * w.double()).sum().backward()
    want = want_out.detach().numpy()
    with torch.no_grad():
        torch_float = model(x[:2]).numpy()
    assert np.abs(want[0] - want[1]).max() > 1e-3 * np.abs(want).max(), \
        "%s: an output that does not depend on the input checks nothing" % name
    err, torch_err = rel_error(two, want), rel_error(torch_float, want)
    grads = dict(double.named_parameters())
    top = max(float(p.grad.abs().max()) for p in double.parameters() if p.grad is not None)
    grad_err, worst = 0.0, ""
    for key, p in converted.named_parameters():
        if grads[key].grad is None:  # unused in evaluation (Inception's auxiliary classifiers)
            assert p.grad is None or not np.any(p.grad.numpy()), key
            continue
        ref = grads[key].grad.numpy()
        if np.abs(ref).max() < 1e-6 * top:  # analytically zero (a bias before batch norm): noise on both sides
            continue
        e = rel_error(p.grad.numpy(), ref)
        if e > grad_err:
            grad_err, worst = e, key
    AGREEMENT.append("%-20s %6.1fM %3dx%-3d lockstep vs float64 %7.2f u, torch float32 vs float64 %7.2f u "
                     "(bound %d u); gradients %7.2f u (bound %d u, worst %s)"
                     % (name, count / 1e6, size, size, err, torch_err, BOUND_U, grad_err, GRAD_BOUND_U, worst))
    assert err <= BOUND_U, "%s: %.2f u from PyTorch's float64 (bound %d u)" % (name, err, BOUND_U)
    assert grad_err <= GRAD_BOUND_U, "%s: gradient of %s %.2f u from float64 (bound %d u)" % (
        name, worst, grad_err, GRAD_BOUND_U)
    # Batch invariance: bits, not closeness.
    assert np.array_equal(three[1], two[0]) and np.array_equal(three[2], two[1]), name
    assert np.array_equal(one[0], two[1]), name
