#!/usr/bin/env bash
# Idempotent set-up: installs everything lockstep needs from Debian's archive and the npm registry,
# and skips what is already there. Run by `make demo` and `make test`; safe to run again.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
deps="$root/.deps"
mkdir -p "$deps"

debian_packages=(
  build-essential cmake ninja-build pkg-config clang-14
  libhwy-dev doctest-dev libmpfr-dev libgmp-dev
  emscripten
  g++-aarch64-linux-gnu g++-s390x-linux-gnu qemu-user
  python3 python3-torch python3-torchvision python3-numpy
  python3-onnx libonnx-testdata
  python3-dev pybind11-dev python3-pybind11 python3-pytest python3-pytest-xdist python3-venv python3-setuptools python3-wheel
  libopenblas0-openmp libopenblas-dev
  libopenmpi-dev openmpi-bin
  chromium firefox-esr
  dpkg-dev
  libclang-rt-14-dev
  dataset-fashion-mnist
  fortunes
)

# Node.js: keep one that is already on the machine; otherwise take Debian's.
command -v node >/dev/null 2>&1 || debian_packages+=(nodejs npm)

missing=()
for p in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: Debian packages present"
fi

# Highway's runtime sources (hwy/targets.cc, per_target.cc, ...) for the AArch64 and WebAssembly
# builds. Debian ships them compiled only for amd64, so fetch Debian's own source package through a
# private APT configuration that mirrors this machine's binary entries as source entries.
"$root/tools/fetch-highway-source.sh" "$deps"

# doctest is header-only; the cross and WebAssembly builds must not see /usr/include, so they
# take a private copy of just its header.
if [ ! -f "$deps/doctest/doctest/doctest.h" ]; then
  mkdir -p "$deps/doctest" && cp -r /usr/include/doctest "$deps/doctest/"
fi

# npm packages that set-up and the tests use (package.json, package-lock.json): the MNIST digits,
# playwright-core and puppeteer-core (browser tests: Chromium, and Firefox over WebDriver BiDi) and
# typescript (checks the npm package's types). `npm ci` installs exactly the locked versions;
# skipped when node_modules already holds every one of them.
if node -e '
  const root = process.argv[1];
  const locked = require(root + "/package-lock.json").packages;
  const have = require(root + "/node_modules/.package-lock.json").packages;
  for (const name of Object.keys(require(root + "/package.json").dependencies)) {
    const key = "node_modules/" + name;
    const installed = require(root + "/" + key + "/package.json").version;
    if (!have[key] || have[key].version !== locked[key].version || have[key].integrity !== locked[key].integrity ||
        installed !== locked[key].version) process.exit(1);
  }
' "$root" 2>/dev/null; then
  echo "setup: npm packages present"
else
  echo "setup: installing npm packages (npm ci)"
  (cd "$root" && npm ci --no-audit --no-fund)
fi

# MNIST as IDX files, with the fixed split and order described in docs/data.md.
mnist="$deps/data/mnist"
if [ -f "$mnist/train-images.idx" ] && [ -f "$mnist/train-labels.idx" ] &&
   [ -f "$mnist/test-images.idx" ] && [ -f "$mnist/test-labels.idx" ]; then
  echo "setup: MNIST IDX files present"
else
  node "$root/tools/prepare-mnist.mjs" "$mnist"
fi

# Fashion-MNIST (Debian's dataset-fashion-mnist ships it gzipped) unpacked under the names the
# loader expects, so `--data .deps/data/fashion-mnist` works as is.
fashion_src=/usr/share/datasets/fashion-mnist
fashion="$deps/data/fashion-mnist"
if [ -d "$fashion_src" ] && [ ! -f "$fashion/test-labels.idx" ]; then
  mkdir -p "$fashion"
  for pair in train-images:train-images-idx3-ubyte train-labels:train-labels-idx1-ubyte \
              test-images:t10k-images-idx3-ubyte test-labels:t10k-labels-idx1-ubyte; do
    gunzip -c "$fashion_src/${pair#*:}.gz" > "$fashion/${pair%%:*}.idx.tmp" &&
      mv "$fashion/${pair%%:*}.idx.tmp" "$fashion/${pair%%:*}.idx"
  done
  echo "setup: Fashion-MNIST IDX files in $fashion"
fi

# The GPT example's text: seven of Debian's fortune files, concatenated in a fixed order, keeping
# newlines and printable ASCII only (docs/data.md). 920 KB; nanoGPT's split: first 90% train.
fortunes_text="$deps/data/fortunes/input.txt"
if [ ! -f "$fortunes_text" ]; then
  mkdir -p "$(dirname "$fortunes_text")"
  (cd /usr/share/games/fortunes &&
     cat computers linux literature people science songs-poems wisdom | LC_ALL=C tr -cd '\n\040-\176') \
    > "$fortunes_text.tmp"
  mv "$fortunes_text.tmp" "$fortunes_text"
  echo "setup: GPT text in $fortunes_text ($(wc -c < "$fortunes_text") bytes)"
fi

# The reference ONNX models (docs/onnx.md): exported by Debian's PyTorch from fixed values, the
# same bytes every time (tests/golden/onnx.txt holds their hashes). Exported again when the script
# that makes them changes.
onnx_models="$deps/onnx"
onnx_script="$root/tests/onnx/models/export_models.py"
onnx_stamp=$(sha256sum "$onnx_script" | cut -d' ' -f1)
if [ -f "$onnx_models/transformer.onnx" ] && [ "$(cat "$onnx_models/.script-sha256" 2>/dev/null)" = "$onnx_stamp" ]; then
  echo "setup: ONNX models present"
else
  /usr/bin/python3 -W ignore "$onnx_script" "$onnx_models" --check
  echo "$onnx_stamp" > "$onnx_models/.script-sha256"
fi

# `tools/setup.sh --bench` (make bench) also installs the benchmark's npm peers (bench/package.json:
# TensorFlow.js with its WASM backend, ONNX Runtime Web), which the tests do not need.
if [ "${1:-}" = --bench ]; then
  if [ -f "$root/bench/node_modules/@tensorflow/tfjs-backend-wasm/package.json" ] &&
     [ -f "$root/bench/node_modules/onnxruntime-web/package.json" ]; then
    echo "setup: benchmark peers present"
  else
    echo "setup: installing the benchmark's npm peers (npm ci in bench/)"
    (cd "$root/bench" && npm ci --no-audit --no-fund --ignore-scripts)
  fi
fi

echo "setup: done"
