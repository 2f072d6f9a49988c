// Modules: layers, Sequential and the reference models, with checkpoints as canonical safetensors
// bytes whose SHA-256 is the model hash.
import { Owned } from './lifetime.js';

export function makeNnApi(engine, { Tensor }, defaults) {
  const generatorOf = (options) => (options?.generator ?? defaults.generator()).handle;
  const int = (v, fallback) => (v === undefined ? fallback : v);

  class Module extends Owned {
    constructor(handle) { super(handle, 'module'); }
    forward(input) {
      if (!(input instanceof Tensor)) throw new TypeError('lockstep: forward expects a Tensor');
      return new Tensor(this.handle.forward(input.handle));
    }
    get name() { return this.handle.name(); }
    get training() { return this.handle.isTraining(); }
    train(on = true) { this.handle.setTraining(Boolean(on)); return this; }
    eval() { return this.train(false); }
    zeroGrad() { this.handle.zeroGrad(); }
    // [name, Tensor] pairs in registration order (PyTorch's names); dispose the tensors.
    namedParameters() { return this.handle.namedParameters().map(([n, h]) => [n, new Tensor(h)]); }
    parameters() { return this.namedParameters().map(([, t]) => t); }
    // Parameters and buffers sorted by name: what a checkpoint holds.
    stateDict() { return this.handle.stateDict().map(([n, h]) => [n, new Tensor(h)]); }
    // The canonical safetensors checkpoint: SHA-256 of these bytes is hash().
    save() { return this.handle.save(); }
    // Loads a checkpoint (lockstep's, or a PyTorch state dict saved as safetensors); names,
    // shapes and dtypes must match, and nothing changes unless everything does.
    load(bytes) { this.handle.load(bytes); return this; }
    hash() { return this.handle.hash(); }
  }

  class Sequential extends Module {
    constructor(...modules) {
      super(engine.makeSequential());
      modules.forEach((m) => this.add(m));
    }
    // Appends a child, named "0", "1", ... as in PyTorch.
    add(module) {
      if (!(module instanceof Module)) throw new TypeError('lockstep: Sequential takes Modules');
      this.handle.add(module.handle);
      return this;
    }
  }

  const activation = (kind) => class extends Module {
    constructor() { super(engine.makeActivation(kind)); }
  };

  const nn = {
    Module,
    Sequential,
    Linear: class Linear extends Module {
      constructor(inFeatures, outFeatures, options = {}) {
        super(engine.makeLinear(inFeatures, outFeatures, options.bias ?? true, generatorOf(options)));
      }
    },
    Conv2d: class Conv2d extends Module {
      constructor(inChannels, outChannels, kernelSize, options = {}) {
        super(engine.makeConv2d(inChannels, outChannels, kernelSize, int(options.stride, 1), int(options.padding, 0),
                                int(options.dilation, 1), int(options.groups, 1), options.bias ?? true,
                                generatorOf(options)));
      }
    },
    MaxPool2d: class MaxPool2d extends Module {
      constructor(kernelSize, options = {}) {
        super(engine.makeMaxPool2d(kernelSize, int(options.stride, 0), int(options.padding, 0)));
      }
    },
    AvgPool2d: class AvgPool2d extends Module {
      constructor(kernelSize, options = {}) {
        super(engine.makeAvgPool2d(kernelSize, int(options.stride, 0), int(options.padding, 0)));
      }
    },
    ReLU: activation('relu'),
    Tanh: activation('tanh'),
    Sigmoid: activation('sigmoid'),
    GELU: class GELU extends Module {
      constructor(options = {}) { super(engine.makeActivation(options.approximate === 'tanh' ? 'geluTanh' : 'gelu')); }
    },
    Softmax: class Softmax extends Module {
      constructor(dim = -1) { super(engine.makeSoftmax(dim, false)); }
    },
    LogSoftmax: class LogSoftmax extends Module {
      constructor(dim = -1) { super(engine.makeSoftmax(dim, true)); }
    },
    Flatten: class Flatten extends Module {
      constructor(startDim = 1, endDim = -1) { super(engine.makeFlatten(startDim, endDim)); }
    },
    // Inverted dropout; masks come from options.generator (default: the "dropout" stream of
    // manualSeed's seed), so they are the same on every platform.
    Dropout: class Dropout extends Module {
      constructor(p = 0.5, options = {}) {
        super(engine.makeDropout(p, (options.generator ?? defaults.generator('dropout')).handle));
      }
    },
    LayerNorm: class LayerNorm extends Module {
      constructor(normalizedShape, options = {}) {
        super(engine.makeLayerNorm(normalizedShape, options.eps ?? 1e-5, options.elementwiseAffine ?? true,
                                   options.bias ?? true));
      }
    },
    Embedding: class Embedding extends Module {
      constructor(numEmbeddings, embeddingDim, options = {}) {
        super(engine.makeEmbedding(numEmbeddings, embeddingDim, generatorOf(options)));
      }
    },
    functional: {
      // targets: an int64 Tensor, or class indices as an array / typed array.
      crossEntropy(logits, targets, options = {}) {
        return withTargets(targets, (t) => new Tensor(engine.crossEntropy(logits.handle, t, options.labelSmoothing ?? 0,
                                                                          options.ignoreIndex ?? -100)));
      },
      nllLoss(logProbs, targets) {
        return withTargets(targets, (t) => new Tensor(engine.nllLoss(logProbs.handle, t)));
      },
      mseLoss(input, target) { return new Tensor(engine.mseLoss(input.handle, target.handle)); },
    },
  };

  function withTargets(targets, fn) {
    if (targets instanceof Tensor) return fn(targets.handle);
    const t = engine.Tensor.fromIntegers(targets, [targets.length ?? 0]);
    try { return fn(t); } finally { t.delete(); }
  }

  const models = {
    names: ['lenet5', 'mlp'],
    // A reference architecture ('lenet5' or 'mlp') with parameters from the seed's "init" stream.
    create(arch, options = {}) { return new Module(engine.makeModel(arch, options.seed ?? 0)); },
    lenet5(options = {}) { return models.create('lenet5', options); },
    mlp(options = {}) { return models.create('mlp', options); },
    // A checkpoint as a model: options.arch, or the first reference architecture it fits.
    fromCheckpoint(bytes, options = {}) {
      const candidates = options.arch ? [options.arch] : models.names;
      const reasons = [];
      for (const arch of candidates) {
        const model = models.create(arch);
        try {
          return model.load(bytes);
        } catch (error) {
          model.dispose();
          reasons.push(`${arch}: ${error.message}`);
        }
      }
      throw new Error(`lockstep: the checkpoint fits no model (${reasons.join('; ')})`);
    },
  };

  return { nn, models };
}
