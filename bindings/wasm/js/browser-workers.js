// The browser's side of the pthreads build's worker pool. Emscripten makes its pool inside the
// module factory with `new Worker(url)`, one right after the other. In Firefox, a Web Worker (the
// engine runs in one) that starts several workers back to back can hang for good while they start:
// the page then stays at "loading the engine" (check-matrix's Firefox page with 4 threads met it
// in about 1 load in 25 on a busy 2-core machine). So the loader starts the pool itself, one
// worker at a time, each once the last one runs its first script (browser-pthread.js says so); a
// worker that does not say so in time is replaced. Emscripten's `new Worker` takes them in order.

const bootstrap = new URL('./browser-pthread.js', import.meta.url);
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

// Starts `count` workers one after another; resolves to them once each has said it runs.
// options.seconds: how long one may take to start (tests shorten it).
export async function startWorkers(count, { seconds = START_SECONDS } = {}) {
  const workers = [];
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
