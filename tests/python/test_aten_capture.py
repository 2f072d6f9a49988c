"""The aten route (lockstep/_aten.py, from_torch_module's route for what its module tree does not take): PyTorch
models recorded with make_fx at the level of aten ops, run with lockstep's ops.

Models: torchvision's ResNet-18, MobileNetV2, EfficientNet-B0 and ViT-B/16 (image_size 32), all
with random seeded weights (weights=None; Debian's python3-torchvision, which tools/setup.sh
installs: without it these tests fail, never skip), and a nanoGPT-style GPT (tied embeddings,
tril mask buffer with masked_fill, split, size unpacking, view/transpose).

Forward outputs (evaluation mode) are judged against PyTorch in float64, torch's float32 error
reported beside lockstep's, max |a - b| / max |b| in u = 2^-24 (test_torch_convert.py's metric).
Bounds, about four times the largest value measured (batch 2, and batch 3 where BATCHES has it):

- resnet18 64 u: 20 convolutions (K up to 4608), each followed by an evaluation-mode batch norm;
  measured 18.6 u (torch float32: 9.5 u). Each dot product is within gamma_K of exact and the
  relative errors of the layers add up along the depth.
- mobilenet_v2 96 u, efficientnet_b0 128 u: 52 and 81 convolutions with batch norms, ReLU6 /
  SiLU, squeeze-excitation gates (sigmoid, correctly rounded); measured 19.9 u and 24.6 u (torch
  9.8 u and 13.8 u): longer chains of layers than ResNet-18's.
- vit_b_16 128 u: the patch convolution (K = 768), 12 encoder layers of 768 channels (K = 768
  and 3072 in the feed-forward blocks), erf GELU, softmax; measured 35.0 u (torch 18.8 u).
- nanogpt 32 u: two GPT blocks (d 32, 4 heads), test_torch_convert's encoder bound; measured
  5.4 u (torch 4.8 u).

Lockstep's error is about twice torch's float32 error on the convolutional models; the module
route gives the same bits on what both convert (test_same_bits_as_the_module_route), so the
difference is in the kernels (summation orders, batch norm's formula), not in the conversion.

Also: the aten route gives the same bits and the same hash as the module route on
test_torch_convert's models (dropout masks included, by the path rule), batch sizes other than
the example's, tied parameters stay one, the state dict goes back to PyTorch, training runs
(batch-norm statistics, num_batches_tracked, StochasticDepth and Dropout draws), and what lockstep
cannot compute is an ArgumentError naming the aten op and the module path.
"""
import copy
import math

import numpy as np
import pytest
import torch
from torch import nn as tnn

import lockstep as ls
from lockstep import _aten

from conftest import AGREEMENT, rel_error
from test_torch_convert import SHAPES, torch_model

try:
    import torchvision
except ImportError:  # a failure below, never a skip
    torchvision = None

BOUNDS = {"resnet18": 64, "mobilenet_v2": 96, "efficientnet_b0": 128, "vit_b_16": 128, "nanogpt": 32}
# Batch sizes each model runs at, recorded at batch 2. Recording at more batch sizes (to make the
# converted model take any) costs two more make_fx runs per mode: the larger models stay at 2.
BATCHES = {"resnet18": (2, 3), "mobilenet_v2": (2, 3), "efficientnet_b0": (2,), "vit_b_16": (2,), "nanogpt": (2, 3)}


def tv():
    if torchvision is None:
        pytest.fail("torchvision is missing: tools/setup.sh installs Debian's python3-torchvision")
    return torchvision


