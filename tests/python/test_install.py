"""The package installs with pip into a fresh virtual environment (from the build tree, no network)
and imports by name there, with its type stubs."""
import os
import shutil
import subprocess

from conftest import PACKAGE_DIR


def test_pip_install_into_a_fresh_venv(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)], check=True)
    source = tmp_path / "source"  # a copy, so pip's build files stay out of the build tree
    shutil.copytree(PACKAGE_DIR, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_FIND_LINKS")}
    env["PIP_NO_INDEX"] = "1"
    out = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-index", "--no-build-isolation", "--quiet",
                          str(source)], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    check = ("import lockstep, os, sys\n"
             "assert os.path.realpath(lockstep.__file__).startswith(os.path.realpath(sys.prefix)), lockstep.__file__\n"
             "here = os.path.dirname(lockstep.__file__)\n"
             "assert os.path.exists(os.path.join(here, 'py.typed')) and os.path.exists(os.path.join(here, '__init__.pyi'))\n"
             "lockstep.manual_seed(2)\n"
             "from lockstep import nn\n"
             "m = nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), "
             "nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), "
             "nn.ReLU(), nn.Linear(84, 10))\n"
             "print(m.hash())\n")
    run = subprocess.run([str(venv / "bin" / "python"), "-c", check], cwd=str(tmp_path), env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "6e81662d18be056c8ceae58f214a85418520a7f5550563ba17e9c0a3fdd80111"
