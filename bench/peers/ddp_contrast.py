#!/usr/bin/python3
"""PyTorch DDP against itself: the MNIST LeNet-5 (RepDL's, as lockstep trains it) with the same
initial weights, the same data order and the same global batch of 100, trained by
torch.nn.parallel.DistributedDataParallel (gloo backend, Debian's torch) on 1 rank and on 2 ranks
of 50 samples each. Mathematically the runs are one; in float32 they end on different weights
(DDP averages the ranks' mean gradients, a different summation order). A second 1-rank run shows
that PyTorch itself is repeatable here: the difference comes from the number of ranks alone.
lockstep's runs with 1, 2, 3 and 4 ranks end on one hash (tests/distributed/run.sh).

  /usr/bin/python3 bench/peers/ddp_contrast.py [--data DIR] [--steps N]

Prints one line per comparison, and the SHA-256 of each run's final weights:
  ddp lenet steps=N A vs B: max_abs=X max_rel=Y differing=K/T accuracy=P vs Q
  ddp lenet steps=N weights: 1 rank H1, again H1', 2 ranks H2
max_rel is the largest difference over the largest weight magnitude; differing counts the
weights whose float32 bits differ.
"""
import argparse
import hashlib
import os
import struct
import sys
import tempfile

os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCALE = struct.unpack("<f", struct.pack("<f", 1.0 / 0.3081))[0]  # the float32 1 / 0.3081, as lockstep


def read_idx(path):
    """An IDX array: bytes (type 0x08) or big-endian float32 (0x0D)."""
    data = open(path, "rb").read()
    dims = data[3]
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    dtype = {0x08: np.uint8, 0x0D: np.dtype(">f4")}[data[2]]
    return np.frombuffer(data, dtype=dtype, offset=4 + 4 * dims).reshape(shape)


def load(data_dir, split):
    images = read_idx(os.path.join(data_dir, split + "-images.idx"))
    if images.dtype == np.uint8:  # byte pixels p become p / 255, as lockstep reads them
        images = images.astype(np.float32) / np.float32(255)
    images = (images.astype(np.float32) - np.float32(0.1307)) * np.float32(SCALE)
    labels = read_idx(os.path.join(data_dir, split + "-labels.idx")).astype(np.int64)
    return torch.from_numpy(images).unsqueeze(1), torch.from_numpy(labels)


def lenet():
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                         nn.Linear(84, 10))


def worker(rank, world, port, data_dir, steps, out):
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(2)  # the same initial weights on every rank and in every run
    model = torch.nn.parallel.DistributedDataParallel(lenet())
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = load(data_dir, "train")
    batch, share = 100, 100 // world
    per_epoch = len(y) // batch
    order = None
    for step in range(steps):
        if step % per_epoch == 0:
            order = torch.from_numpy(np.random.RandomState(step // per_epoch).permutation(len(y)))
        rows = order[(step % per_epoch) * batch:(step % per_epoch + 1) * batch][rank * share:(rank + 1) * share]
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(x[rows]), y[rows]).backward()  # DDP averages over ranks
        opt.step()
    if rank == 0:
        tx, ty = load(data_dir, "test")
        with torch.no_grad():
            accuracy = (model.module(tx).argmax(1) == ty).double().mean().item()
        torch.save({"weights": {k: v.detach().clone() for k, v in model.module.state_dict().items()},
                    "accuracy": accuracy}, out)
    dist.destroy_process_group()


def train(world, port, data_dir, steps):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "weights.pt")
        mp.spawn(worker, args=(world, port, data_dir, steps, out), nprocs=world, join=True)
        return torch.load(out)


def compare(a, b):
    largest, max_abs, differing, total = 0.0, 0.0, 0, 0
    for name, wa in a["weights"].items():
        wb = b["weights"][name]
        largest = max(largest, wa.abs().max().item())
        max_abs = max(max_abs, (wa - wb).abs().max().item())
        differing += (wa.view(torch.int32) != wb.view(torch.int32)).sum().item()
        total += wa.numel()
    return max_abs, max_abs / largest, differing, total


def weights_hash(run):
    digest = hashlib.sha256()
    for name in sorted(run["weights"]):
        digest.update(run["weights"][name].contiguous().numpy().tobytes())
    return digest.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.path.join(ROOT, ".deps", "data", "mnist"))
    ap.add_argument("--steps", type=int, default=160)
    args = ap.parse_args()
    one = train(1, 29511, args.data, args.steps)
    again = train(1, 29512, args.data, args.steps)
    two = train(2, 29513, args.data, args.steps)
    for label, a, b in (("1 rank vs 1 rank", one, again), ("1 rank vs 2 ranks", one, two)):
        max_abs, max_rel, differing, total = compare(a, b)
        print("ddp lenet steps=%d %s: max_abs=%.3g max_rel=%.3g differing=%d/%d accuracy=%.4f vs %.4f"
              % (args.steps, label, max_abs, max_rel, differing, total, a["accuracy"], b["accuracy"]), flush=True)
    print("ddp lenet steps=%d weights: 1 rank %s, again %s, 2 ranks %s"
          % (args.steps, weights_hash(one)[:16], weights_hash(again)[:16], weights_hash(two)[:16]), flush=True)


if __name__ == "__main__":
    sys.exit(main())
