// Optimizers over a module's parameters (or a list of parameter tensors), PyTorch's defaults.
import { Owned } from './lifetime.js';

export function makeOptimApi(engine, { Tensor }, { nn }) {
  // The parameter handles for the engine; tensors we fetched ourselves are disposed again.
  function withParams(params, fn) {
    if (params instanceof nn.Module) {
      const list = params.parameters();
      try { return fn(list.map((t) => t.handle)); } finally { list.forEach((t) => t.dispose()); }
    }
    if (Array.isArray(params) && params.every((p) => p instanceof Tensor)) return fn(params.map((t) => t.handle));
    throw new TypeError('lockstep: an optimizer takes a Module or an array of parameter Tensors');
  }

  class Optimizer extends Owned {
    constructor(handle) { super(handle, 'optimizer'); }
    step() { this.handle.step(); }
    zeroGrad() { this.handle.zeroGrad(); }
    get lr() { return this.handle.lr(); }
    set lr(value) { this.handle.setLr(value); }
    get stepCount() { return this.handle.stepCount(); }
  }

  const adam = (params, o, decoupled, defaultDecay) => withParams(params, (handles) => {
    const [beta1, beta2] = o.betas ?? [0.9, 0.999];
    return engine.makeAdam(handles, o.lr ?? 1e-3, beta1, beta2, o.eps ?? 1e-8, o.weightDecay ?? defaultDecay, decoupled);
  });

  return {
    Optimizer,
    SGD: class SGD extends Optimizer {
      constructor(params, o = {}) {
        super(withParams(params, (handles) => engine.makeSgd(handles, o.lr ?? 0.01, o.momentum ?? 0, o.dampening ?? 0,
                                                               o.weightDecay ?? 0, o.nesterov ?? false)));
      }
    },
    Adam: class Adam extends Optimizer {
      constructor(params, o = {}) { super(adam(params, o, false, 0)); }
    },
    AdamW: class AdamW extends Optimizer {
      constructor(params, o = {}) { super(adam(params, o, true, 0.01)); }
    },
  };
}
