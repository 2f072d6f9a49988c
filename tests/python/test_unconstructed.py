"""Objects made with ``cls.__new__(cls)`` alone, their __init__ never run: every method of every
class bound in lockstep._C must refuse them with a TypeError naming the class (before the fix, the
first method call ran on raw memory and crashed the interpreter). Each check runs in a subprocess,
so a crash fails the test instead of ending the test run."""
import os
import subprocess
import sys
import textwrap

from conftest import PACKAGE_DIR

# Prints each call before it tries it (so a crash shows which), and exits 0 only when every class
# refused such an object at least once, always with a TypeError naming the class (or the bound base
# whose method was called).
PROBE = textwrap.dedent(r"""
    import sys
    sys.path.insert(0, sys.argv[1])
    import lockstep
    from lockstep import _C

    def classes(scope, seen):
        for value in vars(scope).values():
            if isinstance(value, type) and type(value).__name__ == "pybind11_type" and value not in seen:
                seen.append(value)
                classes(value, seen)  # nested classes
            elif type(value).__name__ == "module" and value.__name__.startswith("lockstep._C"):
                classes(value, seen)
        return seen

    def engine_methods(cls):
        # Methods and property getters bound in C++ (in cls or a bound base), not the constructors
        # (which construct such an object) nor the class-level (static) properties.
        for klass in cls.__mro__:
            if type(klass).__name__ != "pybind11_type":
                continue
            for name, value in vars(klass).items():
                if name in ("__init__", "_cinit", "__setstate__"):
                    continue
                if type(value) is property:
                    value = value.fget
                if type(value).__name__ == "instancemethod":
                    yield name, value.__func__

    failures = 0
    found = classes(_C, [])
    print("classes", len(found), flush=True)
    for cls in found:
        refused = 0
        for name, method in engine_methods(cls):
            for extra in range(6):  # the method's arity is not known: try 0 to 5 more arguments
                print("%s.%s" % (cls.__qualname__, name), extra, flush=True)
                obj = cls.__new__(cls)
                try:
                    method(obj, *[None] * extra)
                except Exception as e:  # wrong arguments, or the refusal; a call may also return
                    if "__init__ never ran" in str(e):  # (one that needs only the Python object)
                        refused += 1
                        named = str(e).split(":")[0].rsplit(".", 1)[-1]  # the class or the base the method takes
                        if type(e) is not TypeError or named not in [k.__qualname__ for k in cls.__mro__]:
                            print("FAIL: %s: %s" % (type(e).__name__, e), flush=True)
                            failures += 1
        if not refused:
            print("FAIL: no method of %s refused an unconstructed object" % cls.__qualname__, flush=True)
            failures += 1
    print("failures", failures, flush=True)
    sys.exit(1 if failures else 0)
""")


def run(code, *args):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-c", code, PACKAGE_DIR, *args], capture_output=True, text=True,
                          timeout=300, env=env)


def explain(proc):
    lines = proc.stdout.splitlines()
    failures = [line for line in lines if line.startswith("FAIL")]
    return "exit status %d; last call: %s\n%s\n%s" % (proc.returncode, lines[-1] if lines else "(none)",
                                                      "\n".join(failures[:20]), proc.stderr[-2000:])


def test_tensor_new_then_a_method_raises_type_error():
    code = textwrap.dedent("""
        import sys
        sys.path.insert(0, sys.argv[1])
        import lockstep
        t = lockstep.Tensor.__new__(lockstep.Tensor)
        try:
            t.numel()
        except TypeError as e:
            print(e)
        t = lockstep.Tensor.__new__(lockstep.Tensor)
        try:
            repr(t)
        except TypeError as e:
            print(e)
        print(lockstep.ones(2).tolist())  # the library goes on working
    """)
    proc = run(code)
    assert proc.returncode == 0, explain(proc)
    lines = proc.stdout.splitlines()
    assert len(lines) == 3, proc.stdout
    for line in lines[:2]:
        assert line.startswith("lockstep.Tensor: this object's __init__ never ran (it was made with __new__ alone)"), line
        assert line.endswith("so it holds no engine object; create it by calling its class"), line
    assert lines[2] == "[1.0, 1.0]"


def test_every_bound_class_refuses_unconstructed_objects():
    proc = run(PROBE)
    assert proc.returncode == 0, explain(proc)
    counts = proc.stdout.splitlines()
    assert int(counts[0].split()[1]) >= 38, counts[0]  # the walk found the bindings' classes (38 when written)
    assert counts[-1] == "failures 0"
