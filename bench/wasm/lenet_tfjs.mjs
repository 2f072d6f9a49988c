// TensorFlow.js (WASM backend, SIMD) on the MNIST LeNet-5 of bench/wasm/lenet_lockstep.mjs: one
// training step (batch 100, Adam) and inference of 100 images. Prints
//   tfjs-wasm lenet train steps/s median=M ... / tfjs-wasm lenet infer ms median=M ...
// The WASM backend registers no Conv2DBackpropFilter kernel, so the convolutions' weight gradient
// is built here from its own Conv2D kernel (a convolution of the input with the output gradient,
// batch and channels swapped); the input gradient uses its Conv2DBackpropInput kernel.
//   node bench/wasm/lenet_tfjs.mjs [--steps N] [--samples S]
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const steps = arg('--steps', 20), samples = arg('--samples', 5);
await tf.setBackend('wasm');
await tf.ready();
if (!tf.env().getBool('WASM_HAS_SIMD_SUPPORT')) throw new Error('tfjs-wasm: no SIMD here');

// conv2d, stride 1, 'valid', NHWC input, HWIO filter, with the gradient described above.
const conv = tf.customGrad((x, w, save) => {
  save([x, w]);
  return {
    value: tf.conv2d(x, w, 1, 'valid'),
    gradFunc: (dy, [xs, ws]) => [
      tf.conv2dTranspose(dy, ws, xs.shape, 1, 'valid'),
      tf.transpose(tf.conv2d(tf.transpose(xs, [3, 1, 2, 0]), tf.transpose(dy, [1, 2, 0, 3]), 1, 'valid'), [1, 2, 0, 3]),
    ],
  };
});

const v = (shape) => tf.variable(tf.randomUniform(shape, -0.1, 0.1));
const p = {
  c1: v([5, 5, 1, 6]), b1: v([6]), c2: v([5, 5, 6, 16]), b2: v([16]),
  f1: v([400, 120]), g1: v([120]), f2: v([120, 84]), g2: v([84]), f3: v([84, 10]), g3: v([10]),
};
function forward(x) {
  let h = tf.relu(tf.add(conv(tf.pad(x, [[0, 0], [2, 2], [2, 2], [0, 0]]), p.c1), p.b1));
  h = tf.maxPool(h, 2, 2, 'valid');
  h = tf.relu(tf.add(conv(h, p.c2), p.b2));
  h = tf.reshape(tf.maxPool(h, 2, 2, 'valid'), [-1, 400]);
  h = tf.relu(tf.add(tf.matMul(h, p.f1), p.g1));
  h = tf.relu(tf.add(tf.matMul(h, p.f2), p.g2));
  return tf.add(tf.matMul(h, p.f3), p.g3);
}
const x = tf.randomNormal([100, 28, 28, 1]);
const y = tf.oneHot(tf.tensor1d(Array.from({ length: 100 }, (_, i) => i % 10), 'int32'), 10);
const optimizer = tf.train.adam(1e-3);
const step = () => tf.tidy(() => {
  optimizer.minimize(() => tf.losses.softmaxCrossEntropy(y, forward(x)), false, Object.values(p));
});
const infer = () => tf.tidy(() => forward(x).dataSync());

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
console.log(`tfjs-wasm lenet train steps/s median=${med(train).toFixed(2)} min=${train[0].toFixed(2)} max=${train.at(-1).toFixed(2)}`);
console.log(`tfjs-wasm lenet infer ms median=${med(inference).toFixed(2)} min=${inference[0].toFixed(2)} max=${inference.at(-1).toFixed(2)}`);
