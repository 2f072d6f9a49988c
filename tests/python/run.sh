#!/usr/bin/env bash
# The Python package's suite (`make test` step): builds the extension and the C++ counterpart of the
# conversion tests (natively and for WebAssembly), then runs pytest with Debian's Python against
# the package in the build tree. Fails when anything is missing; a test that skips (the CUDA plugin's
# host emulation not built) fails too under LOCKSTEP_REQUIRE_ALL=1, as make test sets (conftest.py).
#   tests/python/run.sh [BUILD_ROOT]      (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
cd "$root"
ninja -C "$build/native" lockstep_python lockstep_py_models
ninja -C "$build/wasm-simd" lockstep_py_models
export NODE_PATH=/usr/share/nodejs PYTHONDONTWRITEBYTECODE=1 LOCKSTEP_BUILD="$build"
unset PYTHONPATH
# One worker per CPU (pytest-xdist): each test builds its own models and temporary folders, and the
# suite's 270-odd tests spend much of their time in one thread (conversions, Node start-up).
exec /usr/bin/python3 -m pytest -q -p no:cacheprovider -n "$(nproc)" "$root/tests/python"