class Block(tnn.Module):
    """A GPT block as nanoGPT writes it."""

    def __init__(self, n_embd=32, n_head=4, block_size=16, dropout=0.1):
        super().__init__()
        self.ln_1, self.ln_2 = tnn.LayerNorm(n_embd), tnn.LayerNorm(n_embd)
        self.c_attn, self.c_proj = tnn.Linear(n_embd, 3 * n_embd), tnn.Linear(n_embd, n_embd)
        self.attn_dropout, self.resid_dropout = tnn.Dropout(dropout), tnn.Dropout(dropout)
        self.n_head, self.n_embd = n_head, n_embd
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))
        self.mlp = tnn.Sequential(tnn.Linear(n_embd, 4 * n_embd), tnn.GELU(), tnn.Linear(4 * n_embd, n_embd),
                                  tnn.Dropout(dropout))

    def attn(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = self.attn_dropout(tnn.functional.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class NanoGPT(tnn.Module):
    def __init__(self, vocab=50, block_size=16, n_embd=32, n_layer=2):
        super().__init__()
        self.wte, self.wpe = tnn.Embedding(vocab, n_embd), tnn.Embedding(block_size, n_embd)
        self.drop = tnn.Dropout(0.1)
        self.h = tnn.ModuleList([Block(n_embd, 4, block_size) for _ in range(n_layer)])
        self.ln_f = tnn.LayerNorm(n_embd)
        self.lm_head = tnn.Linear(n_embd, vocab, bias=False)
        self.wte.weight = self.lm_head.weight  # tied

    def forward(self, idx):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def example(name, batch):
    rng = np.random.RandomState(batch)
    if name == "nanogpt":
        return torch.from_numpy(rng.randint(0, 50, (batch, 12)).astype(np.int64))
    size = 32 if name == "vit_b_16" else 64
    return torch.from_numpy(rng.randn(batch, 3, size, size).astype(np.float32))


def model_and_input(name, batch=2):
    torch.manual_seed(0)
    if name == "nanogpt":
        return NanoGPT(), example(name, batch)
    models = tv().models
    if name == "vit_b_16":
        model = models.vit_b_16(weights=None, image_size=32)
        tnn.init.normal_(model.heads.head.weight, std=0.02)  # torchvision initialises the head to 0
    else:
        model = getattr(models, name)(weights=None)
    return model, example(name, batch)


def float64_output(model, x):
    with torch.no_grad():
        return copy.deepcopy(model).double()(x.double() if x.is_floating_point() else x).numpy()


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2", "efficientnet_b0", "vit_b_16", "nanogpt"])
def test_forward_within_bounds_of_float64(name):
    model, x = model_and_input(name)
    model.eval()
    converted = _aten.convert(model, x, generalize_batch=len(BATCHES[name]) > 1)
    assert not converted.training
    assert sorted(converted.state_dict()) == sorted(model.state_dict())
    if len(BATCHES[name]) == 1:
        with pytest.raises(ls.ArgumentError, match="example's shapes"):
            converted(ls.from_numpy(example(name, 3).numpy()))
    for batch in BATCHES[name]:  # sizes that follow the batch are affine in it
        xb = example(name, batch)
        exact = float64_output(model, xb)
        with torch.no_grad():
            torch32 = model(xb).numpy()
        ours = converted(ls.from_numpy(xb.numpy())).detach().numpy()
        err, torch_err = rel_error(ours, exact), rel_error(torch32, exact)
        AGREEMENT.append("%-15s eval  batch %d lockstep vs float64 %6.2f u, torch float32 vs float64 %6.2f u "
                         "(bound %d u; aten route)" % (name, batch, err, torch_err, BOUNDS[name]))
        assert err <= BOUNDS[name], "%s batch %d: %.2f u from float64 (bound %d u; torch float32: %.2f u)" % (
            name, batch, err, BOUNDS[name], torch_err)


@pytest.mark.parametrize("mode", ["eval", "train"])
@pytest.mark.parametrize("name", ["lenet", "mlp", "encoder"])
def test_same_bits_as_the_module_route(name, mode):
    """The models test_torch_convert.py converts module by module: the aten route computes the
    same bits (dropout masks too: each draws from "dropout/<module path>") and has the same hash."""
    model = torch_model(name).train(mode == "train")
    x = np.random.RandomState(1).randn(8, *SHAPES[name]).astype(np.float32)
    by_modules = ls.from_torch_module(model, seed=5)
    by_aten = _aten.convert(model, torch.from_numpy(x), seed=5)
    assert by_aten.training == (mode == "train")
    assert by_aten.hash() == by_modules.hash()
    for _ in range(2):  # the second call draws new masks in training
        a = by_modules(ls.from_numpy(x)).detach().numpy()
        b = by_aten(ls.from_numpy(x)).detach().numpy()
        assert np.array_equal(a, b)
    assert by_aten.hash() == by_modules.hash()  # batch-norm running statistics updated alike


def test_tied_parameters_stay_one_and_go_back_to_torch():
    model, idx = model_and_input("nanogpt")
    converted = _aten.convert(model, idx)
    torch_names = [n for n, _ in model.named_parameters()]
    assert [n for n, _ in converted.named_parameters()] == torch_names  # lm_head.weight is wte's
    state = converted.state_dict()
    assert sorted(state) == sorted(model.state_dict())  # both names, as PyTorch's state_dict
    assert converted.lm_head.weight._same(converted.wte.weight)
    converted.train()
    optimizer = ls.optim.SGD(converted.parameters(), lr=0.1)
    logits = converted(ls.from_numpy(idx.numpy()))
    target = ls.from_numpy(idx.numpy().reshape(-1))
    ls.nn.functional.cross_entropy(logits.reshape(-1, 50), target).backward()
    optimizer.step()
    assert not np.array_equal(converted.wte.weight.detach().numpy(), model.wte.weight.detach().numpy())
    back = copy.deepcopy(model)
    back.load_state_dict(ls.to_torch_state_dict(converted))
    assert back.lm_head.weight is back.wte.weight
    np.testing.assert_array_equal(back.wte.weight.detach().numpy(), converted.wte.weight.detach().numpy())


def test_training_updates_statistics_and_draws_masks():
    """EfficientNet-B0 in training mode: batch statistics, running statistics and
    num_batches_tracked as PyTorch updates them, Dropout and StochasticDepth masks from the path
    rule's streams, and gradients for every parameter through the composed ops (SiLU, sigmoid
    gates)."""
    model, x = model_and_input("efficientnet_b0", 4)
    model.train()
    converted = _aten.convert(model, x, seed=3, generalize_batch=False)
    assert converted.training
    sites = sorted(converted.__dict__["_generators"])
    assert "classifier.0" in sites and "features.2.1.stochastic_depth" in sites  # features.1.0: rate 0
    g = converted.__dict__["_generators"]["classifier.0"]
    assert (g.seed, g.stream) == (3, ls.Generator(3, "dropout/classifier.0").stream)
    before = {n: t.numpy().copy() for n, t in converted.state_dict().items()}  # state_dict shares storage
    out = converted(ls.from_numpy(x.numpy()))
    out.sum().backward()
    after = converted.state_dict()
    assert after["features.0.1.num_batches_tracked"].item() == before["features.0.1.num_batches_tracked"] + 1
    assert not np.array_equal(after["features.0.1.running_mean"].numpy(), before["features.0.1.running_mean"])
    assert all(p.grad is not None for p in converted.parameters())
    again = converted(ls.from_numpy(x.numpy())).detach().numpy()
    assert not np.array_equal(again, out.detach().numpy())  # new masks, new statistics
    # Two forwards: the running statistics follow PyTorch's update (momentum 0.1, unbiased variance).
    theirs = _twice(model, x)
    for name in ("features.0.1.running_mean", "features.0.1.running_var"):
        np.testing.assert_allclose(converted.state_dict()[name].numpy(), theirs[name].numpy(), rtol=1e-5, atol=1e-7)


def _twice(model, x):
    """The torch model's state after two training-mode forwards (dropout off: statistics only)."""
    m = copy.deepcopy(model)
    with torch.no_grad():
        m(x)
        m(x)
    return m.state_dict()


@pytest.mark.parametrize("act", [tnn.ReLU6(), tnn.Hardtanh(-2.0, 2.5), tnn.Hardswish(), tnn.Hardsigmoid(), tnn.SiLU()])
def test_composed_activations_follow_pytorch_at_their_bounds(act):
    """ReLU6 and hardtanh (one kernel each way), hardswish and hardsigmoid (compositions of masked
    fills) and SiLU (one op): PyTorch's values (the same bits where it computes in the same order) and its
    gradients, which are 0 at some bounds and not at others (exact zeros at a ReLU6's bound are
    common: a convolution of zeros)."""
    # 16 values (one vector of PyTorch's kernels: its scalar tail differs at hardswish's 3), the
    # neighbours of +-3 among them (x + 3 rounds to 6 just below 3).
    below3 = float(np.nextafter(np.float32(3), np.float32(0)))
    x = np.array([[-7, -6, -4, -3, -below3, -2, -1, 0, 0.5, 1, below3, 3, 4, 6, 7, 8]], np.float32)
    g = np.arange(1, 17, dtype=np.float32).reshape(1, -1)
    xt = torch.from_numpy(x.copy()).requires_grad_()
    yt = act(xt * 1)
    yt.backward(torch.from_numpy(g))
    converted = _aten.convert(tnn.Sequential(act), torch.from_numpy(x))
    xl = ls.from_numpy(x)
    xl.requires_grad = True
    y = converted(xl)
    y.backward(ls.from_numpy(g))
    exact = not isinstance(act, tnn.SiLU)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=0 if exact else 2 ** -22, atol=0)
    np.testing.assert_allclose(xl.grad.numpy(), xt.grad.numpy(), rtol=2 ** -21, atol=0)  # zeros stay zeros


def test_what_lockstep_cannot_compute_is_named():
    class LogGamma(tnn.Module):
        def forward(self, x):
            return torch.lgamma(x)

    class WritesInput(tnn.Module):
        def forward(self, x):
            return x.add_(1)

    class Branchy(tnn.Module):
        def forward(self, x):
            return x if x.sum() > 0 else -x  # data-dependent control flow: make_fx refuses it

    cases = [(tnn.Sequential(tnn.Linear(4, 4), tnn.Sequential(LogGamma())), torch.randn(2, 4), "aten.lgamma", "'1.0'"),
             (tnn.Sequential(tnn.ConvTranspose3d(2, 2, 3)), torch.randn(1, 2, 5, 5, 5), "3-D transposed convolution",
              "'0'"),
             (WritesInput(), torch.randn(2, 3), "an input", "the model itself"),
             (tnn.Sequential(tnn.Linear(3, 3), Branchy()), torch.randn(2, 3), "tensor values", "'1'")]
    for model, x, what, where in cases:
        with pytest.raises(ls.ArgumentError) as info:
            _aten.convert(model.eval(), x)
        assert what in str(info.value) and where in str(info.value), str(info.value)
    converted = _aten.convert(tnn.Linear(3, 2), torch.randn(4, 3))
    with pytest.raises(ls.ArgumentError, match=r"\['B', 3\]"):
        converted(ls.randn(4, 5))


def test_the_norm_of_a_zero_vector_has_pytorchs_zero_gradient(tmp_path):
    """F.normalize of a zero row (Swin V2's cosine attention over a window's zero padding, whose
    keys have no bias): PyTorch's gradient of the norm at 0 is 0; sqrt's would be 0 * inf = NaN.
    The aten route and the file lockstep.export writes both give PyTorch's gradients."""
    class Cosine(tnn.Module):
        def __init__(self):
            super().__init__()
            self.fc = tnn.Linear(4, 4)

        def forward(self, x):
            k = self.fc(x) * torch.tensor([1.0, 1.0, 0.0, 0.0]).view(1, 4, 1)  # rows 2 and 3 are 0
            return tnn.functional.normalize(k, dim=-1)

    torch.manual_seed(0)
    model, x = Cosine(), torch.randn(2, 4, 4)
    w = torch.randn(2, 4, 4)
    (model(x) * w).sum().backward()
    want = model.fc.weight.grad.numpy()
    converted = ls.from_torch_module(model, example_inputs=(x,))
    path = str(tmp_path / "cosine.onnx")
    ls.export(converted, path)
    for m in (converted, ls.onnx.load(path)):
        (m(ls.from_numpy(x.numpy())) * ls.from_numpy(w.numpy())).sum().backward()
        grad = dict(m.named_parameters())["fc.weight"].grad.numpy()
        assert np.all(np.isfinite(grad)) and rel_error(grad, want) < 16, grad


@pytest.mark.parametrize("act", [tnn.ReLU6(inplace=True), tnn.ReLU(), tnn.SiLU(inplace=True), tnn.Hardtanh(-0.5, 0.25)])
def test_batch_norm_folds_the_activation_after_it_with_the_ops_bits(act):
    """A ReLU, ReLU6/hardtanh or SiLU whose input is a batch norm's output that nothing else reads runs
    inside the batch norm (core's BatchNorm with an activation): the output, the running statistics
    and every gradient are the bits of lockstep's separate ops, in training."""
    torch.manual_seed(5)
    model = tnn.Sequential(tnn.Conv2d(3, 6, 3, padding=1), tnn.BatchNorm2d(6), act)
    x = np.random.default_rng(6).uniform(-2, 2, (4, 3, 7, 7)).astype(np.float32)
    x[0, 0, :3, :3] = 0.0  # exact zeros reach the bounds
    g = np.random.default_rng(7).uniform(-1, 1, (4, 6, 7, 7)).astype(np.float32)
    converted = _aten.convert(model, torch.from_numpy(x))
    converted.train()
    programs = converted.__dict__["_programs"].values()
    assert any(getattr(ins.fn, "keywords", {}).get("activation") for p in programs for ins in p)  # folded
    y = converted(ls.from_numpy(x))
    y.backward(ls.from_numpy(g))
    grads = {n: p.grad.numpy() for n, p in converted.named_parameters()}

    # The same step with lockstep's ops one after another.
    conv, norm = model[0], model[1]
    w, b = ls.from_numpy(conv.weight.detach().numpy()), ls.from_numpy(conv.bias.detach().numpy())
    gamma, beta = ls.from_numpy(norm.weight.detach().numpy()), ls.from_numpy(norm.bias.detach().numpy())
    mean, var = ls.from_numpy(norm.running_mean.numpy().copy()), ls.from_numpy(norm.running_var.numpy().copy())
    for t in (w, b, gamma, beta):
        t.requires_grad = True
    z = ls.nn.functional.conv2d(ls.from_numpy(x), w, b, padding=1)
    z = ls._C.batch_norm(z, mean, var, gamma, beta, True, 0.1, 1e-5)
    z = {tnn.ReLU6: lambda t: ls._C.hardtanh(t, 0.0, 6.0), tnn.ReLU: ls._C.relu, tnn.SiLU: ls._C.silu,
         tnn.Hardtanh: lambda t: ls._C.hardtanh(t, -0.5, 0.25)}[type(act)](z)
    z.backward(ls.from_numpy(g))
    bits = lambda a: np.asarray(a, np.float32).view(np.uint32)
    assert np.array_equal(bits(y.detach().numpy()), bits(z.detach().numpy()))
    for name, want in (("0.weight", w), ("0.bias", b), ("1.weight", gamma), ("1.bias", beta)):
        assert np.array_equal(bits(grads[name]), bits(want.grad.numpy())), name
    state = converted.state_dict()
    assert np.array_equal(bits(state["1.running_mean"].numpy()), bits(mean.numpy()))
    assert np.array_equal(bits(state["1.running_var"].numpy()), bits(var.numpy()))
