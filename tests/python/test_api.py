"""The public API is typed and documented: every exported name has a type stub (editors complete
it) and a docstring (help() explains it)."""
import ast
import inspect
import os

import pytest

import lockstep as ls

PACKAGE = os.path.dirname(ls.__file__)
MODULES = {"": ls, "nn": ls.nn, "optim": ls.optim, "data": ls.data}
STUBS = {"": "__init__.pyi", "nn": "nn/__init__.pyi", "optim": "optim/__init__.pyi", "data": "data.pyi"}


def stub_names(path):
    tree = ast.parse(open(os.path.join(PACKAGE, path)).read())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.AnnAssign, ast.Assign)):
            for target in ([node.target] if isinstance(node, ast.AnnAssign) else node.targets):
                if isinstance(target, ast.Name):
                    names.add(target.id)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
    return names


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_public_name_has_a_stub(name):
    module = MODULES[name]
    missing = set(module.__all__) - stub_names(STUBS[name])
    assert not missing, "%s: no stub for %s" % (STUBS[name], sorted(missing))
    for public in module.__all__:
        assert hasattr(module, public), public


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_public_callable_is_documented(name):
    module = MODULES[name]
    undocumented = [n for n in module.__all__
                    if (inspect.isclass(getattr(module, n)) or callable(getattr(module, n)))
                    and not isinstance(getattr(module, n), ls.dtype) and not inspect.getdoc(getattr(module, n))]
    assert not undocumented, undocumented
    assert inspect.getdoc(module)


def test_help_explains_the_main_entry_points():
    for obj, words in [(ls.from_torch_module, "dropout/<module path>"), (ls.fit, "KeyboardInterrupt"),
                       (ls.nn.Dropout, "dropout/k"), (ls.from_numpy, "copies"), (ls.Tensor.numpy, "shares"),
                       (ls.nn.MultiheadAttention, "in_proj_weight")]:
        assert words in inspect.getdoc(obj), obj
