// fmod and remainder in the npm package: fmod is exact, so it equals JavaScript's % (exact on the
// float64 values of float32 inputs) bit for bit; remainder is that plus the divisor where the signs
// differ, one float32 addition (Python's %). Both take a tensor or a number, and differentiate.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { builds, loadLockstep } from './helpers.mjs';

const xs = [7.5, -7.5, 1e-30, -3.25e20, 0, -0, 5, 123456.78, -1e-40, 3.4e38, 2.5];
const ys = [2, 2, 3e-31, 0.3, 7, -7, -3, 0.001, 1e-45, -1.5e-38, Infinity];

function pythonMod(x, y) {
  const r = x % y;
  return r !== 0 && (r < 0) !== (y < 0) ? Math.fround(r + y) : r;
}

for (const build of builds) {
  test(`${build}: fmod and remainder bit for bit, with tensors and numbers, and a gradient`, async () => {
    const ls = await loadLockstep({ build });
    ls.scope(() => {
      const x = ls.tensor(xs.map(Math.fround)).requiresGrad_();
      const y = ls.tensor(ys.map(Math.fround));
      const fx = [...x.toArray()], fy = [...y.toArray()];
      const f = x.fmod(y).toArray(), r = x.remainder(y).toArray();
      for (let i = 0; i < xs.length; ++i) {
        assert.ok(Object.is(f[i], Math.fround(fx[i] % fy[i])), `fmod(${fx[i]}, ${fy[i]}) = ${f[i]}`);
        assert.ok(Object.is(r[i], Math.fround(pythonMod(fx[i], fy[i]))), `remainder(${fx[i]}, ${fy[i]}) = ${r[i]}`);
      }
      assert.deepEqual([...x.remainder(-3).toArray()], fx.map((v) => Math.fround(pythonMod(v, -3))));
      x.fmod(3).sum().backward();
      assert.deepEqual([...x.grad.toArray()], fx.map(() => 1));
      assert.throws(() => x.fmod('3'), /fmod: other must be a Tensor or a finite number/);
    });
  });
}
