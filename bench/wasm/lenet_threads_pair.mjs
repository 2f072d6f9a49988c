// The pthreads build's LeNet-5 training step (batch 100, Adam) on 1 and on 2 threads, both loaded
// in one Node process and timed in alternating rounds: the speed-up is taken per round, so a slow
// spell of this machine lands on both sides of a ratio. (Timed as separate processes, one and the
// same package gave anything from 1.1x to 1.8x: a neighbour's load changes between processes.)
//   node bench/wasm/lenet_threads_pair.mjs [--rounds R] [--steps N] [--package DIR]
// Prints each instance's median steps/s, the median of the per-round ratios, and both trained
// models' hashes (the same steps on 1 and 2 threads must give the same bits).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { lenetStep } from './lenet_step.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const rounds = Number(arg('--rounds', 20)), steps = Number(arg('--steps', 10));
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { load } = await import(path.resolve(arg('--package', path.join(root, 'build/npm/package')), 'index.js'));

const instances = [];
for (const threads of [1, 2]) {
  const ls = await load({ build: 'threads', threads });
  const { model, x, step } = lenetStep(ls);
  for (let i = 0; i < 3; ++i) step();
  instances.push({ ls, model, threads, step, rates: [] });
}
for (let r = 0; r < rounds; ++r) {
  for (const it of (r % 2 === 0 ? instances : [...instances].reverse())) {
    const start = performance.now();
    for (let i = 0; i < steps; ++i) it.step();
    it.rates.push(1000 * steps / (performance.now() - start));
  }
}
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const [one, two] = instances;
const ratios = one.rates.map((rate, i) => two.rates[i] / rate);
console.log(`lockstep-wasm threads pair: 1 thread steps/s median=${median(one.rates).toFixed(2)}`);
console.log(`lockstep-wasm threads pair: 2 threads steps/s median=${median(two.rates).toFixed(2)}`);
console.log(`lockstep-wasm threads pair: speed-up per round median=${median(ratios).toFixed(3)} ` +
            `min=${Math.min(...ratios).toFixed(3)} max=${Math.max(...ratios).toFixed(3)}`);
console.log(`lockstep-wasm threads pair: model hash 1 thread ${one.model.hash()} 2 threads ${two.model.hash()}`);
for (const it of instances) it.ls.dispose();
process.exit(0);
