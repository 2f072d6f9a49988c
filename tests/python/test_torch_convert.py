"""lockstep.from_torch_module on three models of Debian's PyTorch: LeNet-5, an MLP with BatchNorm and
Dropout, and a 2-layer transformer encoder (TransformerEncoderLayer, batch_first, d_model 32, 4 heads).

Forward outputs are judged against PyTorch in float64 (a stand-in for the exact result: the verdict
does not depend on which float32 kernels torch picks on this CPU, tests/reference/torch_layers.py);
torch's float32 error is reported beside lockstep's. The metric is max |a - b| / max |b| in units of
u = 2^-24. Bounds (about 4x the largest value measured, as in torch_layers.py):

- lenet 16 u: two convolutions (K = 25, 150) and three Linear layers (K = 400, 120, 84) in a row;
  each dot product is within gamma_K of exact, typically ~sqrt(K) u. Measured 3.7 u (torch 5.4 u).
- mlp 16 u: Linear (K = 64), BatchNorm (batch statistics in training, running ones in evaluation,
  rsqrt correctly rounded), Linear (K = 32). Measured 3.4 u (torch 2.9 u).
- encoder 32 u: per layer an input projection, q k^T (K = 8), softmax, att v (K = 6), out_proj,
  two LayerNorms and a feed-forward block, twice, then Linear (K = 192). Measured 4.8 u (torch 7.8 u).

Training: a few Adam steps with dropout on give one hash for the converted model, the same model
built with lockstep.nn, and the same model built with the C++ API (tests/python/torch_models.cc)
natively and in WebAssembly, all from the initial checkpoint Python wrote.
"""
import copy
import os
import subprocess

import numpy as np
import pytest
import torch
from torch import nn as tnn

import lockstep as ls
from lockstep import nn

from conftest import BUILD, U, rel_error, AGREEMENT

BOUNDS = {"lenet": 16, "mlp": 16, "encoder": 32}
SHAPES = {"lenet": (1, 28, 28), "mlp": (1, 8, 8), "encoder": (6, 8)}
NATIVE = os.path.join(BUILD, "native", "tests", "python", "lockstep_py_models")
WASM = os.environ.get("LOCKSTEP_WASM_MODELS", os.path.join(BUILD, "wasm-simd", "tests", "python",
                                                           "lockstep_py_models.js"))


def torch_model(name):
    torch.manual_seed(0)
    if name == "lenet":
        return tnn.Sequential(tnn.Conv2d(1, 6, 5, padding=2), tnn.ReLU(), tnn.MaxPool2d(2), tnn.Conv2d(6, 16, 5),
                              tnn.ReLU(), tnn.MaxPool2d(2), tnn.Flatten(), tnn.Linear(400, 120), tnn.ReLU(),
                              tnn.Linear(120, 84), tnn.ReLU(), tnn.Linear(84, 10))
    if name == "mlp":
        return tnn.Sequential(tnn.Flatten(), tnn.Linear(64, 32), tnn.BatchNorm1d(32), tnn.ReLU(), tnn.Dropout(0.2),
                              tnn.Linear(32, 10))
    layer = tnn.TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=0.1, batch_first=True)
    return tnn.Sequential(tnn.Linear(8, 32), tnn.TransformerEncoder(layer, 2), tnn.Flatten(), tnn.Linear(6 * 32, 10))


def lockstep_model(name):
    """The same architecture with lockstep's own API (initial values to be loaded)."""
    if name == "lenet":
        return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84),
                             nn.ReLU(), nn.Linear(84, 10))
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.2),
                             nn.Linear(32, 10))
    layer = nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=0.1, batch_first=True)
    return nn.Sequential(nn.Linear(8, 32), nn.TransformerEncoder(layer, 2), nn.Flatten(), nn.Linear(6 * 32, 10))


