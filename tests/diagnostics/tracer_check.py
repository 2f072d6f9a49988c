#!/usr/bin/python3
"""Checks of tools/torch_trace itself: the hash, the records, the hooks.

  /usr/bin/python3 tests/diagnostics/tracer_check.py [BUILD_DIR]

1. The hash: torch_trace.bits_hash against a plain-Python transcription of docs/diagnostics.md
   (every length 0..24 bytes, random buffers, chunk boundaries).
2. The hash and statistics against lockstep's own records (needs BUILD_DIR with
   tests/reference/lockstep_mnist_steps and the MNIST IDX files; skipped otherwise):
   `lockstep_mnist_steps --steps 2 --trace` records the "grad" of every parameter at step 1 and its
   "update" at every step; steps.safetensors holds the same tensors (grad.01/NAME, params.NN/NAME)
   and each step's loss (the "cross_entropy" record: 4 bytes, the padded-word path). Each hash must
   be equal; min, max and the NaN and Inf counts too, and mean and l2 close (they depend on how the
   sums are taken: l2 within 1e-5 relative, the mean within 1e-5 of the root mean square).
3. A model that is not LeNet (embedding, layer norm, GELU, dropout, residual blocks in a
   Sequential, a module returning a tuple): module paths, phases, op names, call and out indices,
   backward attribution to the innermost module, parameter records, nothing recorded outside a
   step, two runs give the same bytes, and `lockstep diff` reads the trace (exit 0 against itself).
4. The values sidecar: lockstep's reader takes it; a one-ulp change of one weight is reported by
   `lockstep diff --a-values --b-values` in ulps.
5. An exception (and Ctrl-C, KeyboardInterrupt) inside a step: the dispatch mode, the patched
   backward functions, the module hooks and the optimizer wrapper are all gone and no file is
   written; close() after a normal run removes every hook too.
Exit status 0 all passed, 1 a check failed, 77 when torch or numpy cannot be imported. Under
LOCKSTEP_REQUIRE_ALL=1 (make test) a missing torch, build or data is a failure, not a skip.
"""
import json
import os
import random
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "torch_trace"))
sys.path.insert(0, HERE)

failures = []
# make test (tools/run-tests) sets it: set-up installs everything, so a skip is a failure there.
REQUIRE_ALL = os.environ.get("LOCKSTEP_REQUIRE_ALL") == "1"


