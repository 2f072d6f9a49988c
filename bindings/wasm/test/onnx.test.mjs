// ONNX models through the npm package (ls.onnx.load), both WebAssembly builds: the reference
// models give the golden output and checkpoint hashes of tests/golden/onnx.txt (the native
// `lockstep run` and `lockstep convert` print the same), LeNet-5 fine-tuned for 3 Adam steps in
// file order gives the golden fine-tuned hash, run() takes inputs by name, and misuse throws.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { builds, loadLockstep, mnistDatasets, root } from './helpers.mjs';

const modelsDir = process.env.LOCKSTEP_ONNX_MODELS ?? path.join(root, '.deps/onnx');
const golden = {};
for (const line of readFileSync(path.join(root, 'tests/golden/onnx.txt'), 'utf8').split('\n')) {
  const [model, kind, hash] = line.trim().split(/\s+/);
  if (!model || model.startsWith('#')) continue;
  golden[`${model} ${kind}`] = hash;
}

// A .npy file (version 1, C order, '<f4' or '<i8') as { shape, dtype, data }.
function readNpy(file) {
  const bytes = readFileSync(file);
  const headerLength = bytes.readUInt16LE(8);
  const header = bytes.subarray(10, 10 + headerLength).toString('latin1');
  const descr = /'descr': '([^']+)'/.exec(header)[1];
  const shape = /'shape': \(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  const body = bytes.subarray(10 + headerLength);
  const copy = new Uint8Array(body).buffer;
  if (descr === '<f4') return { shape, dtype: 'float32', data: new Float32Array(copy) };
  if (descr === '<i8') return { shape, dtype: 'int64', data: Array.from(new BigInt64Array(copy), Number) };
  throw new Error(`readNpy: unexpected ${descr}`);
}

const bytesOf = (array) => new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
const modelBytes = (name) => new Uint8Array(readFileSync(path.join(modelsDir, `${name}.onnx`)));

for (const build of builds) {
  test(`${build}: the reference ONNX models give the golden output and checkpoint hashes`, async () => {
    const ls = await loadLockstep({ build });
    for (const name of ['lenet5', 'mlp_bn', 'resnet_small', 'transformer']) {
      const model = ls.onnx.load(modelBytes(name));
      const npy = readNpy(path.join(modelsDir, `${name}.input.npy`));
      const input = ls.tensor(npy.data, npy.shape, { dtype: npy.dtype });
      const output = ls.noGrad(() => model.forward(input));
      assert.equal(ls.sha256(bytesOf(output.toArray())), golden[`${name} output`], `${name} output`);
      assert.equal(model.hash(), golden[`${name} checkpoint`], `${name} checkpoint`);
      assert.equal(ls.sha256(model.save()), model.hash());
      // run() by name gives the same bits as forward.
      const byName = ls.noGrad(() => model.run({ [model.inputs[0].name]: input }));
      assert.deepEqual(Object.keys(byName), [model.outputs[0].name]);
      assert.equal(ls.sha256(bytesOf(byName[model.outputs[0].name].toArray())), golden[`${name} output`]);
      [model, input, output, ...Object.values(byName)].forEach((o) => o.dispose());
    }
  });

  test(`${build}: LeNet-5 imported from ONNX, fine-tuned for 3 Adam steps, gives the golden hash`, async () => {
    const ls = await loadLockstep({ build });
    const model = ls.onnx.load(modelBytes('lenet5'));
    assert.deepEqual(model.inputs, [{ name: 'images', dtype: 'float', shape: ['batch', 1, 28, 28] }]);
    assert.equal(model.namedParameters().map(([n, t]) => { t.dispose(); return n; })[0], 'conv1.weight');
    const { train, test: testSet } = mnistDatasets(ls);
    const optimizer = new ls.optim.Adam(model);
    model.train();
    for (let step = 0; step < 3; ++step) {
      const batch = train.slice(step * 100, 100);
      const [x, y] = [batch.inputs, batch.labels];
      optimizer.zeroGrad();
      const loss = ls.nn.functional.crossEntropy(model.forward(x), y);
      loss.backward();
      optimizer.step();
      [batch, x, y, loss].forEach((o) => o.dispose());
    }
    assert.equal(model.hash(), golden['lenet5 finetune']);
    const subset = testSet.slice(0, 100);
    const result = ls.evaluate(model, subset);
    assert.equal(result.examples, 100);
    // fit() takes an imported model like any other.
    const before = model.hash();
    const fitted = await ls.fit(model, optimizer, train, { maxSteps: 2, seed: 1 });
    assert.equal(fitted.steps, 2);
    assert.notEqual(model.hash(), before);
    [model, optimizer, train, testSet, subset].forEach((o) => o.dispose());
  });

  test(`${build}: ONNX misuse throws errors that say what was wrong`, async () => {
    const ls = await loadLockstep({ build });
    const truncated = modelBytes('lenet5').subarray(0, 1000);
    assert.throws(() => ls.onnx.load(truncated), (e) => e.kind === 'format' && /declares \d+ bytes/.test(e.message));
    assert.throws(() => ls.onnx.load(new Uint8Array([1, 2, 3])), (e) => e.kind === 'format');
    assert.throws(() => ls.onnx.load('lenet5.onnx'), TypeError);
    assert.throws(() => ls.onnx.load(modelBytes('lenet5'), { seeds: 1 }), TypeError);
    const model = ls.onnx.load(modelBytes('transformer'));
    const floats = ls.zeros(4, 16);
    assert.throws(() => model.forward(floats), (e) => e.kind === 'argument' && /declared int64, got float/.test(e.message));
    assert.throws(() => model.run({ images: floats }), TypeError);
    assert.throws(() => model.run([]), RangeError);
    assert.throws(() => model.run({}), /missing input 'tokens'/);
    // The module keeps working after the errors.
    const tokens = ls.tensor(new Array(32).fill(3), [2, 16], { dtype: 'int64' });
    const logits = ls.noGrad(() => model.forward(tokens));
    assert.deepEqual(logits.shape, [2, 16, 64]);
    [model, floats, tokens, logits].forEach((o) => o.dispose());
  });
}
