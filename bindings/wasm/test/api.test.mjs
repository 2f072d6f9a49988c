// The JavaScript API: tensors, autograd, modules, optimizers, checkpoints, lifetimes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builds, loadLockstep } from './helpers.mjs';

for (const build of builds) {
  test(`${build}: tensors from arrays, shapes, arithmetic`, async () => {
    const ls = await loadLockstep({ build });
    assert.equal(ls.info.build, build);
    assert.equal(ls.info.contractVersion, 1);
    ls.scope(() => {
      const x = ls.tensor([[1, 2], [3, 4]]);
      assert.deepEqual(x.shape, [2, 2]);
      assert.equal(x.dtype, 'float32');
      assert.deepEqual([...x.toArray()], [1, 2, 3, 4]);
      assert.deepEqual([...x.matmul(x).toArray()], [7, 10, 15, 22]);
      assert.deepEqual([...x.add(1).toArray()], [2, 3, 4, 5]);
      assert.deepEqual([...x.sub(x).toArray()], [0, 0, 0, 0]);
      // A true division: 1/3 rounded once, not 1 * (1/3).
      assert.equal(ls.tensor([1]).div(3).toArray()[0], Math.fround(1 / 3));
      assert.deepEqual([...x.sum(1).toArray()], [3, 7]);
      assert.equal(x.mean().item(), 2.5);
      assert.deepEqual([...x.argmax(1).toArray()], [1, 1]);
      assert.deepEqual(x.reshape(-1).shape, [4]);
      assert.deepEqual(x.transpose(0, 1).contiguous().toArray(), new Float32Array([1, 3, 2, 4]));
      const labels = ls.tensor([3, 1], undefined, { dtype: 'int64' });
      assert.equal(labels.dtype, 'int64');
      assert.deepEqual([...labels.toArray()], [3, 1]);
      const p = ls.tensor([0, Math.log(3)]).softmax().toArray();
      assert.ok(Math.abs(p[0] - 0.25) < 1e-7 && Math.abs(p[1] - 0.75) < 1e-7);
    });
  });

  test(`${build}: autograd gives d(sum(x*x))/dx = 2x`, async () => {
    const ls = await loadLockstep({ build });
    ls.scope(() => {
      const x = ls.tensor([1, -2, 3]).requiresGrad_();
      x.mul(x).sum().backward();
      assert.deepEqual([...x.grad.toArray()], [2, -4, 6]);
      const y = ls.noGrad(() => x.mul(2));
      assert.equal(y.requiresGrad, false);
      assert.equal(ls.gradEnabled, true);
    });
  });

  test(`${build}: random draws depend only on seed and stream`, async () => {
    const ls = await loadLockstep({ build });
    ls.scope(() => {
      const a = ls.randn([5], { seed: 7 }).toArray();
      const b = ls.randn([5], { seed: 7 }).toArray();
      const c = ls.randn([5], { seed: 8 }).toArray();
      assert.deepEqual(a, b);
      assert.notDeepEqual(a, c);
      const g = new ls.Generator(7, 'randn');
      assert.deepEqual(ls.randn([5], { generator: g }).toArray(), a);
      assert.equal(g.offset > 0, true);
    });
  });

  test(`${build}: modules, optimizers, checkpoints round-trip with their hash`, async () => {
    const ls = await loadLockstep({ build });
    ls.manualSeed(3);
    ls.scope(() => {
      const model = new ls.nn.Sequential(new ls.nn.Flatten(), new ls.nn.Linear(4, 8), new ls.nn.ReLU(),
                                         new ls.nn.Linear(8, 3));
      assert.deepEqual(model.namedParameters().map(([n]) => n), ['1.weight', '1.bias', '3.weight', '3.bias']);
      const x = ls.randn([6, 2, 2], { seed: 1 });
      const y = [0, 1, 2, 0, 1, 2];
      const opt = new ls.optim.Adam(model, { lr: 0.01 });
      const before = model.hash();
      const losses = [];
      for (let i = 0; i < 20; ++i) {
        ls.scope(() => {
          opt.zeroGrad();
          const loss = ls.nn.functional.crossEntropy(model.forward(x), y);
          loss.backward();
          opt.step();
          losses.push(loss.item());
        });
      }
      assert.ok(losses.at(-1) < losses[0], `loss fell: ${losses[0]} -> ${losses.at(-1)}`);
      assert.equal(opt.stepCount, 20);
      const bytes = model.save();
      assert.equal(ls.sha256(bytes), model.hash());
      assert.notEqual(model.hash(), before);
      const copy = new ls.nn.Sequential(new ls.nn.Flatten(), new ls.nn.Linear(4, 8), new ls.nn.ReLU(),
                                        new ls.nn.Linear(8, 3));
      copy.load(bytes);
      assert.equal(copy.hash(), model.hash());
      assert.deepEqual(copy.eval().forward(x).toArray(), model.eval().forward(x).toArray());
    });
  });

  test(`${build}: reference models by name and from checkpoints`, async () => {
    const ls = await loadLockstep({ build });
    ls.scope(() => {
      const lenet = ls.models.lenet5({ seed: 2 });
      // The MNIST reference run's initial model (tests/golden/mnist.txt).
      assert.equal(lenet.hash(), '6e81662d18be056c8ceae58f214a85418520a7f5550563ba17e9c0a3fdd80111');
      const mlp = ls.models.mlp({ seed: 1 });
      assert.equal(ls.models.fromCheckpoint(mlp.save()).hash(), mlp.hash());
      assert.equal(ls.models.fromCheckpoint(lenet.save()).hash(), lenet.hash());
      const logits = lenet.eval().forward(ls.zeros(2, 1, 28, 28));
      assert.deepEqual(logits.shape, [2, 10]);
    });
  });

  test(`${build}: sha256 matches the standard test vector`, async () => {
    const ls = await loadLockstep({ build });
    assert.equal(ls.sha256(new TextEncoder().encode('abc')),
                 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  test(`${build}: dispose frees at once, scope keeps only the result`, async () => {
    const ls = await loadLockstep({ build });
    const t = ls.tensor([1, 2]);
    t.dispose();
    assert.equal(t.disposed, true);
    assert.throws(() => t.toArray(), /this tensor was disposed/);
    t.dispose();  // twice is harmless
    let inner;
    const kept = ls.scope(() => {
      inner = ls.ones(2);
      return { result: inner.add(1) };
    });
    assert.equal(inner.disposed, true);
    assert.deepEqual([...kept.result.toArray()], [2, 2]);
    kept.result.dispose();
    if (typeof Symbol.dispose === 'symbol') assert.equal(typeof ls.ones(1)[Symbol.dispose], 'function');
  });
}

test('every build gives identical bits for a LeNet-5 forward and backward pass', async () => {
  const results = [];
  for (const build of builds) {
    const ls = await loadLockstep({ build });
    results.push(ls.scope(() => {
      const model = ls.models.lenet5({ seed: 5 });
      const x = ls.randn([8, 1, 28, 28], { seed: 9 });
      const loss = ls.nn.functional.crossEntropy(model.forward(x), [0, 1, 2, 3, 4, 5, 6, 7]);
      loss.backward();
      return { loss: loss.item(), grads: model.parameters().map((p) => Array.from(p.grad.toArray())) };
    }));
  }
  assert.deepEqual(results[0], results[1]);
});

test('the web demo normalises a drawn digit with the bits of the engine\'s MNIST normalisation', async () => {
  const ls = await loadLockstep();
  // One 16 x 16 IDX image holding every byte value, and its label.
  const header = (magic, dims) => {
    const b = new DataView(new ArrayBuffer(4 + 4 * dims.length));
    b.setUint32(0, magic);
    dims.forEach((d, i) => b.setUint32(4 + 4 * i, d));
    return new Uint8Array(b.buffer);
  };
  const pixels = Uint8Array.from({ length: 256 }, (_, i) => i);
  const images = new Uint8Array([...header(0x803, [1, 16, 16]), ...pixels]);
  const labels = new Uint8Array([...header(0x801, [1]), 7]);
  ls.scope(() => {
    const engine = ls.Dataset.fromIdx(images, labels, { normalize: true }).inputs.toArray();
    // web/worker.js: x / 255 as float32, then .sub(0.1307).mul(the float32 quotient 1.0f / 0.3081f).
    const scale = new Float32Array(new Uint32Array([0x404FB98B]).buffer)[0];
    const x = ls.tensor(Float32Array.from(pixels, (p) => p / 255));
    assert.deepEqual(x.sub(0.1307).mul(scale).toArray(), engine);
    // Dividing by 0.3081 rounds differently for some pixels: why the demo multiplies.
    assert.notDeepEqual(x.sub(0.1307).div(0.3081).toArray(), engine);
  });
});
