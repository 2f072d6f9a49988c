"""Shared by the scripts of tests/diagnostics: the build's programs, traces read independently of
lockstep diff, and lockstep diff's report parsed."""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DATA = os.environ.get("LOCKSTEP_MNIST_DIR", os.path.join(ROOT, ".deps", "data", "mnist"))
PYTHON = sys.executable or "/usr/bin/python3"
HELPER = os.path.join(HERE, "torch_lenet_trace.py")
# A script's exit status when torch or the build is missing: 77 (skipped), but 1 in make test
# (tools/run-tests sets LOCKSTEP_REQUIRE_ALL=1: set-up installs everything, so a skip is a failure).
SKIP = 1 if os.environ.get("LOCKSTEP_REQUIRE_ALL") == "1" else 77


def programs(build):
    """(lockstep_mnist_steps, lockstep CLI) in the build folder, and what is missing."""
    steps = os.path.join(build, "tests", "reference", "lockstep_mnist_steps")
    cli = os.path.join(build, "bindings", "native", "cli", "lockstep")
    missing = [p for p in (steps, cli) if not os.access(p, os.X_OK)]
    missing += [os.path.join(DATA, f) for f in ("train-images.idx", "train-labels.idx")
                if not os.path.isfile(os.path.join(DATA, f))]
    return steps, cli, missing


def torch_available():
    try:
        import torch  # noqa: F401
        import numpy  # noqa: F401
        return True
    except ImportError:
        return False


def read_trace(path):
    """(header, records) of a trace, checked for its end line."""
    lines = open(path, encoding="utf-8").read().splitlines()
    header = json.loads(lines[0])
    end = json.loads(lines[-1])
    records = [json.loads(l) for l in lines[1:-1]]
    if end.get("end") is not True or end.get("records") != len(records):
        raise ValueError("%s: bad end line %r" % (path, lines[-1]))
    return header, records


def key(r):
    return (r["step"], r["phase"], r["module"], r["op"], r["call"], r.get("out", 0), r.get("param", ""))


def compare(a_records, b_records):
    """Independent of lockstep diff: aligned keys in A's order, the first whose bits differ (a
    record of A, or None), and the first step whose "update" records differ (None: none)."""
    b = {key(r): r for r in b_records}
    aligned, first, first_update = [], None, None
    for r in a_records:
        other = b.get(key(r))
        if other is None:
            continue
        aligned.append(key(r))
        same = r["hash"] == other["hash"] and r["shape"] == other["shape"] and r["dtype"] == other["dtype"]
        if not same:
            if first is None:
                first = r
            if r["phase"] == "update" and (first_update is None or r["step"] < first_update):
                first_update = r["step"]
    return aligned, first, first_update


def describe(r):
    """A record as lockstep diff names it (TraceRecord::Describe)."""
    if r.get("param"):
        return "step %d %s parameter %s (%s)" % (r["step"], r["phase"], r["param"], r["op"])
    text = "step %d %s %s %s call %d" % (r["step"], r["phase"], r["module"] or "(top level)", r["op"], r["call"])
    return text + (" output %d" % r["out"] if r.get("out", 0) else "")


def run_diff(cli, a, b, a_values=None, b_values=None, html=None):
    cmd = [cli, "diff", a, b]
    if a_values and b_values:
        cmd += ["--a-values", a_values, "--b-values", b_values]
    if html:
        cmd += ["--html", html]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return r.returncode, r.stdout


_DESCRIBE_PARAM = re.compile(r"^step (\d+) (\S+) parameter (\S+) \((\S+)\)$")
_DESCRIBE_OP = re.compile(r"^step (\d+) (\S+) (.+) (\S+) call (\d+)(?: output (\d+))?$")


def parse_describe(text):
    """lockstep diff's TraceRecord::Describe() back to a dict (module "" for "(top level)")."""
    m = _DESCRIBE_PARAM.match(text)
    if m:
        return {"step": int(m.group(1)), "phase": m.group(2), "param": m.group(3), "op": m.group(4)}
    m = _DESCRIBE_OP.match(text)
    if m:
        module = m.group(3)
        return {"step": int(m.group(1)), "phase": m.group(2), "module": "" if module == "(top level)" else module,
                "op": m.group(4), "call": int(m.group(5)), "out": int(m.group(6) or 0)}
    return None


def matches(described, record):
    return described is not None and all(record.get(k, 0 if k == "out" else "") == v for k, v in described.items())


def first_divergence(report):
    """The FIRST DIVERGENCE line and the one after it, and the record it names (parsed)."""
    lines = report.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("FIRST DIVERGENCE: "):
            return line, (lines[i + 1] if i + 1 < len(lines) else ""), parse_describe(line[len("FIRST DIVERGENCE: "):])
    return None, None, None


def says_identical(report):
    """Whether lockstep diff's verdict is that every aligned record has the same bits."""
    return any(line.startswith("IDENTICAL:") for line in report.splitlines())


def compared_count(report):
    m = re.search(r"compared (\d+) aligned records: (\d+) identical, (\d+) different", report)
    return tuple(int(g) for g in m.groups()) if m else None


def section(report, title):
    """The lines of a report section, from its title to the next blank line."""
    lines = report.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(title):
            out = [line]
            for l in lines[i + 1:]:
                if not l.strip():
                    break
                out.append(l)
            return out
    return []


class Checks:
    def __init__(self, name):
        self.name, self.failures = name, []

    def __call__(self, ok, what):
        print("  %s %s" % ("ok  " if ok else "FAIL", what))
        if not ok:
            self.failures.append(what)
        return ok

    def finish(self):
        if self.failures:
            print("%s: FAILED: %d check(s): %s" % (self.name, len(self.failures), "; ".join(self.failures)))
            return 1
        print("%s: all checks passed" % self.name)
        return 0
