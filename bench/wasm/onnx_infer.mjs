// Inference of one ONNX file in WebAssembly, single-threaded: lockstep's npm package (SIMD128
// build, ls.onnx.load) or ONNX Runtime Web (WASM execution provider, SIMD, one thread), on the
// same file and the same input. Prints `ENGINE MODEL infer ms median=M min=A max=B`.
//   node bench/wasm/onnx_infer.mjs --engine lockstep|ort --model FILE.onnx --input images|tokens
//        [--batch N] [--steps N] [--samples S] [--package DIR]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { timeCalls } from './timing.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const engine = arg('--engine', 'lockstep'), file = arg('--model', null), kind = arg('--input', 'images');
if (!file) throw new Error('usage: onnx_infer.mjs --engine lockstep|ort --model FILE.onnx --input images|tokens');
const batch = Number(arg('--batch', 100)), steps = Number(arg('--steps', 20)), samples = Number(arg('--samples', 5));
// Deterministic inputs: images [batch, 1, 28, 28] in [-1, 1), or tokens [batch, 16] in [0, 64).
const shape = kind === 'images' ? [batch, 1, 28, 28] : [batch, 16];
const count = shape.reduce((a, b) => a * b, 1);
const floats = new Float32Array(count).map((_, i) => Math.sin(i));
const ints = Array.from({ length: count }, (_, i) => (i * 7) % 64);

let run;
if (engine === 'ort') {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;  // as lockstep's WebAssembly build
  const session = await ort.InferenceSession.create(readFileSync(file), { executionProviders: ['wasm'] });
  const x = kind === 'images' ? new ort.Tensor('float32', floats, shape)
                              : new ort.Tensor('int64', BigInt64Array.from(ints, BigInt), shape);
  const feeds = { [session.inputNames[0]]: x };
  run = async () => { await session.run(feeds); };
} else {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const { load } = await import(path.join(path.resolve(arg('--package', path.join(root, 'build/npm/package'))), 'index.js'));
  const ls = await load({ build: 'simd' });
  const model = ls.onnx.load(new Uint8Array(readFileSync(file)));
  const x = kind === 'images' ? ls.tensor(floats, shape) : ls.tensor(ints, shape, { dtype: 'int64' });
  run = async () => ls.scope(() => ls.noGrad(() => model.forward(x).toArray()));
}
console.log(`${engine} ${path.basename(file)} infer ${await timeCalls(run, { warmup: 3, samples, steps })}`);
