// The browser's worker starter (js/browser-workers.js), with a stand-in for the browser's Worker:
// workers start one at a time, a worker that does not start in time or fails is replaced, three
// failures give a clear error and leave no worker running, and Emscripten's `new Worker` gets the
// started workers in order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageDir } from './helpers.mjs';

const { startWorkers, pooledWorkerClass } =
    await import(pathToFileURL(path.join(packageDir, 'browser-workers.js')).href);

// behaviour(n): what the n-th constructed worker does: 'start', 'silent' (never starts) or 'fail'.
function fakeWorkers(behaviour) {
  const made = [];
  let live = 0;
  let mostLive = 0;
  class FakeWorker {
    constructor(url) {
      this.url = String(url);
      this.index = made.length;
      this.terminated = false;
      made.push(this);
      mostLive = Math.max(mostLive, ++live - made.filter((w) => w.started).length);
      const what = behaviour(this.index);
      setTimeout(() => {
        if (this.terminated) return;
        if (what === 'start') {
          this.started = true;
          this.onmessage?.({ data: { cmd: 'lockstep-started' } });
        } else if (what === 'fail') {
          this.onerror?.({ message: 'script failed' });
        }
      }, 5);
    }
    postMessage() {}
    terminate() {
      if (!this.terminated) --live;
      this.terminated = true;
    }
  }
  return { FakeWorker, made, mostStarting: () => mostLive };
}

async function withWorker(FakeWorker, body) {
  const saved = globalThis.Worker;
  globalThis.Worker = FakeWorker;
  try {
    return await body();
  } finally {
    if (saved === undefined) delete globalThis.Worker;
    else globalThis.Worker = saved;
  }
}

const script = 'http://127.0.0.1:1/lockstep/lockstep-threads.worker.js';

test('browser workers start one at a time from a bootstrap that loads the worker script, and go to Emscripten in order', async () => {
  const fake = fakeWorkers(() => 'start');
  const workers = await withWorker(fake.FakeWorker, () => startWorkers(3, script, { seconds: 1 }));
  assert.equal(workers.length, 3);
  assert.equal(fake.mostStarting(), 1, 'a worker was constructed before the last one had started');
  assert.ok(workers.every((w) => w.url.startsWith('blob:')), workers.map((w) => w.url).join(', '));
  const Pooled = pooledWorkerClass([...workers]);
  assert.deepEqual([new Pooled('x'), new Pooled('x'), new Pooled('x')], workers);
});

test('a browser worker that does not start in time, or fails, is replaced', async () => {
  const fake = fakeWorkers((n) => (n === 0 ? 'silent' : n === 2 ? 'fail' : 'start'));
  const workers = await withWorker(fake.FakeWorker, () => startWorkers(2, script, { seconds: 0.2 }));
  assert.deepEqual(workers.map((w) => w.index), [1, 3]);
  assert.ok(fake.made[0].terminated && fake.made[2].terminated);
  assert.ok(workers.every((w) => !w.terminated));
});

test('three failed starts give a clear error and leave no worker running', async () => {
  const fake = fakeWorkers((n) => (n === 0 ? 'start' : 'silent'));
  await withWorker(fake.FakeWorker, () => assert.rejects(startWorkers(2, script, { seconds: 0.1 }),
      /worker 2 of the threads build's 2 could not be started \(3 attempts; the last: it did not start within 0.1 s\)/));
  assert.equal(fake.made.length, 4);
  assert.ok(fake.made.every((w) => w.terminated), 'a worker was left running');
});
