"""Modules written the way people write them, through from_torch_module(model) alone (no example
inputs, no route chosen): a Hugging-Face-style GPT-2 (Conv1D layers computed with addmm, heads
split with view/permute, a causal mask applied with torch.where and finfo.min, the tanh GELU
written out with pow, chunk, input_shape unpacking, position ids from arange, tied lm_head) and
a module calling nn.MultiheadAttention on PyTorch's fast path (evaluation, no gradients,
need_weights=False, batch_first), and frozen models whose recording sees PyTorch's fused
attention and encoder-layer kernels.

Each: forward in evaluation mode against PyTorch's float64 within the nanoGPT bound of
test_aten_capture.py (32 u), a batch size other than the first call's, two SGD steps in training
mode (dropout on) whose parameters go back to PyTorch, and the file lockstep.export writes trains
to the same hash natively and in the npm package. lockstep.fit trains a recorded model to one hash.
"""
import copy
import math

import numpy as np
import pytest
import torch
from torch import nn as tnn

import lockstep as ls

from conftest import AGREEMENT, rel_error
from export_helpers import SEED, match_streams, node_train, train_steps

BOUND_U = 32


class Conv1D(tnn.Module):
    """GPT-2's linear layer: weight stored (in, out), applied with addmm."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = tnn.Parameter(torch.randn(nx, nf) * 0.02)
        self.bias = tnn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class NewGELUActivation(tnn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class GPT2Attention(tnn.Module):
    def __init__(self, n_embd, n_head, n_positions, dropout):
        super().__init__()
        self.register_buffer("bias", torch.tril(torch.ones((n_positions, n_positions), dtype=torch.bool)).view(
            1, 1, n_positions, n_positions), persistent=False)
        self.num_heads, self.head_dim, self.embed_dim = n_head, n_embd // n_head, n_embd
        self.c_attn = Conv1D(3 * n_embd, n_embd)
        self.c_proj = Conv1D(n_embd, n_embd)
        self.attn_dropout = tnn.Dropout(dropout)
        self.resid_dropout = tnn.Dropout(dropout)

    def _split_heads(self, tensor):
        new_shape = tensor.size()[:-1] + (self.num_heads, self.head_dim)
        return tensor.view(new_shape).permute(0, 2, 1, 3)

    def _merge_heads(self, tensor):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        return tensor.view(tensor.size()[:-2] + (self.num_heads * self.head_dim,))

    def _attn(self, query, key, value):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / torch.full([], value.size(-1) ** 0.5, dtype=attn_weights.dtype)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length:key_length, :key_length]
        mask_value = torch.full([], torch.finfo(attn_weights.dtype).min, dtype=attn_weights.dtype)
        attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
        attn_weights = tnn.functional.softmax(attn_weights, dim=-1)
        attn_weights = self.attn_dropout(attn_weights)
        return torch.matmul(attn_weights, value)

    def forward(self, hidden_states):
        query, key, value = self.c_attn(hidden_states).split(self.embed_dim, dim=2)
        attn_output = self._attn(self._split_heads(query), self._split_heads(key), self._split_heads(value))
        return self.resid_dropout(self.c_proj(self._merge_heads(attn_output)))


class GPT2MLP(tnn.Module):
    def __init__(self, n_embd, dropout):
        super().__init__()
        self.c_fc = Conv1D(4 * n_embd, n_embd)
        self.c_proj = Conv1D(n_embd, 4 * n_embd)
        self.act = NewGELUActivation()
        self.dropout = tnn.Dropout(dropout)

    def forward(self, hidden_states):
        return self.dropout(self.c_proj(self.act(self.c_fc(hidden_states))))


class GPT2Block(tnn.Module):
    def __init__(self, n_embd, n_head, n_positions, dropout):
        super().__init__()
        self.ln_1 = tnn.LayerNorm(n_embd, eps=1e-5)
        self.attn = GPT2Attention(n_embd, n_head, n_positions, dropout)
        self.ln_2 = tnn.LayerNorm(n_embd, eps=1e-5)
        self.mlp = GPT2MLP(n_embd, dropout)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.attn(self.ln_1(hidden_states)) + residual
        residual = hidden_states
        return residual + self.mlp(self.ln_2(hidden_states))


class GPT2LMHeadModel(tnn.Module):
    def __init__(self, vocab_size=64, n_positions=16, n_embd=32, n_layer=2, n_head=4, dropout=0.1):
        super().__init__()
        self.wte = tnn.Embedding(vocab_size, n_embd)
        self.wpe = tnn.Embedding(n_positions, n_embd)
        self.drop = tnn.Dropout(dropout)
        self.h = tnn.ModuleList([GPT2Block(n_embd, n_head, n_positions, dropout) for _ in range(n_layer)])
        self.ln_f = tnn.LayerNorm(n_embd, eps=1e-5)
        self.lm_head = tnn.Linear(n_embd, vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight  # tied

    def forward(self, input_ids):
        input_shape = input_ids.size()
        input_ids = input_ids.view(-1, input_shape[-1])
        position_ids = torch.arange(0, input_shape[-1], dtype=torch.long).unsqueeze(0)
        hidden_states = self.drop(self.wte(input_ids) + self.wpe(position_ids))
        for block in self.h:
            hidden_states = block(hidden_states)
        hidden_states = self.ln_f(hidden_states)
        return self.lm_head(hidden_states).chunk(1, dim=-1)[0]


class FastPathEncoder(tnn.Module):
    """nn.MultiheadAttention called as on PyTorch's fast path (torch._native_multi_head_attention
    in evaluation under no_grad, need_weights=False, batch_first)."""

    def __init__(self, d=32, heads=4, classes=10):
        super().__init__()
        self.embed = tnn.Linear(8, d)
        self.attn = tnn.MultiheadAttention(d, heads, batch_first=True)  # dropout 0: a fast-path condition
        self.norm = tnn.LayerNorm(d)
        self.head = tnn.Linear(d, classes)

    def forward(self, x):
        h = self.embed(x)
        a, _ = self.attn(h, h, h, need_weights=False)
        return self.head(self.norm(h + a).mean(dim=1))


class FourierFeatureNet(tnn.Module):
    """A NeRF-style Fourier-feature encoding (sin and cos of the inputs at several frequencies, a
    buffer; the angles wrapped into [0, 2 pi) by Python's %) followed by a block that uses every
    other correctly rounded trigonometric and hyperbolic function, as functions and as tensor
    methods, on domains where each is defined, and fmod."""

    def __init__(self, inputs=3, frequencies=4, width=32, classes=10):
        super().__init__()
        self.register_buffer("freqs", torch.exp(torch.arange(frequencies, dtype=torch.float32) * 0.75))
        self.proj = tnn.Linear(2 * inputs * frequencies + inputs, width)
        self.head = tnn.Linear(width, classes)

    def forward(self, x):
        angles = (x.unsqueeze(-1) * self.freqs) % 6.2831855
        feats = torch.cat([torch.sin(angles), angles.cos()], dim=-1).flatten(1)
        h = self.proj(torch.cat([feats, torch.atan(x) + torch.fmod(x, 1.5)], dim=1))
        s = torch.sigmoid(h) - 0.5
        h = torch.asin(s) + 0.1 * torch.acos(s) + torch.atanh(s) + s.tan()
        h = h + torch.asinh(h) + 0.1 * torch.acosh(2.0 + h * h) + torch.sinh(s) + s.cosh()
        return self.head(h)


class Decoder(tnn.Module):
    """A DCGAN-style decoder, written the way such models are: a code projected to a small feature
    map, upsampled by transposed convolutions (stride, padding, output_padding, groups), then a
    classifier head (so that it trains on labels)."""

    def __init__(self, code=8, classes=10):
        super().__init__()
        self.project = tnn.Linear(code, 8 * 2 * 2)
        self.up1 = tnn.ConvTranspose2d(8, 6, 4, stride=2, padding=1)
        self.up2 = tnn.ConvTranspose2d(6, 4, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.head = tnn.Linear(4 * 8 * 8, classes)

    def forward(self, z):
        h = self.project(z).view(-1, 8, 2, 2)
        h = torch.relu(self.up1(h))
        h = torch.tanh(self.up2(h))
        return self.head(h.flatten(1))


class SequenceClassifier(tnn.Module):
    """A sequence classifier written the usual way: an embedding, a two-layer bidirectional LSTM
    (batch_first), a GRU over its outputs, the last step's state into a linear head."""

    def __init__(self, vocab=20, classes=10):
        super().__init__()
        self.embed = tnn.Embedding(vocab, 6)
        self.lstm = tnn.LSTM(6, 5, num_layers=2, batch_first=True, bidirectional=True)
        self.gru = tnn.GRU(10, 4, batch_first=True)
        self.head = tnn.Linear(4, classes)

    def forward(self, tokens):
        out, (h, c) = self.lstm(self.embed(tokens))
        _, h = self.gru(out)
        return self.head(h[-1])


def case(name):
    torch.manual_seed(0)
    g = np.random.default_rng(3)
    if name == "sequence":
        model = SequenceClassifier()
        make = lambda b: torch.from_numpy(g.integers(0, 20, (b, 7)))  # noqa: E731
        return model, make, g.integers(0, 10, 2)
    if name == "decoder":
        model = Decoder()
        make = lambda b: torch.from_numpy(g.standard_normal((b, 8)).astype(np.float32))  # noqa: E731
        return model, make, g.integers(0, 10, 2)
    if name == "fourier":
        model = FourierFeatureNet()
        make = lambda b: torch.from_numpy(g.uniform(-4, 4, (b, 3)).astype(np.float32))  # noqa: E731
        return model, make, g.integers(0, 10, 2)
    if name == "gpt2":
        model = GPT2LMHeadModel()
        make = lambda b: torch.from_numpy(g.integers(0, 64, (b, 16)))  # noqa: E731
        targets = g.integers(0, 64, 2 * 16)
    else:
        model = FastPathEncoder()
        make = lambda b: torch.from_numpy(g.standard_normal((b, 6, 8)).astype(np.float32))  # noqa: E731
        targets = g.integers(0, 10, 2)
    return model, make, targets


def to_ls(x):
    return ls.from_numpy(x.numpy())


def check_forward(name, model, make):
    model.eval()
    converted = ls.from_torch_module(model)  # recorded at the first call
    double = copy.deepcopy(model).double()
    for batch in (2, 3):
        x = make(batch)
        with ls.no_grad():
            ours = converted(to_ls(x)).numpy()
        with torch.no_grad():  # the fast path's conditions, for the float32 reference
            torch32 = model(x).numpy()
            exact = double(x if not x.is_floating_point() else x.double()).numpy()
        err = rel_error(ours, exact)
        AGREEMENT.append("%-15s eval  batch %d lockstep vs float64 %6.2f u, torch float32 vs float64 %6.2f u "
                         "(bound %d u; from_torch_module)" % (name, batch, err, rel_error(torch32, exact), BOUND_U))
        assert err <= BOUND_U, "%s batch %d: %.2f u from float64" % (name, batch, err)


def check_training_and_export(model, make, targets, tmp_path):
    model.train()
    x = make(2)
    converted = ls.from_torch_module(model, seed=SEED)
    with ls.no_grad():
        converted(to_ls(x))  # the first call records the training program
    fresh = ls.from_torch_module(model, seed=SEED, example_inputs=(x,))
    path = tmp_path / "model.onnx"
    ls.export(fresh, str(path))
    match_streams(fresh, SEED)
    before = {k: t.detach().numpy().copy() for k, t in fresh.named_parameters()}
    train_steps(fresh, to_ls(x), targets)
    state = ls.to_torch_state_dict(fresh)
    assert any(not np.array_equal(before[k], state[k].numpy()) for k in before)
    model.load_state_dict(state, strict=True)
    loaded = ls.onnx.load(str(path), seed=SEED)
    train_steps(loaded, to_ls(x), targets)
    assert node_train(tmp_path, path, x, targets) == loaded.hash()


def test_hugging_face_style_gpt2(tmp_path):
    model, make, targets = case("gpt2")
    check_forward("hf-gpt2", model, make)
    check_training_and_export(model, make, targets, tmp_path)
    # tied: one parameter under its first name, both names in the state dict
    converted = ls.from_torch_module(model, example_inputs=(make(2),))
    assert "lm_head.weight" in converted.state_dict() and "wte.weight" in converted.state_dict()
    assert len(list(converted.parameters())) == len(list(model.parameters()))


def test_multihead_attention_on_the_fast_path(tmp_path):
    model, make, targets = case("fastpath")
    check_forward("mha-fastpath", model, make)
    check_training_and_export(model, make, targets, tmp_path)


def test_fourier_features_with_every_trigonometric_function(tmp_path):
    """torch.sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh and atanh (functions and
    methods), torch.fmod and Python's % convert to lockstep's ops, train, and export as ONNX's Sin,
    Cos, ..., Mod to a file the npm package trains to the same hash."""
    model, make, targets = case("fourier")
    check_forward("fourier", model, make)
    check_training_and_export(model, make, targets, tmp_path)


def test_decoder_with_transposed_convolutions(tmp_path):
    """nn.ConvTranspose2d (stride, padding, output_padding, groups) converts to lockstep's transposed
    convolution, trains, and exports as ONNX's ConvTranspose to a file the npm package trains to the
    same hash."""
    model, make, targets = case("decoder")
    check_forward("decoder", model, make)
    check_training_and_export(model, make, targets, tmp_path)


def test_sequence_classifier_with_lstm_and_gru(tmp_path):
    """nn.LSTM (two layers, bidirectional, batch_first) and nn.GRU in a forward of the user's own
    convert (the aten route: PyTorch's cells as recorded), train, and export to a file the npm
    package trains to the same hash."""
    model, make, targets = case("sequence")
    check_forward("sequence", model, make)
    check_training_and_export(model, make, targets, tmp_path)


class EncoderLayerUser(tnn.Module):
    def __init__(self):
        super().__init__()
        self.layer = tnn.TransformerEncoderLayer(32, 4, 64, batch_first=True, activation="gelu")

    def forward(self, x):
        batch, steps, _ = x.size()  # torch.fx cannot read this: the aten route records it
        return self.layer(x).sum(dim=1) / steps


@pytest.mark.parametrize("name", ["fastpath", "encoder-layer"])
def test_frozen_weights_record_the_fused_kernels_as_the_ordinary_path(name):
    """Frozen weights: PyTorch's fused kernels (torch._native_multi_head_attention,
    torch._transformer_encoder_layer_fwd) are what make_fx sees; they are recorded as the ops of
    the ordinary path, so the frozen model computes the trainable one's bits."""
    if name == "fastpath":
        model, make, _ = case(name)
    else:
        torch.manual_seed(0)
        model = EncoderLayerUser()
        make = lambda b: torch.randn(b, 6, 32)  # noqa: E731
    model.eval()
    x = make(2)
    trainable = ls.from_torch_module(copy.deepcopy(model), example_inputs=(x,))
    frozen_model = copy.deepcopy(model).requires_grad_(False)
    frozen = ls.from_torch_module(frozen_model, example_inputs=(x,))
    ops = {ins.op for ins in frozen.__dict__["_programs"][False]}
    assert not any("native_multi_head" in op or "encoder_layer" in op for op in ops), ops
    with ls.no_grad():
        a, b = trainable(to_ls(x)).numpy(), frozen(to_ls(x)).numpy()
    assert np.array_equal(a, b)
    with torch.no_grad():
        assert rel_error(b, frozen_model.double()(x.double()).numpy()) <= BOUND_U


def test_fit_trains_a_recorded_model_to_one_hash():
    """lockstep.fit on a model recorded through the aten route (a Python forward the trainer
    calls): finite losses, moved parameters, and the same hash from the same conversion and seed."""
    model, make, _ = case("fastpath")
    model.train()
    g = np.random.default_rng(5)
    data = ls.data.from_numpy(g.standard_normal((12, 6, 8)).astype(np.float32), g.integers(0, 10, 12))
    hashes = []
    for _ in range(2):
        converted = ls.from_torch_module(model, seed=SEED)
        before = converted.hash()
        result = ls.fit(converted, ls.optim.Adam(converted.parameters(), lr=1e-3), data, epochs=2, batch_size=4,
                        seed=3)
        assert result.steps == 6 and all(np.isfinite(result.losses))
        assert converted.hash() != before
        hashes.append(converted.hash())
    assert hashes[0] == hashes[1]
