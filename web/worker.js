// The engine runs here, off the page's thread: training, checkpoint hashing and classification.
// It uses only the npm package (served at /lockstep/).
import { load } from './lockstep/index.js';

let ls = null;
let model = null;        // the model that classifies drawn digits
let controller = null;   // aborts a training run

const post = (message, transfer) => self.postMessage(message, transfer ?? []);

async function fetchBytes(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`cannot load ${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

async function engine(build) {
  if (!ls || (build !== 'auto' && ls.info.build !== build)) {
    replaceModel(null);  // a model belongs to the engine instance that made it
    ls = await load({ build, baseUrl: new URL('./lockstep/', self.location.href) });
    post({ type: 'engine', info: ls.info });
  }
  return ls;
}

function replaceModel(next) {
  model?.dispose();
  model = next;
}

async function train({ build, run }) {
  const e = await engine(build);
  const [trainImages, trainLabels, testImages, testLabels] = await Promise.all(
      ['train-images.idx', 'train-labels.idx', 'test-images.idx', 'test-labels.idx'].map((f) => fetchBytes(`./data/mnist/${f}`)));
  const train = e.Dataset.fromIdx(trainImages, trainLabels, { normalize: true });
  const test = e.Dataset.fromIdx(testImages, testLabels, { normalize: true });
  controller = new AbortController();
  const options = run === 'short' ? { maxSteps: 3, maxTest: 100 } : {};
  try {
    const result = await e.mnistReferenceRun({
      train, test, ...options, signal: controller.signal, yieldEvery: 5,
      onProgress: (p) => post({ type: 'progress', ...p }),
    });
    const bytes = result.model.save();
    replaceModel(result.model);
    post({
      type: 'result', run, build: e.info.build, bytes,
      hashes: {
        initial: result.initialHash, trained: result.trainedHash, logits: result.logitsHash,
        accuracy: result.testAccuracy.toFixed(4),
      },
    }, [bytes.buffer]);
  } finally {
    controller = null;
    train.dispose();
    test.dispose();
  }
}

async function checkpoint({ bytes, name }) {
  const e = await engine('auto');
  const hash = e.sha256(bytes);
  const reasons = [];
  for (const arch of e.models.names) {
    try {
      replaceModel(e.models.fromCheckpoint(bytes, { arch }));
      post({ type: 'checkpoint', name, hash, arch });
      return;
    } catch (error) {
      reasons.push(error.message);
    }
  }
  post({ type: 'checkpoint', name, hash, loadError: reasons.join('; ') });
}

function classify({ pixels }) {
  if (!model) return;
  const probabilities = ls.scope(() => {
    const x = ls.tensor(pixels, [1, 1, 28, 28]).sub(0.1307).mul(new Float32Array(new Uint32Array([0x404FB98B]).buffer)[0]);  // the engine's MNIST normalisation, (x - 0.1307f) * (1.0f / 0.3081f): that float32 quotient's bits (dividing by 0.3081, or fround(1 / 0.3081) = 0x404FB98A, gives other bits)
    return ls.noGrad(() => model.eval().forward(x).softmax(1).toArray());
  });
  post({ type: 'prediction', probabilities });
}

self.onmessage = async ({ data }) => {
  try {
    if (data.type === 'stop') controller?.abort(new Error('stopped'));
    else if (data.type === 'init') await engine(data.build ?? 'auto');
    else if (data.type === 'train') await train(data);
    else if (data.type === 'checkpoint') await checkpoint(data);
    else if (data.type === 'classify') classify(data);
  } catch (error) {
    post({ type: 'error', during: data.type, message: error.message });
  }
};
