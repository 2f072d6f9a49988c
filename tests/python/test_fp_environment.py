"""torch.set_flush_denormal(True) in the same process (a common speed setting) sets flush-to-zero
and denormals-are-zero on the calling thread. lockstep computes in the contract's mode anyway: its
subnormal results and the MNIST golden hashes stay, info() says what the caller set, and torch
keeps flushing afterwards (the caller gets its own mode back)."""
import numpy as np
import pytest
import torch

import lockstep as ls

from test_mnist import golden

SUBNORMAL = np.float32(1e-39)


@pytest.fixture
def flush_denormal():
    assert torch.set_flush_denormal(True), "this CPU has no flush-to-zero mode for torch to set"
    try:
        yield
    finally:
        torch.set_flush_denormal(False)


def torch_flushes():
    return float(torch.tensor([1e-39], dtype=torch.float32)[0] * 1.0) == 0.0


def test_torch_really_flushes_under_the_setting(flush_denormal):
    # Without this the tests below could pass with the setting doing nothing.
    assert torch_flushes()


def test_subnormals_survive_a_callers_flush_to_zero(flush_denormal):
    x = ls.tensor(np.array([SUBNORMAL, -SUBNORMAL, 3 * SUBNORMAL], dtype=np.float32))
    product = (x * 1.0).numpy()
    doubled = (x + x).numpy()
    assert product.tolist() == [SUBNORMAL, -SUBNORMAL, 3 * SUBNORMAL]
    assert doubled.tolist() == [2 * SUBNORMAL, -2 * SUBNORMAL, 6 * SUBNORMAL]
    assert "flush-to-zero is on" in ls.info()["floating_point"]
    assert torch_flushes(), "lockstep must give the caller its own mode back"


def test_the_reference_run_keeps_its_golden_hashes_under_flush_to_zero(flush_denormal, mnist_dir):
    g = golden()
    r = ls.mnist_reference_run(mnist_dir, max_steps=3, max_test=100)
    assert (r["initial_hash"], r["trained_hash"], r["logits_hash"]) == (g["initial"], g["trained"], g["logits"])
    assert torch_flushes()


def test_info_reports_the_contracts_mode_when_nothing_changed_it():
    assert "subnormals kept" in ls.info()["floating_point"]
    assert "flush-to-zero" not in ls.info()["floating_point"]
