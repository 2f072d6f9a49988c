// nn.RNN, nn.LSTM and nn.GRU in the npm package: a fixed LSTM's output, states and input gradient
// give the SHA-256 that the native library gives (tests/python/test_recurrent.py pins the same
// value), on every build; names, shapes and argument checks are PyTorch's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builds, loadLockstep } from './helpers.mjs';

const DIGEST = '2edf28e250510b3a21431f29499d3a4db17bc798c9c049aa79428488f38f1745';

const count = (shape) => shape.reduce((a, b) => a * b, 1);
const fixed = (shape, a, b, c, d) => Float32Array.from({ length: count(shape) }, (_, i) => (((i * a) % b) - c) / d);
const bytesOf = (x) => new Uint8Array(x.buffer, x.byteOffset, x.byteLength);

for (const build of builds) {
  test(`${build}: LSTM gives the native library's bits (output, states, input gradient)`, async () => {
    const ls = await loadLockstep({ build });
    ls.scope(() => {
      const m = new ls.nn.LSTM(5, 4, { numLayers: 2, batchFirst: true, bidirectional: true,
                                       generator: new ls.Generator(7, 'init') });
      const x = ls.tensor(fixed([2, 3, 5], 37, 113, 56, 32), [2, 3, 5]).requiresGrad_();
      const [out, h, c] = m.forwardWithState(x);
      assert.deepEqual([out.shape, h.shape, c.shape], [[2, 3, 8], [4, 2, 4], [4, 2, 4]]);
      out.mul(ls.tensor(fixed(out.shape, 11, 7, 3, 4), out.shape)).sum().backward();
      const parts = [out.detach(), h.detach(), c.detach(), x.grad].map((t) => bytesOf(t.toArray()));
      assert.equal(ls.sha256(new Uint8Array(parts.flatMap((p) => [...p]))), DIGEST);
      assert.deepEqual(m.namedParameters().map(([n]) => n).slice(0, 5),
                       ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0', 'weight_ih_l0_reverse']);
    });
  });
}

test('RNN, GRU: forward gives the output sequence; arguments are checked', async () => {
  const ls = await loadLockstep({ build: 'simd' });
  ls.scope(() => {
    const x = ls.tensor(fixed([4, 1, 3], 5, 11, 5, 8), [4, 1, 3]);
    assert.deepEqual(new ls.nn.GRU(3, 2).forward(x).shape, [4, 1, 2]);
    assert.deepEqual(new ls.nn.RNN(3, 2, { nonlinearity: 'relu' }).forwardWithState(x)[2], null);
  });
  assert.throws(() => new ls.nn.RNN(3, 2, { nonlinearity: 'gelu' }), /nonlinearity must be 'tanh' or 'relu'/);
  assert.throws(() => new ls.nn.LSTM(3, 2, { dropout: 0.5 }), /dropout/);
});
