// The GPT example in JavaScript: character corpora, nanoGPT's model, training with progress, and
// sampling. The same text, preset, steps and seed give the native build's hashes and samples.
import { Owned } from './lifetime.js';

const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

export function makeGptApi(engine, { nn }) {
  class CharCorpus extends Owned {
    // The distinct characters (in byte order) are the vocabulary; the first trainFraction of the
    // text trains, the rest validates (nanoGPT's split).
    constructor(text, options = {}) {
      if (typeof text !== 'string') throw new TypeError('lockstep: CharCorpus expects the text as a string');
      super(engine.CharCorpus.fromText(text, options.trainFraction ?? 0.9), 'corpus');
    }
    get vocabSize() { return this.handle.vocabSize(); }
    get vocab() { return this.handle.vocab(); }
    get trainSize() { return this.handle.trainSize(); }
    get valSize() { return this.handle.valSize(); }
    encode(text) { return this.handle.encode(text); }
    decode(ids) { return this.handle.decode(Array.from(ids)); }
  }

  // options: preset 'small' | 'tiny' (default small), seed, dropout.
  function model(corpus, options = {}) { return new nn.Module(engine.makeGpt(corpus.handle, options)); }

  // Trains as the native `lockstep train gpt` does. options: preset, steps, seed, evalInterval,
  // evalIters, onProgress({step, totalSteps, loss, lr, stepsPerSecond, etaSeconds}), signal,
  // yieldEvery. Returns hashes, per-step losses, loss estimates and the model (dispose it).
  async function train(corpus, options = {}) {
    const { onProgress, signal, yieldEvery = 1, ...config } = options;
    const training = engine.makeGptTraining(corpus.handle, config);
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

  // Continues prompt; options: maxNewTokens (200), temperature (0.8), topK (20), seed (1).
  function sample(gptModel, corpus, prompt = '\n', options = {}) {
    return engine.sampleGpt(gptModel.handle, corpus.handle, prompt, options);
  }

  return { CharCorpus, model, train, sample };
}
