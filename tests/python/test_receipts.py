"""Receipts from Python (docs/verifiable-training.md): mnist_reference_run(receipt=...) writes the
receipt and kept states of `lockstep train mnist --receipt`, byte for byte; verify_run checks a
receipt (whole, a range, a sample), finds a fault the native CLI planted at step 37, and refuses a
tampered chain and a state that does not match its receipt with errors that say which. fit() writes
a receipt of any model's run, which verify_run re-executes on a model and optimizer made the same
way, and which fails at the first step when the model's code is not the run's."""
import os
import subprocess

import numpy as np
import pytest

import lockstep as ls

from conftest import ROOT

CLI = os.path.join(os.environ.get("LOCKSTEP_BUILD", os.path.join(ROOT, "build")), "native", "bindings", "native",
                   "cli", "lockstep")
RUN = ["--steps", "40", "--test", "100", "--receipt-every", "10"]


def native_run(folder, mnist_dir, env=None):
    os.makedirs(folder)
    receipt = os.path.join(folder, "run.receipt")
    subprocess.run([CLI, "train", "mnist", *RUN, "--data", mnist_dir, "--receipt", receipt,
                    "--trace", os.path.join(folder, "..", os.path.basename(folder) + ".trace")],
                   check=True, stdout=subprocess.DEVNULL, env={**os.environ, **(env or {})})
    return receipt


def files(folder):
    out = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            out[name] = f.read()
    return out


def test_python_writes_the_native_receipt_and_verify_run_checks_it(mnist_dir, tmp_path):
    assert os.path.exists(CLI), "the native CLI %s is needed (build the native preset)" % CLI
    native = native_run(str(tmp_path / "native"), mnist_dir)
    mine = tmp_path / "python" / "run.receipt"
    os.makedirs(mine.parent)
    r = ls.mnist_reference_run(mnist_dir, max_steps=40, max_test=100, receipt=mine, receipt_every=10)
    assert r["steps"] == 40
    assert files(mine.parent) == files(os.path.dirname(native))
    whole = ls.verify_run(mine, data=mnist_dir)
    assert whole.verified and whole.checked_steps == 40 and whole.first_mismatch == 0, whole.report
    some = ls.verify_run(native, data=mnist_dir, steps=(12, 18))
    assert some.verified and some.checked_steps == 7 and some.executed_steps == 8
    drawn = ls.verify_run(native, data=mnist_dir, sample=3, seed=5)
    assert drawn.verified and drawn.checked_steps == 3
    cli = subprocess.run([CLI, "verify-run", native, "--data", mnist_dir, "--sample", "3", "--seed", "5"],
                         capture_output=True, text=True, check=True).stdout
    assert [line for line in drawn.report if line.startswith("sampled steps")][0] in cli


def test_verify_run_finds_a_fault_and_refuses_what_it_cannot_use(mnist_dir, tmp_path):
    faulty = native_run(str(tmp_path / "faulty"), mnist_dir, {"LOCKSTEP_TRACE_FAULT": "37:3:conv2d"})
    bad = ls.verify_run(faulty, data=mnist_dir, steps=(31, 40))
    assert not bad.verified and bad.first_mismatch == 37 and bad.checked_steps == 7
    assert bad.mismatch.startswith("step 37: the state after it differs"), bad.mismatch
    with open(faulty) as f:
        lines = f.read().split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith('{"step":5,'))
    k = lines[at].index('"state":"') + 9
    lines[at] = lines[at][:k] + ("1" if lines[at][k] == "0" else "0") + lines[at][k + 1:]
    tampered = tmp_path / "faulty" / "tampered.receipt"
    tampered.write_text("\n".join(lines))
    with pytest.raises(ls.FormatError, match=r"line %d: the chain hash of step 5 does not follow" % (at + 1)):
        ls.verify_run(tampered, data=mnist_dir)
    swapped = tmp_path / "swapped"
    os.makedirs(swapped)
    for name, data in files(os.path.dirname(faulty)).items():
        if name.startswith("run.receipt"):
            (swapped / name).write_bytes(data)
    (swapped / "run.receipt.10.state").write_bytes((swapped / "run.receipt.20.state").read_bytes())
    with pytest.raises(ls.StateError, match=r"run\.receipt\.10\.state does not match its receipt: its SHA-256"):
        ls.verify_run(swapped / "run.receipt", data=mnist_dir, steps=(15, 15))
    with pytest.raises(ls.ArgumentError, match=r"steps must be \(first, last\)"):
        ls.verify_run(faulty, steps=5)
    with pytest.raises(ls.ArgumentError, match=r"receipt_every must be an int >= 0"):
        ls.mnist_reference_run(mnist_dir, max_steps=3, receipt=tmp_path / "x.receipt", receipt_every=-1)


