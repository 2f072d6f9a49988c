// Data sets, the training loop helper with progress, evaluation, and the MNIST reference run.
import { Owned } from './lifetime.js';

const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

export function makeTrainApi(engine, { Tensor }, { nn, models }, { optim }) {
  class Dataset extends Owned {
    constructor(handle) { super(handle, 'dataset'); }
    // IDX image and label files (MNIST's format) as bytes; byte pixels are scaled to [0, 1].
    // options.normalize: MNIST's (x - 0.1307) / 0.3081, as the reference run does.
    static fromIdx(images, labels, options = {}) {
      const d = new Dataset(engine.Dataset.fromIdx(images, labels));
      if (options.normalize) d.handle.normalizeMnist();
      return d;
    }
    // inputs [N, ...] float32 and labels [N] integer tensors (copied).
    static fromTensors(inputs, labels) { return new Dataset(engine.Dataset.fromTensors(inputs.handle, labels.handle)); }
    get size() { return this.handle.size(); }
    get inputs() { return new Tensor(this.handle.inputs()); }
    get labels() { return new Tensor(this.handle.labels()); }
    // Examples [start, start + count) as a new data set.
    slice(start, count) { return new Dataset(this.handle.slice(start, count)); }
  }

  // Trains a classifier with cross-entropy: every epoch in the seed's shuffled order, last partial
  // batch dropped (as the reference run). Yields to the event loop every options.yieldEvery steps
  // so pages and workers stay responsive; options.signal (AbortSignal) stops it.
  async function fit(model, optimizer, dataset, options = {}) {
    const epochs = options.epochs ?? 1;
    const batchSize = options.batchSize ?? 100;
    const trainer = engine.makeTrainer(model.handle, optimizer.handle, dataset.handle, batchSize, options.seed ?? 0);
    try {
      const perEpoch = trainer.stepsPerEpoch();
      let total = perEpoch * epochs;
      if (options.maxSteps !== undefined && options.maxSteps >= 0) total = Math.min(total, options.maxSteps);
      const yieldEvery = options.yieldEvery ?? 10;
      const start = performance.now();
      const losses = [];
      for (let step = 1; step <= total; ++step) {
        if (options.signal?.aborted) throw options.signal.reason ?? new Error('lockstep: training was aborted');
        const loss = trainer.step();
        losses.push(loss);
        if (options.onProgress) {
          const seconds = (performance.now() - start) / 1000;
          const stepsPerSecond = step / Math.max(seconds, 1e-9);
          options.onProgress({
            step, totalSteps: total, epoch: Math.floor((step - 1) / perEpoch), loss, stepsPerSecond,
            etaSeconds: (total - step) / stepsPerSecond,
          });
        }
        if (step % yieldEvery === 0 && step < total) await nextTask();
      }
      return { steps: total, losses, finalLoss: losses.at(-1) ?? NaN };
    } finally {
      trainer.delete();
    }
  }

  // Evaluation mode, no gradients, data-set order: accuracy and the SHA-256 of all logits.
  function evaluate(model, dataset, options = {}) {
    return engine.evaluate(model.handle, dataset.handle, options.batchSize ?? 100, options.limit ?? -1);
  }

  // The MNIST reference run (LeNet-5, Adam 1e-3, batch 100, seed 2, 20 epochs) on data sets
  // loaded with Dataset.fromIdx(..., { normalize: true }): the same steps as the native
  // `lockstep train mnist`, so the same hashes. Returns the trained model too (dispose it).
  async function mnistReferenceRun({ train, test, epochs = 20, seed = 2, lr = 1e-3, batchSize = 100, maxSteps,
                                     maxTest, onProgress, signal, yieldEvery } = {}) {
    if (!(train instanceof Dataset) || !(test instanceof Dataset)) {
      throw new TypeError('lockstep: mnistReferenceRun needs { train, test } Datasets (Dataset.fromIdx)');
    }
    const model = models.lenet5({ seed });
    try {
      const initialHash = model.hash();
      const optimizer = new optim.Adam(model, { lr });
      let fitted;
      try {
        fitted = await fit(model, optimizer, train, { epochs, batchSize, seed, maxSteps, onProgress, signal, yieldEvery });
      } finally {
        optimizer.dispose();
      }
      const trainedHash = model.hash();
      const e = evaluate(model, test, { batchSize, limit: maxTest ?? -1 });
      return {
        initialHash, trainedHash, logitsHash: e.logitsHash, testAccuracy: e.accuracy, testExamples: e.examples,
        steps: fitted.steps, finalLoss: fitted.finalLoss, losses: fitted.losses, model,
      };
    } catch (error) {
      model.dispose();
      throw error;
    }
  }

  return { Dataset, fit, evaluate, mnistReferenceRun };
}
