// lockstep's npm package in headless Chromium on the MNIST LeNet-5: the training step (batch 100,
// Adam) and inference of 100 images, as bench/wasm/lenet_lockstep.mjs measures them in Node, run
// in a module Web Worker of a page served cross-origin isolated (tools/serve-web.mjs), so the
// threads build can share memory with its workers.
//   node bench/wasm/lenet_browser.mjs [--steps N] [--samples S] [--build simd|threads|scalar]
//                                     [--threads T]
// Prints the same lines as lenet_lockstep.mjs; the model hash is the same for every build and
// thread count.
import { chromium } from 'playwright-core';
import { startServer } from '../../tests/web/demo_server.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const config = {
  steps: Number(arg('--steps', 20)), samples: Number(arg('--samples', 5)), build: arg('--build', 'simd'),
  threads: Number(arg('--threads', 1)),
};

// The worker's code: lenet_lockstep.mjs's loop, posting its lines back.
const workerSource = (origin) => `
import { load } from '${origin}/lockstep/index.js';
onmessage = async ({ data: c }) => {
  const ls = await load(c.build === 'threads' ? { build: c.build, threads: c.threads } : { build: c.build });
  const model = ls.models.lenet5({ seed: 1 });
  const optimizer = new ls.optim.Adam(model, { lr: 1e-3 });
  const x = ls.randn([100, 1, 28, 28], { seed: 2 });
  const y = ls.tensor(Array.from({ length: 100 }, (_, i) => i % 10), undefined, { dtype: 'int64' });
  const step = () => ls.scope(() => {
    optimizer.zeroGrad();
    ls.nn.functional.crossEntropy(model.train().forward(x), y).backward();
    optimizer.step();
  });
  const infer = () => ls.scope(() => ls.noGrad(() => model.eval().forward(x).toArray()));
  const measure = (fn) => {
    const out = [];
    for (let s = 0; s < c.samples; ++s) {
      const start = performance.now();
      for (let i = 0; i < c.steps; ++i) fn();
      out.push((performance.now() - start) / c.steps);
    }
    return out.sort((a, b) => a - b);
  };
  for (let i = 0; i < 3; ++i) { step(); infer(); }
  const train = measure(step).map((ms) => 1000 / ms).sort((a, b) => a - b);
  const inference = measure(infer);
  const med = (a) => a[Math.floor(a.length / 2)];
  postMessage([
    'lockstep-wasm lenet train steps/s median=' + med(train).toFixed(2) + ' min=' + train[0].toFixed(2) + ' max=' + train.at(-1).toFixed(2),
    'lockstep-wasm lenet infer ms median=' + med(inference).toFixed(2) + ' min=' + inference[0].toFixed(2) + ' max=' + inference.at(-1).toFixed(2),
    'lockstep-wasm build=' + ls.info.build + ' threads=' + ls.info.threads + ' model hash ' + model.hash(),
  ]);
  ls.dispose();
};
`;

const { server, url } = await startServer();
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
         '--disable-sync', '--no-first-run'],
});
try {
  const page = await browser.newPage();
  await page.goto(`${url}golden/mnist.txt`);  // any page of the server's origin, isolated as the demo is
  const lines = await page.evaluate(async ({ source, c }) => {
    if (!crossOriginIsolated) throw new Error('the page is not cross-origin isolated');
    const worker = new Worker(URL.createObjectURL(new Blob([source], { type: 'text/javascript' })), { type: 'module' });
    return new Promise((resolve, reject) => {
      worker.onmessage = ({ data }) => resolve(data);
      worker.onerror = (e) => reject(new Error(e.message));
      worker.postMessage(c);
    });
  }, { source: workerSource(new URL(url).origin), c: config });
  console.log(`browser ${await page.evaluate(() => navigator.userAgent)}`);
  for (const line of lines) console.log(line);
} finally {
  await browser.close();
  server.kill();
}