def check(ok, what):
    print("  %s %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        failures.append(what)
    return ok


def skipped(what):
    """Checks left out for want of the build or the data: a failure under LOCKSTEP_REQUIRE_ALL=1."""
    if REQUIRE_ALL:
        check(False, "skipped under LOCKSTEP_REQUIRE_ALL=1: " + what)
    else:
        print("  skipped: " + what)


def reference_hash(data):
    """docs/diagnostics.md's algorithm, one word at a time in Python integers."""
    mask = (1 << 64) - 1

    def fmix(k):
        k ^= k >> 33
        k = (k * 0xff51afd7ed558ccd) & mask
        k ^= k >> 33
        k = (k * 0xc4ceb9fe1a85ec53) & mask
        return k ^ (k >> 33)
    out = ""
    for p, q in ((0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9), (0xC2B2AE3D27D4EB4F, 0x94D049BB133111EB)):
        s = 0
        for i in range(0, len(data), 8):
            w = int.from_bytes(data[i:i + 8].ljust(8, b"\0"), "little")
            x = ((w + (i // 8 + 1) * p) * q) & mask
            s = (s + (x ^ (x >> 31))) & mask
        out += "%016x" % fmix(s ^ ((len(data) * p) & mask))
    return out


def read_trace(path):
    lines = open(path, encoding="utf-8").read().splitlines()
    header, records, end = json.loads(lines[0]), [json.loads(l) for l in lines[1:-1]], json.loads(lines[-1])
    return header, records, end


def key(r):
    return (r["step"], r["phase"], r["module"], r["op"], r["call"], r.get("out", 0), r.get("param", ""))


def hash_known_answers(torch_trace, np):
    print("1. the hash against a plain transcription of docs/diagnostics.md")
    rng = random.Random(1)
    ok = True
    for n in list(range(25)) + [999, 4096 + 3]:
        data = bytes(rng.randrange(256) for _ in range(n))
        ok &= torch_trace.bits_hash(data) == reference_hash(data)
    check(ok, "lengths 0..24, 999 and 4099 bytes: equal")
    data = bytes(rng.randrange(256) for _ in range(8 * 37 + 5))
    saved = torch_trace._CHUNK
    try:
        torch_trace._CHUNK = 4  # many chunks, the last one partial
        chunked = torch_trace.bits_hash(data)
    finally:
        torch_trace._CHUNK = saved
    check(chunked == reference_hash(data) == torch_trace.bits_hash(data), "chunked vector passes: equal")
    a = np.arange(7, dtype=np.float32) / np.float32(3)
    check(torch_trace.bits_hash(a) == reference_hash(a.tobytes()) == torch_trace.bits_hash(a.tobytes()),
          "a numpy array hashes as its bytes")


def hash_against_lockstep(build, torch_trace, np, torch):
    print("2. the hash and statistics against lockstep's records (lockstep_mnist_steps --trace)")
    exe = os.path.join(build, "tests", "reference", "lockstep_mnist_steps") if build else ""
    data = os.path.join(ROOT, ".deps", "data", "mnist")
    if not exe or not os.path.isfile(exe) or not os.path.isfile(os.path.join(data, "train-images.idx")):
        skipped("no %s or no MNIST IDX files in %s" % (exe or "BUILD_DIR argument", data))
        return
    from torch_lenet_trace import read_safetensors
    with tempfile.TemporaryDirectory() as work:
        trace = os.path.join(work, "ls.trace")
        r = subprocess.run([exe, "--data", data, "--steps", "2", "--trace", trace, work], stdout=subprocess.DEVNULL)
        if not check(r.returncode == 0, "lockstep_mnist_steps --steps 2 --trace runs (exit %d)" % r.returncode):
            return
        tensors = read_safetensors(os.path.join(work, "steps.safetensors"))
        _, records, _ = read_trace(trace)
    compared, bad, stats_bad, stats_text = 0, [], [], 0
    for rec in records:
        if rec["phase"] == "grad" and rec["step"] == 1:
            a = tensors["grad.01/" + rec["param"]]
        elif rec["phase"] == "update":
            a = tensors["params.%02d/%s" % (rec["step"], rec["param"])]
        elif rec["op"] == "cross_entropy":
            a = tensors["loss"][rec["step"] - 1:rec["step"]].reshape(())
        else:
            continue
        compared += 1
        what = "step %d %s %s" % (rec["step"], rec["phase"], rec.get("param", rec["op"]))
        if torch_trace.bits_hash(a) != rec["hash"]:
            bad.append(what)
        mine = torch_trace.statistics(a.reshape(-1), torch.float32)
        theirs = tuple(("%.9g" % rec[k]) if rec[k] is not None else "null" for k in ("min", "max", "mean", "l2"))
        stats_text += mine[:4] == theirs and mine[4:] == (rec["nan"], rec["inf"])
        # min and max are exact in any order; mean and l2 depend on how the sums are taken
        # (docs/diagnostics.md: float64; a float32 sum differs by ~1e-7 relative): l2 within 1e-5
        # relative, the mean within 1e-5 of the root mean square (a gradient's mean cancels to ~0).
        try:
            rms = float(theirs[3]) / max(a.size, 1) ** 0.5
            close = (mine[:2] == theirs[:2] and mine[4:] == (rec["nan"], rec["inf"]) and
                     abs(float(mine[3]) - float(theirs[3])) <= 1e-5 * float(theirs[3]) and
                     abs(float(mine[2]) - float(theirs[2])) <= 1e-5 * rms)
        except ValueError:  # null statistics
            close = mine[:4] == theirs and mine[4:] == (rec["nan"], rec["inf"])
        if not close:
            stats_bad.append("%s (%s vs lockstep's %s)" % (what, mine[:4], theirs))
    check(compared == 10 + 20 + 2 and not bad,
          "%d records (step-1 grads, updates of steps 1-2, two 4-byte losses): the hashes are equal%s"
          % (compared, "" if not bad else "; differ: " + ", ".join(bad)))
    check(not stats_bad, "their statistics: min, max, NaN and Inf counts equal, l2 within 1e-5 relative, mean within 1e-5 of the RMS "
          "(identical as text in %d of %d)%s" % (stats_text, compared, "" if not stats_bad else
                                                 "; differ: " + ", ".join(stats_bad)))


def generic_model(torch):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm, self.fc, self.act, self.drop = nn.LayerNorm(16), nn.Linear(16, 16), nn.GELU(), nn.Dropout(0.1)

        def forward(self, x):
            return x + self.drop(self.act(self.fc(self.norm(x))))

    class Pair(nn.Module):
        def forward(self, x):
            return x * 2, torch.tanh(x)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(50, 16)
            self.blocks = nn.Sequential(Block(), Block())
            self.pair = Pair()
            self.head = nn.Linear(16, 5)

        def forward(self, idx):
            a, b = self.pair(self.blocks(self.emb(idx)))
            return self.head(a + b).mean(1)
    torch.manual_seed(3)
    return Net()


def run_generic(torch, Tracer, path, steps=2, values=None, nudge=False, match=""):
    F = torch.nn.functional
    model = generic_model(torch)
    if nudge:
        with torch.no_grad():
            w = model.head.weight
            w[0, 0] = torch.nextafter(w[0, 0], torch.tensor(1.0))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    tracer = Tracer(model, opt, path, values_path=values, values_match=match, source="tracer_check generic model")
    gen = torch.Generator().manual_seed(5)
    for step in range(1, steps + 1):
        idx = torch.randint(0, 50, (4, 7), generator=gen)
        y = torch.randint(0, 5, (4,), generator=gen)
        torch.manual_seed(100 + step)  # dropout
        with tracer.step(step):
            opt.zero_grad()
            loss = F.cross_entropy(model(idx), y)
            loss.backward()
            opt.step()
        with torch.no_grad():
            model(idx)  # outside a step: not recorded
    tracer.close()
    return model, opt, tracer


def hooks_left(model):
    return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules())


def generic_records(torch, Tracer, lockstep, work):
    print("3. a model that is not LeNet (embedding, layer norm, GELU, dropout, residual blocks, a tuple output)")
    path = os.path.join(work, "g.trace")
    model, opt, _ = run_generic(torch, Tracer, path)
    header, records, end = read_trace(path)
    check(header["lockstep_trace"] == 1 and header["producer"] == "torch_trace" and "torch_version" in header
          and "threads" in header, "header: %s" % json.dumps(header)[:160])
    check(end == {"end": True, "records": len(records)}, "end line: %d records" % len(records))
    check({r["step"] for r in records} == {1, 2}, "only the two steps are recorded (not the forward between them)")
    keys = [key(r) for r in records]
    check(len(keys) == len(set(keys)), "every record key (step, phase, module, op, call, out, param) is unique")
    ops = {(r["phase"], r["module"], r["op"]) for r in records}
    expected_forward = [("forward", "emb", "embedding"), ("forward", "blocks.0.norm", "layer_norm"),
                        ("forward", "blocks.0.fc", "linear"), ("forward", "blocks.1.act", "gelu"),
                        ("forward", "blocks.1.drop", "aten.bernoulli_"), ("forward", "blocks.0", "add"),
                        ("forward", "pair", "mul"), ("forward", "pair", "tanh"), ("forward", "", "log_softmax"),
                        ("forward", "", "nll_loss"), ("forward", "blocks", "output"), ("forward", "", "output")]
    missing = [o for o in expected_forward if o not in ops]
    check(not missing, "forward ops in their modules (embedding, layer_norm, linear, gelu, bernoulli_, add, ...)%s"
          % ("" if not missing else ": missing %s" % missing))
    pair = [r for r in records if r["step"] == 1 and r["module"] == "pair" and r["op"] == "output"]
    check([(r["call"], r["out"]) for r in pair] == [(0, 0), (0, 1)], "a tuple output: out 0 and 1 share call 0")
    drop = [r["op"] for r in records if r["step"] == 1 and r["phase"] == "forward" and r["module"] == "blocks.0.drop"]
    check(drop == ["aten.bernoulli_", "div", "mul", "output"],
          "dropout on the CPU (torch 1.13: no native_dropout): the mask (bernoulli_, in place), its scaling (div_, "
          "named div), the product, the output: %s" % drop)
    norm = [(r["op"], r["out"]) for r in records if r["step"] == 1 and r["module"] == "blocks.0.norm"
            and r["phase"] == "forward"]
    check(norm == [("layer_norm", 0), ("layer_norm", 1), ("layer_norm", 2), ("output", 0)],
          "native_layer_norm: out 0 the result, 1 the mean, 2 the reciprocal deviation")
    backward = {(r["module"], r["op"]) for r in records if r["phase"] == "backward"}
    expected_backward = [("", "nll_loss_backward"), ("", "log_softmax_backward"), ("blocks.1.fc", "matmul"),
                         ("blocks.1.act", "gelu_backward"), ("blocks.0.norm", "layer_norm_backward"),
                         ("blocks.0.drop", "mul"), ("emb", "embedding_backward"), ("head", "matmul")]
    missing = [o for o in expected_backward if o not in backward]
    check(not missing, "backward ops attributed to the module whose output gradient arrived%s"
          % ("" if not missing else ": missing %s" % missing))
    check(not any(m == "blocks" for m, _ in backward),
          "the outer Sequential 'blocks' never takes over its last block's gradient")
    ip_path = os.path.join(work, "inplace.trace")
    nn = torch.nn
    torch.manual_seed(0)
    ip = nn.Sequential(nn.Linear(8, 8), nn.ReLU(inplace=True), nn.Sequential(nn.Linear(8, 8), nn.ReLU(inplace=True)),
                       nn.Linear(8, 2))
    ip_opt = torch.optim.SGD(ip.parameters(), lr=0.1)
    x = torch.randn(3, 8)
    with Tracer(ip, ip_opt, ip_path) as tracer, tracer.step(1):
        ip(x).sum().backward()
        ip_opt.step()
    got = [(r["module"], r["op"]) for r in read_trace(ip_path)[1] if r["phase"] == "backward"]
    want = [("3", "matmul"), ("3", "matmul"), ("3", "aten.sum"), ("2.1", "relu_backward"), ("2.0", "matmul"),
            ("2.0", "matmul"), ("2.0", "aten.sum"), ("1", "relu_backward"), ("0", "matmul"), ("0", "aten.sum")]
    check(got == want, "ReLU(inplace=True) after Linear: relu_backward in the ReLU, the linear's gradients in the "
          "Linear%s" % ("" if got == want else ": %s" % got))
    names = [n for n, _ in model.named_parameters()]
    for phase in ("grad", "update"):
        got = [(r["param"], r["module"], r["call"]) for r in records if r["step"] == 2 and r["phase"] == phase]
        want, calls = [], {}
        for n in names:
            m = n.rpartition(".")[0]
            want.append((n, m, calls.get(m, 0)))
            calls[m] = calls.get(m, 0) + 1
        check(got == want, "%s: one record per parameter, module = the name's prefix, call counted per module"
              % phase)
    steps = {s: [key(r)[1:] for r in records if r["step"] == s] for s in (1, 2)}
    check(steps[1] == steps[2], "step 2 has the same records as step 1 (call indices restart; the accumulation "
          "into an existing .grad is not an op)")
    check(hooks_left(model) == 0 and "step" not in opt.__dict__, "close() removed the module hooks and the "
          "optimizer wrapper")
    again = os.path.join(work, "g2.trace")
    run_generic(torch, Tracer, again)
    check(open(path, "rb").read().split(b"\n", 1)[1] == open(again, "rb").read().split(b"\n", 1)[1],
          "a second run writes the same records, byte for byte")
    if lockstep:
        r = subprocess.run([lockstep, "diff", path, again], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        check(r.returncode == 0 and "IDENTICAL" in r.stdout, "lockstep diff reads it: identical to the second "
              "run (exit %d)" % r.returncode)
    else:
        skipped("lockstep diff (no CLI in the build folder)")
    return path


def values_sidecar(torch, Tracer, np, lockstep, work):
    print("4. the values sidecar")
    from torch_lenet_trace import read_safetensors
    a_path, a_values = os.path.join(work, "va.trace"), os.path.join(work, "va.safetensors")
    b_path, b_values = os.path.join(work, "vb.trace"), os.path.join(work, "vb.safetensors")
    run_generic(torch, Tracer, a_path, values=a_values)
    run_generic(torch, Tracer, b_path, values=b_values, nudge=True)
    _, records, _ = read_trace(a_path)
    tensors = read_safetensors(a_values)
    with_values = [r for r in records if "values" in r]
    import torch_trace
    same = all(torch_trace.bits_hash(tensors[r["values"]]) == r["hash"] and
               list(tensors[r["values"]].shape) == r["shape"] for r in with_values)
    check(with_values and all(r["step"] == 1 for r in with_values) and len(tensors) == len(with_values) and same,
          "%d step-1 records carry \"values\": r<record index>, whose bytes hash to the record's hash" % len(with_values))
    check(all(r["values"] == "r%d" % i for i, r in enumerate(records) if "values" in r),
          "the name is r<index of the record in the file>")
    m_path, m_values = os.path.join(work, "vm.trace"), os.path.join(work, "vm.safetensors")
    run_generic(torch, Tracer, m_path, values=m_values, match="head.weight/grad")
    _, records, _ = read_trace(m_path)
    chosen = [(r["phase"], r.get("param")) for r in records if "values" in r]
    check(chosen == [("grad", "head.weight")], "values_match is matched against module/op or param/op "
          "(\"head.weight/grad\": one record): %s" % chosen)
    if not lockstep:
        skipped("lockstep diff --a-values (no CLI in the build folder)")
        return
    r = subprocess.run([lockstep, "diff", a_path, b_path, "--a-values", a_values, "--b-values", b_values],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    first = [l for l in r.stdout.splitlines() if l.startswith("FIRST DIVERGENCE")]
    detail = r.stdout.splitlines()[r.stdout.splitlines().index(first[0]) + 1] if first else ""
    check(r.returncode == 1 and "step 1 forward head linear call 0" in (first or [""])[0] and "ulp" in detail,
          "one ulp in head.weight[0, 0]: lockstep diff reads both sidecars and names head's linear: %s /%s"
          % ((first or ["(none)"])[0], detail))


def exceptions(torch, Tracer, work):
    print("5. an exception or Ctrl-C inside a step")
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack
    F = torch.nn.functional
    originals = (torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad)
    for kind, where in ((RuntimeError, "forward"), (KeyboardInterrupt, "backward")):
        model = generic_model(torch)
        opt = torch.optim.Adam(model.parameters())
        path = os.path.join(work, "x.trace")
        tracer = Tracer(model, opt, path)
        idx = torch.randint(0, 50, (4, 7))
        with tracer.step(1):
            F.cross_entropy(model(idx), torch.zeros(4, dtype=torch.long)).backward()
            opt.step()
        raised = False
        try:
            with tracer.step(2):
                if where == "forward":
                    model.blocks[0].register_forward_hook(lambda m, i, o: (_ for _ in ()).throw(kind("boom")))
                loss = F.cross_entropy(model(idx), torch.zeros(4, dtype=torch.long))

                def interrupt(grad):
                    raise kind("boom")
                loss.register_hook(interrupt)
                loss.backward()
        except kind:
            raised = True
        tracer.close()
        clean = (raised and not _get_current_dispatch_mode_stack() and
                 (torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad) == originals and
                 hooks_left(model) <= (1 if where == "forward" else 0) and "step" not in opt.__dict__ and
                 not os.path.exists(path))
        check(clean, "%s in %s: no dispatch mode, backward functions restored, module hooks and optimizer "
              "wrapper removed, no file written" % (kind.__name__, where))
        try:
            with tracer.step(3):
                pass
            check(False, "a step after an abort is refused")
        except RuntimeError:
            pass
    model = generic_model(torch)
    opt = torch.optim.Adam(model.parameters())
    path = os.path.join(work, "y.trace")
    try:
        with Tracer(model, opt, path) as tracer, tracer.step(1):
            model(torch.randint(0, 50, (4, 7))).sum().backward()
            raise ValueError("boom")
    except ValueError:
        pass
    check(not os.path.exists(path) and hooks_left(model) == 0, "`with Tracer(...)` and an exception: aborted, "
          "hooks removed, no file")


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else ""
    try:
        import numpy as np
        import torch
    except ImportError as e:
        print("tracer_check: SKIPPED: %s cannot import torch or numpy (%s)" % (sys.executable, e))
        return 1 if REQUIRE_ALL else 77
    import torch_trace
    from torch_trace import Tracer
    torch.set_num_threads(1)
    lockstep = os.path.join(build, "bindings", "native", "cli", "lockstep") if build else ""
    if lockstep and not os.path.isfile(lockstep):
        print("tracer_check: no %s: the checks that need lockstep diff are skipped" % lockstep)
        lockstep = ""
    hash_known_answers(torch_trace, np)
    hash_against_lockstep(build, torch_trace, np, torch)
    with tempfile.TemporaryDirectory() as work:
        generic_records(torch, Tracer, lockstep, work)
        values_sidecar(torch, Tracer, np, lockstep, work)
        exceptions(torch, Tracer, work)
    if failures:
        print("tracer_check: FAILED: %d check(s): %s" % (len(failures), "; ".join(failures)))
        return 1
    print("tracer_check: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
