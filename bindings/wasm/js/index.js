// lockstep: bitwise-reproducible training in JavaScript. `await load()` gives an engine whose
// results (tensors, model hashes) are bit for bit those of the native library on any CPU.
import { instantiate, simdSupported } from './loader.js';
import { Owned, scope } from './lifetime.js';
import { makeTensorApi } from './tensor.js';
import { makeNnApi } from './nn.js';
import { makeOptimApi } from './optim.js';
import { makeTrainApi } from './train.js';
import { makeGptApi } from './gpt.js';

export { simdSupported, scope, Owned };

// options.build: 'auto' | 'simd' | 'scalar'; options.baseUrl: where the .wasm files are served.
export async function load(options = {}) {
  const { engine, flavour } = await instantiate(options);

  // Default generators per stream name under one seed, as torch.manual_seed.
  const defaults = {
    seed: 0,
    streams: new Map(),
    generator(name = 'init') {
      if (!this.streams.has(name)) this.streams.set(name, new tensors.Generator(this.seed, name));
      return this.streams.get(name);
    },
  };
  const tensors = makeTensorApi(engine, defaults);
  const nnApi = makeNnApi(engine, tensors, defaults);
  const optim = makeOptimApi(engine, tensors, nnApi);
  const trainApi = makeTrainApi(engine, tensors, nnApi, { optim });
  const gpt = makeGptApi(engine, nnApi);
  const info = { ...engine.info(), build: flavour };

  return Object.freeze({
    info,
    ...tensors,
    ...nnApi,
    optim,
    ...trainApi,
    gpt,
    scope,
    Owned,
    // Seeds the default generators (streams "init", "dropout", "randn", ...).
    manualSeed(seed) {
      const fresh = new Map();
      engine.Generator.create(seed, 'init').delete();  // validates the seed before anything changes
      defaults.streams.forEach((g) => g.dispose());
      defaults.streams = fresh;
      defaults.seed = seed;
    },
    // Runs fn with autograd off (as torch.no_grad).
    noGrad(fn) {
      engine.enterNoGrad();
      try { return fn(); } finally { engine.leaveNoGrad(); }
    },
    get gradEnabled() { return engine.isGradEnabled(); },
    // SHA-256 of bytes as 64 hex digits (what `sha256sum` prints).
    sha256: (bytes) => engine.sha256(bytes),
    // Bytes held by the engine's allocator (a leak shows as growth across steps).
    heapInUse: () => engine.heapInUse(),
  });
}
