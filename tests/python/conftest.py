"""Shared set-up of the Python package's suite (tests/python/run.sh runs it; docs/python.md).

The package is imported from the build tree, build/native/python (or LOCKSTEP_BUILD/native/python):
if it cannot be imported the whole suite fails at collection, never skips. Under
LOCKSTEP_REQUIRE_ALL=1 (make test, whose set-up installs everything) a skipped test is a failure.
"""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("LOCKSTEP_BUILD", os.path.join(ROOT, "build"))
PACKAGE_DIR = os.path.join(BUILD, "native", "python")
sys.path.insert(0, PACKAGE_DIR)

import lockstep  # noqa: E402  (a failure here fails the suite: the extension must be built)

assert os.path.dirname(lockstep.__file__) == os.path.join(PACKAGE_DIR, "lockstep"), lockstep.__file__

# LOCKSTEP_SIMD_TARGET=AVX2 (a name `lockstep info` lists) runs the suite on that target: every hash
# must be the same on every target.
if os.environ.get("LOCKSTEP_SIMD_TARGET"):
    _targets = dict(lockstep._C._targets())
    lockstep._C._force_target(_targets[os.environ["LOCKSTEP_SIMD_TARGET"]])
    assert lockstep.info()["simd_target"] == os.environ["LOCKSTEP_SIMD_TARGET"]

MNIST_DIR = os.environ.get("LOCKSTEP_MNIST_DIR", os.path.join(ROOT, ".deps", "data", "mnist"))
U = 2.0 ** -24  # float32's unit roundoff


@pytest.fixture(autouse=True)
def fresh_seed():
    """Every test starts from manual_seed(0), as a fresh process does."""
    lockstep.manual_seed(0)
    yield


@pytest.fixture
def mnist_dir():
    if not os.path.exists(os.path.join(MNIST_DIR, "train-images.idx")):
        pytest.fail("MNIST IDX files missing in %s (tools/setup.sh makes them)" % MNIST_DIR)
    return MNIST_DIR


def rel_error(a, b):
    """max |a - b| / max |b| in float64, in units of u (tests/reference/torch_layers.py's metric)."""
    import numpy as np
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.abs(a - b).max() / np.abs(b).max() / U)


AGREEMENT = []  # lines of test_torch_convert.py's forward agreement, printed at the end


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A skip turned into a failure under LOCKSTEP_REQUIRE_ALL=1: nothing may be left out there."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("LOCKSTEP_REQUIRE_ALL") == "1" and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = "skipped, a failure under LOCKSTEP_REQUIRE_ALL=1: %s" % (report.longrepr,)


def pytest_terminal_summary(terminalreporter):
    if AGREEMENT:
        terminalreporter.write_sep("-", "from_torch_module: forward agreement (max|a-b|/max|b| in u = 2^-24)")
        for line in AGREEMENT:
            terminalreporter.write_line(line)
