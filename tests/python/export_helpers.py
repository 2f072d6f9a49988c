"""What the export tests share (test_export.py, test_torch_zoo.py): dropout streams matched between a
converted module and its exported file, SGD-with-momentum training steps, and the same steps on the
file in the npm package under Node (returning its model hash)."""
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

import lockstep
from lockstep.nn import functional as F

from conftest import BUILD

PACKAGE = os.environ.get("LOCKSTEP_NPM_PACKAGE", os.path.join(BUILD, "npm", "package"))
SEED = 7


def match_streams(converted, seed):
    """The converted module's dropout sites draw the streams the exported file's Dropout nodes draw
    (lockstep.onnx.load(path, seed) names them "onnx.dropout.<node>", the node named after the site).
    A module converted without dropout has none."""
    gens = converted.__dict__.get("_generators", {})
    for site in gens:
        gens[site] = lockstep.Generator(seed, "onnx.dropout." + site)


def train_steps(model, x, targets, steps=2):
    model.train()
    opt = lockstep.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    y = lockstep.from_numpy(np.asarray(targets, dtype=np.int64))
    for _ in range(steps):
        opt.zero_grad()
        out = model(x)
        if isinstance(out, tuple):  # GoogLeNet's outputs in training: the main classifier's
            out = out[0]
        F.cross_entropy(out.reshape(-1, out.shape[-1]), y).backward()
        opt.step()


NODE_SCRIPT = r"""
import { readFileSync } from 'node:fs';
import path from 'node:path';
const [pkg, file, xFile, xShape, xType, yFile, seed, streams] = process.argv.slice(2);
const { load } = await import(path.join(pkg, 'index.js'));
const ls = await load({ build: 'simd' });
const bytes = new Uint8Array(readFileSync(file));
// 'onnx': the file's streams "onnx.dropout.<node>"; 'path': the converted module's "dropout/<path>".
const model = streams === 'path' ? ls.onnx.load(bytes) : ls.onnx.load(bytes, { seed: Number(seed) });
if (streams === 'path') ls.nn.seedDropoutStreams(model, Number(seed));
const raw = readFileSync(xFile);
const shape = JSON.parse(xShape);
const data = xType === 'int64' ? Array.from(new BigInt64Array(raw.buffer, raw.byteOffset, raw.length / 8), Number)
  : new Float32Array(raw.buffer, raw.byteOffset, raw.length / 4);
const x = ls.tensor(data, shape, { dtype: xType === 'int64' ? 'int64' : 'float32' });
const yRaw = readFileSync(yFile);
const targets = Array.from(new BigInt64Array(yRaw.buffer, yRaw.byteOffset, yRaw.length / 8), Number);
model.train();
const opt = new ls.optim.SGD(model, { lr: 0.05, momentum: 0.9 });
for (let i = 0; i < 2; ++i) {
  opt.zeroGrad();
  const out = model.forward(x);
  const logits = out.reshape(-1, out.shape[out.shape.length - 1]);
  const loss = ls.nn.functional.crossEntropy(logits, targets);
  loss.backward();
  opt.step();
}
console.log(JSON.stringify({ hash: model.hash() }));
"""


def node_train(tmp_path, onnx_path, x, targets, streams="onnx"):
    """Two steps of the file in the npm package; streams "onnx" loads it with SEED (the file's
    dropout streams), "path" loads it and calls ls.nn.seedDropoutStreams (the converted module's)."""
    node = shutil.which("node")
    if node is None or not os.path.exists(os.path.join(PACKAGE, "index.js")):
        pytest.fail("node or the npm package (%s; tools/build-npm-package) missing" % PACKAGE)
    script = tmp_path / "train.mjs"
    script.write_text(NODE_SCRIPT)
    xa = x.numpy()
    (tmp_path / "x.bin").write_bytes(np.ascontiguousarray(xa).tobytes())
    (tmp_path / "y.bin").write_bytes(np.asarray(targets, dtype=np.int64).tobytes())
    kind = "int64" if xa.dtype == np.int64 else "float32"
    env = dict(os.environ, NODE_PATH=os.environ.get("NODE_PATH", "/usr/share/nodejs"))
    out = subprocess.run([node, str(script), PACKAGE, str(onnx_path), str(tmp_path / "x.bin"),
                          json.dumps(list(xa.shape)), kind, str(tmp_path / "y.bin"), str(SEED), streams],
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])["hash"]


def bits_equal(a, b):
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    return a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))
