"""The torchvision zoo through from_torch_module(model) alone: every classification model of the
installed torchvision (torchvision.models.list_models), default configuration, seeded random
weights (no download), converted and run in evaluation mode natively.

Per model:
- agreement: the output at batch 2 against PyTorch's in float64, max |a - b| / max |b| in
  u = 2^-24, within BOUND_U (torch's float32 error is reported beside it, never used as the bound:
  how exact the peer is depends on the CPU); every parameter's gradient (of a random weighting of
  the outputs, in evaluation mode) likewise, per tensor;
- batch invariance (docs/python.md): a sample's output has the same bits whatever the batch size
  and its position in the batch (batch 2, batch 3 with the sample moved, batch 1 alone);
- training mode, dropout off: the output (batch statistics of 8 samples of twice the smallest
  input) and the running statistics it moves, against PyTorch's float64 forward in training mode
  (make test: one model of each family of sizes, TRAIN_SAME_FAMILY; make zoo: every model);
- export and fine-tuning (FINE_TUNED in make test, beside test_export.py's five; every model in
  make zoo): dropout on, the model exported (lockstep.export) before training, two
  SGD-with-momentum steps of the converted module, of the file natively and of the file in the
  npm package (Node): the file's parameters natively are the converted module's (bits; within
  TRAINED_GELU_U where the model computes GELU, which export writes out: docs/export.md), they go
  back into the PyTorch model, and the npm package's model hash is the native one.

`make test` runs every model but those of LARGE (over 30M parameters: memory and minutes that
make test does not have), each at the smallest input it takes (INPUT); `make zoo`
(LOCKSTEP_ZOO=all) runs all of them, ViT-H/14 and RegNetY-128GF included (those two are trained
natively but not exported: an ONNX file holds at most 2 GiB; and the files of ViT-L/16 and
ViT-L/32, which need more than the npm package's 4 GiB heap, are fine-tuned natively only:
EXPORT_MAX_PARAMS, NPM_MAX_PARAMS).
"""
import copy
import os

import numpy as np
import pytest
import torch

import lockstep as ls

from conftest import AGREEMENT, rel_error
from export_helpers import SEED, bits_equal, node_train, train_steps

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


# Configurations the training check takes in make test: Inception V3's auxiliary classifier needs a
# 17x17 map, so 299x299 inputs, in training; make zoo trains the default at 299.
TRAIN_CONFIG = {"inception_v3": {"aux_logits": False}}
# Outputs and running statistics in training mode: batch statistics amplify rounding where a
# channel's values lie close together. Largest measured: Inception V3's output, 1128 u.
TRAIN_BOUND_U = 4096
TRAINED_GELU_U = 4096  # parameters after two steps, file vs converted module, where GELU is written out
# The export and npm fine-tuning check in make test (the whole zoo: make zoo), beside test_export.py's
# five: the module-by-module route (MNASNet), named-tuple outputs in training (GoogLeNet), ceil-mode
# pooling (SqueezeNet), channel shuffle (ShuffleNetV2), cosine attention over zero padding (Swin V2).
FINE_TUNED = {"mnasnet0_5", "googlenet", "squeezenet1_1", "shufflenet_v2_x0_5", "swin_v2_t"}
# Limits (make zoo): an ONNX file is one protobuf message, at most 2 GiB, so models over 500M
# parameters (RegNetY-128GF, ViT-H/14) are trained natively only, not exported (export refuses
# them). The npm package's heap grows to 4 GiB, WebAssembly's 32-bit limit (bindings/wasm/README.md):
# fine-tuning a file there holds 16 bytes a parameter (weights, gradients, momentum, and the file's
# bytes while it is imported), so the files of models over 2^32 / 16 = 268M parameters (ViT-L/16 and
# ViT-L/32, 305M: out of memory there, kind 'resource') are fine-tuned natively only.
EXPORT_MAX_PARAMS = 500e6
NPM_MAX_PARAMS = 2 ** 32 / 16


def model_names(every=True):
    if tvm is None:
        return ["torchvision-missing"]
    return [n for n in tvm.list_models(module=tvm) if every or n not in LARGE]


