// Memory is freed deterministically: the engine's heap does not grow over many training steps
// driven from JavaScript, once the first steps have sized the allocator's pools.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadLockstep } from './helpers.mjs';

test('the heap stays flat over 300 training steps with dispose() and scope()', async () => {
  const ls = await loadLockstep();
  const model = ls.models.lenet5({ seed: 1 });
  const optimizer = new ls.optim.Adam(model);
  const x = ls.randn([16, 1, 28, 28], { seed: 2 });
  const y = ls.tensor(Array.from({ length: 16 }, (_, i) => i % 10), undefined, { dtype: 'int64' });
  const step = () => ls.scope(() => {
    optimizer.zeroGrad();
    const loss = ls.nn.functional.crossEntropy(model.forward(x), y);
    loss.backward();
    optimizer.step();
    model.parameters();  // handles made and dropped inside the scope
    return loss.item();
  });
  for (let i = 0; i < 20; ++i) step();
  const warm = ls.heapInUse();
  for (let i = 0; i < 300; ++i) step();
  const after = ls.heapInUse();
  assert.ok(after - warm <= 4096, `heap grew by ${after - warm} bytes over 300 steps (from ${warm})`);

  // Explicit dispose() (no scope) frees as well.
  const before = ls.heapInUse();
  for (let i = 0; i < 100; ++i) {
    const t = ls.randn([256, 256], { seed: i });
    const u = t.matmul(t);
    u.dispose();
    t.dispose();
  }
  assert.ok(ls.heapInUse() - before <= 4096, `heap grew by ${ls.heapInUse() - before} bytes`);
  [model, optimizer, x, y].forEach((o) => o.dispose());
});
