// Tensors: float32 (and int64 for labels and indices) arrays with autograd, PyTorch's names.
import { Owned } from './lifetime.js';

function shapeOf(data) {
  if (ArrayBuffer.isView(data)) return [data.length];
  if (!Array.isArray(data)) throw new TypeError(`lockstep: expected an array or typed array, got ${typeof data}`);
  if (data.length > 0 && Array.isArray(data[0])) return [data.length, ...shapeOf(data[0])];
  return [data.length];
}

function flatten(data) {
  if (ArrayBuffer.isView(data)) return data;
  if (data.length > 0 && Array.isArray(data[0])) {
    const inner = shapeOf(data[0]).reduce((a, b) => a * b, 1);
    const out = [];
    data.forEach((row, i) => {
      if (!Array.isArray(row) || shapeOf(row).reduce((a, b) => a * b, 1) !== inner) {
        throw new Error(`lockstep: nested array is ragged at index ${i}`);
      }
      out.push(...flatten(row));
    });
    return out;
  }
  return data;
}

function dims(args) {
  return args.length === 1 && Array.isArray(args[0]) ? args[0] : args;
}

export function makeTensorApi(engine, defaults) {
  class Tensor extends Owned {
    constructor(handle) { super(handle, 'tensor'); }

    get shape() { return this.handle.shape(); }
    get dtype() { return this.handle.dtype(); }
    get numel() { return this.handle.numel(); }
    get ndim() { return this.shape.length; }
    // A copy of the elements: Float32Array for float32, Int32Array for integer tensors.
    toArray() { return this.handle.data(); }
    item() { return this.handle.item(); }
    toString() { return this.handle.toString(); }

    get requiresGrad() { return this.handle.requiresGrad(); }
    set requiresGrad(on) { this.handle.setRequiresGrad(Boolean(on)); }
    requiresGrad_(on = true) { this.requiresGrad = on; return this; }
    // The accumulated gradient as a new tensor (dispose it), or null.
    get grad() {
      const g = this.handle.grad();
      return g === null ? null : new Tensor(g);
    }
    zeroGrad() { this.handle.zeroGrad(); }
    backward(options = {}) { this.handle.backward(Boolean(options.retainGraph)); }
    detach() { return new Tensor(this.handle.detach()); }
    clone() { return new Tensor(this.handle.clone()); }
    // Writes other's values into this tensor in place, without history.
    copy_(other) { this.handle.copyFrom(other.handle); return this; }

    add(other) { return this.#arith(other, 'add', (h, s) => h.addScalar(s)); }
    sub(other) { return this.#arith(other, 'sub', (h, s) => h.addScalar(-s)); }
    mul(other) { return this.#arith(other, 'mul', (h, s) => h.mulScalar(s)); }
    div(other) {  // x / s is a true division (x * (1 / s) would round differently)
      return this.#arith(other, 'div', (h, s) => {
        const divisor = engine.Tensor.full([], s);
        try { return h.div(divisor); } finally { divisor.delete(); }
      });
    }
    maximum(other) { return new Tensor(this.handle.maximum(other.handle)); }
    minimum(other) { return new Tensor(this.handle.minimum(other.handle)); }
    matmul(other) { return new Tensor(this.handle.matmul(other.handle)); }
    pow(exponent) { return new Tensor(this.handle.pow(exponent)); }
    neg() { return new Tensor(this.handle.neg()); }
    relu() { return new Tensor(this.handle.relu()); }
    gelu(approximate = 'none') {
      return new Tensor(approximate === 'tanh' ? this.handle.geluTanh() : this.handle.gelu());
    }
    tanh() { return new Tensor(this.handle.tanh()); }
    sigmoid() { return new Tensor(this.handle.sigmoid()); }
    exp() { return new Tensor(this.handle.exp()); }
    log() { return new Tensor(this.handle.log()); }
    sqrt() { return new Tensor(this.handle.sqrt()); }
    sum(dim, keepdim = false) {
      return new Tensor(dim === undefined ? this.handle.sumAll() : this.handle.sumDim(dim, keepdim));
    }
    mean(dim, keepdim = false) {
      return new Tensor(dim === undefined ? this.handle.meanAll() : this.handle.meanDim(dim, keepdim));
    }
    max(dim, keepdim = false) { return new Tensor(this.handle.maxDim(dim, keepdim)); }
    argmax(dim, keepdim = false) { return new Tensor(this.handle.argmaxDim(dim, keepdim)); }
    softmax(dim = -1) { return new Tensor(this.handle.softmax(dim)); }
    logSoftmax(dim = -1) { return new Tensor(this.handle.logSoftmax(dim)); }
    reshape(...shape) { return new Tensor(this.handle.reshape(dims(shape))); }
    view(...shape) { return this.reshape(...shape); }
    transpose(dim0, dim1) { return new Tensor(this.handle.transpose(dim0, dim1)); }
    permute(...order) { return new Tensor(this.handle.permute(dims(order))); }
    flatten(startDim = 0, endDim = -1) { return new Tensor(this.handle.flatten(startDim, endDim)); }
    squeeze(dim) { return new Tensor(this.handle.squeeze(dim)); }
    unsqueeze(dim) { return new Tensor(this.handle.unsqueeze(dim)); }
    // Elements [start, end) of dimension dim (a view).
    slice(dim, start, end, step = 1) { return new Tensor(this.handle.slice(dim, start, end, step)); }
    contiguous() { return new Tensor(this.handle.contiguous()); }

    #arith(other, name, scalarOp) {
      if (typeof other === 'number') return new Tensor(scalarOp(this.handle, other));
      if (!(other instanceof Tensor)) {
        throw new TypeError(`lockstep: ${name} expects a Tensor or a number, got ${typeof other}`);
      }
      return new Tensor(this.handle[name](other.handle));
    }
  }

  const generatorFrom = (options) => {
    if (options?.generator) return options.generator.handle;
    if (options?.seed !== undefined) return new Generator(options.seed, options.stream ?? 'randn').handle;
    return defaults.generator().handle;
  };

  class Generator extends Owned {
    // A named Philox stream under a seed: draws depend only on (seed, name, draws before).
    constructor(seed, name = 'init') { super(engine.Generator.create(seed, name), 'generator'); }
    get offset() { return this.handle.offset(); }
  }

  return {
    Tensor,
    Generator,
    // data: a typed array, an array of numbers or nested arrays; shape defaults to data's own.
    tensor(data, shape, options = {}) {
      const flat = flatten(data);
      const s = shape ?? shapeOf(data);
      const dtype = options.dtype ?? 'float32';
      if (dtype === 'float32') return new Tensor(engine.Tensor.fromFloats(flat, s));
      if (dtype === 'int64') return new Tensor(engine.Tensor.fromIntegers(flat, s));
      throw new Error(`lockstep: dtype must be 'float32' or 'int64', got ${JSON.stringify(dtype)}`);
    },
    zeros: (...shape) => new Tensor(engine.Tensor.zeros(dims(shape))),
    ones: (...shape) => new Tensor(engine.Tensor.ones(dims(shape))),
    full: (shape, value) => new Tensor(engine.Tensor.full(shape, value)),
    // Standard normal / uniform [0, 1) draws from options.generator, or a stream options.seed,
    // or the default generator (manualSeed).
    randn: (shape, options) => new Tensor(engine.Tensor.randn(shape, generatorFrom(options))),
    rand: (shape, options) => new Tensor(engine.Tensor.rand(shape, generatorFrom(options))),
  };
}
