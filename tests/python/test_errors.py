"""Every error path of the binding raises a Python exception (the engine's kind and message,
docs/errors.md) and leaves the interpreter and the library working: wrong dtypes, wrong shapes,
odd NumPy arrays, objects whose owners are gone, threads calling in at once."""
import threading

import numpy as np
import pytest

import lockstep as ls
from lockstep import nn
from lockstep.nn import functional as F


def still_works():
    """The library after an error: a model trains and hashes as before."""
    ls.manual_seed(2)
    model = nn.Sequential(nn.Linear(4, 3))
    assert model.hash() == still_works.expected
    x = ls.ones(2, 4)
    loss = model(x).sum()
    loss.backward()
    assert model[0].weight.grad.tolist() == [[2.0] * 4] * 3


ls.manual_seed(2)
still_works.expected = nn.Sequential(nn.Linear(4, 3)).hash()


def test_exception_classes_map_the_kinds():
    assert issubclass(ls.ArgumentError, ValueError) and issubclass(ls.FormatError, ValueError)
    assert issubclass(ls.IoError, OSError) and issubclass(ls.StateError, RuntimeError)
    assert issubclass(ls.ResourceError, MemoryError) and issubclass(ls.UnavailableError, RuntimeError)
    for cls in (ls.ArgumentError, ls.FormatError, ls.IoError, ls.StateError, ls.UnavailableError, ls.ResourceError,
                ls.CancelledError, ls.InternalError):
        assert issubclass(cls, ls.Error)
    with pytest.raises(ls.ArgumentError) as info:
        ls.zeros(2, 3) + ls.zeros(4)
    assert info.value.kind == "argument"
    assert str(info.value) == "add: shapes [2, 3] and [4] do not broadcast (dimension 1: 3 vs 4)"
    still_works()


def test_wrong_dtypes():
    for array in (np.zeros(3), np.zeros(3, bool), np.zeros(3, np.uint16), np.array(["a"]), np.zeros(3, complex)):
        with pytest.raises(TypeError, match="float32, int32 or int64"):
            ls.from_numpy(array)
    with pytest.raises(TypeError, match="byte order"):
        ls.from_numpy(np.zeros(3, ">f4"))
    with pytest.raises(TypeError):
        ls.tensor(["a", "b"])
    with pytest.raises(ls.ArgumentError, match="float32"):
        ls.tensor([1, 2]) + ls.tensor([1, 2])
    with pytest.raises(ls.ArgumentError, match="integer targets"):
        F.cross_entropy(ls.randn(2, 3), ls.tensor([0.0, 1.0]))
    with pytest.raises(TypeError, match="integer"):
        ls.data.from_numpy(np.zeros((2, 3), np.float32), np.array([0.5, 1.0]))
    with pytest.raises(TypeError):
        ls.zeros(2) + "x"
    with pytest.raises(TypeError):
        nn.Linear("4", 3)
    with pytest.raises(ls.ArgumentError, match="only float32"):
        ls.tensor([1, 2]).requires_grad = True
    still_works()


def test_wrong_shapes():
    with pytest.raises(ls.ArgumentError, match=r"matmul.*\[2, 3\].*\[4, 5\]"):
        ls.zeros(2, 3) @ ls.zeros(4, 5)
    with pytest.raises(ls.ArgumentError, match="linear"):
        nn.Linear(4, 3)(ls.zeros(2, 5))
    with pytest.raises(ls.ArgumentError, match="conv2d"):
        nn.Conv2d(3, 4, 3)(ls.zeros(1, 2, 8, 8))
    with pytest.raises(ls.ArgumentError, match="BatchNorm1d"):
        nn.BatchNorm1d(3)(ls.zeros(2, 3, 4))
    with pytest.raises(ls.ArgumentError, match="reshape"):
        ls.zeros(2, 3).reshape(4, 2)
    with pytest.raises(ls.FormatError, match=r"'weight' is F32 \[3, 4\] in the checkpoint, expected F32 \[3, 5\]"):
        nn.Linear(5, 3).load_state_dict(nn.Linear(4, 3).state_dict())
    with pytest.raises(ls.ArgumentError, match="embed_dim"):
        nn.MultiheadAttention(10, 3)
    with pytest.raises(ls.ArgumentError, match="key_padding_mask"):
        nn.MultiheadAttention(8, 2)(ls.zeros(3, 2, 8), ls.zeros(3, 2, 8), ls.zeros(3, 2, 8),
                                    key_padding_mask=np.zeros((2, 4), bool))
    with pytest.raises(ls.ArgumentError, match="grad"):
        w = ls.ones(3, requires_grad=True)
        w.grad = ls.ones(4)
    still_works()


def test_odd_numpy_arrays():
    base = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    odd = [base.transpose(2, 0, 1), base[:, ::-1, ::2], base[..., 1], np.broadcast_to(base[0, 0], (3, 5))]
    for a in odd:  # non-contiguous, negative strides, zero strides: copied exactly
        assert np.array_equal(ls.from_numpy(a).numpy(), a)
    frozen = base.copy()
    frozen.setflags(write=False)
    t = ls.zeros(3, 4, 5)
    t.copy_(frozen)  # read from a read-only array
    assert np.array_equal(t.numpy(), base)
    images = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 4, 3).transpose(0, 2, 1)
    d = ls.data.from_numpy(images, np.array([0, 1]))
    assert np.array_equal(d.inputs.numpy(), images.astype(np.float32) / np.float32(255))
    with pytest.raises(ls.ArgumentError, match="cannot expand"):
        ls.zeros(2, 3).copy_(np.zeros((3, 2), np.float32))
    still_works()


