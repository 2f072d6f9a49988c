"""Devices from Python: the MNIST reference run built and trained under lockstep.device("cuda")
gives the golden hashes. It runs on the CUDA plugin's host emulation (its kernel bodies compiled for
the CPU, built where nvcc is installed), so no GPU is needed; where the plugin was not built the
test says so and is skipped, as the project's other device tests are."""
import os
import subprocess
import sys

import pytest

from conftest import BUILD, PACKAGE_DIR
from test_mnist import golden

EMULATED = os.path.join(BUILD, "native", "cuda", "liblockstep_cuda_emulated.so")

SCRIPT = """
import sys
import lockstep as ls
from lockstep import nn
train, test = ls.data.load_mnist(sys.argv[1])
assert ls.cuda.is_available(), ls.cuda.why_unavailable()
with ls.device("cuda"):
    ls.manual_seed(2)
    model = nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84),
                          nn.ReLU(), nn.Linear(84, 10))
    assert model[0].weight.device == "cuda:0"
    initial = model.hash()
    ls.fit(model, ls.optim.Adam(model.parameters()), train, batch_size=100, seed=2, max_steps=3)
    x = ls.ones(2, 3)
    try:
        x.numpy()
        raise SystemExit("numpy() of a device tensor should refuse")
    except ls.ArgumentError:
        pass
    assert x.cpu().numpy().tolist() == [[1.0] * 3] * 2
    print(initial, model.hash(), ls.evaluate(model, test, limit=100).logits_hash)
assert ls.current_device() == "cpu"
"""


def test_reference_run_on_the_cuda_plugin(mnist_dir):
    if not os.path.exists(EMULATED):
        pytest.skip("the CUDA plugin's host emulation is not built here (no nvcc): %s" % EMULATED)
    env = dict(os.environ, LOCKSTEP_CUDA_PLUGIN=EMULATED, PYTHONPATH=PACKAGE_DIR)
    out = subprocess.run([sys.executable, "-c", SCRIPT, mnist_dir], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    g = golden()
    assert out.stdout.split() == [g["initial"], g["trained"], g["logits"]]
