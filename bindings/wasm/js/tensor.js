// Tensors: float32 (and int64 for labels and indices) arrays with autograd, PyTorch's names.
// Every argument is checked (check.js) before it reaches the engine, which would truncate 0.7 to 0.
import { Owned } from './lifetime.js';
import * as check from './check.js';

export function makeTensorApi(engine, defaults) {
  const tensorArg = (value, where, name = 'other') => check.instance(value, Tensor, where, name).handle;
  const keep = (value, where) => (value === undefined ? false : check.boolean(value, where, 'keepdim'));

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
    set requiresGrad(on) { this.handle.setRequiresGrad(check.boolean(on, 'requiresGrad', 'the value')); }
    requiresGrad_(on = true) { this.requiresGrad = check.boolean(on, 'requiresGrad_', 'on'); return this; }
    // The accumulated gradient as a new tensor (dispose it), or null.
    get grad() {
      const g = this.handle.grad();
      return g === null ? null : new Tensor(g);
    }
    zeroGrad() { this.handle.zeroGrad(); }
    // options.retainGraph keeps the graph for another backward() (as PyTorch's retain_graph).
    backward(options) {
      const o = check.options(options, 'backward', ['retainGraph']);
      this.handle.backward(o.retainGraph === undefined ? false : check.boolean(o.retainGraph, 'backward', 'retainGraph'));
    }
    detach() { return new Tensor(this.handle.detach()); }
    clone() { return new Tensor(this.handle.clone()); }
    // Writes other's values into this tensor in place, without history.
    copy_(other) { this.handle.copyFrom(tensorArg(other, 'copy_', 'source')); return this; }

    add(other) { return this.#arith(other, 'add', (h, s) => h.addScalar(s)); }
    sub(other) { return this.#arith(other, 'sub', (h, s) => h.addScalar(-s)); }
    mul(other) { return this.#arith(other, 'mul', (h, s) => h.mulScalar(s)); }
    div(other) {  // x / s is a true division (x * (1 / s) would round differently)
      return this.#arith(other, 'div', (h, s) => {
        const divisor = engine.Tensor.full([], s);
        try { return h.div(divisor); } finally { divisor.delete(); }
      });
    }
    // Remainders of this / other: fmod with this's sign (exact), remainder with other's (Python's %).
    fmod(other) { return this.#arith(other, 'fmod', (h, s) => Tensor.#byScalar(h, s, 'fmod')); }
    remainder(other) { return this.#arith(other, 'remainder', (h, s) => Tensor.#byScalar(h, s, 'remainder')); }
    maximum(other) { return new Tensor(this.handle.maximum(tensorArg(other, 'maximum'))); }
    minimum(other) { return new Tensor(this.handle.minimum(tensorArg(other, 'minimum'))); }
    matmul(other) { return new Tensor(this.handle.matmul(tensorArg(other, 'matmul'))); }
    // Correctly rounded powers for the exponents -4 to 4 (integers) and 0.5; others throw.
    pow(exponent) { return new Tensor(this.handle.pow(check.number(exponent, 'pow', 'exponent'))); }
    neg() { return new Tensor(this.handle.neg()); }
    relu() { return new Tensor(this.handle.relu()); }
    gelu(approximate = 'none') {
      check.oneOf(approximate, 'gelu', 'approximate', ['none', 'tanh']);
      return new Tensor(approximate === 'tanh' ? this.handle.geluTanh() : this.handle.gelu());
    }
    tanh() { return new Tensor(this.handle.tanh()); }
    floor() { return new Tensor(this.handle.floor()); }
    ceil() { return new Tensor(this.handle.ceil()); }
    round() { return new Tensor(this.handle.round()); }
    sin() { return new Tensor(this.handle.sin()); }
    cos() { return new Tensor(this.handle.cos()); }
    tan() { return new Tensor(this.handle.tan()); }
    asin() { return new Tensor(this.handle.asin()); }
    acos() { return new Tensor(this.handle.acos()); }
    atan() { return new Tensor(this.handle.atan()); }
    sinh() { return new Tensor(this.handle.sinh()); }
    cosh() { return new Tensor(this.handle.cosh()); }
    asinh() { return new Tensor(this.handle.asinh()); }
    acosh() { return new Tensor(this.handle.acosh()); }
    atanh() { return new Tensor(this.handle.atanh()); }
    sigmoid() { return new Tensor(this.handle.sigmoid()); }
    exp() { return new Tensor(this.handle.exp()); }
    log() { return new Tensor(this.handle.log()); }
    sqrt() { return new Tensor(this.handle.sqrt()); }
    sum(dim, keepdim) {
      if (dim === undefined) return new Tensor(this.handle.sumAll());
      return new Tensor(this.handle.sumDim(check.dim(dim, 'sum'), keep(keepdim, 'sum')));
    }
    mean(dim, keepdim) {
      if (dim === undefined) return new Tensor(this.handle.meanAll());
      return new Tensor(this.handle.meanDim(check.dim(dim, 'mean'), keep(keepdim, 'mean')));
    }
    max(dim, keepdim) { return new Tensor(this.handle.maxDim(check.dim(dim, 'max'), keep(keepdim, 'max'))); }
    argmax(dim, keepdim) { return new Tensor(this.handle.argmaxDim(check.dim(dim, 'argmax'), keep(keepdim, 'argmax'))); }
    softmax(dim = -1) { return new Tensor(this.handle.softmax(check.dim(dim, 'softmax'))); }
    logSoftmax(dim = -1) { return new Tensor(this.handle.logSoftmax(check.dim(dim, 'logSoftmax'))); }
    // A tensor of the new shape (one dimension may be -1): a view when the strides allow it,
    // else a copy.
    reshape(...shape) { return new Tensor(this.handle.reshape(check.targetShape(check.dimsOf(shape, 'reshape'), 'reshape'))); }
    // A view of the same memory with the new shape; throws where the strides do not allow one
    // (after a transpose, say): use reshape() or contiguous() there.
    view(...shape) { return new Tensor(this.handle.view(check.targetShape(check.dimsOf(shape, 'view'), 'view'))); }
    transpose(dim0, dim1) {
      return new Tensor(this.handle.transpose(check.dim(dim0, 'transpose', 'dim0'), check.dim(dim1, 'transpose', 'dim1')));
    }
    permute(...order) {
      const dims = check.dimsOf(order, 'permute');
      dims.forEach((d, i) => check.dim(d, 'permute', `dimension ${i}`));
      return new Tensor(this.handle.permute(dims));
    }
    flatten(startDim = 0, endDim = -1) {
      return new Tensor(this.handle.flatten(check.dim(startDim, 'flatten', 'startDim'), check.dim(endDim, 'flatten', 'endDim')));
    }
    squeeze(dim) { return new Tensor(this.handle.squeeze(check.dim(dim, 'squeeze'))); }
    unsqueeze(dim) { return new Tensor(this.handle.unsqueeze(check.dim(dim, 'unsqueeze'))); }
    // Elements [start, end) of dimension dim, every step-th (a view). Negative start/end count
    // from the end and both are clamped to the dimension, as in Python.
    slice(dim, start, end, step = 1) {
      return new Tensor(this.handle.slice(check.dim(dim, 'slice'), check.integer(start, 'slice', 'start'),
                                          check.integer(end, 'slice', 'end'),
                                          check.size(step, 'slice', 'step', 1)));
    }
    contiguous() { return new Tensor(this.handle.contiguous()); }

    // h op s for a number s, through a scalar tensor freed after the call.
    static #byScalar(h, s, name) {
      const scalar = engine.Tensor.full([], s);
      try { return h[name](scalar); } finally { scalar.delete(); }
    }

    #arith(other, name, scalarOp) {
      if (typeof other === 'number') return new Tensor(scalarOp(this.handle, check.number(other, name, 'other', { float32: true })));
      if (!(other instanceof Tensor)) {
        throw check.typeError(`${name}: other must be a Tensor or a finite number, got ${check.describe(other)}`);
      }
      return new Tensor(this.handle[name](other.handle));
    }
  }

  // Runs fn with the generator options ask for: options.generator, a stream of options.seed (made
  // for this call and freed after it), or the default generator.
  const withGenerator = (options, where, fn) => {
    const o = check.options(options, where, ['generator', 'seed', 'stream']);
    if (o.generator !== undefined) {
      check.instance(o.generator, Generator, where, 'generator');
      if (o.seed !== undefined || o.stream !== undefined) {
        throw check.typeError(`${where}: give either generator or seed (with stream), not both`);
      }
      return fn(o.generator.handle);
    }
    if (o.seed !== undefined) {
      const stream = o.stream === undefined ? 'randn' : check.string(o.stream, where, 'stream');
      const g = engine.Generator.create(check.seed(o.seed, where), stream);
      try { return fn(g); } finally { g.delete(); }
    }
    if (o.stream !== undefined) throw check.typeError(`${where}: stream needs a seed (or pass a generator)`);
    return fn(defaults.generator());
  };

  class Generator extends Owned {
    // A named Philox stream under a seed: draws depend only on (seed, name, draws before).
    constructor(seed, name = 'init') {
      super(engine.Generator.create(check.seed(seed, 'Generator'), check.string(name, 'Generator', 'name')), 'generator');
    }
    get offset() { return this.handle.offset(); }
  }

  return {
    Tensor,
    Generator,
    // data: a typed array, an array of numbers or nested arrays of numbers (never strings or
    // booleans); shape defaults to data's own. options.dtype: 'float32' (default) or 'int64'.
    tensor(data, shape, options) {
      const o = check.options(options, 'tensor', ['dtype']);
      const dtype = o.dtype === undefined ? 'float32' : check.oneOf(o.dtype, 'tensor', 'dtype', ['float32', 'int64']);
      const { flat, shape: own } = check.elements(data, 'tensor', { integers: dtype === 'int64' });
      const s = shape === undefined ? own : check.shape(shape, 'tensor');
      if (dtype === 'float32') return new Tensor(engine.Tensor.fromFloats(flat, s));
      return new Tensor(engine.Tensor.fromIntegers(flat, s));
    },
    zeros: (...shape) => new Tensor(engine.Tensor.zeros(check.shape(check.dimsOf(shape, 'zeros'), 'zeros'))),
    ones: (...shape) => new Tensor(engine.Tensor.ones(check.shape(check.dimsOf(shape, 'ones'), 'ones'))),
    // value: any number (NaN and infinities included), rounded to float32.
    full: (shape, value) => {
      const s = check.shape(shape, 'full');
      if (typeof value !== 'number') throw check.typeError(`full: value must be a number, got ${check.describe(value)}`);
      return new Tensor(engine.Tensor.full(s, value));
    },
    // Standard normal / uniform [0, 1) draws from options.generator, or a stream options.seed,
    // or the default generator (manualSeed).
    randn: (shape, options) => {
      const s = check.shape(shape, 'randn');
      return withGenerator(options, 'randn', (g) => new Tensor(engine.Tensor.randn(s, g)));
    },
    rand: (shape, options) => {
      const s = check.shape(shape, 'rand');
      return withGenerator(options, 'rand', (g) => new Tensor(engine.Tensor.rand(s, g)));
    },
  };
}
