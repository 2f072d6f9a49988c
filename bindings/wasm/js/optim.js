// Optimizers over a module's parameters (or a list of parameter tensors), PyTorch's defaults and
// PyTorch's checks: lr, momentum, weightDecay and eps >= 0, betas in [0, 1), all finite.
import { Owned } from './lifetime.js';
import * as check from './check.js';

export function makeOptimApi(engine, { Tensor }, { nn }) {
  // The parameter handles for the engine, a module's as [name, handle] pairs (its optimizer state
  // then carries the module's names, as the native trainers'); tensors we fetched ourselves are
  // disposed again.
  function withParams(params, where, fn) {
    if (params instanceof nn.Module) {
      const list = params.namedParameters();
      try { return fn(list.map(([name, t]) => [name, t.handle])); } finally { list.forEach(([, t]) => t.dispose()); }
    }
    if (Array.isArray(params) && params.every((p) => p instanceof Tensor)) return fn(params.map((t) => t.handle));
    throw check.typeError(`${where}: params must be a Module or an array of parameter Tensors, got ${check.describe(params)}`);
  }

  // A float option: finite, >= 0 unless `signed`, and the same in float32 (what the engine uses).
  const rate = (value, where, name, fallback, { signed = false } = {}) => (value === undefined ? fallback
    : check.number(value, where, name, { min: signed ? undefined : 0, float32: true }));

  class Optimizer extends Owned {
    constructor(handle) { super(handle, 'optimizer'); }
    step() { this.handle.step(); }
    zeroGrad() { this.handle.zeroGrad(); }
    get lr() { return this.handle.lr(); }
    set lr(value) { this.handle.setLr(rate(value, 'Optimizer', 'lr')); }
    get stepCount() { return this.handle.stepCount(); }
  }

  const ADAM_OPTIONS = ['lr', 'betas', 'eps', 'weightDecay'];
  const adam = (params, options, decoupled, defaultDecay) => {
    const w = decoupled ? 'AdamW' : 'Adam';
    const o = check.options(options, w, ADAM_OPTIONS);
    const lr = rate(o.lr, w, 'lr', 1e-3);
    let betas = [0.9, 0.999];
    if (o.betas !== undefined) {
      if (!Array.isArray(o.betas) || o.betas.length !== 2 || o.betas.some((b) => typeof b !== 'number')) {
        throw check.typeError(`${w}: betas must be an array of two numbers [beta1, beta2], got ${check.describe(o.betas)}`);
      }
      if (o.betas.some((b) => !(b >= 0 && b < 1 && Math.fround(b) < 1))) {
        throw check.rangeError(`${w}: betas must be in [0, 1) (in float32 too), got ${check.describe(o.betas)}`);
      }
      betas = o.betas;
    }
    const eps = rate(o.eps, w, 'eps', 1e-8);
    const weightDecay = rate(o.weightDecay, w, 'weightDecay', defaultDecay);
    return withParams(params, w, (handles) => engine.makeAdam(handles, lr, betas[0], betas[1], eps, weightDecay, decoupled));
  };

  return {
    Optimizer,
    // options: lr (0.01), momentum (0), dampening (0), weightDecay (0), nesterov (false; needs a
    // momentum > 0 and a dampening of 0).
    SGD: class SGD extends Optimizer {
      constructor(params, options) {
        const w = 'SGD';
        const o = check.options(options, w, ['lr', 'momentum', 'dampening', 'weightDecay', 'nesterov']);
        const lr = rate(o.lr, w, 'lr', 0.01);
        const momentum = rate(o.momentum, w, 'momentum', 0);
        const dampening = rate(o.dampening, w, 'dampening', 0, { signed: true });
        const weightDecay = rate(o.weightDecay, w, 'weightDecay', 0);
        const nesterov = o.nesterov === undefined ? false : check.boolean(o.nesterov, w, 'nesterov');
        if (nesterov && (momentum <= 0 || dampening !== 0)) {
          throw check.rangeError(`${w}: nesterov needs a momentum > 0 and a dampening of 0, got momentum ${momentum} and ` +
                                 `dampening ${dampening}`);
        }
        super(withParams(params, w, (handles) => engine.makeSgd(handles, lr, momentum, dampening, weightDecay, nesterov)));
      }
    },
    // options: lr (1e-3), betas ([0.9, 0.999]), eps (1e-8), weightDecay (0, added to the gradient).
    Adam: class Adam extends Optimizer {
      constructor(params, options) { super(adam(params, options, false, 0)); }
    },
    // options as Adam's; weightDecay (0.01) is decoupled, as in PyTorch's AdamW.
    AdamW: class AdamW extends Optimizer {
      constructor(params, options) { super(adam(params, options, true, 0.01)); }
    },
  };
}
