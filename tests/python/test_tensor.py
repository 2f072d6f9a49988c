"""Tensors from Python: creation, NumPy interchange (copy in, share out), arithmetic against NumPy's
float32 results (one rounding per element: equal bits), views and indexing."""
import numpy as np
import pytest

import lockstep as ls


def test_creation_and_dtypes():
    assert ls.tensor([1.0, 2.5]).dtype == ls.float32
    assert ls.tensor([1, 2]).dtype == ls.int64
    assert ls.tensor([True, False]).dtype == ls.int64
    assert ls.tensor(np.float64(0.1)).item() == np.float32(0.1)  # float64 rounded once
    assert ls.zeros(2, 3).shape == (2, 3) and ls.zeros((2, 3)).shape == (2, 3)
    assert ls.ones([4], dtype=ls.int32).dtype == ls.int32
    assert ls.full((2,), 7.5).tolist() == [7.5, 7.5]
    assert ls.arange(5).tolist() == [0, 1, 2, 3, 4] and ls.arange(5).dtype == ls.int64
    assert ls.arange(0.0, 1.0, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert ls.stack([ls.ones(2), ls.zeros(2)]).tolist() == [[1, 1], [0, 0]]
    assert ls.cat([ls.ones(2), ls.zeros(1)]).tolist() == [1, 1, 0]
    assert repr(ls.tensor([1.0, 2.0], requires_grad=True)).startswith("tensor([1., 2.]")


def test_scalars_make_zero_dimensional_tensors():
    # As torch.tensor(5): shape (), not (1,); and a 0-d buffer takes a 0-d array in place.
    assert ls.tensor(5).shape == () and ls.tensor(5).item() == 5
    assert ls.tensor(2.5).shape == () and ls.tensor(np.float32(2.5)).shape == ()
    assert ls.tensor(np.asarray(3, dtype=np.int64)).shape == ()
    buffer = ls.zeros(())
    buffer.copy_(np.asarray(1.5, dtype=np.float32))
    assert buffer.shape == () and buffer.item() == 1.5


def test_random_draws_depend_only_on_seed():
    ls.manual_seed(5)
    a = ls.randn(3, 4).numpy().copy()
    b = ls.rand(7).numpy().copy()
    ls.manual_seed(5)
    assert np.array_equal(ls.randn(3, 4).numpy(), a)
    assert np.array_equal(ls.rand(7).numpy(), b)
    g = ls.Generator(5, "mine")
    first = ls.randn(4, generator=g).numpy().copy()
    assert g.offset == 4
    assert not np.array_equal(first, ls.randn(4, generator=g).numpy())
    assert np.array_equal(ls.randn(4, generator=ls.Generator(5, "mine")).numpy(), first)


def test_from_numpy_copies_any_layout():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    for view in (base, base.T, base[::2, 1::3], base[::-1, ::-2], np.asfortranarray(base)):
        t = ls.from_numpy(view)
        assert t.is_contiguous() and np.array_equal(t.numpy(), view)
    ro = np.arange(5, dtype=np.int32)
    ro.setflags(write=False)
    t = ls.from_numpy(ro)
    t.numpy()[0] = 9  # the tensor has its own copy
    assert ro[0] == 0 and t.tolist()[0] == 9 and t.dtype == ls.int32
    assert ls.from_numpy(np.zeros((0, 3), np.float32)).shape == (0, 3)
    assert ls.from_numpy(np.array(2.5, np.float32)).item() == 2.5


def test_numpy_shares_memory_whatever_the_strides():
    t = ls.arange(12).reshape(3, 4)
    view = t.transpose(0, 1)[1:, ::2]
    a = view.numpy()
    assert np.array_equal(a, np.arange(12).reshape(3, 4).T[1:, ::2])
    a[0, 0] = -1  # writes through to the tensor's storage
    assert t.tolist()[0][1] == -1
    del t, view
    assert a[0, 0] == -1  # the array keeps the storage alive
    assert np.asarray(ls.ones(2)).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("op", ["+", "-", "*", "/"])
def test_arithmetic_is_numpy_float32_bit_for_bit(op):
    rng = np.random.RandomState(0)
    a, b = rng.randn(5, 7).astype(np.float32), rng.randn(7).astype(np.float32) + 2
    fn = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}[op]
    ta, tb = ls.from_numpy(a), ls.from_numpy(b)
    assert np.array_equal(eval("ta %s tb" % op).numpy(), fn(a, b))  # broadcasting
    assert np.array_equal(eval("ta %s 1.5" % op).numpy(), fn(a, np.float32(1.5)))
    assert np.array_equal(eval("1.5 %s ta" % op).numpy(), fn(np.float32(1.5), a))


def test_math_methods_and_reductions():
    x = ls.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    assert x.relu().tolist() == [[1, 0, 3], [0.5, 4, 0]]
    assert x.sum().item() == 5.5 and x.sum(1).tolist() == [2.0, 3.5]
    assert x.mean(0, keepdim=True).shape == (1, 3)
    assert x.max().item() == 4.0
    values, indices = x.max(1)
    assert values.tolist() == [3.0, 4.0] and indices.tolist() == [2, 1]
    assert x.argmax().item() == 4
    assert (x @ x.T).shape == (2, 2)
    assert (x ** 2).tolist()[0] == [1, 4, 9]
    assert (x > 0).tolist() == [[1, 0, 1], [1, 1, 0]] and (x == 4.0).sum().item() == 1
    assert x.softmax(1).sum(1).tolist() == pytest.approx([1.0, 1.0], abs=1e-6)
    assert ls.exp(ls.zeros(1)).item() == 1.0


def test_views_and_indexing():
    t = ls.arange(24).reshape(2, 3, 4)
    a = np.arange(24).reshape(2, 3, 4)
    for key in [0, -1, (1, 2), (slice(None), 1), (Ellipsis, 2), (None, 0), (slice(1, None), slice(0, 3, 2)),
                (0, Ellipsis, slice(1, 3))]:
        assert np.array_equal(t[key].numpy(), a[key]), key
    assert t.view(6, 4).shape == (6, 4) and t.permute(2, 0, 1).shape == (4, 2, 3)
    assert t.flatten(1).shape == (2, 12) and t[0:1].squeeze().shape == (3, 4)
    assert t.unsqueeze(0).expand(5, -1, -1, -1).shape == (5, 2, 3, 4)
    assert len(t) == 2 and [r.shape for r in t] == [(3, 4), (3, 4)]
    with pytest.raises(IndexError):
        t[2]
    with pytest.raises(ValueError, match="positive step"):
        t[::-1]
    with pytest.raises(TypeError, match="ints, slices"):
        t[[0, 1]]
    with pytest.raises(ValueError, match="view"):
        t.transpose(0, 2).view(24)


def test_in_place_updates():
    t = ls.zeros(2, 3)
    t[0] = 1.5
    t[:, 2] = ls.tensor([7.0, 8.0])
    t += 1
    assert t.tolist() == [[2.5, 2.5, 8.0], [1.0, 1.0, 9.0]]
    w = ls.ones(3, requires_grad=True)
    with pytest.raises(ls.StateError, match="no_grad"):
        w -= 0.5
    with ls.no_grad():
        w -= 0.5
    assert w.tolist() == [0.5, 0.5, 0.5] and w.requires_grad
    assert t.to(ls.int64).dtype == ls.int64 and t.float() is t
