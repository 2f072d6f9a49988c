// Modules: layers, Sequential and the reference models, with checkpoints as canonical safetensors
// bytes whose SHA-256 is the model hash. Every argument is checked (check.js) first.
import { Owned } from './lifetime.js';
import * as check from './check.js';

export function makeNnApi(engine, { Tensor, Generator }, defaults) {
  // The generator a layer initialises from: options.generator, or the default "init" stream.
  const generatorOf = (o, where) =>
    (o.generator === undefined ? defaults.generator() : check.instance(o.generator, Generator, where, 'generator').handle);
  const flag = (value, where, name, fallback) => (value === undefined ? fallback : check.boolean(value, where, name));
  const tensorArg = (value, where, name) => check.instance(value, Tensor, where, name).handle;

  class Module extends Owned {
    constructor(handle) { super(handle, 'module'); }
    forward(input) { return new Tensor(this.handle.forward(tensorArg(input, 'forward', 'input'))); }
    get name() { return this.handle.name(); }
    get training() { return this.handle.isTraining(); }
    train(on = true) { this.handle.setTraining(check.boolean(on, 'train', 'on')); return this; }
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
    load(bytes) { this.handle.load(check.bytes(bytes, 'load')); return this; }
    hash() { return this.handle.hash(); }
  }

  class Sequential extends Module {
    constructor(...modules) {
      modules.forEach((m, i) => check.instance(m, Module, 'Sequential', `argument ${i}`));
      super(engine.makeSequential());
      modules.forEach((m) => this.add(m));
    }
    // Appends a child, named "0", "1", ... as in PyTorch.
    add(module) {
      this.handle.add(check.instance(module, Module, 'Sequential.add', 'module').handle);
      return this;
    }
  }

  const recurrent = (name) => ({
    [name]: class extends Module {
      constructor(inputSize, hiddenSize, options) {
        const o = check.options(options, name, ['numLayers', 'bias', 'batchFirst', 'bidirectional', 'generator',
                                                ...(name === 'RNN' ? ['nonlinearity'] : [])]);
        const nonlinearity = o.nonlinearity === undefined ? 'tanh' : o.nonlinearity;
        if (nonlinearity !== 'tanh' && nonlinearity !== 'relu') {
          throw check.typeError(`${name}: nonlinearity must be 'tanh' or 'relu', got ${check.describe(nonlinearity)}`);
        }
        const kind = name === 'RNN' ? `rnn_${nonlinearity}` : name.toLowerCase();
        super(engine.makeRecurrent(kind, check.size(inputSize, name, 'inputSize'), check.size(hiddenSize, name, 'hiddenSize'),
                                   o.numLayers === undefined ? 1 : check.size(o.numLayers, name, 'numLayers', 1),
                                   flag(o.bias, name, 'bias', true), flag(o.batchFirst, name, 'batchFirst', false),
                                   flag(o.bidirectional, name, 'bidirectional', false), generatorOf(o, name)));
      }
      forwardWithState(input, h0, c0) {
        const opt = (t, what) => (t === undefined || t === null ? null : tensorArg(t, 'forwardWithState', what));
        const out = engine.recurrentRun(this.handle, tensorArg(input, 'forwardWithState', 'input'), opt(h0, 'h0'),
                                        opt(c0, 'c0'));
        return out.map((h) => (h === null ? null : new Tensor(h)));
      }
    },
  })[name];

  const activation = (kind, name) => ({
    [name]: class extends Module {
      constructor(...args) {
        check.none(args, `nn.${name}`);
        super(engine.makeActivation(kind));
      }
    },
  })[name];

  // The pools' options: stride (default kernelSize) and padding (default 0); max pooling also
  // ceilMode (default false).
  const poolArgs = (where, kernelSize, options, extra = []) => {
    const o = check.options(options, where, ['stride', 'padding', ...extra]);
    return [check.size(kernelSize, where, 'kernelSize', 1),
            o.stride === undefined ? 0 : check.size(o.stride, where, 'stride', 1),
            o.padding === undefined ? 0 : check.size(o.padding, where, 'padding', 0),
            ...extra.map((name) => flag(o[name], where, name, false))];
  };

  // PyTorch's output_size: a size, or [h, w] whose entries may be null (the input's size: 0 to the engine).
  const outputSizes = (value, where) => {
    const pair = Array.isArray(value) ? value : [value, value];
    if (pair.length !== 2) {
      throw check.typeError(`${where}: outputSize must be a size or an array [h, w], got ${check.describe(value)}`);
    }
    return pair.map((v, i) => (v === null ? 0 : check.size(v, where, `outputSize[${i}]`, 1)));
  };

  // The generator of a layer drawing masks: options.generator, or the next default stream
  // "dropout/k" (shared with Dropout); make(handle) builds the layer.
  const maskGenerator = (o, where, make) => {
    if (o.generator !== undefined) return make(check.instance(o.generator, Generator, where, 'generator').handle);
    const g = engine.Generator.create(defaults.seed, `dropout/${defaults.dropouts}`);
    try {
      const made = make(g);
      defaults.dropouts += 1;
      return made;
    } finally {
      g.delete();
    }
  };
  // A module's forward of input, the module freed afterwards (the functional forms).
  const once = (handle, input, where) => {
    try {
      return new Tensor(handle.forward(tensorArg(input, where, 'input')));
    } finally {
      handle.delete();
    }
  };
  const modeOf = (mode, where) => check.oneOf(mode, where, 'mode', ['row', 'batch']) === 'row';

  const nn = {
    Module,
    Sequential,
    // Points every Dropout and StochasticDepth of the model at the stream "dropout/<module path>"
    // under seed (offset 0): the masks Python's from_torch_module draws, so a model exported from
    // Python (ls.onnx.load) goes on training with the converted module's masks.
    seedDropoutStreams(model, seed) {
      const w = 'nn.seedDropoutStreams';
      engine.seedDropoutStreams(check.instance(model, Module, w, 'model').handle, check.seed(seed, w));
    },
    Linear: class Linear extends Module {
      constructor(inFeatures, outFeatures, options) {
        const o = check.options(options, 'Linear', ['bias', 'generator']);
        super(engine.makeLinear(check.size(inFeatures, 'Linear', 'inFeatures'), check.size(outFeatures, 'Linear', 'outFeatures'),
                                flag(o.bias, 'Linear', 'bias', true), generatorOf(o, 'Linear')));
      }
    },
    Conv2d: class Conv2d extends Module {
      constructor(inChannels, outChannels, kernelSize, options) {
        const w = 'Conv2d';
        const o = check.options(options, w, ['stride', 'padding', 'dilation', 'groups', 'bias', 'generator']);
        const opt = (name, fallback, min) => (o[name] === undefined ? fallback : check.size(o[name], w, name, min));
        super(engine.makeConv2d(check.size(inChannels, w, 'inChannels'), check.size(outChannels, w, 'outChannels'),
                                check.size(kernelSize, w, 'kernelSize'), opt('stride', 1, 1), opt('padding', 0, 0),
                                opt('dilation', 1, 1), opt('groups', 1, 1), flag(o.bias, w, 'bias', true),
                                generatorOf(o, w)));
      }
    },
    // PyTorch's ConvTranspose2d (weight [in, out / groups, k, k]); options: stride, padding,
    // outputPadding, groups, dilation, bias, generator.
    ConvTranspose2d: class ConvTranspose2d extends Module {
      constructor(inChannels, outChannels, kernelSize, options) {
        const w = 'ConvTranspose2d';
        const o = check.options(options, w, ['stride', 'padding', 'outputPadding', 'groups', 'bias', 'dilation',
                                             'generator']);
        const opt = (name, fallback, min) => (o[name] === undefined ? fallback : check.size(o[name], w, name, min));
        super(engine.makeConvTranspose2d(check.size(inChannels, w, 'inChannels'), check.size(outChannels, w, 'outChannels'),
                                         check.size(kernelSize, w, 'kernelSize'), opt('stride', 1, 1), opt('padding', 0, 0),
                                         opt('outputPadding', 0, 0), opt('groups', 1, 1), flag(o.bias, w, 'bias', true),
                                         opt('dilation', 1, 1), generatorOf(o, w)));
      }
    },
    // PyTorch's recurrent layers (parameter names weight_ih_l0 ..., gate orders, initialisation);
    // options: numLayers, bias, batchFirst, bidirectional, generator (RNN also nonlinearity).
    // forward(x) gives the output sequence; forwardWithState(x, h0, c0) gives [output, hN, cN].
    RNN: recurrent('RNN'), LSTM: recurrent('LSTM'), GRU: recurrent('GRU'),
    // options: stride, padding, ceilMode (PyTorch's ceil_mode: the last window starts inside the
    // input or its left padding, and takes the maximum of its positions inside the input).
    MaxPool2d: class MaxPool2d extends Module {
      constructor(kernelSize, options) {
        super(engine.makeMaxPool2d(...poolArgs('MaxPool2d', kernelSize, options, ['ceilMode'])));
      }
    },
    // outputSize: a size or [h, w] (null: the input's); PyTorch's windows, each the mean of its elements.
    AdaptiveAvgPool2d: class AdaptiveAvgPool2d extends Module {
      constructor(outputSize) { super(engine.makeAdaptiveAvgPool2d(...outputSizes(outputSize, 'AdaptiveAvgPool2d'))); }
    },
    // [N, C, ...] -> [N, groups, C / groups, ...] transposed to [N, C / groups, groups, ...].
    ChannelShuffle: class ChannelShuffle extends Module {
      constructor(groups) { super(engine.makeChannelShuffle(check.size(groups, 'ChannelShuffle', 'groups'))); }
    },
    ReLU6: activation('relu6', 'ReLU6'),
    SiLU: activation('silu', 'SiLU'),
    Hardsigmoid: activation('hardsigmoid', 'Hardsigmoid'),
    Hardswish: activation('hardswish', 'Hardswish'),
    // min(max(x, minVal), maxVal); the gradient is 0 at and beyond the bounds (PyTorch's).
    Hardtanh: class Hardtanh extends Module {
      constructor(minVal = -1, maxVal = 1) {
        const lo = check.number(minVal, 'Hardtanh', 'minVal', { float32: true });
        const hi = check.number(maxVal, 'Hardtanh', 'maxVal', { min: lo, float32: true });
        super(engine.makeHardtanh(lo, hi));
      }
    },
    // torchvision's StochasticDepth(p, mode): in training, each sample (mode 'row') or the whole
    // batch ('batch') is zeroed with probability p in [0, 1] and the rest scaled by 1 / (1 - p).
    // Masks come from options.generator or, as a Dropout's, from the next stream "dropout/k".
    StochasticDepth: class StochasticDepth extends Module {
      constructor(p, mode, options) {
        const w = 'StochasticDepth';
        const o = check.options(options, w, ['generator']);
        const rate = check.number(p, w, 'p', { min: 0, max: 1, float32: true });
        const row = modeOf(mode, w);
        super(maskGenerator(o, w, (g) => engine.makeStochasticDepth(rate, row, g)));
      }
    },
    AvgPool2d: class AvgPool2d extends Module {
      constructor(kernelSize, options) { super(engine.makeAvgPool2d(...poolArgs('AvgPool2d', kernelSize, options))); }
    },
    ReLU: activation('relu', 'ReLU'),
    Tanh: activation('tanh', 'Tanh'),
    Sigmoid: activation('sigmoid', 'Sigmoid'),
    // options.approximate: 'none' (the exact erf form, default) or 'tanh'.
    GELU: class GELU extends Module {
      constructor(options) {
        const o = check.options(options, 'GELU', ['approximate']);
        const approximate = o.approximate === undefined ? 'none' : check.oneOf(o.approximate, 'GELU', 'approximate', ['none', 'tanh']);
        super(engine.makeActivation(approximate === 'tanh' ? 'geluTanh' : 'gelu'));
      }
    },
    Softmax: class Softmax extends Module {
      constructor(dim = -1) { super(engine.makeSoftmax(check.dim(dim, 'Softmax'), false)); }
    },
    LogSoftmax: class LogSoftmax extends Module {
      constructor(dim = -1) { super(engine.makeSoftmax(check.dim(dim, 'LogSoftmax'), true)); }
    },
    Flatten: class Flatten extends Module {
      constructor(startDim = 1, endDim = -1) {
        super(engine.makeFlatten(check.dim(startDim, 'Flatten', 'startDim'), check.dim(endDim, 'Flatten', 'endDim')));
      }
    },
    // Inverted dropout with probability p in [0, 1). Masks come from options.generator, or else
    // from a stream of its own: the k-th Dropout made with the default generator since load() or
    // the last manualSeed(seed) draws from the stream "dropout/k" (k = 0, 1, ...) of that seed, so
    // two layers draw different masks and a program rerun after manualSeed draws the same ones on
    // every platform.
    Dropout: class Dropout extends Module {
      constructor(p = 0.5, options) {
        const o = check.options(options, 'Dropout', ['generator']);
        const rate = check.number(p, 'Dropout', 'p', { min: 0, max: 1, maxOpen: true, float32: true });
        if (o.generator !== undefined) {
          super(engine.makeDropout(rate, check.instance(o.generator, Generator, 'Dropout', 'generator').handle));
        } else {
          const g = engine.Generator.create(defaults.seed, `dropout/${defaults.dropouts}`);
          try {
            super(engine.makeDropout(rate, g));
          } finally {
            g.delete();
          }
          defaults.dropouts += 1;
        }
      }
    },
    LayerNorm: class LayerNorm extends Module {
      constructor(normalizedShape, options) {
        const w = 'LayerNorm';
        const o = check.options(options, w, ['eps', 'elementwiseAffine', 'bias']);
        super(engine.makeLayerNorm(check.size(normalizedShape, w, 'normalizedShape'),
                                   o.eps === undefined ? 1e-5 : check.number(o.eps, w, 'eps', { min: 0, float32: true }),
                                   flag(o.elementwiseAffine, w, 'elementwiseAffine', true), flag(o.bias, w, 'bias', true)));
      }
    },
    Embedding: class Embedding extends Module {
      constructor(numEmbeddings, embeddingDim, options) {
        const w = 'Embedding';
        const o = check.options(options, w, ['generator']);
        super(engine.makeEmbedding(check.size(numEmbeddings, w, 'numEmbeddings'), check.size(embeddingDim, w, 'embeddingDim'),
                                   generatorOf(o, w)));
      }
    },
    functional: {
      // The mean over several dimensions (an array of dims; an empty array: every element).
      mean(input, dims, keepdim = false) {
        const w = 'mean';
        if (!Array.isArray(dims)) throw check.typeError(`${w}: dims must be an array of dimensions, got ${check.describe(dims)}`);
        dims.forEach((d, i) => check.dim(d, w, `dims[${i}]`));
        return new Tensor(engine.meanDims(tensorArg(input, w, 'input'), dims, flag(keepdim, w, 'keepdim', false)));
      },
      // Tensors joined along an existing dimension.
      cat(tensors, dim = 0) {
        if (!Array.isArray(tensors) || tensors.length === 0) {
          throw check.typeError(`cat: tensors must be a non-empty array of Tensors, got ${check.describe(tensors)}`);
        }
        return new Tensor(engine.cat(tensors.map((t, i) => tensorArg(t, 'cat', `tensors[${i}]`)), check.dim(dim, 'cat')));
      },
      // The functions below are their module's forward (a module made for the call and freed).
      channelShuffle(input, groups) {
        return once(engine.makeChannelShuffle(check.size(groups, 'channelShuffle', 'groups')), input, 'channelShuffle');
      },
      adaptiveAvgPool2d(input, size) {
        return once(engine.makeAdaptiveAvgPool2d(...outputSizes(size, 'adaptiveAvgPool2d')), input, 'adaptiveAvgPool2d');
      },
      // options: stride (default kernelSize), padding, ceilMode.
      maxPool2d(input, kernelSize, options) {
        return once(engine.makeMaxPool2d(...poolArgs('maxPool2d', kernelSize, options, ['ceilMode'])), input, 'maxPool2d');
      },
      hardtanh(input, minVal = -1, maxVal = 1) {
        const lo = check.number(minVal, 'hardtanh', 'minVal', { float32: true });
        const hi = check.number(maxVal, 'hardtanh', 'maxVal', { min: lo, float32: true });
        return once(engine.makeHardtanh(lo, hi), input, 'hardtanh');
      },
      relu6(input) { return once(engine.makeActivation('relu6'), input, 'relu6'); },
      silu(input) { return once(engine.makeActivation('silu'), input, 'silu'); },
      hardsigmoid(input) { return once(engine.makeActivation('hardsigmoid'), input, 'hardsigmoid'); },
      hardswish(input) { return once(engine.makeActivation('hardswish'), input, 'hardswish'); },
      // targets: an int64 Tensor, or class indices as an array / typed array of integers.
      // options.labelSmoothing in [0, 1] (default 0); options.ignoreIndex (default -100).
      crossEntropy(logits, targets, options) {
        const w = 'crossEntropy';
        const o = check.options(options, w, ['labelSmoothing', 'ignoreIndex']);
        const input = tensorArg(logits, w, 'logits');
        const smoothing = o.labelSmoothing === undefined ? 0
          : check.number(o.labelSmoothing, w, 'labelSmoothing', { min: 0, max: 1, float32: true });
        const ignore = o.ignoreIndex === undefined ? -100 : check.integer(o.ignoreIndex, w, 'ignoreIndex');
        return withTargets(targets, w, (t) => new Tensor(engine.crossEntropy(input, t, smoothing, ignore)));
      },
      nllLoss(logProbs, targets) {
        const input = tensorArg(logProbs, 'nllLoss', 'logProbs');
        return withTargets(targets, 'nllLoss', (t) => new Tensor(engine.nllLoss(input, t)));
      },
      mseLoss(input, target) {
        return new Tensor(engine.mseLoss(tensorArg(input, 'mseLoss', 'input'), tensorArg(target, 'mseLoss', 'target')));
      },
    },
  };

  function withTargets(targets, where, fn) {
    if (targets instanceof Tensor) return fn(targets.handle);
    if (!Array.isArray(targets) && !ArrayBuffer.isView(targets)) {
      throw check.typeError(`${where}: targets must be an int64 Tensor or an array of class indices, got ${
        check.describe(targets)}`);
    }
    if (Array.isArray(targets) && targets.some(Array.isArray)) {
      throw check.typeError(`${where}: targets must be a flat array of class indices, got nested arrays`);
    }
    const { flat } = check.elements(targets, `${where} targets`, { integers: true });
    const t = engine.Tensor.fromIntegers(flat, [flat.length]);
    try { return fn(t); } finally { t.delete(); }
  }

  const modelOptions = (where, options) => {
    const o = check.options(options, where, ['seed']);
    return o.seed === undefined ? 0 : check.seed(o.seed, where);
  };
  const archOf = (arch, where) => {
    if (typeof arch !== 'string') throw check.typeError(`${where}: arch must be a string (${models.names.join(' or ')}), got ${check.describe(arch)}`);
    if (!models.names.includes(arch)) {
      throw check.rangeError(`${where}: unknown model '${arch}'; expected one of ${models.names.join(', ')}`);
    }
    return arch;
  };

  const models = {
    names: ['lenet5', 'mlp'],
    // A reference architecture ('lenet5' or 'mlp') with parameters from the seed's "init" stream.
    create(arch, options) {
      return new Module(engine.makeModel(archOf(arch, 'models.create'), modelOptions('models.create', options)));
    },
    lenet5(options) { return new Module(engine.makeModel('lenet5', modelOptions('models.lenet5', options))); },
    mlp(options) { return new Module(engine.makeModel('mlp', modelOptions('models.mlp', options))); },
    // A checkpoint as a model: options.arch, or the first reference architecture it fits.
    fromCheckpoint(bytes, options) {
      const w = 'models.fromCheckpoint';
      check.bytes(bytes, w);
      const o = check.options(options, w, ['arch']);
      const candidates = o.arch === undefined ? models.names : [archOf(o.arch, w)];
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
