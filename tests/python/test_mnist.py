"""The MNIST reference run through the Python API gives the golden hashes of tests/golden/mnist.txt
(the shortened run of tools/check-matrix: 3 steps, 100 test images): through the engine's run,
through fit() on a model built from lockstep.nn, and through a hand-written PyTorch-style loop over
a DataLoader of NumPy arrays."""
import os

import numpy as np
import pytest

import lockstep as ls
from lockstep import nn
from lockstep.nn import functional as F

from conftest import ROOT


def golden(run="short"):
    out = {}
    with open(os.path.join(ROOT, "tests", "golden", "mnist.txt")) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[0] == run:
                out[parts[1]] = parts[2]
    assert set(out) == {"initial", "trained", "logits", "accuracy"}
    return out


def lenet5():
    """examples/mnist's LeNet-5 built with lockstep.nn: after manual_seed(2) its parameters are
    drawn in the same order from the same stream as core/models/lenet.cc's."""
    return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                         nn.Linear(84, 10))


def test_reference_run(mnist_dir):
    g = golden()
    r = ls.mnist_reference_run(mnist_dir, max_steps=3, max_test=100)
    assert (r["initial_hash"], r["trained_hash"], r["logits_hash"]) == (g["initial"], g["trained"], g["logits"])
    assert "%.4f" % r["test_accuracy"] == g["accuracy"] and r["steps"] == 3


def test_fit_on_a_python_built_model(mnist_dir):
    g = golden()
    ls.manual_seed(2)
    model = lenet5()
    assert model.hash() == g["initial"]
    train, test = ls.data.load_mnist(mnist_dir)
    result = ls.fit(model, ls.optim.Adam(model.parameters(), lr=1e-3), train, batch_size=100, seed=2, max_steps=3)
    assert result.steps == 3 and len(result.losses) == 3
    assert model.hash() == g["trained"]
    e = ls.evaluate(model, test, batch_size=100, limit=100)
    assert e.logits_hash == g["logits"] and "%.4f" % e.accuracy == g["accuracy"]


def test_hand_written_loop_over_numpy_data(mnist_dir):
    """The data set made from NumPy arrays of the IDX bytes, a DataLoader with fit()'s order, and
    PyTorch's four lines per step."""
    g = golden()
    train = ls.data.from_idx(os.path.join(mnist_dir, "train-images.idx"), os.path.join(mnist_dir, "train-labels.idx"))
    with open(os.path.join(mnist_dir, "train-images.idx"), "rb") as f:
        header = f.read(16)
    # IDX is big-endian; the training images here are float32 (type 0x0D), the test images bytes.
    pixel = {0x08: np.uint8, 0x0D: np.dtype(">f4")}[header[2]]
    images = np.fromfile(os.path.join(mnist_dir, "train-images.idx"), dtype=pixel, offset=16)
    labels = np.fromfile(os.path.join(mnist_dir, "train-labels.idx"), dtype=np.uint8, offset=8)
    data = ls.data.from_numpy(images.reshape(-1, 1, 28, 28).astype(images.dtype.newbyteorder("=")), labels)
    assert data.fingerprint() == train.fingerprint()
    data.normalize_mnist()
    ls.manual_seed(2)
    model = lenet5()
    optimizer = ls.optim.Adam(model.parameters(), lr=1e-3)
    loader = ls.data.DataLoader(data, batch_size=100, shuffle=True, drop_last=True, seed=2)
    for step, (x, y) in enumerate(loader):
        if step == 3:
            break
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    assert model.hash() == g["trained"]


def test_loader_order_depends_only_on_seed_and_epoch():
    x = np.arange(40, dtype=np.float32).reshape(10, 4)
    data = ls.data.from_numpy(x, np.arange(10))
    a = ls.data.DataLoader(data, batch_size=3, shuffle=True, seed=7)
    b = ls.data.DataLoader(data, batch_size=3, shuffle=True, seed=7)
    first = [y.tolist() for _, y in a]
    assert len(a) == 4 and first == [y.tolist() for _, y in b]
    assert sorted(sum(first, [])) == list(range(10))
    assert [y.tolist() for _, y in a] != first  # epoch 1
    a.set_epoch(0)
    assert [y.tolist() for _, y in a] == first
    plain = ls.data.DataLoader(data, batch_size=4, drop_last=True)
    assert [y.tolist() for _, y in plain] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert data[3][1].item() == 3 and np.array_equal(data[3][0].numpy(), x[3])