class Net(ls.nn.Module):
    """A module written the way people write them: layers as attributes, dropout, a forward."""

    def __init__(self, act=ls.nn.functional.relu):
        super().__init__()
        self.fc1 = ls.nn.Linear(12, 16)
        self.drop = ls.nn.Dropout(0.25)
        self.fc2 = ls.nn.Linear(16, 3)
        self.act = act

    def forward(self, x):
        return self.fc2(self.drop(self.act(self.fc1(x))))


def made(act=ls.nn.functional.relu, lr=0.05):
    """The run's model and optimizer, made from seed 7 as a user's script would make them."""
    ls.manual_seed(7)
    model = Net(act)
    ls.nn.seed_dropout_streams(model, 7)
    return model, ls.optim.SGD(model.parameters(), lr=lr, momentum=0.9)


def test_fit_writes_a_receipt_that_verify_run_checks_with_a_model_made_the_same_way(tmp_path):
    rng = np.random.default_rng(3)
    data = ls.data.from_numpy(rng.standard_normal((96, 12)).astype(np.float32), rng.integers(0, 3, 96))
    model, optimizer = made()
    receipt = tmp_path / "fit.receipt"
    r = ls.fit(model, optimizer, data, epochs=3, batch_size=16, seed=4, receipt=receipt, receipt_every=5)
    assert r.steps == 18
    assert set(os.listdir(tmp_path)) == {"fit.receipt"} | {"fit.receipt.%d.state" % s for s in (0, 5, 10, 15, 18)}
    m, o = made()
    whole = ls.verify_run(receipt, data=data, model=m, optimizer=o)
    assert whole.verified and whole.checked_steps == 18, whole.report
    assert ls.save(m, tmp_path / "replayed.safetensors") == ls.save(model, tmp_path / "trained.safetensors")
    m, o = made()
    drawn = ls.verify_run(receipt, data=data, model=m, optimizer=o, sample=4, seed=1)
    assert drawn.verified and drawn.checked_steps == 4
    # Other code with the same parameters (tanh for relu): the claimed weights do not follow.
    m, o = made(act=ls.tanh)
    other = ls.verify_run(receipt, data=data, model=m, optimizer=o, steps=(6, 9))
    assert not other.verified and other.first_mismatch == 6, other.report
    assert other.mismatch.startswith("step 6: the state after it differs"), other.mismatch
    m, o = made(lr=0.1)
    with pytest.raises(ls.ArgumentError, match=r"the optimizer given is not the receipt's: it is sgd .* records sgd"):
        ls.verify_run(receipt, data=data, model=m, optimizer=o)
    wider = ls.nn.Sequential(ls.nn.Linear(12, 16), ls.nn.Linear(16, 3))
    with pytest.raises(ls.ArgumentError, match=r"the model given is not the receipt's: it is arch:"):
        ls.verify_run(receipt, data=data, model=wider, optimizer=ls.optim.SGD(wider.parameters(), lr=0.05,
                                                                                momentum=0.9))
    m, o = made()
    with pytest.raises(ls.ArgumentError, match=r"the training data in the given training set is not the receipt's"):
        ls.verify_run(receipt, data=data.subset(0, 80), model=m, optimizer=o)
    with pytest.raises(ls.ArgumentError, match=r"a fit\(\) run's receipt is re-executed on a model and optimizer"):
        ls.verify_run(receipt, data=data)
    with pytest.raises(ls.ArgumentError, match=r"needs both model and optimizer, got only the model"):
        ls.verify_run(receipt, data=data, model=m)
    cli = subprocess.run([CLI, "verify-run", str(receipt)], capture_output=True, text=True)
    assert cli.returncode == 2 and "re-executed where fit() runs" in cli.stderr, cli.stderr
