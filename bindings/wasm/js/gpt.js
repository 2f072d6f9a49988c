// The GPT example in JavaScript: character corpora, nanoGPT's model, training with progress, and
// sampling. The same text, preset, steps and seed give the native build's hashes and samples.
// Every argument is checked (check.js) first.
import { Owned } from './lifetime.js';
import * as check from './check.js';

const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

const PRESETS = ['small', 'tiny'];
const MODEL_OPTIONS = ['preset', 'seed', 'dropout'];
const TRAIN_CONFIG = [...MODEL_OPTIONS, 'steps', 'evalInterval', 'evalIters', 'batchSize', 'gradAccum', 'lr', 'minLr',
                      'warmupSteps', 'decaySteps', 'weightDecay', 'allowNonFinite'];

// The engine's configuration from checked options: only the keys given (the preset fills the rest).
function configOf(o, where) {
  const config = {};
  const set = (name, validate) => { if (o[name] !== undefined) config[name] = validate(o[name]); };
  const int = (name, min) => set(name, (v) => check.integer(v, where, name, { min }));
  const float = (name, extra = {}) => set(name, (v) => check.number(v, where, name, { min: 0, float32: true, ...extra }));
  set('preset', (v) => {
    if (typeof v !== 'string') throw check.typeError(`${where}: preset must be 'small' or 'tiny', got ${check.describe(v)}`);
    if (!PRESETS.includes(v)) throw check.rangeError(`${where}: unknown preset '${v}'; preset must be 'small' or 'tiny'`);
    return v;
  });
  set('seed', (v) => check.seed(v, where));
  float('dropout', { max: 1, maxOpen: true });
  int('steps', 0);
  int('evalInterval', 0);
  int('evalIters', 0);
  int('batchSize', 1);
  int('gradAccum', 1);
  int('warmupSteps', 0);
  int('decaySteps', 0);
  float('lr');
  float('minLr');
  float('weightDecay');
  set('allowNonFinite', (v) => check.boolean(v, where, 'allowNonFinite'));
  return config;
}

export function makeGptApi(engine, { nn }) {
  class CharCorpus extends Owned {
    // The distinct characters (in byte order) are the vocabulary; the first trainFraction of the
    // text trains, the rest validates (nanoGPT's split). options.trainFraction in (0, 1), 0.9.
    constructor(text, options) {
      const w = 'CharCorpus';
      check.string(text, w, 'text');
      const o = check.options(options, w, ['trainFraction']);
      const fraction = o.trainFraction === undefined ? 0.9
        : check.number(o.trainFraction, w, 'trainFraction', { min: 0, max: 1, minOpen: true, maxOpen: true });
      super(engine.CharCorpus.fromText(text, fraction), 'corpus');
    }
    get vocabSize() { return this.handle.vocabSize(); }
    get vocab() { return this.handle.vocab(); }
    get trainSize() { return this.handle.trainSize(); }
    get valSize() { return this.handle.valSize(); }
    encode(text) { return this.handle.encode(check.string(text, 'CharCorpus.encode', 'text')); }
    decode(ids) {
      const w = 'CharCorpus.decode';
      if (!Array.isArray(ids) && !ArrayBuffer.isView(ids)) {
        throw check.typeError(`${w}: ids must be an array or typed array of token ids, got ${check.describe(ids)}`);
      }
      if (Array.isArray(ids) && ids.some(Array.isArray)) throw check.typeError(`${w}: ids must be a flat array of token ids`);
      return this.handle.decode(Array.from(check.elements(ids, w, { integers: true }).flat));
    }
  }
  const corpusArg = (corpus, where) => check.instance(corpus, CharCorpus, where, 'corpus').handle;

  // options: preset 'small' | 'tiny' (default small), seed, dropout.
  function model(corpus, options) {
    const w = 'gpt.model';
    const handle = corpusArg(corpus, w);
    return new nn.Module(engine.makeGpt(handle, configOf(check.options(options, w, MODEL_OPTIONS), w)));
  }

  // Trains as the native `lockstep train gpt` does. options: the configuration (preset, steps,
  // seed, ..., allowNonFinite), onProgress({step, totalSteps, loss, lr, stepsPerSecond,
  // etaSeconds}), signal, yieldEvery. Returns hashes, per-step losses, loss estimates and the
  // model (dispose it).
  async function train(corpus, options) {
    const w = 'gpt.train';
    const handle = corpusArg(corpus, w);
    const o = check.options(options, w, [...TRAIN_CONFIG, 'onProgress', 'signal', 'yieldEvery']);
    const onProgress = o.onProgress === undefined ? undefined : check.func(o.onProgress, w, 'onProgress');
    const signal = o.signal === undefined ? undefined : check.signal(o.signal, w);
    const yieldEvery = o.yieldEvery === undefined ? 1 : check.integer(o.yieldEvery, w, 'yieldEvery', { min: 1 });
    const training = engine.makeGptTraining(handle, configOf(o, w));
    try {
      const start = performance.now();
      const total = training.totalSteps();
      while (!training.done()) {
        if (signal?.aborted) throw signal.reason ?? new Error('lockstep: training was aborted');
        const loss = training.step();
        const step = training.stepsDone();
        if (onProgress) {
          const stepsPerSecond = step / Math.max((performance.now() - start) / 1000, 1e-9);
          onProgress({ step, totalSteps: total, loss, lr: training.lr(), stepsPerSecond,
                       etaSeconds: (total - step) / stepsPerSecond });
        }
        if (step % yieldEvery === 0 && !training.done()) await nextTask();
      }
      const result = training.finish();
      return { ...result, model: new nn.Module(training.model()) };
    } finally {
      training.delete();
    }
  }

  // Continues prompt (a non-empty string of the corpus's characters); options: maxNewTokens
  // (200), temperature (0.8, > 0), topK (20; 0: all tokens), seed (1).
  function sample(gptModel, corpus, prompt = '\n', options) {
    const w = 'gpt.sample';
    check.instance(gptModel, nn.Module, w, 'model', 'Module');
    const handle = corpusArg(corpus, w);
    check.string(prompt, w, 'prompt');
    if (prompt.length === 0) throw check.rangeError(`${w}: prompt must be a non-empty string, got ""`);
    const o = check.options(options, w, ['maxNewTokens', 'temperature', 'topK', 'seed']);
    const config = {};
    if (o.maxNewTokens !== undefined) config.maxNewTokens = check.integer(o.maxNewTokens, w, 'maxNewTokens', { min: 0 });
    if (o.temperature !== undefined) {
      config.temperature = check.number(o.temperature, w, 'temperature', { min: 0, minOpen: true, float32: true });
    }
    if (o.topK !== undefined) config.topK = check.integer(o.topK, w, 'topK', { min: 0 });
    if (o.seed !== undefined) config.seed = check.seed(o.seed, w);
    return engine.sampleGpt(gptModel.handle, handle, prompt, config);
  }

  return { CharCorpus, model, train, sample };
}
