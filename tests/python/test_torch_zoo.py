"""The torchvision zoo through from_torch_module(model) alone: every classification model of the
installed torchvision (torchvision.models.list_models), default configuration, seeded random
weights (no download), converted and run in evaluation mode natively.

Per model:
- agreement: the output at batch 2 against PyTorch's in float64, max |a - b| / max |b| in
  u = 2^-24, within BOUND_U (torch's float32 error is reported beside it, never used as the bound:
  how exact the peer is depends on the CPU);
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
BOUND_U = 256


def model_names(every=True):
    if tvm is None:
        return ["torchvision-missing"]
    return [n for n in tvm.list_models(module=tvm) if every or n not in LARGE]


def build(name):
    if tvm is None:
        pytest.fail("torchvision is missing: tools/setup.sh installs Debian's python3-torchvision")
    torch.manual_seed(0)
    model = tvm.get_model(name, weights=None).eval()
    if name == "googlenet":  # its default initialisation (std 0.01) leaves the output constant
        for m in model.modules():
            if isinstance(m, torch.nn.Conv2d):
                torch.nn.init.kaiming_normal_(m.weight)
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
    g = torch.Generator().manual_seed(1)
    x = torch.randn(3, 3, size, size, generator=g)
    converted = ls.from_torch_module(model)  # no example inputs: recorded at the first call
    assert sorted(converted.state_dict()) == sorted(model.state_dict())
    with ls.no_grad():
        two = converted(ls.from_numpy(x[:2].numpy())).numpy()
        three = converted(ls.from_numpy(x[[2, 0, 1]].numpy())).numpy()
        one = converted(ls.from_numpy(x[1:2].numpy())).numpy()
    with torch.no_grad():
        want = copy.deepcopy(model).double()(x[:2].double()).numpy()
        torch_float = model(x[:2]).numpy()
    err, torch_err = rel_error(two, want), rel_error(torch_float, want)
    AGREEMENT.append("%-20s %6.1fM %3dx%-3d lockstep vs float64 %7.2f u, torch float32 vs float64 %7.2f u "
                     "(bound %d u)" % (name, count / 1e6, size, size, err, torch_err, BOUND_U))
    assert err <= BOUND_U, "%s: %.2f u from PyTorch's float64 (bound %d u)" % (name, err, BOUND_U)
    # Batch invariance: bits, not closeness.
    assert np.array_equal(three[1], two[0]) and np.array_equal(three[2], two[1]), name
    assert np.array_equal(one[0], two[1]), name
