// The browser's side of the pthreads build's worker pool. Emscripten would make its pool inside
// the module factory with `new Worker(url)`, one right after the other, and wait for every worker
// with no limit: a worker whose script never runs (blocked, missing) left the page at "loading the
// engine" with nothing said. So the loader starts the pool itself, one worker at a time, each once
// it runs its first script (a two-line bootstrap that says so, then loads Emscripten's worker
// script); a worker that does not say so in time, or reports an error, is replaced, and after three
// attempts load() fails saying why. Emscripten's `new Worker` then takes them in order.
//
// Firefox under automation now and then blocks for good inside a Web Worker's `new Worker` call
// itself, with no JavaScript left to run (docs/wasm-threads.md): an engine in a Web Worker should
// get its workers from the page (worker-ports.js), which starts them here, on its own thread.

const START_SECONDS = 20;  // a worker's first script runs within a second or two, even on a busy machine
const ATTEMPTS = 3;

// Resolves when the worker's first script runs; rejects on an error or after `seconds`.
function started(worker, seconds) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`it did not start within ${seconds} s`)), seconds * 1000);
    worker.onmessage = (e) => {
      if (e.data?.cmd !== 'lockstep-started') return;
      clearTimeout(timer);
      resolve();
    };
    worker.onerror = (e) => {
      clearTimeout(timer);
      reject(new Error(e?.message || 'it reported an error while starting'));
    };
  }).finally(() => {
    worker.onmessage = null;
    worker.onerror = null;
  });
}

// The bootstrap as a blob: URL, so it comes from wherever the worker script does (the loader's
// baseUrl) and the page's isolation applies to it as to the page. With viaPort the worker talks to
// the engine over the MessagePort it is sent first (worker-ports.js): Emscripten's worker script
// then finds the port's messages at self.onmessage and posts through it, as it would to its parent;
// its errors go there too, and 'lockstep-terminate' ends the worker.
function bootstrapUrl(workerScript, viaPort) {
  const load = `importScripts(${JSON.stringify(String(workerScript))});\n`;
  const source = "postMessage({ cmd: 'lockstep-started' });\n" + (!viaPort ? load : [
    'self.onmessage = (first) => {',
    "  if (first.data?.cmd !== 'lockstep-port') return;",
    '  const port = first.data.port;',
    '  self.postMessage = (message, transfer) => port.postMessage(message, transfer ?? []);',
    "  self.addEventListener('error', (e) => port.postMessage({ cmd: 'lockstep-error', message: e.message, " +
        'filename: e.filename, lineno: e.lineno }));',
    "  port.onmessage = (e) => (e.data?.cmd === 'lockstep-terminate' ? self.close() : self.onmessage(e));",
    `  ${load}};`,
    ''].join('\n'));
  return URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
}

// Starts `count` workers running `workerScript` (Emscripten's lockstep-threads.worker.js, an
// absolute URL) one after another; resolves to them once each has said it runs.
// options.seconds: how long one may take to start (tests shorten it); options.viaPort: the
// workers wait for a MessagePort to the engine (worker-ports.js).
export async function startWorkers(count, workerScript, { seconds = START_SECONDS, viaPort = false } = {}) {
  const workers = [];
  const bootstrap = bootstrapUrl(workerScript, viaPort);
  try {
    for (let i = 0; i < count; ++i) {
      for (let attempt = 1; ; ++attempt) {
        const worker = new globalThis.Worker(bootstrap);
        try {
          await started(worker, seconds);
          workers.push(worker);
          break;
        } catch (e) {
          worker.terminate();
          console.warn(`lockstep: worker ${i + 1} of the threads build's ${count}, attempt ${attempt}: ${e.message}`);
          if (attempt === ATTEMPTS) {
            throw new Error(`lockstep: worker ${i + 1} of the threads build's ${count} could not be started ` +
                            `(${ATTEMPTS} attempts; the last: ${e.message})`);
          }
        }
      }
    }
  } catch (e) {
    for (const worker of workers) worker.terminate();
    throw e;
  } finally {
    URL.revokeObjectURL(bootstrap);
  }
  return workers;
}

// A Worker class for Emscripten (Module.Worker): each `new` takes the next started worker, or
// starts one if none is left (a pool that grows later).
export function pooledWorkerClass(workers) {
  return function PooledWorker(url, options) {
    return workers.shift() ?? new globalThis.Worker(url, options);
  };
}