def build(name, **config):
    if tvm is None:
        pytest.fail("torchvision is missing: tools/setup.sh installs Debian's python3-torchvision")
    torch.manual_seed(0)
    model = tvm.get_model(name, weights=None, **config).eval()
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


def train_size(name, default):
    """Twice the smallest input (Inception V3 at 299 with its auxiliary classifier)."""
    if name == "inception_v3" and default:
        return 299
    return INPUT[name] if INPUT.get(name, 32) >= 224 else 2 * INPUT.get(name, 32)


def first(out):
    """The main output: GoogLeNet and Inception return their auxiliary classifiers' too in training."""
    return out[0] if isinstance(out, tuple) else out


def quiet(model):
    """A copy of ``model`` with every dropout (and stochastic depth) at p = 0."""
    model = copy.deepcopy(model)
    for m in model.modules():
        if isinstance(m, torch.nn.modules.dropout._DropoutNd) or type(m).__name__ == "StochasticDepth":
            m.p = 0.0
    return model


def running_stats_error(mine, double):
    """The largest error of the running statistics after one training forward, in u: a mean
    against max(|mean|, 0.1 std of the batch) (a layer fed zero-mean values has a mean that is 0
    but for rounding), a variance against its own size."""
    worst, where = 0.0, ""
    for key, t in double.state_dict().items():
        if key.endswith("running_mean"):
            batch_var = (double.state_dict()[key[:-4] + "var"].numpy() - 0.9) / 0.1
            scale = max(np.abs(t.numpy()).max(), 0.1 * np.sqrt(np.abs(batch_var).max()))
            e = float(np.abs(mine[key].numpy() - t.numpy()).max() / scale / 2.0 ** -24)
        elif key.endswith("running_var"):
            e = rel_error(mine[key].numpy(), t.numpy())
        else:
            continue
        if e > worst:
            worst, where = e, key
    return worst, where


# Training mode in make test: one model of each family whose members are the same modules at other
# widths and depths (every model converts and agrees in evaluation mode above); make zoo: all.
TRAIN_SAME_FAMILY = {"densenet161", "densenet169", "densenet201", "efficientnet_b1", "efficientnet_b2",
                     "efficientnet_b3", "efficientnet_b4", "mnasnet1_0", "mnasnet1_3", "regnet_x_800mf",
                     "regnet_x_1_6gf", "regnet_x_3_2gf", "regnet_y_800mf", "regnet_y_1_6gf", "regnet_y_3_2gf",
                     "shufflenet_v2_x1_0", "shufflenet_v2_x1_5", "shufflenet_v2_x2_0"}


@pytest.mark.parametrize("name", [n for n in model_names(EVERY) if EVERY or n not in TRAIN_SAME_FAMILY])
def test_zoo_model_in_training_mode_agrees(name):
    """Dropout off: batch statistics (8 samples of twice the smallest input, so that the last maps
    hold a few values per channel) and the running statistics they move, against float64."""
    default = EVERY or name not in TRAIN_CONFIG
    model = quiet(build(name, **({} if default else TRAIN_CONFIG[name])).train())
    x = torch.randn(8, 3, train_size(name, default), train_size(name, default),
                    generator=torch.Generator().manual_seed(INPUT_SEED.get(name, 1)))
    converted = ls.from_torch_module(model)
    with ls.no_grad():
        out = first(converted(ls.from_numpy(x.numpy()))).numpy()
    double = model.double()
    with torch.no_grad():
        want = first(double(x.double())).numpy()
    err = rel_error(out, want)
    stats_err, worst = running_stats_error(converted.state_dict(), double)
    AGREEMENT.append("%-20s training 8x%3dx%-3d output %7.2f u, running statistics %7.2f u (bound %d u, worst %s)"
                     % (name, x.shape[2], x.shape[3], err, stats_err, TRAIN_BOUND_U, worst or "-"))
    assert err <= TRAIN_BOUND_U, "%s: training-mode output %.2f u from float64" % (name, err)
    assert stats_err <= TRAIN_BOUND_U, "%s: %s %.2f u from float64" % (name, worst, stats_err)