def without_dropout(model):
    """A copy with every dropout rate 0: training-mode outputs then depend on no random draw."""
    model = copy.deepcopy(model)
    for m in model.modules():
        if isinstance(m, tnn.Dropout):
            m.p = 0.0
        if isinstance(m, tnn.MultiheadAttention):
            m.dropout = 0.0
    return model


@pytest.mark.parametrize("mode", ["eval", "train"])
@pytest.mark.parametrize("name", ["lenet", "mlp", "encoder"])
def test_forward_within_bounds_of_float64(name, mode):
    model = without_dropout(torch_model(name)).train(mode == "train")
    converted = ls.from_torch_module(model)
    assert converted.training == (mode == "train")
    x = np.random.RandomState(1).randn(8, *SHAPES[name]).astype(np.float32)
    with torch.no_grad():
        exact = copy.deepcopy(model).double()(torch.from_numpy(x).double()).numpy()
        torch32 = model(torch.from_numpy(x)).numpy()
    ours = converted(ls.from_numpy(x)).detach().numpy()
    err, torch_err = rel_error(ours, exact), rel_error(torch32, exact)
    AGREEMENT.append("%-7s %-5s lockstep vs float64 %5.2f u, torch float32 vs float64 %5.2f u (bound %d u)"
                     % (name, mode, err, torch_err, BOUNDS[name]))
    assert err <= BOUNDS[name], "%s %s: %.2f u from float64 (bound %d u; torch float32: %.2f u)" % (
        name, mode, err, BOUNDS[name], torch_err)


