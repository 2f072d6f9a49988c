// One measurement of the real-models table's WebAssembly rows (bench/run_real_models.py): a
// torchvision network's ONNX export in Node, run by lockstep's npm package or by ONNX Runtime Web
// (its WASM execution provider), on the same file and the same input.
//   node bench/wasm/real_models.mjs --engine lockstep|ort --model FILE.onnx [--mode infer|train]
//        [--batch N] [--size S] [--threads T] [--steps N] [--samples K] [--package DIR]
// infer: one forward pass of a [N, 3, S, S] batch without gradients. lockstep runs its SIMD128
// build at 1 thread and its threads build at more; ONNX Runtime Web runs numThreads = T. train
// (lockstep alone: ONNX Runtime Web does not train): one step of SGD with momentum 0.9 (lr 0.01)
// on the cross-entropy of fixed labels, in training mode. Prints
// `ENGINE MODEL MODE ms median=M min=A max=B` (the median of K samples, each the mean over N
// steps) and, for lockstep, `heap MB=H`: the most the engine's allocator held, sampled after each
// forward pass and each backward pass (WebAssembly's memory never shrinks, so this is the size a
// step needs of the 4 GiB).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { timeCalls } from './timing.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const engine = arg('--engine', 'lockstep'), file = arg('--model', null), mode = arg('--mode', 'infer');
if (!file || !['lockstep', 'ort'].includes(engine) || !['infer', 'train'].includes(mode)) {
  throw new Error('usage: real_models.mjs --engine lockstep|ort --model FILE.onnx [--mode infer|train] ...');
}
if (engine === 'ort' && mode === 'train') throw new Error('real_models.mjs: ONNX Runtime Web does not train');
const batch = Number(arg('--batch', 1)), size = Number(arg('--size', 224)), threads = Number(arg('--threads', 1));
const steps = Number(arg('--steps', 3)), samples = Number(arg('--samples', 5));
const shape = [batch, 3, size, size];
const count = shape.reduce((a, b) => a * b, 1);
const floats = new Float32Array(count).map((_, i) => Math.sin(i));
const labels = Array.from({ length: batch }, (_, i) => (i * 7) % 10);

let run, heapPeak = 0;
if (engine === 'ort') {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  const session = await ort.InferenceSession.create(readFileSync(file), { executionProviders: ['wasm'] });
  const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', floats, shape) };
  run = async () => { await session.run(feeds); };
} else {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const { load } = await import(path.join(path.resolve(arg('--package', path.join(root, 'build/npm/package'))), 'index.js'));
  const ls = await load(threads > 1 ? { build: 'threads', threads } : { build: 'simd' });
  const model = ls.onnx.load(new Uint8Array(readFileSync(file)));
  const x = ls.tensor(floats, shape);
  const sample = () => { heapPeak = Math.max(heapPeak, ls.heapInUse()); };
  if (mode === 'infer') {
    model.eval();
    run = async () => ls.scope(() => ls.noGrad(() => { model.forward(x).toArray(); sample(); }));
  } else {
    model.train();
    const y = ls.tensor(labels, [batch], { dtype: 'int64' });
    const optimizer = new ls.optim.SGD(model, { lr: 0.01, momentum: 0.9 });
    run = async () => ls.scope(() => {
      optimizer.zeroGrad();
      const loss = ls.nn.functional.crossEntropy(model.forward(x), y);
      sample();
      loss.backward();
      sample();
      optimizer.step();
      loss.item();
    });
  }
}
console.log(`${engine} ${path.basename(file, '.onnx')} ${mode} ${await timeCalls(run, { warmup: 2, samples, steps })}`);
if (engine === 'lockstep') console.log(`heap MB=${(heapPeak / 2 ** 20).toFixed(1)}`);
process.exit(0);  // the threads' workers would keep Node alive
