// Prepended to the pthreads build's module factory (--pre-js). Emscripten starts each pthread with
// `new Worker(url)`. Browsers have Web Workers; Node has worker_threads, with another interface,
// so the package's loader passes a Worker class built on them (bindings/wasm/js/node-workers.js)
// as Module.Worker. This name shadows the global one inside the factory only.
var Worker = Module['Worker'] || globalThis.Worker;