def run_program(command, name, tmp, seed, steps, batch):
    args = ["--model", name, "--init", str(tmp / "init.safetensors"), "--data", str(tmp / "data.safetensors"),
            "--steps", str(steps), "--batch", str(batch), "--seed", str(seed), "--lr", "0.001"]
    out = subprocess.run(command + args, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()[1]


@pytest.mark.parametrize("name", ["lenet", "mlp", "encoder"])
def test_training_hash_is_the_same_everywhere(name, tmp_path):
    for program in (NATIVE, WASM):
        assert os.path.exists(program), "%s is missing (tests/python/run.sh builds it)" % program
    seed, steps, batch = 7, 4, 16
    rng = np.random.RandomState(3)
    x = rng.randn(64, *SHAPES[name]).astype(np.float32)
    y = rng.randint(0, 10, 64).astype(np.int64)
    ls.save_safetensors({"inputs": ls.from_numpy(x), "labels": ls.from_numpy(y)}, tmp_path / "data.safetensors")
    data = ls.data.from_numpy(x, y)

    converted = ls.from_torch_module(torch_model(name), seed=seed)
    ls.save(converted, tmp_path / "init.safetensors")
    ls.fit(converted, ls.optim.Adam(converted.parameters(), lr=1e-3), data, epochs=1, batch_size=batch, seed=seed,
           max_steps=steps)

    own = lockstep_model(name)
    ls.load(tmp_path / "init.safetensors", own)
    nn.seed_dropout_streams(own, seed)
    ls.fit(own, ls.optim.Adam(own.named_parameters(), lr=1e-3), data, batch_size=batch, seed=seed, max_steps=steps)

    native = run_program([NATIVE], name, tmp_path, seed, steps, batch)
    wasm = run_program(["node", WASM], name, tmp_path, seed, steps, batch)
    assert converted.hash() == own.hash() == native == wasm
    assert converted.hash() != ls.hash(tmp_path / "init.safetensors")  # it trained


def test_dropout_masks_follow_the_path_rule():
    model = ls.from_torch_module(tnn.Sequential(tnn.Linear(4, 4), tnn.Dropout(0.5)), seed=11)
    g = model[1].generator
    assert (g.seed, g.stream, g.offset) == (11, ls.Generator(11, "dropout/1").stream, 0)
    enc = ls.from_torch_module(torch_model("encoder"), seed=11)
    assert enc[1].layers[1].self_attn.dropout.generator.stream == \
        ls.Generator(11, "dropout/1.layers.1.self_attn.dropout").stream


def test_unsupported_modules_are_named():
    class Custom(tnn.Module):
        def forward(self, x):
            return torch.lgamma(x)

    class Branchy(tnn.Module):
        def forward(self, x):
            return x if x.sum() > 0 else -x  # data-dependent control flow: fx cannot trace it

    # What neither route computes is refused at the first call (the aten route records the forward
    # then), or at conversion with example_inputs, naming the module's path and class and the op.
    refused = [(tnn.Sequential(tnn.Linear(2, 2), tnn.LogSigmoid()), (3, 2), "'1' (LogSigmoid)", "aten.log_sigmoid_forward"),
               (tnn.Sequential(tnn.Sequential(Custom())), (3, 2), "'0.0' (Custom)", "aten.lgamma"),
               (tnn.Sequential(Branchy()), (3, 2), "'0' (Branchy)", "branches on or reads tensor values")]
    for model, shape, where, what in refused:
        x = torch.randn(*shape)
        converted = ls.from_torch_module(model)
        with pytest.raises(ls.ArgumentError) as info:
            converted(ls.from_numpy(x.numpy()))
        assert where in str(info.value) and what in str(info.value), str(info.value)
        with pytest.raises(ls.ArgumentError) as info:
            ls.from_torch_module(model, example_inputs=x)
        assert where in str(info.value) and what in str(info.value), str(info.value)
    # What the module route refuses and the aten route computes.
    taken = [(tnn.Sequential(tnn.Conv2d(1, 1, (3, 5))), (2, 1, 8, 8)),
             (tnn.Sequential(tnn.BatchNorm1d(3, affine=False)), (4, 3)),
             (tnn.TransformerEncoderLayer(8, 2, activation=torch.tanh), (3, 2, 8)),
             (tnn.Sequential(tnn.MaxPool2d(2, ceil_mode=True)), (2, 1, 5, 5))]
    for model, shape in taken:
        model.eval()
        x = torch.randn(*shape)
        converted = ls.from_torch_module(model)
        with ls.no_grad():
            ours = converted(ls.from_numpy(x.numpy())).numpy()
        with torch.no_grad():
            want = model(x).numpy()
        assert ours.shape == want.shape
        assert np.abs(ours - want).max() <= 64 * U * max(1.0, np.abs(want).max()), type(model).__name__
    with pytest.raises(ls.ArgumentError, match="float32"):
        ls.from_torch_module(tnn.Linear(2, 2).double())
    with pytest.raises(TypeError):
        ls.from_torch_module(object())


class LeNetClass(tnn.Module):
    """LeNet-5 as PyTorch users write it: a class with a forward of its own (read by torch.fx)."""

    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = tnn.Conv2d(1, 6, 5, padding=2), tnn.Conv2d(6, 16, 5)
        self.fc1, self.fc2, self.fc3 = tnn.Linear(400, 120), tnn.Linear(120, 84), tnn.Linear(84, 10)
        self.temperature = tnn.Parameter(torch.ones(10))

    def forward(self, x):
        x = tnn.functional.max_pool2d(tnn.functional.relu(self.conv1(x)), 2)
        x = tnn.functional.max_pool2d(torch.relu(self.conv2(x)), (2, 2))
        x = x.view(x.size(0), -1)
        x = tnn.functional.dropout(tnn.functional.relu(self.fc1(x)), 0.1, training=self.training)
        return self.fc3(tnn.functional.relu(self.fc2(x))) * self.temperature


def test_module_with_its_own_forward():
    torch.manual_seed(0)
    source = LeNetClass()
    model = ls.from_torch_module(source, seed=3)
    assert [n for n, _ in model.named_parameters()] == [n for n, _ in source.named_parameters()]
    assert model.fx_dropout.generator.stream == ls.Generator(3, "dropout/fx_dropout").stream
    x = np.random.RandomState(2).randn(8, 1, 28, 28).astype(np.float32)
    source.eval(), model.eval()
    with torch.no_grad():
        exact = copy.deepcopy(source).double()(torch.from_numpy(x).double()).numpy()
    err = rel_error(model(ls.from_numpy(x)).detach().numpy(), exact)
    AGREEMENT.append("%-7s %-5s lockstep vs float64 %5.2f u (bound %d u)" % ("class", "eval", err, BOUNDS["lenet"]))
    assert err <= BOUNDS["lenet"]
    model.train()
    data = ls.data.from_numpy(x, np.arange(8) % 10)
    ls.fit(model, ls.optim.Adam(model.parameters()), data, batch_size=4, max_steps=2)
    assert model.temperature.grad is not None


def test_state_dict_round_trip():
    source = torch_model("mlp")
    model = ls.from_torch_module(source)
    x = ls.randn(16, 1, 8, 8)
    ls.fit(model, ls.optim.SGD(model.parameters(), lr=0.1), ls.data.from_tensors(x, ls.tensor(np.arange(16) % 10)),
           batch_size=8, max_steps=2)
    back = copy.deepcopy(source)
    back.load_state_dict(ls.to_torch_state_dict(model))
    for name, t in back.state_dict().items():
        assert np.array_equal(t.numpy(), model.state_dict()[name].numpy()), name
    again = ls.from_torch_module(back)
    assert again.hash() == model.hash()


@pytest.mark.parametrize("batch_first", [False, True])
def test_attention_masks_and_options_agree_with_torch(batch_first):
    """Masks (boolean and additive, attn_mask and key_padding_mask), cross-attention, unaveraged
    weights, norm_first and GELU, against torch in float64 (the encoder's bound)."""
    torch.manual_seed(1)
    mha = tnn.MultiheadAttention(16, 4, batch_first=batch_first).eval()
    ours = ls.from_torch_module(mha)
    rng = np.random.RandomState(5)
    shape = (lambda n, l: (n, l, 16)) if batch_first else (lambda n, l: (l, n, 16))
    q, kv = rng.randn(*shape(2, 3)).astype(np.float32), rng.randn(*shape(2, 5)).astype(np.float32)
    causal = np.triu(np.ones((3, 5), bool), 1)
    additive = rng.randn(3, 5).astype(np.float32)
    padding = np.zeros((2, 5), bool)
    padding[1, 4] = True
    double = copy.deepcopy(mha).double()
    for attn_mask, average in [(causal, True), (additive, False)]:
        with torch.no_grad():
            exact_out, exact_w = double(torch.from_numpy(q).double(), torch.from_numpy(kv).double(),
                                        torch.from_numpy(kv).double(), key_padding_mask=torch.from_numpy(padding),
                                        attn_mask=torch.from_numpy(attn_mask).double() if attn_mask.dtype != bool
                                        else torch.from_numpy(attn_mask), average_attn_weights=average)
        out, w = ours(ls.from_numpy(q), ls.from_numpy(kv), ls.from_numpy(kv), key_padding_mask=padding,
                      attn_mask=attn_mask, average_attn_weights=average)
        assert rel_error(out.detach().numpy(), exact_out.numpy()) <= BOUNDS["encoder"]
        assert rel_error(w.detach().numpy(), exact_w.numpy()) <= BOUNDS["encoder"]
    layer = tnn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, activation="gelu", batch_first=batch_first,
                                        norm_first=True)
    converted = ls.from_torch_module(layer)
    with torch.no_grad():
        exact = copy.deepcopy(layer).double()(torch.from_numpy(kv).double(),
                                              src_key_padding_mask=torch.from_numpy(padding)).numpy()
    got = converted(ls.from_numpy(kv), src_key_padding_mask=padding).detach().numpy()
    assert rel_error(got, exact) <= BOUNDS["encoder"]
