// ONNX Runtime Web (WASM execution provider, SIMD, one thread) on the MNIST LeNet-5 exported by
// bench/peers/export_lenet_onnx.py: inference of 100 images, as bench/wasm/lenet_lockstep.mjs
// measures lockstep's. Prints `ort-wasm lenet infer ms median=M min=A max=B`.
//   node bench/wasm/lenet_ort.mjs --model LENET.onnx [--steps N] [--samples S]
import * as ort from 'onnxruntime-web';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const model = arg('--model', null);
if (!model) throw new Error('usage: lenet_ort.mjs --model LENET.onnx [--steps N] [--samples S]');
const steps = Number(arg('--steps', 20)), samples = Number(arg('--samples', 5));
ort.env.wasm.numThreads = 1;  // as lockstep's WebAssembly build
const session = await ort.InferenceSession.create(model, { executionProviders: ['wasm'] });
const x = new ort.Tensor('float32', new Float32Array(100 * 784).map((_, i) => Math.sin(i)), [100, 1, 28, 28]);
const feeds = { [session.inputNames[0]]: x };
for (let i = 0; i < 3; ++i) await session.run(feeds);
const times = [];
for (let s = 0; s < samples; ++s) {
  const start = performance.now();
  for (let i = 0; i < steps; ++i) await session.run(feeds);
  times.push((performance.now() - start) / steps);
}
times.sort((a, b) => a - b);
const med = times[Math.floor(times.length / 2)];
console.log(`ort-wasm lenet infer ms median=${med.toFixed(2)} min=${times[0].toFixed(2)} max=${times.at(-1).toFixed(2)}`);
