"""Modules from Python: PyTorch's parameter names and signatures, modules written in Python,
deterministic initialisation, dropout streams, checkpoints and hashes, traces."""
import os

import numpy as np
import pytest

import lockstep as ls
from lockstep import nn
from lockstep.nn import functional as F


def lenet():
    return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                         nn.Linear(84, 10))


class Net(nn.Module):
    """A model written in Python: its forward runs when the engine calls it."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(8, 16), nn.GELU())
        self.scale = nn.Parameter(ls.ones(16))
        self.register_buffer("shift", ls.zeros(16))
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.features(x) * self.scale + self.shift)


def test_parameter_names_are_pytorchs():
    names = [n for n, _ in lenet().named_parameters()]
    assert names == ["0.weight", "0.bias", "3.weight", "3.bias", "7.weight", "7.bias", "9.weight", "9.bias",
                     "11.weight", "11.bias"]
    bn = nn.BatchNorm2d(4)
    assert sorted(bn.state_dict()) == ["bias", "num_batches_tracked", "running_mean", "running_var", "weight"]
    layer = nn.TransformerEncoderLayer(16, 4, 32, batch_first=True)
    assert [n for n, _ in layer.named_parameters()][:4] == ["self_attn.in_proj_weight", "self_attn.in_proj_bias",
                                                            "self_attn.out_proj.weight", "self_attn.out_proj.bias"]
    assert layer.self_attn.in_proj_weight.shape == (48, 16) and isinstance(layer.norm2, nn.LayerNorm)


def test_python_module_registers_and_runs_inside_the_engine():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["scale", "features.0.weight", "features.0.bias", "head.weight",
                                                      "head.bias"]
    assert sorted(net.state_dict()) == ["features.0.bias", "features.0.weight", "head.bias", "head.weight", "scale",
                                        "shift"]
    seq = nn.Sequential(Net(), nn.ReLU())  # the engine's Sequential calls the Python forward
    x = ls.randn(5, 8)
    direct = seq[1](seq[0](x)).detach().numpy().copy()
    del net
    assert np.array_equal(seq(x).detach().numpy(), direct)
    loss = seq(x).sum()
    loss.backward()
    assert seq[0].scale.grad.shape == (16,)
    assert "Net(" in repr(seq) and "(features): Sequential(" in repr(seq)


def test_initialisation_is_a_function_of_the_seed():
    ls.manual_seed(2)
    a = lenet()
    ls.manual_seed(2)
    b = lenet()
    assert a.hash() == b.hash()
    assert a.hash() == "6e81662d18be056c8ceae58f214a85418520a7f5550563ba17e9c0a3fdd80111"  # MakeLeNet5(2)
    c = nn.Linear(3, 2, generator=ls.Generator(9, "init"))
    d = nn.Linear(3, 2, generator=ls.Generator(9, "init"))
    assert c.hash() == d.hash()


def test_default_dropout_streams_and_the_path_rule():
    x = ls.ones(1000)

    def masks(model):
        return (model(x).detach().numpy() == 0).copy()

    ls.manual_seed(4)
    first, second = nn.Dropout(0.5), nn.Dropout(0.5)  # streams "dropout/0" and "dropout/1"
    ls.manual_seed(4)
    again = nn.Dropout(0.5)
    assert np.array_equal(masks(first), masks(again)) and not np.array_equal(masks(first), masks(second))
    ls.manual_seed(4)
    assert np.array_equal(masks(nn.Dropout(0.5)), masks(nn.Dropout(0.5, generator=ls.Generator(4, "dropout/0"))))
    model = nn.Sequential(nn.Identity(), nn.Dropout(0.5))
    nn.seed_dropout_streams(model, 4)
    assert model[1].generator.stream == ls.Generator(4, "dropout/1").stream and model[1].generator.offset == 0
    assert np.array_equal(masks(model), masks(nn.Dropout(0.5, generator=ls.Generator(4, "dropout/1"))))
    model.eval()
    assert model(x).tolist() == x.tolist()


def test_save_load_and_hash(tmp_path):
    ls.manual_seed(1)
    model = Net()
    path = tmp_path / "net.safetensors"
    digest = ls.save(model, path)
    assert digest == model.hash() == ls.hash(path) == ls.sha256(path.read_bytes()) == ls.hash(ls.encode(model))
    other = Net()
    assert other.hash() != digest
    ls.load(path, other)
    assert other.hash() == digest
    state = ls.load(path)
    assert list(state) == sorted(model.state_dict()) and state["scale"].tolist() == [1.0] * 16
    third = Net()
    third.load_state_dict(state)
    assert third.hash() == digest
    assert ls.load_bytes(Net(), ls.encode(model)).hash() == digest
    with pytest.raises(ls.FormatError, match="has no tensor named"):
        nn.Linear(8, 16).load_state_dict({"weight": ls.zeros(16, 8)})
    with pytest.raises(ls.IoError):
        ls.load(tmp_path / "missing.safetensors")


def test_functional_matches_modules():
    ls.manual_seed(3)
    x = ls.randn(2, 3, 9, 9)
    conv = nn.Conv2d(3, 4, 3, stride=2, padding=1, dilation=1, groups=1)
    assert np.array_equal(conv(x).detach().numpy(), F.conv2d(x, conv.weight, conv.bias, 2, 1).detach().numpy())
    same = nn.Conv2d(3, 3, 3, padding="same", groups=3)
    assert same(x).shape == x.shape and same.padding == (1, 1) and same.groups == 3
    pool = nn.MaxPool2d(3, stride=2, padding=1)
    assert np.array_equal(pool(x).numpy(), F.max_pool2d(x, 3, 2, 1).numpy())
    ln = nn.LayerNorm(9)
    assert np.array_equal(ln(x).detach().numpy(), F.layer_norm(x, 9, ln.weight, ln.bias).detach().numpy())
    logits, target = ls.randn(4, 5), ls.tensor([0, 4, 2, 1])
    assert F.cross_entropy(logits, target).item() == pytest.approx(
        F.nll_loss(F.log_softmax(logits, 1), target).item(), abs=1e-6)


def test_attention_module_api():
    ls.manual_seed(5)
    mha = nn.MultiheadAttention(16, 4, batch_first=True)
    q, kv = ls.randn(2, 3, 16), ls.randn(2, 5, 16)
    out, weights = mha(q, kv, kv)
    assert out.shape == (2, 3, 16) and weights.shape == (2, 3, 5)
    assert weights.sum(2).detach().numpy() == pytest.approx(np.ones((2, 3)), abs=1e-6)
    causal = np.triu(np.ones((3, 3), dtype=bool), 1)
    _, w = mha(q, q, q, attn_mask=causal, need_weights=True)
    assert (w.detach().numpy()[:, causal] == 0).all()
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 4, 32, batch_first=True), 2)
    assert [n for n, _ in encoder.named_parameters()][0] == "layers.0.self_attn.in_proj_weight"
    assert encoder.layers[0].state_dict()["linear1.weight"].tolist() == \
        encoder.layers[1].state_dict()["linear1.weight"].tolist()  # copies, as PyTorch
    padding = np.array([[False] * 4 + [True], [False] * 5])
    assert encoder(kv, src_key_padding_mask=padding).shape == (2, 5, 16)


def test_trace_records_modules_by_name(tmp_path):
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    with ls.trace(model) as t:
        model(ls.ones(2, 4))
    lines = t.bytes().decode().splitlines()
    assert '"module":"0"' in t.bytes().decode() and t.records == len(lines) - 2
    path = tmp_path / "run.trace"
    with ls.trace(model, path=path):
        model(ls.ones(2, 4))
    assert os.path.getsize(path) > 0
