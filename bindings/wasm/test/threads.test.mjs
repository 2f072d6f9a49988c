// The threads build (SIMD128 with pthreads): its kernels split their work over workers along the
// contract's fixed blocks, so 1, 2 and 4 threads give the single-thread builds' bits; 'auto' takes
// it in Node; thread counts are checked; dispose() stops the workers and the engine keeps its
// bits; a program that never disposes still ends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { goldenMnist, loadLockstep, mnistDatasets, packageDir } from './helpers.mjs';

const golden = goldenMnist().short;

// The bits of a LeNet-5 forward and backward pass and of a GEMM large enough to be split.
function fingerprint(ls) {
  return ls.scope(() => {
    ls.manualSeed(3);
    const model = ls.models.lenet5({ seed: 2 });
    const x = ls.randn([64, 1, 28, 28], { seed: 5 });
    const y = ls.tensor(Array.from({ length: 64 }, (_, i) => (i * 7) % 10), undefined, { dtype: 'int64' });
    ls.nn.functional.crossEntropy(model.train().forward(x), y).backward();
    const grads = model.namedParameters().map(([name, p]) => `${name}:${ls.sha256(new Uint8Array(p.grad.toArray().buffer))}`);
    const a = ls.randn([300, 257], { seed: 6 });
    const product = ls.sha256(new Uint8Array(a.matmul(a.transpose(0, 1)).toArray().buffer));
    return [...grads, `gemm:${product}`].join('\n');
  });
}

test('threads build: 1, 2 and 4 threads give the simd build\'s bits and the golden MNIST hashes', async () => {
  const simd = await loadLockstep({ build: 'simd' });
  const expected = fingerprint(simd);
  for (const threads of [1, 2, 4]) {
    const ls = await loadLockstep({ build: 'threads', threads });
    try {
      assert.equal(ls.info.build, 'threads');
      assert.equal(ls.info.threads, threads);
      assert.equal(ls.info.threadsUnavailable, null);
      assert.match(ls.info.platform, /threads/);
      assert.equal(fingerprint(ls), expected, `${threads} threads`);
      const { train, test: testSet } = mnistDatasets(ls);
      const r = await ls.mnistReferenceRun({ train, test: testSet, maxSteps: 3, maxTest: 100 });
      assert.deepEqual([r.initialHash, r.trainedHash, r.logitsHash, r.testAccuracy.toFixed(4)],
                       [golden.initial, golden.trained, golden.logits, golden.accuracy], `${threads} threads`);
      [r.model, train, testSet].forEach((o) => o.dispose());
    } finally {
      ls.dispose();
    }
  }
});

test('threads build: load() picks it in Node, and checks the thread count', async () => {
  const { threadsSupported, threadsUnavailableReason } = await import(path.join(packageDir, 'index.js'));
  assert.equal(threadsUnavailableReason(), null);
  assert.equal(threadsSupported(), true);
  const ls = await loadLockstep();
  try {
    assert.equal(ls.info.build, 'threads');
    assert.ok(ls.info.threads >= 1 && ls.info.threads <= 8, `${ls.info.threads} threads by default`);
    assert.equal(ls.info.threadsUnavailable, null);
  } finally {
    ls.dispose();
  }
  const auto = await loadLockstep({ build: 'auto', threads: 3 });
  assert.equal(auto.info.threads, 3);
  auto.dispose();
  for (const [options, Type, pattern] of [
    [{ build: 'threads', threads: 0 }, RangeError, /load: threads must be an integer in \[1, 64\], got 0/],
    [{ build: 'threads', threads: 65 }, RangeError, /got 65/],
    [{ build: 'threads', threads: 1.5 }, RangeError, /got 1\.5/],
    [{ build: 'threads', threads: '2' }, TypeError, /threads must be an integer.*got "2"/],
    [{ build: 'simd', threads: 2 }, RangeError, /threads must be 1 with build 'simd' \(one thread\), got 2/],
    [{ build: 'scalar', threads: 4 }, RangeError, /threads must be 1 with build 'scalar'/],
    [{ build: 'thread' }, RangeError, /build must be 'auto', 'threads', 'simd' or 'scalar', got "thread"/],
  ]) {
    await assert.rejects(loadLockstep(options), (e) => e instanceof Type && pattern.test(e.message) && e.kind === 'argument',
                         JSON.stringify(options));
  }
  const single = await loadLockstep({ build: 'simd', threads: 1 });
  assert.deepEqual([single.info.build, single.info.threads], ['simd', 1]);
});

test('threads build: after dispose() the engine runs on one thread with the same bits', async () => {
  const ls = await loadLockstep({ build: 'threads', threads: 4 });
  const before = fingerprint(ls);
  ls.dispose();
  ls.dispose();  // a second call does nothing
  assert.equal(fingerprint(ls), before);
});

test('threads build: a program that never calls dispose() ends when its work does', () => {
  const script = `
    const { load } = await import(${JSON.stringify(path.join(packageDir, 'index.js'))});
    const ls = await load({ build: 'threads', threads: 4 });
    const a = ls.randn([200, 200], { seed: 1 });
    console.log(ls.info.build, ls.info.threads, a.matmul(a).sum().item().toFixed(3));
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  assert.match(out, /^threads 4 -?\d+\.\d{3}\n$/);
});
