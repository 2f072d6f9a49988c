// Data sets, the training loop helper with progress, checkpoints and resumption, evaluation, and
// the MNIST reference run. Every argument is checked (check.js) first.
import { Owned } from './lifetime.js';
import * as check from './check.js';

const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

// An Error like the engine's, with its kind.
function stateError(message) {
  const error = new Error(`lockstep: ${message}`);
  error.kind = 'state';
  return error;
}

export const FIT_OPTIONS = ['epochs', 'batchSize', 'seed', 'maxSteps', 'onProgress', 'signal', 'yieldEvery',
                            'checkpointEvery', 'onCheckpoint', 'resume', 'allowNonFinite', 'receipt'];

export function makeTrainApi(engine, { Tensor }, { nn, models }, { optim }) {
  class Dataset extends Owned {
    constructor(handle) { super(handle, 'dataset'); }
    // IDX image and label files (MNIST's format) as bytes; a byte pixel p becomes p / 255 (one
    // float32 division). options.normalize: MNIST's normalisation as the reference run applies it,
    // x = (x + (-0.1307f)) * (1.0f / 0.3081f) in float32: the constants are the float32 values
    // nearest 0.1307 and 1 / 0.3081 (the float32 division of 1 by float32 0.3081), not a division
    // of every pixel by 0.3081.
    static fromIdx(images, labels, options) {
      const w = 'Dataset.fromIdx';
      const o = check.options(options, w, ['normalize']);
      const normalize = o.normalize === undefined ? false : check.boolean(o.normalize, w, 'normalize');
      const d = new Dataset(engine.Dataset.fromIdx(check.bytes(images, w, 'images'), check.bytes(labels, w, 'labels')));
      if (normalize) d.handle.normalizeMnist();
      return d;
    }
    // inputs [N, ...] float32 and labels [N] integer tensors (copied).
    static fromTensors(inputs, labels) {
      const w = 'Dataset.fromTensors';
      return new Dataset(engine.Dataset.fromTensors(check.instance(inputs, Tensor, w, 'inputs').handle,
                                                    check.instance(labels, Tensor, w, 'labels').handle));
    }
    get size() { return this.handle.size(); }
    get inputs() { return new Tensor(this.handle.inputs()); }
    get labels() { return new Tensor(this.handle.labels()); }
    // Examples [start, start + count) as a new data set.
    slice(start, count) {
      return new Dataset(this.handle.slice(check.integer(start, 'Dataset.slice', 'start', { min: 0 }),
                                           check.integer(count, 'Dataset.slice', 'count', { min: 1 })));
    }
  }

  // fit()'s options, checked, with their defaults.
  function fitOptions(options, where) {
    const o = check.options(options, where, FIT_OPTIONS);
    const opt = (name, fallback, validate) => (o[name] === undefined ? fallback : validate(o[name], where, name));
    const int = (min) => (v, w, n) => check.integer(v, w, n, { min });
    const r = {
      epochs: opt('epochs', 1, int(1)),
      batchSize: opt('batchSize', 100, int(1)),
      seed: opt('seed', 0, check.seed),
      maxSteps: opt('maxSteps', undefined, int(0)),
      onProgress: opt('onProgress', undefined, check.func),
      signal: opt('signal', undefined, check.signal),
      yieldEvery: opt('yieldEvery', 10, int(1)),
      checkpointEvery: opt('checkpointEvery', undefined, int(1)),
      onCheckpoint: opt('onCheckpoint', undefined, check.func),
      resume: opt('resume', undefined, check.bytes),
      allowNonFinite: opt('allowNonFinite', false, check.boolean),
      receipt: receiptOf(o.receipt, where),
    };
    if (r.checkpointEvery !== undefined && r.onCheckpoint === undefined) {
      throw check.typeError(`${where}: checkpointEvery needs onCheckpoint(bytes, step), which receives the training states`);
    }
    if (r.onCheckpoint !== undefined && r.checkpointEvery === undefined) {
      throw check.typeError(`${where}: onCheckpoint needs checkpointEvery, the number of steps between training states`);
    }
    return r;
  }

  // Trains a classifier with cross-entropy: every epoch in the seed's shuffled order, last partial
  // batch dropped (as the reference run). Yields to the event loop every options.yieldEvery steps
  // so pages and workers stay responsive; options.signal (AbortSignal) stops it. A run has
  // min(epochs * stepsPerEpoch, maxSteps) steps; options.checkpointEvery hands its full training
  // state to options.onCheckpoint(bytes, step) after every that many steps, and options.resume
  // (such bytes) continues the same run from there, to the same bits as an uninterrupted fit.
  // A NaN or infinite loss stops it with an Error of kind 'state' unless options.allowNonFinite.
  // options.receipt (true, or { every }: the steps between kept training states, default about ten
  // over the run) records the run's receipt (docs/verifiable-training.md); verifyRun checks it.
  // Returns { steps: the run's step count at the end, resumedFrom: the step it started from (0
  // unless resumed), losses: those of the steps run by this call (steps - resumedFrom of them),
  // finalLoss, and with a receipt receipt: { text, states: { file name: bytes } } }.
  async function fit(model, optimizer, dataset, options) {
    check.instance(model, nn.Module, 'fit', 'model', 'Module');
    check.instance(optimizer, optim.Optimizer, 'fit', 'optimizer', 'Optimizer');
    check.instance(dataset, Dataset, 'fit', 'dataset', 'Dataset');
    const o = fitOptions(options, 'fit');
    return fitChecked(model, optimizer, dataset, o, { receipt: o.receipt, where: 'fit' });
  }

  // fit() on checked arguments. run.mnistLr: the run is the MNIST reference run (its training
  // states and receipts are the native run's); run.receipt: { every } records a receipt.
  async function fitChecked(model, optimizer, dataset, o, run = {}) {
    const trainer = engine.makeTrainer(model.handle, optimizer.handle, dataset.handle, o.batchSize, o.seed);
    try {
      trainer.setAllowNonFinite(o.allowNonFinite);
      if (run.mnistLr !== undefined) trainer.useMnistIdentity(run.mnistLr);
      if (o.resume !== undefined) trainer.resume(o.resume);
      const resumedFrom = trainer.stepsDone();
      const perEpoch = trainer.stepsPerEpoch();
      const total = Math.min(perEpoch * o.epochs, o.maxSteps ?? Infinity);
      if (resumedFrom > total) {
        throw stateError(`fit: the training state to resume is at step ${resumedFrom}, past the ${total} steps of this ` +
                         `fit (epochs ${o.epochs} of ${perEpoch} steps${o.maxSteps === undefined ? '' : `, maxSteps ${o.maxSteps}`})`);
      }
      if (run.receipt !== undefined) {
        if (resumedFrom !== 0) {
          throw stateError(`${run.where}: a receipt covers a run from its first step; this one resumes at step ${
            resumedFrom} (verify the resumed part with verifyRun instead)`);
        }
        trainer.startReceipt(run.receipt.every, total);
      }
      const start = performance.now();
      const losses = [];
      for (let step = resumedFrom + 1; step <= total; ++step) {
        if (o.signal?.aborted) throw o.signal.reason ?? new Error('lockstep: training was aborted');
        const loss = trainer.step();
        losses.push(loss);
        if (o.checkpointEvery !== undefined && step % o.checkpointEvery === 0) {
          const pending = o.onCheckpoint(trainer.stateBytes(), step);
          if (pending && typeof pending.then === 'function') await pending;
        }
        if (o.onProgress) {
          const seconds = (performance.now() - start) / 1000;
          const stepsPerSecond = (step - resumedFrom) / Math.max(seconds, 1e-9);
          o.onProgress({
            step, totalSteps: total, epoch: Math.floor((step - 1) / perEpoch), loss, stepsPerSecond,
            etaSeconds: (total - step) / stepsPerSecond,
          });
        }
        if (step % o.yieldEvery === 0 && step < total) await nextTask();
      }
      const fitted = { steps: total, resumedFrom, losses, finalLoss: losses.at(-1) ?? NaN };
      if (run.receipt !== undefined) fitted.receipt = trainer.finishReceipt();
      return fitted;
    } finally {
      trainer.delete();
    }
  }

  // Evaluation mode, no gradients, data-set order: accuracy and the SHA-256 of all logits.
  // options.batchSize (100), options.limit (the first that many examples; default all).
  function evaluate(model, dataset, options) {
    const w = 'evaluate';
    check.instance(model, nn.Module, w, 'model', 'Module');
    check.instance(dataset, Dataset, w, 'dataset', 'Dataset');
    const o = check.options(options, w, ['batchSize', 'limit']);
    const batchSize = o.batchSize === undefined ? 100 : check.integer(o.batchSize, w, 'batchSize', { min: 1 });
    const limit = o.limit === undefined ? -1 : check.integer(o.limit, w, 'limit', { min: 1 });
    return engine.evaluate(model.handle, dataset.handle, batchSize, limit);
  }

  // The MNIST reference run (LeNet-5, Adam 1e-3, batch 100, seed 2, 20 epochs) on data sets
  // loaded with Dataset.fromIdx(..., { normalize: true }): the same steps as the native
  // `lockstep train mnist`, so the same hashes. Takes fit()'s progress, abort, checkpoint and
  // resume options. Returns the trained model too (dispose it).
  async function mnistReferenceRun(options) {
    const w = 'mnistReferenceRun';
    if (options === undefined || options === null || typeof options !== 'object') {
      throw check.typeError(`${w} needs { train, test } Datasets (Dataset.fromIdx), got ${check.describe(options)}`);
    }
    const o = check.options(options, w, ['train', 'test', 'lr', 'maxTest', ...FIT_OPTIONS]);
    if (!(o.train instanceof Dataset) || !(o.test instanceof Dataset)) {
      throw check.typeError(`${w} needs { train, test } Datasets (Dataset.fromIdx), got train ${
        check.describe(o.train)} and test ${check.describe(o.test)}`);
    }
    const { train, test, lr = 1e-3, maxTest, receipt, ...rest } = o;
    const fitOpts = { epochs: 20, seed: 2, batchSize: 100, ...rest };
    for (const key of Object.keys(fitOpts)) if (fitOpts[key] === undefined) delete fitOpts[key];
    const checkedFit = fitOptions({ ...fitOpts, receipt }, w);  // checked before anything is made
    check.number(lr, w, 'lr', { min: 0, float32: true });
    if (maxTest !== undefined) check.integer(maxTest, w, 'maxTest', { min: 1 });
    const model = models.lenet5({ seed: fitOpts.seed });
    try {
      const initialHash = model.hash();
      const optimizer = new optim.Adam(model, { lr });
      let fitted;
      try {
        fitted = await fitChecked(model, optimizer, train, checkedFit, { mnistLr: lr, receipt: checkedFit.receipt, where: w });
      } finally {
        optimizer.dispose();
      }
      const trainedHash = model.hash();
      const e = evaluate(model, test, { batchSize: fitOpts.batchSize, limit: maxTest });
      return {
        initialHash, trainedHash, logitsHash: e.logitsHash, testAccuracy: e.accuracy, testExamples: e.examples,
        steps: fitted.steps, resumedFrom: fitted.resumedFrom, finalLoss: fitted.finalLoss, losses: fitted.losses, model,
        ...(fitted.receipt ? { receipt: fitted.receipt } : {}),
      };
    } catch (error) {
      model.dispose();
      throw error;
    }
  }

  // options.receipt: true, or { every } (the steps between kept training states; default about
  // ten over the run); undefined or false: none.
  function receiptOf(value, where) {
    if (value === undefined || value === false) return undefined;
    if (value === true) return { every: 0 };
    const r = check.options(value, `${where} receipt`, ['every']);
    return { every: r.every === undefined ? 0 : check.integer(r.every, where, 'receipt.every', { min: 1 }) };
  }

  // Re-executes steps of a receipt of the MNIST reference run (mnistReferenceRun's, or the native
  // `lockstep train mnist --receipt`'s) from the training states kept beside it, on options.train
  // (Dataset.fromIdx(..., { normalize: true })), and checks each against the receipt's chain. A
  // fit() receipt needs options.model and options.optimizer too, made as the run's were (the same
  // architecture and seed; the same optimizer and options over the same parameters): the receipt
  // checks their description, and the kept states are loaded into them. Checks
  // every step after options.checkpoint's (default: the whole run), options.steps [first, last],
  // or options.sample steps drawn by options.seed (the same draw as the native --sample K --seed S).
  // receipt: { text, states } as mnistReferenceRun and fit return it, or the receipt's text with
  // options.states ({ file name: bytes }). options.onStep(step, ok) hears each verdict.
  // Returns { verified, checkedSteps, executedSteps, firstMismatch (0: none), mismatch, report }.
  // A receipt or state that cannot be used (a tampered chain, a state that does not match its
  // receipt, other training data) throws an Error of kind 'format' or 'state' or 'argument'.
  function verifyRun(receipt, options) {
    const w = 'verifyRun';
    const o = check.options(options, w, ['train', 'states', 'checkpoint', 'steps', 'sample', 'seed', 'onStep', 'model',
                                         'optimizer']);
    let text = receipt, states = o.states;
    if (receipt !== null && typeof receipt === 'object' && typeof receipt.text === 'string') {
      ({ text } = receipt);
      states = states ?? receipt.states;
    }
    if (typeof text !== 'string') {
      throw check.typeError(`${w}: expected the receipt's text or { text, states }, got ${check.describe(receipt)}`);
    }
    if (states === undefined || states === null || typeof states !== 'object') {
      throw check.typeError(`${w}: expected states, { file name: Uint8Array }, got ${check.describe(states)}`);
    }
    for (const [name, bytes] of Object.entries(states)) check.bytes(bytes, w, `states['${name}']`);
    check.instance(o.train, Dataset, w, 'train');
    const v = {};
    if (o.checkpoint !== undefined) v.checkpoint = check.string(o.checkpoint, w, 'checkpoint');
    if (o.steps !== undefined) {
      if (!Array.isArray(o.steps) || o.steps.length !== 2) {
        throw check.typeError(`${w}: steps must be [first, last], got ${check.describe(o.steps)}`);
      }
      v.first = check.integer(o.steps[0], w, 'steps[0]', { min: 1 });
      v.last = check.integer(o.steps[1], w, 'steps[1]', { min: v.first });
    }
    if (o.sample !== undefined) v.sample = check.integer(o.sample, w, 'sample', { min: 1 });
    if (o.seed !== undefined) v.seed = check.seed(o.seed, w, 'seed');
    if (o.onStep !== undefined) v.onStep = check.func(o.onStep, w, 'onStep');
    if (o.model === undefined && o.optimizer === undefined) return engine.verifyMnistRun(text, states, o.train.handle, v);
    check.instance(o.model, nn.Module, w, 'model', 'Module');
    check.instance(o.optimizer, optim.Optimizer, w, 'optimizer', 'Optimizer');
    return engine.verifyFitRun(text, states, o.train.handle, o.model.handle, o.optimizer.handle, v);
  }

  return { Dataset, fit, evaluate, mnistReferenceRun, verifyRun };
}
