"""The GIL is released while the engine computes, and Ctrl-C (SIGINT) stops training cleanly: a
KeyboardInterrupt between steps, the model exactly as after its last whole step."""
import os
import signal
import sys
import threading
import time

import numpy as np
import pytest

import lockstep as ls
from lockstep import nn


def lenet():
    return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 10))


@pytest.fixture(autouse=True)
def python_handles_sigint():
    """Ctrl-C as an interactive Python sees it: a process started in the background by a
    non-interactive shell (as CI runners may start the suite) inherits SIGINT ignored, and Python
    then installs no handler; the tests are about lockstep under Python's own handler."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def interrupt_after(seconds):
    timer = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    return timer


def test_other_python_threads_run_during_a_long_call():
    """A thread that sleeps 1 ms at a time can only count while the main thread's long call has let
    go of the GIL (with the switch interval raised, nothing else would hand it over)."""
    count, stop = [0], threading.Event()

    def counter():
        while not stop.is_set():
            time.sleep(0.001)
            count[0] += 1

    a = ls.randn(768, 768)
    old = sys.getswitchinterval()
    sys.setswitchinterval(100.0)
    thread = threading.Thread(target=counter)
    thread.start()
    try:
        time.sleep(0.01)
        before, start = count[0], time.perf_counter()
        for _ in range(3):
            a @ a
        during, elapsed = count[0] - before, time.perf_counter() - start
    finally:
        stop.set()
        sys.setswitchinterval(old)
        thread.join()
    assert during >= min(5, elapsed / 0.004), (during, elapsed)


def test_ctrl_c_stops_fit_after_a_whole_step():
    rng = np.random.RandomState(0)
    data = ls.data.from_numpy(rng.rand(400, 1, 28, 28).astype(np.float32), rng.randint(0, 10, 400))
    ls.manual_seed(1)
    model = lenet()
    optimizer = ls.optim.Adam(model.parameters())
    timers = []

    def start_the_clock(progress):  # the signal comes while fit runs, never before
        if not timers:
            timers.append(interrupt_after(0.2))

    try:
        with pytest.raises(KeyboardInterrupt):
            ls.fit(model, optimizer, data, epochs=1000, batch_size=50, seed=3, on_progress=start_the_clock)
    finally:
        for t in timers:
            t.cancel()
    done = optimizer.step_count
    assert 0 < done < 8000
    ls.manual_seed(1)
    again = lenet()
    ls.fit(again, ls.optim.Adam(again.parameters()), data, epochs=1000, batch_size=50, seed=3, max_steps=done)
    assert model.hash() == again.hash()  # nothing half-done
    assert (model(ls.zeros(1, 1, 28, 28)).shape == (1, 10))  # and the library works on


def test_ctrl_c_stops_the_reference_run(mnist_dir):
    timer = interrupt_after(0.3)
    start = time.perf_counter()
    try:
        with pytest.raises(KeyboardInterrupt):
            ls.mnist_reference_run(mnist_dir, epochs=20)  # minutes, uninterrupted
    finally:
        timer.cancel()
    assert time.perf_counter() - start < 10
    assert ls.mnist_reference_run(mnist_dir, max_steps=1, max_test=10)["steps"] == 1
