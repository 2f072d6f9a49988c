"""Data sets and the deterministic loader (core/data.h).

A Dataset holds examples [N, ...] and int64 labels [N]: from IDX files (MNIST's format), from
NumPy arrays, or from tensors. Byte images stay bytes and become float32 per batch (p / 255, one
float32 division), so a data set costs about its files' size. A DataLoader's epoch order is a
Fisher-Yates permutation from the Philox stream "shuffle" under its seed: it depends only on
(seed, epoch), and fit() with the same seed visits the same batches.
"""
import os

import numpy as np

from . import _C
from ._errors import ArgumentError
from ._tensor import Tensor

Dataset = _C.Dataset
Dataset.__module__ = "lockstep.data"


def _labels(labels):
    array = labels.detach().numpy() if isinstance(labels, Tensor) else np.asarray(labels)
    if array.dtype.kind not in "iu":
        raise TypeError("Dataset: labels must be integer class indices, got dtype %s" % array.dtype)
    return array.astype(np.int64)


def from_numpy(inputs, labels):
    """Examples from a NumPy array (float32, or uint8 bytes kept compact; float64 is rounded to
    float32) and integer labels [N]."""
    inputs = np.asarray(inputs)
    if inputs.dtype == np.float64:
        inputs = inputs.astype(np.float32)
    if inputs.dtype not in (np.float32, np.uint8):
        raise TypeError("Dataset.from_numpy: examples must be float32 or uint8, got dtype %s" % inputs.dtype)
    return Dataset._from_numpy(inputs, _labels(labels))


def from_tensors(inputs, labels):
    """Examples from a float32 tensor [N, ...] and labels from an integer tensor [N] (copied)."""
    if not isinstance(inputs, Tensor) or not isinstance(labels, Tensor):
        raise TypeError("Dataset.from_tensors: expected two tensors")
    return Dataset._from_tensors(inputs, labels)


def from_idx(images, labels, normalize=False):
    """An IDX image file [N, rows, cols] and its label file [N] as examples [N, 1, rows, cols].
    normalize=True applies MNIST's normalisation to every batch, as the reference run does."""
    d = Dataset._from_idx(os.fspath(images), os.fspath(labels))
    if normalize:
        d.normalize_mnist()
    return d


def load_mnist(directory, normalize=True):
    """(train, test) from train-images.idx, train-labels.idx, test-images.idx, test-labels.idx."""
    d = os.fspath(directory)
    return (from_idx(os.path.join(d, "train-images.idx"), os.path.join(d, "train-labels.idx"), normalize),
            from_idx(os.path.join(d, "test-images.idx"), os.path.join(d, "test-labels.idx"), normalize))


def _normalize(self, shift, scale):
    """Every batch becomes (x + shift) * scale, two float32 operations per element."""
    self._normalize(float(shift), float(scale))
    return self


def _getitem(self, index):
    n = len(self)
    if isinstance(index, slice):
        start, stop, step = index.indices(n)
        if step != 1:
            raise ArgumentError("Dataset: slices need step 1")
        return self.subset(start, max(stop - start, 1)) if stop > start else None
    i = int(index) + (n if int(index) < 0 else 0)
    if not 0 <= i < n:
        raise IndexError("Dataset: example %d of %d" % (index, n))
    return self._inputs(i, 1)[0], self._labels(i, 1)[0]


Dataset.from_numpy = staticmethod(from_numpy)
Dataset.from_tensors = staticmethod(from_tensors)
Dataset.from_idx = staticmethod(from_idx)
Dataset.normalize = _normalize
Dataset.__getitem__ = _getitem
Dataset.inputs = property(lambda self: self._inputs(0, len(self)), doc="Every example as float32 [N, ...].")
Dataset.labels = property(lambda self: self._labels(0, len(self)), doc="The labels, int64 [N].")
Dataset.__repr__ = lambda self: "Dataset(%d examples of shape %s%s)" % (
    len(self), list(self.example_shape), ", normalized" if self.normalized else "")


class DataLoader:
    """Batches of (inputs, labels) tensors. Each ``iter()`` is one epoch (epoch 0, 1, ...; or the
    epoch set_epoch chose): shuffled by the seed's "shuffle" stream when ``shuffle``, in data-set
    order otherwise; the last partial batch is dropped when ``drop_last``."""

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, seed=0):
        if not isinstance(dataset, Dataset):
            raise TypeError("DataLoader: expected a lockstep.data.Dataset, got %s (Dataset.from_numpy makes one)"
                            % type(dataset).__name__)
        self.dataset, self.batch_size, self.seed = dataset, int(batch_size), int(seed)
        self._loader = _C._Loader(dataset, self.batch_size, bool(shuffle), bool(drop_last), self.seed)
        self.epoch = 0

    def __len__(self):
        return self._loader.batches_per_epoch()

    def set_epoch(self, epoch):
        """The epoch the next iteration yields (its order depends only on seed and epoch)."""
        self.epoch = int(epoch)

    def __iter__(self):
        epoch = self.epoch
        self.epoch += 1
        for b in range(len(self)):
            yield self._loader.batch(epoch, b)


__all__ = ["Dataset", "DataLoader", "from_numpy", "from_tensors", "from_idx", "load_mnist"]
