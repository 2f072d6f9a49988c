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
