"""fit(), evaluate() and the MNIST reference run: the training loop of the native library, the CLI
and the npm package (core/train/classifier_trainer.h), so the same model, data and seed give the
same hashes from Python as from every other front door."""
import collections
import math
import os
import time

from . import _C
from ._errors import ArgumentError

FitResult = collections.namedtuple("FitResult", ["steps", "losses", "final_loss"])
EvalResult = collections.namedtuple("EvalResult", ["examples", "correct", "accuracy", "logits_hash"])
Progress = collections.namedtuple("Progress", ["step", "total_steps", "epoch", "loss", "steps_per_second",
                                               "eta_seconds"])


def _count(value, where, name, minimum):
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ArgumentError("%s: %s must be an int >= %d, got %r" % (where, name, minimum, value))
    return value


def fit(model, optimizer, dataset, epochs=1, batch_size=100, seed=0, max_steps=None, on_progress=None,
        allow_nonfinite=False, receipt=None, receipt_every=0):
    """Trains a classifier with cross-entropy, as the reference run does: every epoch in the order
    of the seed's "shuffle" stream, the last partial batch dropped; each step takes the batch,
    zeroes the gradients, computes the loss of model(inputs) against the labels, runs backward and
    steps the optimizer. A run has min(epochs * batches per epoch, max_steps) steps.

    The engine runs each step without the GIL; Ctrl-C raises KeyboardInterrupt between steps,
    leaving the model after its last whole step. A NaN or infinite loss raises StateError before
    that step's update unless allow_nonfinite. on_progress(Progress) is called after every step.
    receipt: a path where the run's receipt is written (docs/verifiable-training.md), with the
    training state kept beside it every receipt_every steps (0: about ten over the run); verify_run
    checks it, given a model and optimizer made as these were. Returns FitResult(steps, losses,
    final_loss)."""
    epochs = _count(epochs, "fit", "epochs", 1)
    batch_size = _count(batch_size, "fit", "batch_size", 1)
    seed = _count(seed, "fit", "seed", 0)
    if max_steps is not None:
        max_steps = _count(max_steps, "fit", "max_steps", 0)
    receipt_every = _count(receipt_every, "fit", "receipt_every", 0)
    if on_progress is not None and not callable(on_progress):
        raise TypeError("fit: on_progress must be callable")
    trainer = _C._Trainer(model, optimizer, dataset, batch_size, seed)
    trainer.set_allow_nonfinite(bool(allow_nonfinite))
    per_epoch = trainer.steps_per_epoch()
    total = per_epoch * epochs if max_steps is None else min(per_epoch * epochs, max_steps)
    if receipt is not None:
        trainer.start_receipt(os.fspath(receipt), receipt_every, total)
    losses, start = [], time.perf_counter()
    for step in range(1, total + 1):
        losses.append(trainer.step())
        if on_progress is not None:
            rate = step / max(time.perf_counter() - start, 1e-9)
            on_progress(Progress(step, total, (step - 1) // per_epoch, losses[-1], rate, (total - step) / rate))
    if receipt is not None:
        trainer.finish_receipt()
    return FitResult(total, losses, losses[-1] if losses else math.nan)


def evaluate(model, dataset, batch_size=100, limit=None):
    """Evaluation mode, no gradients, data-set order: EvalResult(examples, correct, accuracy,
    logits_hash), logits_hash being the SHA-256 of every logit (little-endian float32) in order.
    ``limit``: only the first that many examples."""
    batch_size = _count(batch_size, "evaluate", "batch_size", 1)
    limit = -1 if limit is None else _count(limit, "evaluate", "limit", 1)
    r = _C._evaluate(model, dataset, batch_size, limit)
    return EvalResult(r["examples"], r["correct"], r["accuracy"], r["logits_hash"])


def mnist_reference_run(data_dir, epochs=20, seed=2, max_steps=None, max_test=None, lr=1e-3, save_path=None,
                        on_progress=None, receipt=None, receipt_every=0):
    """The MNIST reference run of examples/mnist and `lockstep train mnist` (LeNet-5, Adam, batch
    100) on the IDX files in data_dir: a dict with initial_hash, trained_hash, logits_hash,
    test_accuracy, steps, test_examples, final_loss (tests/golden/mnist.txt). The shortened run is
    max_steps=3, max_test=100. on_progress(step, total_steps, epoch, loss) after every step;
    Ctrl-C raises KeyboardInterrupt. receipt: a path where the run's receipt is written, with the
    training state kept beside it every receipt_every steps (0: about ten over the run), as
    `lockstep train mnist --receipt` writes them (docs/verifiable-training.md); verify_run checks it."""
    epochs = _count(epochs, "mnist_reference_run", "epochs", 1)
    seed = _count(seed, "mnist_reference_run", "seed", 0)
    max_steps = -1 if max_steps is None else _count(max_steps, "mnist_reference_run", "max_steps", 0)
    max_test = -1 if max_test is None else _count(max_test, "mnist_reference_run", "max_test", 1)
    receipt_every = _count(receipt_every, "mnist_reference_run", "receipt_every", 0)
    return _C._mnist_reference_run(os.fspath(data_dir), epochs, seed, max_steps, max_test, float(lr),
                                   "" if save_path is None else os.fspath(save_path), on_progress,
                                   "" if receipt is None else os.fspath(receipt), receipt_every)


VerifyResult = collections.namedtuple("VerifyResult", ["verified", "checked_steps", "executed_steps",
                                                       "first_mismatch", "mismatch", "report"])


def verify_run(receipt, data=None, checkpoint=None, steps=None, sample=None, seed=0, model=None, optimizer=None):
    """`lockstep verify-run` (docs/verifiable-training.md): re-executes steps of the receipt at path
    `receipt` (of an MNIST, GPT or fit() run, written by any front door on any platform) from the
    training states kept beside it, or from `checkpoint`, and checks each step's batch and state
    against the receipt's chain: every step (default), steps=(first, last), or `sample` steps drawn
    by `seed` (the CLI's --sample K --seed S draw). data: the training data (the IDX folder, or the
    GPT's text file; default the task's; a Dataset for a fit() run). A fit() run's receipt needs
    `model` and `optimizer` made as the run's were (the same architecture and seed, the same
    optimizer and options over the same parameters): the receipt checks their description, and the
    kept states are loaded into them. Returns VerifyResult(verified, checked_steps, executed_steps,
    first_mismatch (0: none), mismatch, report); a receipt or state that cannot be used (a tampered
    chain, a state that does not match its receipt, other data) raises FormatError, StateError or
    ArgumentError saying which."""
    first = last = 0
    if steps is not None:
        if not isinstance(steps, (tuple, list)) or len(steps) != 2:
            raise ArgumentError("verify_run: steps must be (first, last), got %r" % (steps,))
        first = _count(steps[0], "verify_run", "steps[0]", 1)
        last = _count(steps[1], "verify_run", "steps[1]", first)
    sample = 0 if sample is None else _count(sample, "verify_run", "sample", 1)
    seed = _count(seed, "verify_run", "seed", 0)
    dataset = data if isinstance(data, _C.Dataset) else None
    if (model is None) != (optimizer is None):
        raise ArgumentError("verify_run: a fit() run's receipt needs both model and optimizer, got only the %s"
                            % ("model" if optimizer is None else "optimizer"))
    if model is not None and dataset is None:
        raise ArgumentError("verify_run: a fit() run's receipt needs its training Dataset as data, got %r" % (data,))
    path = "" if data is None or dataset is not None else os.fspath(data)
    r = _C._verify_run(os.fspath(receipt), "" if checkpoint is None else os.fspath(checkpoint), first, last,
                       sample, seed, path, dataset, model, optimizer)
    return VerifyResult(r["verified"], r["checked_steps"], r["executed_steps"], r["first_mismatch"], r["mismatch"],
                        r["report"])
