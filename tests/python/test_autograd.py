"""Autograd from Python: gradients against their closed forms, accumulation, PyTorch's rules for
freed graphs, leaves and no_grad."""
import numpy as np
import pytest

import lockstep as ls


def test_gradients_match_closed_forms():
    x = ls.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
    w = ls.tensor([0.5, -1.0], requires_grad=True)
    loss = ((x * w).relu().sum() + (x ** 2).mean())
    loss.backward()
    xv, wv = x.detach().numpy(), w.detach().numpy()
    mask = (xv * wv > 0).astype(np.float32)
    assert np.allclose(x.grad.numpy(), mask * wv + xv / 2, rtol=0, atol=1e-6)
    assert np.allclose(w.grad.numpy(), (mask * xv).sum(0), rtol=0, atol=1e-6)
    assert x.is_leaf and not loss.is_leaf and loss.grad_fn is not None and x.grad_fn is None


def test_gradients_accumulate_until_cleared():
    w = ls.ones(3, requires_grad=True)
    for _ in range(2):
        (w * 2).sum().backward()
    assert w.grad.tolist() == [4, 4, 4]
    w.grad = None
    (w * 3).sum().backward()
    assert w.grad.tolist() == [3, 3, 3]


def test_second_backward_needs_retain_graph():
    w = ls.ones(2, requires_grad=True)
    y = (w * w).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert w.grad.tolist() == [4, 4]
    with pytest.raises(ls.StateError, match="retain_graph"):
        y.backward()
    assert w.grad.tolist() == [4, 4]  # unchanged by the refused call


def test_no_grad_and_detach():
    w = ls.ones(2, requires_grad=True)
    with ls.no_grad():
        assert not ls.is_grad_enabled()
        y = w * 2
    assert ls.is_grad_enabled() and not y.requires_grad
    assert not w.detach().requires_grad

    @ls.no_grad()
    def double(t):
        return t * 2
    assert not double(w).requires_grad
    with pytest.raises(ls.ArgumentError, match="leaf"):
        (w * 2).requires_grad = False
    with pytest.raises(ls.StateError, match="detach"):
        w.numpy()


def test_backward_with_explicit_gradient():
    x = ls.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).backward(ls.tensor([1.0, 0.0, -1.0]))
    assert x.grad.tolist() == [2.0, 0.0, -6.0]


TRIG = {  # name: (domain, float64 value, float64 derivative)
    "sin": ((-20, 20), np.sin, np.cos), "cos": ((-20, 20), np.cos, lambda x: -np.sin(x)),
    "tan": ((-1.5, 1.5), np.tan, lambda x: 1 + np.tan(x) ** 2),
    "asin": ((-0.99, 0.99), np.arcsin, lambda x: 1 / np.sqrt(1 - x * x)),
    "acos": ((-0.99, 0.99), np.arccos, lambda x: -1 / np.sqrt(1 - x * x)),
    "atan": ((-50, 50), np.arctan, lambda x: 1 / (1 + x * x)),
    "sinh": ((-20, 20), np.sinh, np.cosh), "cosh": ((-20, 20), np.cosh, np.sinh),
    "asinh": ((-50, 50), np.arcsinh, lambda x: 1 / np.sqrt(x * x + 1)),
    "acosh": ((1.01, 50), np.arccosh, lambda x: 1 / np.sqrt(x * x - 1)),
    "atanh": ((-0.99, 0.99), np.arctanh, lambda x: 1 / (1 - x * x)),
}


@pytest.mark.parametrize("name", sorted(TRIG))
def test_trigonometric_functions_are_correctly_rounded_and_differentiable(name):
    """Each value is the float32 nearest the exact one: within half an ulp of float64 numpy (whose
    own error is ~1e-16, far below), as a function and as a tensor method; the gradient follows
    PyTorch's formula to a few float32 ulps."""
    (lo, hi), value, derivative = TRIG[name]
    xs = np.random.default_rng(7).uniform(lo, hi, 1000).astype(np.float32)
    x = ls.tensor(xs, requires_grad=True)
    y = getattr(ls, name)(x)
    got = y.detach().numpy()
    assert np.array_equal(got, getattr(x, name)().detach().numpy())
    exact = value(xs.astype(np.float64))
    ulp = np.spacing(np.abs(got).astype(np.float32)).astype(np.float64)
    assert np.all(np.abs(got - exact) <= ulp / 2 * (1 + 1e-6)), name
    y.sum().backward()
    want = derivative(xs.astype(np.float64))
    assert np.allclose(x.grad.numpy(), want, rtol=1e-5, atol=1e-6), name


def test_fmod_and_remainder_match_numpy_bit_for_bit_and_differentiate():
    """fmod is exact (numpy's float32 fmod, bit for bit, signed zeros too); remainder is Python's %
    (numpy's float32 remainder); a number operand and the % operator work; the gradients are
    PyTorch's: 1 for a, -trunc(a / b) (fmod) or -floor(a / b) (remainder) for b."""
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(500) * 10.0 ** rng.integers(-20, 20, 500)).astype(np.float32)
    b = (rng.standard_normal(500) * 10.0 ** rng.integers(-20, 20, 500)).astype(np.float32)
    x, y = ls.tensor(a, requires_grad=True), ls.tensor(b, requires_grad=True)
    assert np.array_equal(ls.fmod(x, y).detach().numpy().view(np.uint32), np.fmod(a, b).view(np.uint32))
    assert np.array_equal(ls.remainder(x, y).detach().numpy(), np.remainder(a, b))
    assert np.array_equal((x % 3.0).detach().numpy(), np.remainder(a, np.float32(3)))
    assert np.array_equal(x.fmod(-2.5).detach().numpy(), np.fmod(a, np.float32(-2.5)))
    u = ls.tensor([7.5, -7.5], requires_grad=True)
    v = ls.tensor([2.0, 2.0], requires_grad=True)
    (ls.fmod(u, v).sum() + ls.remainder(u, v).sum()).backward()
    assert u.grad.tolist() == [2.0, 2.0]
    assert v.grad.tolist() == [-3.0 - 3.0, 3.0 + 4.0]
