// Bad arguments become Errors that say what was expected and what was given; the engine keeps
// working afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builds, loadLockstep } from './helpers.mjs';

for (const build of builds) {
  test(`${build}: bad arguments throw clear Errors and the module keeps working`, async () => {
    const ls = await loadLockstep({ build });
    const cases = [
      [() => ls.tensor([1, 2, 3], [2, 2]), /shape holds 4 elements but the data has 3/],
      [() => ls.tensor('abc'), /tensor: data must be a typed array, an array of numbers or nested arrays of numbers, got "abc"/],
      [() => ls.zeros([2, -1]), /dimension 1 must be an integer >= 0/],
      [() => ls.zeros([2.5]), /dimension 0 must be an integer >= 0/],
      [() => ls.tensor([1.5], [1], { dtype: 'int64' }), /element 0 is not an integer/],
      [() => ls.tensor([1], [1], { dtype: 'float16' }), /dtype must be 'float32' or 'int64'/],
      [() => ls.ones(2, 3).matmul(ls.ones(2, 3)), /matmul/],
      [() => ls.ones(2).add('x'), /add: other must be a Tensor or a finite number, got "x"/],
      [() => ls.ones(2, 3).reshape(4, -1), /cannot infer/],
      [() => ls.models.create('resnet'), /unknown model 'resnet'; expected one of lenet5, mlp/],
      [() => ls.models.lenet5({ seed: -1 }), /models.lenet5: seed must be an integer in \[0, 2\^53\), got -1/],
      [() => ls.models.lenet5().forward(ls.ones(1, 3, 28, 28)), /conv2d: input \[1, 3, 28, 28\] and weight \[6, 1, 5, 5\] do not match/],
      [() => ls.models.lenet5().load(new Uint8Array([1, 2, 3])), /not a safetensors file: it is 3 bytes long/],
      [() => ls.models.lenet5().load('not bytes'), /load: bytes must be a Uint8Array, got "not bytes"/],
      [() => ls.models.fromCheckpoint(new Uint8Array(16)), /fits no model/],
      [() => ls.models.mlp().load(ls.models.lenet5().save()), /the checkpoint has no tensor named/],
      [() => new ls.nn.Linear(0, 3), /Linear: inFeatures must be an integer in \[1, 2\^31\), got 0/],
      [() => new ls.nn.Dropout(1.5), /Dropout: p must be a finite number in \[0, 1\), got 1.5/],
      [() => new ls.optim.Adam([], {}), /parameter list is empty/],
      [() => new ls.optim.Adam(ls.models.mlp(), { betas: [1.5, 0.9] }), /betas must be in \[0, 1\)/],
      [() => new ls.optim.SGD('params'), /SGD: params must be a Module or an array of parameter Tensors/],
      [() => ls.nn.functional.crossEntropy(ls.ones(2, 10), [0, 12]), /target 12 at position 1 is out of range \[0, 10\)/],
      [() => ls.Dataset.fromIdx(new Uint8Array([0, 0, 8, 1]), new Uint8Array(4)), /images: truncated IDX file/],
      [() => ls.sha256([1, 2, 3]), /sha256: bytes must be a Uint8Array, got \[1, 2, 3\]/],
      [() => ls.scope(async () => 1), /synchronous function/],
    ];
    for (const [fn, pattern] of cases) {
      assert.throws(fn, (error) => error instanceof Error && pattern.test(error.message),
                    `expected an Error matching ${pattern} from ${fn}`);
    }
    // Still working after every failure above.
    assert.deepEqual([...ls.ones(2).add(1).toArray()], [2, 2]);
    assert.equal(ls.models.lenet5({ seed: 2 }).hash(),
                 '6e81662d18be056c8ceae58f214a85418520a7f5550563ba17e9c0a3fdd80111');
  });
}

test('load() rejects an unknown build name', async () => {
  await assert.rejects(loadLockstep({ build: 'avx' }), /build must be 'auto', 'threads', 'simd' or 'scalar', got "avx"/);
});

test('fit() stops when its AbortSignal fires', async () => {
  const ls = await loadLockstep();
  const data = ls.Dataset.fromTensors(ls.randn([40, 784], { seed: 1 }),
                                      ls.tensor(Array.from({ length: 40 }, (_, i) => i % 10), undefined, { dtype: 'int64' }));
  const model = ls.models.mlp();
  const opt = new ls.optim.SGD(model);
  const controller = new AbortController();
  let steps = 0;
  await assert.rejects(ls.fit(model, opt, data, {
    epochs: 100, batchSize: 10, yieldEvery: 1,
    onProgress: (p) => { steps = p.step; if (p.step === 5) controller.abort(new Error('stop here')); },
    signal: controller.signal,
  }), /stop here/);
  assert.equal(steps, 5);
  assert.equal(opt.stepCount, 5);
});
