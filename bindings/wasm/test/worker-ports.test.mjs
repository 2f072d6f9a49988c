// Workers a page starts for an engine in a Web Worker (js/worker-ports.js), with stand-ins for the
// browser's Worker and worker scope and Node's own MessageChannel: the page gets one port per
// started worker; the worker's bootstrap waits for its port, then runs Emscripten's worker script
// with the port as its parent (messages both ways, errors, terminate); and the engine's Worker
// class takes the ports in order and refuses to make more.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveObjectURL } from 'node:buffer';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import vm from 'node:vm';
import { packageDir } from './helpers.mjs';

const { startWorkerPorts, PortWorker, portWorkerClass } =
    await import(pathToFileURL(path.join(packageDir, 'worker-ports.js')).href);

// A Worker that starts at once and keeps its bootstrap's source and the messages the page sends it.
class FakeWorker {
  static made = [];
  constructor(url) {
    this.source = resolveObjectURL(String(url)).text();
    this.sent = [];
    FakeWorker.made.push(this);
    setTimeout(() => this.onmessage?.({ data: { cmd: 'lockstep-started' } }), 1);
  }
  postMessage(message, transfer) { this.sent.push({ message, transfer }); }
  terminate() {}
}

// Runs a bootstrap as a worker would: its postMessage, importScripts (which installs a stand-in for
// Emscripten's worker script: it keeps what reaches self.onmessage), close and error listeners.
function runBootstrap(source) {
  const scope = { toPage: [], imported: [], received: [], closed: false, listeners: {} };
  scope.self = scope;
  scope.postMessage = (message) => scope.toPage.push(message);
  scope.importScripts = (url) => {
    scope.imported.push(url);
    scope.onmessage = (e) => scope.received.push(e.data);
  };
  scope.close = () => { scope.closed = true; };
  scope.addEventListener = (type, listener) => { scope.listeners[type] = listener; };
  vm.runInNewContext(source, scope);
  return scope;
}

const plain = (value) => JSON.parse(JSON.stringify(value));  // objects made in the vm's own realm
const nextMessage = (target) => new Promise((resolve) => { target.onmessage = (e) => resolve(e.data ?? e); });

test('the page starts one worker per port and sends each its port; the bootstrap waits for it, then talks over it', async () => {
  globalThis.Worker = FakeWorker;
  let ports;
  try {
    ports = await startWorkerPorts(2, { baseUrl: 'http://127.0.0.1:1/lockstep/', seconds: 1 });
  } finally {
    delete globalThis.Worker;
  }
  assert.equal(ports.length, 2);
  assert.ok(ports.every((p) => p instanceof MessagePort));
  assert.equal(FakeWorker.made.length, 2);
  for (const worker of FakeWorker.made) {
    assert.equal(worker.sent.length, 1);
    const { message, transfer } = worker.sent[0];
    assert.equal(message.cmd, 'lockstep-port');
    assert.deepEqual(transfer, [message.port]);
  }

  // The first worker's side: its bootstrap, given the port the page sent it.
  const scope = runBootstrap(await FakeWorker.made[0].source);
  assert.deepEqual(plain(scope.toPage), [{ cmd: 'lockstep-started' }]);
  assert.deepEqual(scope.imported, [], 'the worker script ran before the port came');
  scope.onmessage({ data: FakeWorker.made[0].sent[0].message });
  assert.deepEqual(scope.imported, ['http://127.0.0.1:1/lockstep/lockstep-threads.worker.js']);

  // The engine's side: Emscripten's messages reach the worker script, and its reach the engine.
  const engineSide = new PortWorker(ports[0]);
  engineSide.postMessage({ cmd: 'load', value: 1 });
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(scope.received, [{ cmd: 'load', value: 1 }]);
  const loaded = nextMessage(engineSide);
  scope.postMessage({ cmd: 'loaded' });
  assert.deepEqual(await loaded, { cmd: 'loaded' });
  assert.deepEqual(plain(scope.toPage), [{ cmd: 'lockstep-started' }], 'a message went to the page, not the engine');

  const failed = new Promise((resolve) => { engineSide.onerror = resolve; });
  scope.listeners.error({ message: 'boom', filename: 'worker.js', lineno: 7 });
  assert.deepEqual(await failed, { cmd: 'lockstep-error', message: 'boom', filename: 'worker.js', lineno: 7 });

  engineSide.terminate();
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(scope.closed, 'terminate() did not end the worker');
  ports[1].close();
});

test("the engine's Worker class takes the page's ports in order and makes no worker of its own", () => {
  const channels = [new MessageChannel(), new MessageChannel()];
  const Pooled = portWorkerClass(channels.map((c) => c.port2));
  assert.deepEqual([new Pooled('x').port, new Pooled('x').port], channels.map((c) => c.port2));
  assert.throws(() => new Pooled('x'), /the threads build asked for more workers than the page handed over/);
  for (const c of channels) { c.port1.close(); c.port2.close(); }
});
