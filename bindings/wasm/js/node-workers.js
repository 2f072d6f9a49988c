// Node's side of the pthreads build. Emscripten starts each pthread with `new Worker(url)` and
// talks to it as to a Web Worker (onmessage, onerror, postMessage, terminate); Node has
// worker_threads instead. NodeWorker adapts one to the other, and runs node-pthread.js in the
// thread, which gives Emscripten's worker script the Web Worker globals it uses.
import { Worker as ThreadWorker } from 'node:worker_threads';

const bootstrap = new URL('./node-pthread.js', import.meta.url);

// The program's Node options, less those that concern its own entry point (the inline script of
// `node -e`, `--input-type`): a worker inherits the rest, and Node refuses to start a worker whose
// options include those.
function workerExecArgv() {
  const kept = [];
  const argv = process.execArgv;
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (['-e', '--eval', '-p', '--print', '--input-type'].includes(a)) { ++i; continue; }
    if (/^--(eval|print|input-type)=/.test(a)) continue;
    kept.push(a);
  }
  return kept;
}

export class NodeWorker {
  constructor(script) {
    this.thread = new ThreadWorker(bootstrap, { workerData: { script: String(script) }, execArgv: workerExecArgv() });
    this.thread.on('message', (data) => {
      // Once loaded, a worker must not keep Node running: a program ends when its own work does,
      // as it would with the single-thread builds. Until then, the pending load keeps it alive.
      if (data?.cmd === 'loaded') this.thread.unref();
      this.onmessage?.({ data });
    });
    this.thread.on('error', (error) => {
      if (this.onerror) this.onerror(error);
      else throw error;
    });
  }

  postMessage(message, transfer) {
    this.thread.postMessage(message, transfer);
  }

  terminate() {
    this.thread.terminate();
  }
}
