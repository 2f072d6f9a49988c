"""Installs the lockstep package assembled by CMake in build/<preset>/python (the prebuilt extension
lockstep/_C*.so and the pure-Python files): `pip install --no-index --no-build-isolation
build/native/python`. Nothing is compiled here; CMake built the extension with the project's flags."""
import glob
import os

from setuptools import setup
from setuptools.dist import Distribution

here = os.path.dirname(os.path.abspath(__file__))
version = {}
with open(os.path.join(here, "lockstep", "_version.py")) as f:
    exec(f.read(), version)
if not glob.glob(os.path.join(here, "lockstep", "_C*.so")):
    raise SystemExit("lockstep: the extension lockstep/_C*.so is missing: build it first "
                     "(ninja -C build/native lockstep_python) and install from build/native/python")


class BinaryDistribution(Distribution):
    """The wheel holds a compiled extension: tag it for this Python and platform."""

    def has_ext_modules(self):
        return True


setup(
    name="lockstep",
    version=version["__version__"],
    description="Bitwise-reproducible deep learning with PyTorch's API",
    packages=["lockstep", "lockstep.nn", "lockstep.optim"],
    package_data={"lockstep": ["_C*.so", "*.pyi", "py.typed"], "lockstep.nn": ["*.pyi"],
                  "lockstep.optim": ["*.pyi"]},
    python_requires=">=3.8",
    install_requires=["numpy"],
    extras_require={"torch": ["torch"]},
    distclass=BinaryDistribution,
    zip_safe=False,
)
