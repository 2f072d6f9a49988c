// lockstep's npm package (SIMD128 build) on the MNIST LeNet-5: one training step (batch 100,
// Adam) and inference of 100 images, on synthetic data of bench/wasm/lenet_tfjs.mjs's shapes.
//   node bench/wasm/lenet_lockstep.mjs [--steps N] [--samples S] [--package DIR]
//                                      [--build simd|threads|scalar] [--threads T]
// --build threads --threads T runs the pthreads build's kernels on T threads (Web Workers); the
// last line is the hash of the trained model, the same for every build and thread count.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { lenetStep } from './lenet_step.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const steps = Number(arg('--steps', 20)), samples = Number(arg('--samples', 5));
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { load } = await import(path.resolve(arg('--package', path.join(root, 'build/npm/package')), 'index.js'));
const build = arg('--build', 'simd');
const ls = await load(build === 'threads' ? { build, threads: Number(arg('--threads', 1)) } : { build });

const { model, x, step } = lenetStep(ls);
const infer = () => ls.scope(() => ls.noGrad(() => model.eval().forward(x).toArray()));

function measure(fn, count) {
  const out = [];
  for (let s = 0; s < samples; ++s) {
    const start = performance.now();
    for (let i = 0; i < count; ++i) fn();
    out.push((performance.now() - start) / count);
  }
  return out.sort((a, b) => a - b);
}
for (let i = 0; i < 3; ++i) { step(); infer(); }
const train = measure(step, steps).map((ms) => 1000 / ms).sort((a, b) => a - b);
const inference = measure(infer, steps);
const med = (a) => a[Math.floor(a.length / 2)];
console.log(`lockstep-wasm lenet train steps/s median=${med(train).toFixed(2)} min=${train[0].toFixed(2)} max=${train.at(-1).toFixed(2)}`);
console.log(`lockstep-wasm lenet infer ms median=${med(inference).toFixed(2)} min=${inference[0].toFixed(2)} max=${inference.at(-1).toFixed(2)}`);
console.log(`lockstep-wasm build=${ls.info.build} threads=${ls.info.threads} model hash ${model.hash()}`);
ls.dispose();
