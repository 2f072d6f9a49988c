"""nn.RNN, nn.LSTM and nn.GRU: PyTorch's parameter names, shapes and return values, outputs and
gradients within a few float32 roundings of PyTorch's for every configuration (layers, directions,
batch_first, unbatched input, initial states), converted from torch.nn modules with their weights,
and argument checks."""
import numpy as np
import pytest

import lockstep as ls
from lockstep import nn

torch = pytest.importorskip("torch")

CONFIGS = [
    dict(),
    dict(num_layers=2),
    dict(bidirectional=True),
    dict(num_layers=2, batch_first=True, bidirectional=True),
    dict(bias=False),
]


def outputs(result):
    """(output, h_n[, c_n]) from either library's return value."""
    out, state = result
    return [out] + (list(state) if isinstance(state, tuple) else [state])


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("config", CONFIGS, ids=str)
def test_against_torch_outputs_states_and_gradients(kind, config):
    torch.manual_seed(0)
    t = getattr(torch.nn, kind)(5, 4, **config)
    ours = ls.from_torch_module(t)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in t.named_parameters()]
    x = np.random.default_rng(1).standard_normal((3, 2, 5) if not config.get("batch_first") else (2, 3, 5))
    x = x.astype(np.float32)
    dirs = 2 if config.get("bidirectional") else 1
    h0 = np.random.default_rng(2).standard_normal((config.get("num_layers", 1) * dirs, 2, 4)).astype(np.float32)
    state_t = (torch.tensor(h0), torch.tensor(h0 * 0.5)) if kind == "LSTM" else torch.tensor(h0)
    state_l = (ls.tensor(h0), ls.tensor(h0 * 0.5)) if kind == "LSTM" else ls.tensor(h0)
    xt, xl = torch.tensor(x, requires_grad=True), ls.tensor(x, requires_grad=True)
    got, want = outputs(ours(xl, state_l)), outputs(t(xt, state_t))
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert tuple(a.shape) == tuple(b.shape)
        assert np.allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=2e-6)
    w = np.random.default_rng(3).standard_normal(tuple(want[0].shape)).astype(np.float32)
    (got[0] * ls.tensor(w)).sum().backward()
    (want[0] * torch.tensor(w)).sum().backward()
    assert np.allclose(xl.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)
    for (name, p), (_, q) in zip(ours.named_parameters(), t.named_parameters()):
        assert np.allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-5), name


def test_unbatched_input_and_default_state():
    torch.manual_seed(0)
    t = torch.nn.GRU(3, 2)
    ours = ls.from_torch_module(t)
    x = np.random.default_rng(4).standard_normal((5, 3)).astype(np.float32)
    out, h = ours(ls.tensor(x))
    out_t, h_t = t(torch.tensor(x))
    assert tuple(out.shape) == (5, 2) and tuple(h.shape) == (1, 2)
    assert np.allclose(out.detach().numpy(), out_t.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_modules_have_pytorchs_names_and_refuse_what_they_do_not_compute():
    m = nn.LSTM(5, 7, num_layers=2, bidirectional=True, generator=ls.Generator(1, "init"))
    names = [n for n, _ in m.named_parameters()]
    assert names[:4] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]
    assert "weight_ih_l1_reverse" in names and tuple(m.weight_ih_l1.shape) == (28, 14)
    bound = 1 / np.sqrt(7)  # PyTorch's initialisation: U(-1/sqrt(hidden), 1/sqrt(hidden))
    assert all(np.abs(p.detach().numpy()).max() <= bound for _, p in m.named_parameters())
    assert (m.input_size, m.hidden_size, m.num_layers, m.bidirectional) == (5, 7, 2, True)
    with pytest.raises(ls.ArgumentError, match="dropout"):
        nn.GRU(3, 4, dropout=0.5)
    with pytest.raises(ls.ArgumentError, match="proj_size"):
        nn.LSTM(3, 4, proj_size=2)
    with pytest.raises(ls.ArgumentError, match="nonlinearity"):
        nn.RNN(3, 4, nonlinearity="gelu")
    with pytest.raises(ls.ArgumentError, match="features"):
        nn.RNN(3, 4)(ls.zeros(2, 1, 5))


# sha256 of a fixed LSTM's output, states and input gradient; the npm test
# (bindings/wasm/test/recurrent.test.mjs) pins the same value.
DIGEST = "2edf28e250510b3a21431f29499d3a4db17bc798c9c049aa79428488f38f1745"


def fixed(shape, a, b, c, d):
    n = int(np.prod(shape))
    return ((((np.arange(n) * a) % b) - c) / d).astype(np.float32).reshape(shape)


def test_fixed_digest_that_the_npm_package_reproduces():
    import hashlib
    m = nn.LSTM(5, 4, num_layers=2, batch_first=True, bidirectional=True, generator=ls.Generator(7, "init"))
    x = ls.tensor(fixed((2, 3, 5), 37, 113, 56, 32), requires_grad=True)
    out, (h, c) = m(x)
    (out * ls.tensor(fixed(tuple(out.shape), 11, 7, 3, 4))).sum().backward()
    parts = [t.detach().numpy().tobytes() for t in (out, h, c)] + [x.grad.numpy().tobytes()]
    digest = hashlib.sha256(b"".join(parts)).hexdigest()
    print("recurrent digest", digest)
    assert digest == DIGEST
