// The engine runs here, off the page's thread: training, checkpoint hashing and classification.
// It uses only the npm package (served at /lockstep/).
import { load } from './lockstep/index.js';

let ls = null;
let model = null;        // the model that classifies drawn digits
let controller = null;   // aborts a training run
let onnxModel = null;    // the ONNX panel's model, and its file name
let onnxName = '';
let pageReceipt = null;  // the receipt of the page's last run, and its kept states

const post = (message, transfer) => self.postMessage(message, transfer ?? []);

// The threads build's workers come from the page (app.js starts them on its own thread): Firefox
// can block for good inside a `new Worker` made in a worker (docs/wasm-threads.md), so none is
// made here. The page answers each request with a 'workers' message.
let portsRequest = null;
function workerPorts(count) {
  return new Promise((resolve, reject) => {
    portsRequest = { resolve, reject };
    post({ type: 'need-workers', count });
  });
}

function workersArrived({ ports, error }) {
  const request = portsRequest;
  portsRequest = null;
  if (error) request?.reject(new Error(error));
  else request?.resolve(ports);
}

async function fetchBytes(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`cannot load ${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

// The engine for a build ('auto', 'threads', 'simd' or 'scalar') and, for the threads build, a
// thread count (undefined: one per core); the current one if it fits, else a new one. One request
// at a time: a second one made while an engine loads waits for it, so no engine is loaded twice.
let engineRequests = Promise.resolve();
function engine(build, threads) {
  const next = engineRequests.then(() => engineNow(build, threads));
  engineRequests = next.catch(() => {});
  return next;
}

async function engineNow(build, threads) {
  const fits = ls && (build === 'auto' || ls.info.build === build) &&
      (threads === undefined || ls.info.build !== 'threads' || ls.info.threads === threads);
  if (!fits) {
    replaceModel(null);  // a model belongs to the engine instance that made it
    onnxModel?.dispose();
    onnxModel = null;
    ls?.dispose();  // the threads build's workers
    ls = null;
    ls = await load({ build, threads: build === 'simd' || build === 'scalar' ? undefined : threads,
                      baseUrl: new URL('./lockstep/', self.location.href), workerPorts });
    post({ type: 'engine', info: ls.info });
  }
  return ls;
}

function replaceModel(next) {
  model?.dispose();
  model = next;
}

// The MNIST training set as the reference run uses it (normalised).
async function trainingSet(e) {
  const [images, labels] = await Promise.all(['train-images.idx', 'train-labels.idx'].map((f) => fetchBytes(`./data/mnist/${f}`)));
  return e.Dataset.fromIdx(images, labels, { normalize: true });
}

async function train({ build, threads, run, receipt }) {
  const e = await engine(build, threads);
  const [testImages, testLabels] = await Promise.all(['test-images.idx', 'test-labels.idx'].map((f) => fetchBytes(`./data/mnist/${f}`)));
  const train = await trainingSet(e);
  const test = e.Dataset.fromIdx(testImages, testLabels, { normalize: true });
  controller = new AbortController();
  const options = run === 'short' ? { maxSteps: 3, maxTest: 100 } : {};
  try {
    const result = await e.mnistReferenceRun({
      train, test, ...options, signal: controller.signal, yieldEvery: 5, receipt,
      onProgress: (p) => post({ type: 'progress', ...p }),
    });
    pageReceipt = result.receipt ?? null;
    post({ type: 'page-receipt', steps: pageReceipt ? result.steps : 0, kept: pageReceipt ? Object.keys(pageReceipt.states).length : 0 });
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

// --- the ONNX panel: NumPy .npy files for the inputs (read and written here), hashes of outputs.
function readNpy(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = view.getUint16(8, true);
  const header = new TextDecoder('latin1').decode(bytes.subarray(10, 10 + length));
  const descr = /'descr': '([^']+)'/.exec(header)?.[1];
  const shape = (/'shape': \(([^)]*)\)/.exec(header)?.[1] ?? '').split(',').map((d) => d.trim()).filter(Boolean).map(Number);
  const data = bytes.slice(10 + length).buffer;
  if (descr === '<f4') return { shape, dtype: 'float32', values: new Float32Array(data) };
  if (descr === '<i8') return { shape, dtype: 'int64', values: Array.from(new BigInt64Array(data), Number) };
  throw new Error(`the sample input is '${descr}', expected '<f4' or '<i8'`);
}

function writeNpy(shape, dtype, values) {
  const dims = shape.length === 1 ? `${shape[0]},` : shape.join(', ');
  let header = `{'descr': '${dtype === 'int64' ? '<i8' : '<f4'}', 'fortran_order': False, 'shape': (${dims}), }`;
  header += ' '.repeat((64 - ((10 + header.length + 1) % 64)) % 64) + '\n';
  const data = dtype === 'int64' ? new Uint8Array(BigInt64Array.from(values, BigInt).buffer) : new Uint8Array(Float32Array.from(values).buffer);
  const out = new Uint8Array(10 + header.length + data.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, header.length & 0xff, header.length >> 8]);
  out.set(new TextEncoder().encode(header), 10);
  out.set(data, 10 + header.length);
  return out;
}

async function onnxLoad({ name, sample, bytes }) {
  const e = await engine('auto');
  onnxModel?.dispose();
  onnxModel = null;
  onnxModel = e.onnx.load(bytes);
  onnxName = name;
  const parameters = onnxModel.namedParameters().reduce((n, [, t]) => { const k = t.numel; t.dispose(); return n + k; }, 0);
  post({ type: 'onnx-model', name, sample, inputs: onnxModel.inputs, outputs: onnxModel.outputs,
         opset: onnxModel.opset, producer: onnxModel.producer, parameters });
}

// The input: the sample's .npy, the drawing pad (MNIST's normalisation, as classify()), or for a
// model without a sample, values from lockstep's own generator (seed 0), so the page can offer
// them as a file for the native command.
function onnxInput({ source, npy, pixels }) {
  const [input] = onnxModel.inputs;
  if (onnxModel.inputs.length !== 1) throw new Error(`the panel feeds one-input models; this one takes ${onnxModel.inputs.length}`);
  if (source === 'pad') {
    const ok = input.dtype === 'float' && input.shape?.length === 4 && input.shape.slice(1).join() === '1,28,28';
    if (!ok) throw new Error(`the drawing pad makes [1, 1, 28, 28] images; this model takes ${input.dtype}[${input.shape}]`);
    const scale = new Float32Array(new Uint32Array([0x404FB98B]).buffer)[0];  // float32 1 / 0.3081, as classify()
    const x = ls.scope(() => ls.tensor(pixels, [1, 1, 28, 28]).sub(0.1307).mul(scale).detach());
    return { tensor: x, shape: [1, 1, 28, 28], dtype: 'float32', values: x.toArray() };
  }
  if (npy) {
    const { shape, dtype, values } = readNpy(npy);
    return { tensor: ls.tensor(values, shape, { dtype }), shape, dtype, values };
  }
  const shape = (input.shape ?? []).map((d) => (typeof d === 'number' ? d : 1));
  if (input.dtype === 'float') {
    const tensor = ls.rand(shape, { seed: 0 });
    return { tensor, shape, dtype: 'float32', values: tensor.toArray() };
  }
  const values = new Array(shape.reduce((a, b) => a * b, 1)).fill(0);  // token or index inputs: zeros
  return { tensor: ls.tensor(values, shape, { dtype: 'int64' }), shape, dtype: 'int64', values };
}

async function onnxRun(message) {
  if (!onnxModel) throw new Error('no ONNX model loaded');
  const input = onnxInput(message);
  const outputs = ls.noGrad(() => onnxModel.eval().run([input.tensor]));
  const described = onnxModel.outputs.map((io) => {
    const t = outputs[io.name];
    const array = t.toArray();
    const hash = ls.sha256(new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
    return { name: io.name, shape: t.shape, dtype: t.dtype, hash, values: io === onnxModel.outputs[0] ? array : undefined };
  });
  let prediction;
  if (message.source === 'pad') {
    const logits = described[0].values;
    prediction = logits.indexOf(Math.max(...logits));
  }
  const inputNpy = writeNpy(input.shape, input.dtype, input.values);
  [input.tensor, ...Object.values(outputs)].forEach((t) => t.dispose());
  post({ type: 'onnx-result', source: message.source, build: ls.info.build, inputName: onnxModel.inputs[0].name,
         outputs: described.map(({ values, ...rest }) => rest), prediction, inputNpy }, [inputNpy.buffer]);
}

// The verification panel: a sample of a receipt's steps re-executed from the states kept beside
// it (the page's run, or files), each step's verdict posted as it comes.
async function verify({ source, text, states, sample, seed }) {
  const receipt = source === 'page' ? pageReceipt : { text, states };
  if (!receipt) throw new Error('no run on this page has a receipt yet: train with "record a receipt" ticked');
  const e = await engine('auto');
  const train = await trainingSet(e);
  try {
    const result = e.verifyRun(receipt, { train, sample, seed, onStep: (step, ok) => post({ type: 'verify-step', step, ok }) });
    post({ type: 'verify-result', ...result, sample, seed, build: e.info.build });
  } finally {
    train.dispose();
  }
}

self.onmessage = async ({ data }) => {
  try {
    if (data.type === 'workers') workersArrived(data);
    else if (data.type === 'stop') controller?.abort(new Error('stopped'));
    else if (data.type === 'init') await engine(data.build ?? 'auto', data.threads);
    else if (data.type === 'train') await train(data);
    else if (data.type === 'checkpoint') await checkpoint(data);
    else if (data.type === 'classify') classify(data);
    else if (data.type === 'onnx-load') await onnxLoad(data);
    else if (data.type === 'onnx-run') await onnxRun(data);
    else if (data.type === 'verify') await verify(data);
  } catch (error) {
    post({ type: 'error', during: data.type, message: error.message });
  }
};
