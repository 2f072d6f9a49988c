// nn.ConvTranspose2d in the npm package: on a fixed input, its output and input gradient give the
// SHA-256 that the native library gives (tests/python/test_conv_transpose.py pins the same value),
// on every build; its shapes and argument checks are PyTorch's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builds, loadLockstep } from './helpers.mjs';

const DIGEST = 'f314c5f1627e1c1857f3b576dc52b16924d69ab28558aac5d1817be122bcf52a';

const count = (shape) => shape.reduce((a, b) => a * b, 1);
// As the Python test's: ((a i) mod b - c) / d.
const fixed = (shape, a, b, c, d) => Float32Array.from({ length: count(shape) }, (_, i) => (((i * a) % b) - c) / d);
const bytesOf = (x) => new Uint8Array(x.buffer, x.byteOffset, x.byteLength);

for (const build of builds) {
  test(`${build}: ConvTranspose2d gives the native library's bits (output and input gradient)`, async () => {
    const ls = await loadLockstep({ build });
    ls.scope(() => {
      const m = new ls.nn.ConvTranspose2d(4, 6, 3, { stride: 2, padding: 1, outputPadding: 1, groups: 2,
                                                    generator: new ls.Generator(7, 'init') });
      const x = ls.tensor(fixed([2, 4, 7, 6], 37, 113, 56, 8), [2, 4, 7, 6]).requiresGrad_();
      const y = m.forward(x);
      assert.deepEqual(y.shape, [2, 6, 14, 12]);
      y.mul(ls.tensor(fixed(y.shape, 11, 7, 3, 4), y.shape)).sum().backward();
      const out = y.detach().toArray(), grad = x.grad.toArray();
      assert.equal(ls.sha256(new Uint8Array([...bytesOf(out), ...bytesOf(grad)])), DIGEST);
    });
  });
}

test('ConvTranspose2d: arguments are checked', async () => {
  const ls = await loadLockstep({ build: 'simd' });
  assert.throws(() => new ls.nn.ConvTranspose2d(4, 6, 3, { stride: 2, outputPadding: 2 }), /output_padding=2/);
  assert.throws(() => new ls.nn.ConvTranspose2d(4, 6, 3, { padding: -1 }), /padding/);
  assert.throws(() => new ls.nn.ConvTranspose2d(4, 6, 3, { kernel: 2 }), /kernel/);
});