def test_objects_outliving_their_owners(tmp_path):
    model = nn.Sequential(nn.Linear(4, 2), nn.ReLU())
    weight, child = model[0].weight, model[0]
    optimizer = ls.optim.SGD(model.parameters(), lr=0.5)
    view = weight.detach().numpy()
    del model
    out = child(ls.ones(1, 4)).sum()
    out.backward()
    optimizer.step()  # the optimizer still holds the parameters
    assert np.array_equal(view, weight.detach().numpy())  # and the array still views them
    data = ls.data.from_numpy(np.ones((4, 2), np.float32), np.arange(4))
    loader = ls.data.DataLoader(data, batch_size=2)
    del data
    assert [y.tolist() for _, y in loader] == [[0, 1], [2, 3]]
    with ls.trace(child) as t:
        child(ls.ones(1, 4))
    assert t.records > 0
    with pytest.raises(ls.ArgumentError, match="already been used"):
        with t:
            pass
    other = nn.Linear(4, 2)
    with pytest.raises(ls.StateError, match="another model"):
        ls.fit(other, optimizer, ls.data.from_numpy(np.ones((4, 4), np.float32), np.arange(4)), batch_size=2)
    still_works()


def test_training_stops_on_a_non_finite_loss():
    model = nn.Sequential(nn.Linear(2, 2))
    data = ls.data.from_numpy(np.array([[1.0, np.nan], [0.0, 1.0]], np.float32), np.array([0, 1]))
    before = model.hash()
    with pytest.raises(ls.StateError, match="step 1"):
        ls.fit(model, ls.optim.Adam(model.parameters()), data, batch_size=2)
    assert model.hash() == before
    still_works()


def test_files():
    with pytest.raises(ls.IoError):
        ls.load("/nonexistent/model.safetensors")
    with pytest.raises(ls.ArgumentError, match="device"):
        ls.save(nn.Linear(2, 2), "/dev/null")
    with pytest.raises(ls.FormatError):
        ls.load_bytes(nn.Linear(2, 2), b"not a checkpoint")
    with pytest.raises(ls.IoError):
        ls.data.from_idx("/nonexistent/images.idx", "/nonexistent/labels.idx")
    with pytest.raises(ls.Error):
        ls.set_device("cuda:99")
    assert ls.current_device() == "cpu"
    still_works()


def test_threads_calling_in_at_once():
    """Eight threads build, train and hash models on shared and private tensors at once: every
    thread gets the bits a lone run gets, and nothing crashes."""
    shared = ls.randn(128, 256)  # large enough that ops on it release the GIL

    def work(seed):
        model = nn.Sequential(nn.Linear(256, 8, generator=ls.Generator(seed)), nn.Tanh(),
                              nn.Linear(8, 2, generator=ls.Generator(seed)))
        opt = ls.optim.Adam(model.parameters())
        for _ in range(5):
            opt.zero_grad()
            loss = (model(shared) * shared[:, :2]).mean()
            loss.backward()
            opt.step()
        with ls.no_grad():
            _ = shared * 2
        return model.hash()

    expected = [work(s) for s in range(8)]
    results, errors = [None] * 8, []

    def run(i):
        try:
            for _ in range(3):
                results[i] = work(i)
        except BaseException as e:  # noqa: B902  (recorded, then asserted)
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and results == expected


def test_grad_mode_is_per_thread():
    seen = []
    with ls.no_grad():
        t = threading.Thread(target=lambda: seen.append(ls.is_grad_enabled()))
        t.start()
        t.join()
        assert not ls.is_grad_enabled()
    assert seen == [True]


def test_python_modules_that_misbehave():
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    class Pair(nn.Module):
        def forward(self, x):
            return x, x

    class NoForward(nn.Module):
        pass

    data = ls.data.from_numpy(np.ones((4, 2), np.float32), np.arange(4) % 2)
    model = nn.Sequential(nn.Linear(2, 2), Boom())
    with pytest.raises(ValueError, match="boom"):  # the Python exception itself, through the engine
        ls.fit(model, ls.optim.SGD(model.parameters()), data, batch_size=2)
    with ls.trace(model):
        with pytest.raises(ValueError, match="boom"):
            model(ls.ones(1, 2))
    with pytest.raises(TypeError, match="Pair.forward returned a tuple"):
        nn.Sequential(Pair())(ls.ones(1, 2))
    assert len(Pair()(ls.ones(1, 2))) == 2  # called from Python, any return is fine
    with pytest.raises(NotImplementedError, match="NoForward"):
        NoForward()(ls.ones(1, 2))

    class Early(nn.Module):  # assigns before super().__init__(): works (PyTorch would refuse)
        def __init__(self):
            self.fc = nn.Linear(2, 2)
            super().__init__()

        def forward(self, x):
            return self.fc(x)
    assert Early()(ls.ones(1, 2)).shape == (1, 2)
    class Wide(nn.Linear):  # a built-in layer's engine object exists only after its __init__
        def __init__(self):
            self.note = "fine"
            with pytest.raises(TypeError, match="super"):
                self.extra = nn.ReLU()
            super().__init__(2, 3)
    assert Wide().note == "fine" and Wide()(ls.ones(1, 2)).shape == (1, 3)
    with pytest.raises(TypeError, match="cannot override forward"):
        class Bad(nn.Linear):
            def forward(self, x):
                return x
    still_works()
