// The LeNet-5 training step the WebAssembly benchmarks time: batch 100 of synthetic data (the
// shapes of bench/wasm/lenet_tfjs.mjs), Adam, lr 1e-3, model seed 1. Returns the model, its
// input and the step.
export function lenetStep(ls) {
  const model = ls.models.lenet5({ seed: 1 });
  const optimizer = new ls.optim.Adam(model, { lr: 1e-3 });
  const x = ls.randn([100, 1, 28, 28], { seed: 2 });
  const y = ls.tensor(Array.from({ length: 100 }, (_, i) => i % 10), undefined, { dtype: 'int64' });
  const step = () => ls.scope(() => {
    optimizer.zeroGrad();
    ls.nn.functional.crossEntropy(model.train().forward(x), y).backward();
    optimizer.step();
  });
  return { model, x, step };
}
