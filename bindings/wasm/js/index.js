// lockstep: bitwise-reproducible training in JavaScript. `await load()` gives an engine whose
// results (tensors, model hashes) are bit for bit those of the native library on any CPU.
import { instantiate, simdSupported, threadsSupported, threadsUnavailableReason } from './loader.js';
import { Owned, scope } from './lifetime.js';
import { makeTensorApi } from './tensor.js';
import { makeNnApi } from './nn.js';
import { makeOptimApi } from './optim.js';
import { makeTrainApi } from './train.js';
import { makeGptApi } from './gpt.js';
import { makeOnnxApi } from './onnx.js';
import { startWorkerPorts } from './worker-ports.js';
import * as check from './check.js';

export { simdSupported, threadsSupported, threadsUnavailableReason, scope, Owned, startWorkerPorts };

// The most kernel threads a threads build may be asked for.
const MAX_THREADS = 64;

// options.build: 'auto' | 'threads' | 'simd' | 'scalar'; options.threads: kernel threads of the
// threads build (1 to 64; default one per core, at most 8); options.baseUrl: where the .wasm files
// are served; options.workerPorts: for an engine in a browser's Web Worker, an async function
// (count) => MessagePorts to the threads build's workers, which the page started with
// startWorkerPorts (docs/wasm-threads.md: no worker is then started inside a worker).
export async function load(options) {
  const o = check.options(options, 'load', ['build', 'threads', 'baseUrl', 'workerPorts']);
  if (o.workerPorts !== undefined) check.func(o.workerPorts, 'load', 'workerPorts');
  if (o.build !== undefined) check.oneOf(o.build, 'load', 'build', ['auto', 'threads', 'simd', 'scalar']);
  if (o.threads !== undefined) {
    check.integer(o.threads, 'load', 'threads', { min: 1, max: MAX_THREADS });
    if (o.threads > 1 && (o.build === 'simd' || o.build === 'scalar')) {
      throw check.rangeError(`load: threads must be 1 with build '${o.build}' (one thread), got ${o.threads}; ` +
                             "build 'threads' runs more");
    }
  }
  if (o.baseUrl !== undefined && typeof o.baseUrl !== 'string' && !(o.baseUrl instanceof URL)) {
    throw check.typeError(`load: baseUrl must be a string or a URL, got ${check.describe(o.baseUrl)}`);
  }
  const { engine, flavour, threads, threadsUnavailable } = await instantiate(o);

  // Default generators per stream name under one seed, as torch.manual_seed; `dropouts` counts
  // the Dropout layers made with them (the k-th draws from the stream "dropout/k"). generator()
  // gives the engine's handle, owned here: not a wrapper, so no scope() can free it.
  const defaults = {
    seed: 0,
    streams: new Map(),
    dropouts: 0,
    generator(name = 'init') {
      if (!this.streams.has(name)) this.streams.set(name, engine.Generator.create(this.seed, name));
      return this.streams.get(name);
    },
  };
  const tensors = makeTensorApi(engine, defaults);
  const nnApi = makeNnApi(engine, tensors, defaults);
  const optim = makeOptimApi(engine, tensors, nnApi);
  const trainApi = makeTrainApi(engine, tensors, nnApi, { optim });
  const gpt = makeGptApi(engine, nnApi);
  const onnxApi = makeOnnxApi(engine, tensors, nnApi);
  // threads: the kernel threads in use; threadsUnavailable: why load() with build 'auto' did not
  // take the threads build (null when it did, or when a build was named).
  const info = { ...engine.info(), build: flavour, threads, threadsUnavailable };

  let disposed = false;
  return Object.freeze({
    info,
    // Stops the threads build's workers; the engine keeps working, on one thread. A page or
    // program that loads engines one after another calls it on the one it leaves (the workers of
    // a threads build hold its memory, so dropping the engine alone frees nothing). Nothing to
    // stop in the single-thread builds.
    dispose() {
      if (disposed || flavour !== 'threads') return;
      disposed = true;
      engine.setThreads(1, threads);  // joins the kernel threads, which hands their workers back
      engine.PThread.terminateAllThreads();
    },
    ...(typeof Symbol.dispose === 'symbol' ? { [Symbol.dispose]() { this.dispose(); } } : {}),
    ...tensors,
    ...nnApi,
    optim,
    ...trainApi,
    gpt,
    ...onnxApi,
    scope,
    Owned,
    // Seeds the default generators (the stream "init": layers' parameters, and randn/rand without
    // a generator or seed) and restarts the count of default Dropout streams ("dropout/0",
    // "dropout/1", ...): a program rerun after manualSeed(s) initialises and drops out as before.
    manualSeed(seed) {
      check.seed(seed, 'manualSeed');
      defaults.streams.forEach((g) => g.delete());
      defaults.streams = new Map();
      defaults.seed = seed;
      defaults.dropouts = 0;
    },
    // Runs fn with autograd off (as torch.no_grad).
    noGrad(fn) {
      check.func(fn, 'noGrad', 'fn');
      engine.enterNoGrad();
      try { return fn(); } finally { engine.leaveNoGrad(); }
    },
    get gradEnabled() { return engine.isGradEnabled(); },
    // SHA-256 of bytes as 64 hex digits (what `sha256sum` prints).
    sha256: (bytes) => engine.sha256(check.bytes(bytes, 'sha256')),
    // Bytes held by the engine's allocator (a leak shows as growth across steps).
    heapInUse: () => engine.heapInUse(),
    // Runs fn (sync or async) while recording an op-level trace (docs/diagnostics.md); model (a
    // Module, or null) names the modules and parameters. Returns { result, trace, values,
    // records }: the trace as JSON-lines bytes and the values sidecar (safetensors bytes, empty
    // unless options.valuesFrom/valuesTo/valuesMatch chose records). One trace at a time.
    async traced(model, fn, options) {
      if (model !== null) check.instance(model, nnApi.nn.Module, 'traced', 'model', 'Module');
      check.func(fn, 'traced', 'fn');
      const o = check.options(options, 'traced', ['valuesFrom', 'valuesTo', 'valuesMatch', 'source']);
      const from = o.valuesFrom === undefined ? 0 : check.integer(o.valuesFrom, 'traced', 'valuesFrom', { min: 1 });
      const to = o.valuesTo === undefined ? from : check.integer(o.valuesTo, 'traced', 'valuesTo', { min: from });
      if (o.valuesMatch !== undefined) check.string(o.valuesMatch, 'traced', 'valuesMatch');
      if (o.source !== undefined) check.string(o.source, 'traced', 'source');
      engine.traceBegin(model === null ? null : model.handle,
                        { valuesFrom: from, valuesTo: to, valuesMatch: o.valuesMatch ?? '', source: o.source ?? '' });
      let result;
      try {
        result = await fn();
      } catch (error) {
        engine.traceEnd();  // discard the unfinished trace; the error is what matters
        throw error;
      }
      return { result, ...engine.traceEnd() };
    },
  });
}
