// Picks and instantiates one of the package's three WebAssembly builds. All give the same bits:
// 'threads' (SIMD128 with its kernels split over Web Workers) where memory can be shared between
// threads, else 'simd' wherever the engine validates SIMD instructions, else 'scalar'.

// The smallest module that uses a SIMD instruction: (func (result v128) i32.const 0 i8x16.splat).
const SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,  // magic, version
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b,        // type: () -> v128
  0x03, 0x02, 0x01, 0x00,                          // one function of type 0
  0x0a, 0x08, 0x01, 0x06, 0x00, 0x41, 0x00, 0xfd, 0x0f, 0x0b,  // body
]);

export function simdSupported() {
  try {
    return typeof WebAssembly === 'object' && WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

const isNode = typeof process === 'object' && typeof process.versions?.node === 'string' &&
    typeof window === 'undefined';
// Whether this thread may wait for others (Atomics.wait): everywhere but a page's main thread.
const mayBlock = isNode || typeof WorkerGlobalScope !== 'undefined';

// Why the threads build cannot run here, or null where it can. A page shares memory between
// threads only when it is cross-origin isolated: served with `Cross-Origin-Opener-Policy:
// same-origin` and `Cross-Origin-Embedder-Policy: require-corp` (docs/wasm-threads.md).
export function threadsUnavailableReason() {
  if (!simdSupported()) return 'this WebAssembly engine has no SIMD128, which the threads build needs';
  if (!isNode && globalThis.crossOriginIsolated !== true) {
    return 'the page is not cross-origin isolated (serve it with Cross-Origin-Opener-Policy: same-origin ' +
           'and Cross-Origin-Embedder-Policy: require-corp), so it cannot share memory with workers';
  }
  if (typeof SharedArrayBuffer !== 'function' || typeof Atomics !== 'object') {
    return 'this JavaScript engine has no SharedArrayBuffer or Atomics';
  }
  if (!isNode && typeof Worker !== 'function') return 'Web Workers cannot be started from here';
  try {
    new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
  } catch {
    return 'this WebAssembly engine cannot create shared memory';
  }
  return null;
}

export function threadsSupported() {
  return threadsUnavailableReason() === null;
}

// The threads a threads build uses unless told: one per logical core, at most 8 (the split of the
// LeNet-5 and GPT steps gains little beyond that, and every worker costs memory and start-up).
export async function defaultThreads() {
  let cores = globalThis.navigator?.hardwareConcurrency;
  if (isNode) {
    const os = await import('node:os');
    cores = os.availableParallelism?.() ?? os.cpus().length;
  }
  return Math.max(1, Math.min(8, Number.isInteger(cores) ? cores : 1));
}

async function readBytes(url) {
  if (isNode && url.protocol === 'file:') {
    const { readFile } = await import('node:fs/promises');
    return new Uint8Array(await readFile(url));
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`lockstep: cannot load ${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

// options.build: 'auto' (default), 'threads', 'simd' or 'scalar'. options.threads: kernel threads
// of the threads build (default: defaultThreads()). options.baseUrl: where the .mjs/.wasm files
// are (default: next to this file). options.workerPorts: in a browser, an async function of a
// count that gives that many ports to workers a page started (worker-ports.js). Returns the
// engine, the build chosen, its thread count, and for 'auto', why the threads build was passed
// over (null when it was chosen).
export async function instantiate(options = {}) {
  const build = options.build ?? 'auto';
  if (!['auto', 'threads', 'simd', 'scalar'].includes(build)) {
    throw new Error(`lockstep: build must be 'auto', 'threads', 'simd' or 'scalar', got ${JSON.stringify(build)}`);
  }
  const unavailable = build === 'auto' || build === 'threads' ? threadsUnavailableReason() : null;
  if (build === 'threads' && unavailable) {
    throw new Error(`lockstep: build 'threads' was asked for, but ${unavailable}`);
  }
  let flavour = build;
  if (build === 'auto') flavour = !unavailable ? 'threads' : simdSupported() ? 'simd' : 'scalar';
  if (flavour === 'simd' && !simdSupported()) {
    throw new Error("lockstep: build 'simd' was asked for, but this WebAssembly engine has no SIMD128");
  }
  const threads = flavour === 'threads' ? options.threads ?? await defaultThreads() : 1;

  const base = new URL(options.baseUrl ?? './', import.meta.url);
  const factoryUrl = new URL(`lockstep-${flavour}.mjs`, base);
  const [{ default: createModule }, wasmBinary] =
      await Promise.all([import(factoryUrl.href), readBytes(new URL(`lockstep-${flavour}.wasm`, base))]);
  const settings = {
    wasmBinary,
    print: (text) => console.log(text),
    printErr: (text) => {
      // Emscripten warns whenever a thread it takes for a page's main thread waits for workers.
      // In Node and in a Web Worker that thread may wait (Atomics.wait); only a page's main
      // thread would spin, and there the warning stays.
      if (mayBlock && /^Blocking on the main thread is very dangerous/.test(text)) return;
      console.warn(text);
    },
  };
  if (flavour === 'threads') {
    // The pool: one worker per thread beyond the calling one (at least one: the module waits for
    // its pool to load, and an empty pool never reports loaded). Each worker imports the factory.
    settings.lockstepWorkers = Math.max(1, threads - 1);
    settings.mainScriptUrlOrBlob = factoryUrl.href;
    if (isNode) {
      settings.Worker = (await import('./node-workers.js')).NodeWorker;
    } else if (options.workerPorts) {  // started by the page (worker-ports.js says why)
      const ports = await options.workerPorts(settings.lockstepWorkers);
      if (!Array.isArray(ports) || ports.length !== settings.lockstepWorkers ||
          !ports.every((p) => p instanceof MessagePort)) {
        throw new Error(`lockstep: workerPorts(${settings.lockstepWorkers}) must give ${settings.lockstepWorkers} ` +
                        'MessagePorts (from startWorkerPorts on the page)');
      }
      settings.Worker = (await import('./worker-ports.js')).portWorkerClass(ports);
    } else {  // started here one at a time (browser-workers.js says why)
      const { startWorkers, pooledWorkerClass } = await import('./browser-workers.js');
      const script = new URL('lockstep-threads.worker.js', base).href;
      settings.Worker = pooledWorkerClass(await startWorkers(settings.lockstepWorkers, script));
    }
  }
  const engine = await createModule(settings);
  if (flavour === 'threads') engine.setThreads(threads, threads);
  return { engine, flavour, threads, threadsUnavailable: build === 'auto' ? unavailable : null };
}
