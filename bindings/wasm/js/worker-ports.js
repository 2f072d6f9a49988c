// The threads build's workers started by a page for an engine that runs in a Web Worker. Firefox
// under automation now and then blocks for good inside a Web Worker's `new Worker` call
// (docs/wasm-threads.md), so the page starts them from its own thread and hands the engine's
// worker one MessagePort per worker; each worker talks to the engine over its port as if the
// engine had started it.
//   page:           const ports = await startWorkerPorts(count, { baseUrl });   (transfer them)
//   engine worker:  load({ build: 'threads', workerPorts: (count) => <ports from the page> })
import { startWorkers } from './browser-workers.js';

// Starts `count` workers (one at a time, replaced when they do not start: browser-workers.js)
// running lockstep-threads.worker.js from options.baseUrl (default: next to this file); resolves
// to one MessagePort per worker, to be transferred to the engine's worker. A worker ends when the
// engine stops it (dispose()), or with the page.
export async function startWorkerPorts(count, { baseUrl, seconds } = {}) {
  const script = new URL('lockstep-threads.worker.js', new URL(baseUrl ?? './', import.meta.url)).href;
  const workers = await startWorkers(count, script, { seconds, viaPort: true });
  return workers.map((worker) => {
    const { port1, port2 } = new MessageChannel();
    worker.postMessage({ cmd: 'lockstep-port', port: port1 }, [port1]);
    return port2;
  });
}

// What Emscripten's pthread code uses of a Worker (postMessage, onmessage, onerror, terminate),
// over the port of a worker the page started.
export class PortWorker {
  constructor(port) {
    this.port = port;
    port.onmessage = (e) => {
      if (e.data?.cmd === 'lockstep-error') this.onerror?.(e.data);
      else this.onmessage?.(e);
    };
  }

  postMessage(message, transfer) {
    this.port.postMessage(message, transfer ?? []);
  }

  terminate() {
    this.port.postMessage({ cmd: 'lockstep-terminate' });
    this.port.close();
  }
}

// A Worker class for Emscripten (Module.Worker) that takes the pages' workers in order; there is
// no other way to get one here, so asking for more than were handed over is an error.
export function portWorkerClass(ports) {
  const left = [...ports];
  return function PortWorkerFromPage() {
    const port = left.shift();
    if (!port) throw new Error('lockstep: the threads build asked for more workers than the page handed over');
    return new PortWorker(port);
  };
}