@pytest.mark.parametrize("name", model_names(EVERY) if EVERY else sorted(FINE_TUNED))
def test_zoo_model_trains_exports_and_fine_tunes_in_npm(name, tmp_path):
    """Dropout on, two samples of twice the smallest input (batch statistics of two 1x1 maps give
    gradients of 10^12, and PyTorch's own steps diverge): the model exported before training
    (lockstep.export), then two SGD-with-momentum steps of the converted module and of the file
    natively (dropout masks by the path rule on both), and of the file in the npm package (Node,
    the same streams by ls.nn.seedDropoutStreams)."""
    default = EVERY or name not in TRAIN_CONFIG
    model = build(name, **({} if default else TRAIN_CONFIG[name])).train()
    size = train_size(name, default)
    x = torch.randn(2, 3, size, size, generator=torch.Generator().manual_seed(INPUT_SEED.get(name, 1)))
    xl, targets = ls.from_numpy(x.numpy()), np.array([1, 7])
    count = sum(p.numel() for p in model.parameters())
    converted = ls.from_torch_module(model, seed=SEED, example_inputs=(x,))
    if count > EXPORT_MAX_PARAMS:  # export refuses, nothing written; trained natively, back into PyTorch
        with pytest.raises(ls.ArgumentError, match="at most 2 GiB"):
            ls.export(converted, str(tmp_path / "big.onnx"))
        assert os.listdir(tmp_path) == []
        train_steps(converted, xl, targets)
        assert all(np.all(np.isfinite(t.detach().numpy())) for _, t in converted.named_parameters()), name
        model.load_state_dict(ls.to_torch_state_dict(converted), strict=True)
        AGREEMENT.append("%-20s %.0fM parameters: trained natively only (an ONNX file holds at most 2 GiB)"
                         % (name, count / 1e6))
        return
    path = tmp_path / (name + ".onnx")
    ls.export(converted, str(path))
    train_steps(converted, xl, targets)
    loaded = ls.onnx.load(str(path))
    ls.nn.seed_dropout_streams(loaded, SEED)
    train_steps(loaded, xl, targets)
    gelu = any(isinstance(m, torch.nn.GELU) for m in model.modules())
    mine = dict(converted.named_parameters())
    top = max(float(np.abs(t.detach().numpy()).max()) for t in mine.values())
    trained_err = 0.0
    for key, t in loaded.named_parameters():
        a, b = t.detach().numpy(), mine[key].detach().numpy()
        assert np.all(np.isfinite(a)) and np.all(np.isfinite(b)), "%s: %s is not finite after two steps" % (name, key)
        if gelu:
            # A tensor that stays 0 but for rounding (a zero-initialised bias whose gradient is
            # analytically 0, before a batch norm: MaxViT's pre_norm) has no relative error.
            if max(np.abs(a).max(), np.abs(b).max()) >= 1e-6 * top:
                trained_err = max(trained_err, rel_error(a, b))
        else:
            assert bits_equal(a, b), "%s: %s differs after two steps, file vs converted module" % (name, key)
    if gelu:
        AGREEMENT.append("%-20s trained parameters, file (GELU written out) vs converted module %.2f u (bound %d u)"
                         % (name, trained_err, TRAINED_GELU_U))
    assert trained_err <= TRAINED_GELU_U, "%s: trained parameters %.1f u apart" % (name, trained_err)
    # The trained converted module back in PyTorch, strictly (every name, tied weights once).
    model.load_state_dict(ls.to_torch_state_dict(converted), strict=True)
    if count > NPM_MAX_PARAMS:
        AGREEMENT.append("%-20s %.0fM parameters: the file fine-tuned natively only (the npm package's 4 GiB heap)"
                         % (name, count / 1e6))
        return
    # The file in the npm package with the converted module's dropout streams: the native file's hash.
    assert node_train(tmp_path, path, x, targets, streams="path") == loaded.hash(), \
        "%s: the npm package trained the file to another hash" % name
