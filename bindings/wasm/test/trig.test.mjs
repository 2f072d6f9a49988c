// The trigonometric and hyperbolic functions in the npm package: each value is the float32 nearest
// the exact one (within half an ulp of JavaScript's float64 Math functions, whose own error is far
// smaller), and each is differentiable.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { builds, loadLockstep } from './helpers.mjs';

const cases = {
  sin: [-20, 20, Math.sin], cos: [-20, 20, Math.cos], tan: [-1.5, 1.5, Math.tan],
  asin: [-0.99, 0.99, Math.asin], acos: [-0.99, 0.99, Math.acos], atan: [-50, 50, Math.atan],
  sinh: [-20, 20, Math.sinh], cosh: [-20, 20, Math.cosh], asinh: [-50, 50, Math.asinh],
  acosh: [1.01, 50, Math.acosh], atanh: [-0.99, 0.99, Math.atanh],
};

// The distance from a to b in units of the float32 ulp at b.
function ulps(a, b) {
  const f = Math.fround(Math.abs(b));
  const next = new Float32Array([f]);
  new Uint32Array(next.buffer)[0] += 1;
  return Math.abs(a - b) / (next[0] - f);
}

for (const build of builds) {
  test(`${build}: every function correctly rounded, with a gradient`, async () => {
    const ls = await loadLockstep({ build });
    for (const [name, [lo, hi, exact]] of Object.entries(cases)) {
      ls.scope(() => {
        const xs = Array.from({ length: 500 }, (_, i) => Math.fround(lo + ((hi - lo) * (i + 0.5)) / 500));
        const x = ls.tensor(xs).requiresGrad_();
        const y = x[name]();
        const got = y.toArray();
        for (let i = 0; i < xs.length; ++i) {
          assert.ok(ulps(got[i], exact(xs[i])) <= 0.5000001, `${name}(${xs[i]}) = ${got[i]}, exact ${exact(xs[i])}`);
        }
        y.sum().backward();
        assert.ok([...x.grad.toArray()].every((g) => Number.isFinite(g) && g !== 0), `${name}: a finite, nonzero gradient`);
      });
    }
  });
}
