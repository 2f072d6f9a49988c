// Misuse of the npm package, with every WebAssembly build: every bad argument, option and call
// order is refused with a clear error (TypeError or RangeError from the JavaScript layer, an Error
// with its kind from the engine), and afterwards the module still works and an earlier result (a
// trained model's hash, and the same training recomputed) is unchanged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builds, loadLockstep } from './helpers.mjs';

// fn() throws an instance of Type (exactly Error for the engine's errors) whose message matches
// pattern; kind: the expected error.kind ('argument' for the JavaScript layer's checks too).
function throwsLike(fn, Type, pattern, kind = 'argument') {
  assert.throws(fn, (error) => {
    assert.ok(error instanceof Type, `expected a ${Type.name} from ${fn}, got ${error?.constructor?.name}: ${error?.message}`);
    if (Type === Error) assert.equal(error.constructor, Error, `expected a plain Error from ${fn}`);
    assert.match(error.message, pattern, `message of ${fn}`);
    assert.equal(error.kind, kind, `kind of ${fn} (${error.message})`);
    if (Type !== Error) assert.match(error.message, /^lockstep: /);
    return true;
  });
}

async function rejectsLike(promiseOrFn, Type, pattern, kind = 'argument') {
  await assert.rejects(promiseOrFn, (error) => {
    assert.ok(error instanceof Type, `expected a ${Type.name}, got ${error?.constructor?.name}: ${error?.message}`);
    if (Type === Error) assert.equal(error.constructor, Error);
    assert.match(error.message, pattern);
    assert.equal(error.kind, kind, `kind (${error.message})`);
    return true;
  });
}

// An earlier result: two SGD steps of an MLP from fixed seeds (independent of manualSeed).
function earlierResult(ls) {
  return ls.scope(() => {
    const model = ls.models.mlp({ seed: 7 });
    const optimizer = new ls.optim.SGD(model, { lr: 0.1, momentum: 0.9 });
    const x = ls.randn([8, 784], { seed: 3 });
    for (let i = 0; i < 2; ++i) {
      optimizer.zeroGrad();
      ls.nn.functional.crossEntropy(model.forward(x), [0, 1, 2, 3, 4, 5, 6, 7]).backward();
      optimizer.step();
    }
    return model;
  });
}

// The module still computes, the earlier model is unchanged, and the same training gives it again.
function assertStillWorks(ls, earlier, earlierHash) {
  assert.deepEqual([...ls.ones(2).add(1).toArray()], [2, 2]);
  assert.equal(earlier.hash(), earlierHash, 'the earlier model is unchanged');
  const again = earlierResult(ls);
  assert.equal(again.hash(), earlierHash, 'the same training gives the same model');
  again.dispose();
  assert.equal(ls.models.lenet5({ seed: 2 }).hash(), '6e81662d18be056c8ceae58f214a85418520a7f5550563ba17e9c0a3fdd80111');
}

async function setup(build) {
  const ls = await loadLockstep({ build });
  const earlier = earlierResult(ls);
  return { ls, earlier, earlierHash: earlier.hash() };
}

// n random examples of 784 features with labels i % 10 (or the labels given).
function randomData(ls, n, { seed = 1, labels } = {}) {
  return ls.scope(() => ls.Dataset.fromTensors(
    ls.randn([n, 784], { seed }),
    ls.tensor(labels ?? Array.from({ length: n }, (_, i) => i % 10), undefined, { dtype: 'int64' })));
}

const TEXT = 'the quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs.\n'.repeat(4);

for (const build of builds) {
  test(`${build}: tensor arguments are checked, never coerced`, async () => {
    const { ls, earlier, earlierHash } = await setup(build);
    const x = ls.ones(2, 3);
    const cases = [
      // Elements must be numbers: no string, boolean or bigint is converted.
      [() => ls.tensor(['1e3', '0x10', ' ', true]), TypeError, /^lockstep: tensor: element 0 must be a number, got "1e3"$/],
      [() => ls.tensor([1, '0x10']), TypeError, /tensor: element 1 must be a number, got "0x10"/],
      [() => ls.tensor([1, 2, true]), TypeError, /element 2 must be a number, got true/],
      [() => ls.tensor([1, 2n]), TypeError, /element 1 must be a number, got 2n/],
      [() => ls.tensor([1, , 3]), TypeError, /element 1 must be a number, got undefined/],  // eslint-disable-line no-sparse-arrays
      [() => ls.tensor([[1, 2], [3, ' ']]), TypeError, /element \[1\]\[1\] must be a number, got " "/],
      [() => ls.tensor([[1, 2], [3]]), TypeError, /nested array is ragged at index \[1\]: expected an array of 2 elements, got \[3\]/],
      [() => ls.tensor([[1, 2], 3]), TypeError, /ragged at index \[1\]/],
      [() => ls.tensor([1, [2]]), TypeError, /element 1 must be a number, got \[2\]/],
      [() => ls.tensor(new BigInt64Array(2)), TypeError, /data must be a typed array, an array of numbers/],
      [() => ls.tensor(new DataView(new ArrayBuffer(4))), TypeError, /got a DataView/],
      [() => ls.tensor({ length: 2, 0: 1, 1: 2 }), TypeError, /data must be a typed array/],
      [() => ls.tensor([1.5], undefined, { dtype: 'int64' }), RangeError, /element 0 is not an integer: 1.5/],
      [() => ls.tensor(new Float32Array([0.5]), undefined, { dtype: 'int64' }), RangeError, /element 0 is not an integer/],
      [() => ls.tensor([1], [1], { dtype: 5 }), TypeError, /tensor: dtype must be 'float32' or 'int64', got 5/],
      [() => ls.tensor([1], [1], { dtpye: 'int64' }), TypeError, /unknown option 'dtpye' for tensor; accepted: dtype/],
      [() => ls.tensor([1], [1], 'int64'), TypeError, /tensor: options must be an object such as \{ dtype: \.\.\. \}, got "int64"/],
      [() => ls.tensor([1, 2], [2.5]), RangeError, /tensor: dimension 0 must be an integer >= 0 and < 2\^31, got 2.5/],
      [() => ls.tensor([1, 2], 2), TypeError, /tensor: shape must be an array of dimensions, got 2/],
      // Shapes.
      [() => ls.zeros(2, '3'), TypeError, /zeros: dimension 1 must be an integer >= 0 and < 2\^31, got "3"/],
      [() => ls.zeros([2], 3), TypeError, /zeros takes a shape array or dimensions as arguments, not both/],
      [() => ls.ones(2 ** 31), RangeError, /ones: dimension 0 must be an integer >= 0 and < 2\^31/],
      [() => ls.zeros([1, 1, 1, 1, 1, 1, 1, 1, 1]), RangeError, /at most 8 are supported/],
      [() => ls.full([2], '3'), TypeError, /full: value must be a number, got "3"/],
      [() => ls.full(2, 3), TypeError, /full: shape must be an array of dimensions, got 2/],
      // Random draws.
      [() => ls.randn([2], { seed: 1.5 }), RangeError, /randn: seed must be an integer in \[0, 2\^53\), got 1.5/],
      [() => ls.randn([2], { seed: '1' }), TypeError, /randn: seed must be an integer in \[0, 2\^53\), got "1"/],
      [() => ls.rand([2], { seed: 2 ** 53 }), RangeError, /rand: seed must be an integer in \[0, 2\^53\)/],
      [() => ls.randn([2], { generator: new ls.Generator(1), seed: 1 }), TypeError, /either generator or seed/],
      [() => ls.randn([2], { stream: 'x' }), TypeError, /stream needs a seed/],
      [() => ls.randn([2], { generator: {} }), TypeError, /randn: generator must be a Generator, got an object/],
      [() => new ls.Generator(-1), RangeError, /Generator: seed must be an integer in \[0, 2\^53\), got -1/],
      [() => new ls.Generator(1, 5), TypeError, /Generator: name must be a string, got 5/],
      // Dimension and index arguments must be integers (the engine's int would truncate 0.7 to 0).
      [() => x.sum(0.7), RangeError, /^lockstep: sum: dim must be an integer in \[-2\^31, 2\^31\), got 0.7$/],
      [() => x.sum('0'), TypeError, /sum: dim must be an integer/],
      [() => x.sum(0, 1), TypeError, /sum: keepdim must be a boolean \(true or false\), got 1/],
      [() => x.mean(0.7), RangeError, /mean: dim must be an integer/],
      [() => x.max(0.7), RangeError, /max: dim must be an integer/],
      [() => x.max(), TypeError, /max: dim must be an integer .*got undefined/],
      [() => x.argmax(1.5), RangeError, /argmax: dim must be an integer/],
      [() => x.softmax(0.7), RangeError, /softmax: dim must be an integer/],
      [() => x.logSoftmax(NaN), RangeError, /logSoftmax: dim must be an integer .*got NaN/],
      [() => x.transpose(0, 0.5), RangeError, /transpose: dim1 must be an integer/],
      [() => x.transpose(2 ** 32, 0), RangeError, /transpose: dim0 must be an integer in \[-2\^31, 2\^31\)/],
      [() => x.permute(0, 1.5), RangeError, /permute: dimension 1 must be an integer/],
      [() => x.flatten(0.5), RangeError, /flatten: startDim must be an integer/],
      [() => x.flatten(0, '1'), TypeError, /flatten: endDim must be an integer/],
      [() => x.squeeze(), TypeError, /squeeze: dim must be an integer/],
      [() => x.squeeze(0.5), RangeError, /squeeze: dim must be an integer/],
      [() => x.unsqueeze(0.5), RangeError, /unsqueeze: dim must be an integer/],
      [() => x.slice(0.5, 0, 1), RangeError, /slice: dim must be an integer/],
      [() => x.slice(0, 0.5, 1), RangeError, /slice: start must be an integer/],
      [() => x.slice(0, 0, '1'), TypeError, /slice: end must be an integer/],
      [() => x.slice(0, 0, 1, 0), RangeError, /slice: step must be an integer in \[1, 2\^31\), got 0/],
      [() => x.reshape(2, 1.5), RangeError, /reshape: dimension 1 must be an integer >= 0 and < 2\^31, or -1 \(inferred\), got 1.5/],
      [() => x.reshape([3, '2']), TypeError, /reshape: dimension 1 must be an integer/],
      [() => x.reshape(-1, -1), RangeError, /reshape: only one dimension may be -1/],
      [() => x.view([1.5, 4]), RangeError, /view: dimension 0 must be an integer/],
      [() => x.view(-2, 3), RangeError, /view: dimension 0 must be an integer >= 0 and < 2\^31, or -1/],
      // Operands and flags.
      [() => x.add(NaN), RangeError, /add: other must be a finite number, got NaN/],
      [() => x.mul(Infinity), RangeError, /mul: other must be a finite number, got Infinity/],
      [() => x.sub(1e39), RangeError, /sub: other must be a finite number in float32 .*rounds to Infinity/],
      [() => x.div('2'), TypeError, /div: other must be a Tensor or a finite number, got "2"/],
      [() => x.matmul([[1], [2], [3]]), TypeError, /matmul: other must be a Tensor, got an array/],
      [() => x.maximum(2), TypeError, /maximum: other must be a Tensor, got 2/],
      [() => x.copy_(new Float32Array(6)), TypeError, /copy_: source must be a Tensor, got a Float32Array/],
      [() => x.pow('2'), TypeError, /pow: exponent must be a finite number, got "2"/],
      [() => x.pow(NaN), RangeError, /pow: exponent must be a finite number, got NaN/],
      [() => x.gelu('fast'), RangeError, /gelu: approximate must be 'none' or 'tanh', got "fast"/],
      [() => x.requiresGrad_(1), TypeError, /requiresGrad_: on must be a boolean/],
      [() => { x.requiresGrad = 'yes'; }, TypeError, /requiresGrad: the value must be a boolean/],
      [() => x.backward({ retain_graph: true }), TypeError, /unknown option 'retain_graph' for backward; accepted: retainGraph \(did you mean 'retainGraph'\?\)/],
      [() => x.backward({ retainGraph: 1 }), TypeError, /backward: retainGraph must be a boolean/],
      [() => x.backward(true), TypeError, /backward: options must be an object/],
      // The module level.
      [() => ls.manualSeed(1.5), RangeError, /manualSeed: seed must be an integer in \[0, 2\^53\), got 1.5/],
      [() => ls.manualSeed('1'), TypeError, /manualSeed: seed must be an integer/],
      [() => ls.manualSeed(2 ** 53), RangeError, /manualSeed: seed must be an integer in \[0, 2\^53\)/],
      [() => ls.noGrad(5), TypeError, /noGrad: fn must be a function, got 5/],
      [() => ls.sha256('abc'), TypeError, /sha256: bytes must be a Uint8Array, got "abc"/],
      [() => ls.scope(5), TypeError, /scope: fn must be a function, got 5/],
      [() => ls.scope(async () => ls.ones(1)), TypeError, /scope\(\) takes a synchronous function/],
    ];
    for (const [fn, Type, pattern] of cases) throwsLike(fn, Type, pattern);
    // A disposed object refuses to be used.
    const gone = ls.ones(2);
    gone.dispose();
    throwsLike(() => gone.add(1), Error, /^lockstep: this tensor was disposed$/, 'state');
    throwsLike(() => x.add(gone), Error, /this tensor was disposed/, 'state');
    // Typed arrays and nested arrays of numbers still work, as do the existing argument forms.
    assert.deepEqual([...ls.tensor(new Int32Array([1, 2, 3])).toArray()], [1, 2, 3]);
    assert.deepEqual([...ls.tensor([[1, 2], [3, 4]], undefined, { dtype: 'int64' }).toArray()], [1, 2, 3, 4]);
    assert.deepEqual(ls.tensor([[[1], [2]]]).shape, [1, 2, 1]);
    assert.deepEqual(ls.tensor([]).shape, [0]);
    assert.deepEqual(ls.zeros().shape, []);
    assert.deepEqual(x.sum(-1, true).shape, [2, 1]);
    assert.deepEqual(x.reshape([3, -1]).shape, [3, 2]);
    assert.deepEqual(x.slice(1, -2, 3).shape, [2, 2]);
    assert.deepEqual([...ls.full([2], NaN).toArray()], [NaN, NaN]);
    assertStillWorks(ls, earlier, earlierHash);
  });

  test(`${build}: module, optimizer, data set and GPT arguments and options are checked`, async () => {
    const { ls, earlier, earlierHash } = await setup(build);
    const { nn, optim } = ls;
    const mlp = ls.models.mlp({ seed: 1 });
    const logits = ls.zeros(2, 10);
    const data = randomData(ls, 20);
    const corpus = new ls.gpt.CharCorpus(TEXT);
    const gptModel = ls.gpt.model(corpus, { preset: 'tiny' });
    const idx = new Uint8Array(16);
    const cases = [
      // Modules.
      [() => new nn.GELU('tanh'), TypeError, /^lockstep: GELU: options must be an object such as \{ approximate: \.\.\. \}, got "tanh"$/],
      [() => new nn.GELU({ approximate: 'fast' }), RangeError, /GELU: approximate must be 'none' or 'tanh', got "fast"/],
      [() => new nn.GELU({ approx: 'tanh' }), TypeError, /unknown option 'approx' for GELU; accepted: approximate/],
      [() => new nn.Linear(3.5, 2), RangeError, /Linear: inFeatures must be an integer in \[1, 2\^31\), got 3.5/],
      [() => new nn.Linear('3', 2), TypeError, /Linear: inFeatures must be an integer/],
      [() => new nn.Linear(3, 0), RangeError, /Linear: outFeatures must be an integer in \[1, 2\^31\), got 0/],
      [() => new nn.Linear(3, 2, { bias: 1 }), TypeError, /Linear: bias must be a boolean \(true or false\), got 1/],
      [() => new nn.Linear(3, 2, new ls.Generator(1)), TypeError, /Linear: options must be an object .*got a Generator/],
      [() => new nn.Linear(3, 2, { generator: 5 }), TypeError, /Linear: generator must be a Generator, got 5/],
      [() => new nn.Linear(3, 2, { init: 'xavier' }), TypeError, /unknown option 'init' for Linear; accepted: bias, generator/],
      [() => new nn.Conv2d(1, 2, 3, { stride: 0 }), RangeError, /Conv2d: stride must be an integer in \[1, 2\^31\), got 0/],
      [() => new nn.Conv2d(1, 2, [3, 3]), TypeError, /Conv2d: kernelSize must be an integer/],
      [() => new nn.Conv2d(1, 2, 3, { padding: -1 }), RangeError, /Conv2d: padding must be an integer in \[0, 2\^31\), got -1/],
      [() => new nn.Conv2d(1, 2, 3, { groups: 1.5 }), RangeError, /Conv2d: groups must be an integer/],
      [() => new nn.MaxPool2d(2, { stride: 1.5 }), RangeError, /MaxPool2d: stride must be an integer in \[1, 2\^31\), got 1.5/],
      [() => new nn.MaxPool2d(2, { dilation: 2 }), TypeError, /unknown option 'dilation' for MaxPool2d; accepted: stride, padding/],
      [() => new nn.AvgPool2d(0), RangeError, /AvgPool2d: kernelSize must be an integer in \[1, 2\^31\), got 0/],
      [() => new nn.Dropout(-0.1), RangeError, /Dropout: p must be a finite number in \[0, 1\), got -0.1/],
      [() => new nn.Dropout(1), RangeError, /Dropout: p must be a finite number in \[0, 1\), got 1/],
      [() => new nn.Dropout(1 - 1e-10), RangeError, /Dropout: p must be a finite number in \[0, 1\) in float32 .*rounds to 1/],
      [() => new nn.Dropout('0.5'), TypeError, /Dropout: p must be a finite number in \[0, 1\), got "0.5"/],
      [() => new nn.Dropout(0.5, { inplace: true }), TypeError, /unknown option 'inplace' for Dropout; accepted: generator/],
      [() => new nn.LayerNorm(4, { eps: -1 }), RangeError, /LayerNorm: eps must be a finite number >= 0, got -1/],
      [() => new nn.LayerNorm([4]), TypeError, /LayerNorm: normalizedShape must be an integer/],
      [() => new nn.LayerNorm(4, { elementwiseAffine: 'no' }), TypeError, /LayerNorm: elementwiseAffine must be a boolean/],
      [() => new nn.Embedding(10, 0.5), RangeError, /Embedding: embeddingDim must be an integer/],
      [() => new nn.Embedding(10, 4, { paddingIdx: 0 }), TypeError, /unknown option 'paddingIdx' for Embedding/],
      [() => new nn.Softmax(0.5), RangeError, /Softmax: dim must be an integer/],
      [() => new nn.LogSoftmax('1'), TypeError, /LogSoftmax: dim must be an integer/],
      [() => new nn.Flatten(1, '2'), TypeError, /Flatten: endDim must be an integer/],
      [() => new nn.ReLU(true), TypeError, /nn.ReLU takes no arguments, got 1 \(true\)/],
      [() => new nn.Tanh({}), TypeError, /nn.Tanh takes no arguments/],
      [() => new nn.Sequential(new nn.ReLU(), 'x'), TypeError, /Sequential: argument 1 must be a Module, got "x"/],
      [() => new nn.Sequential().add(ls.ones(1)), TypeError, /Sequential.add: module must be a Module, got a Tensor/],
      [() => mlp.forward([1, 2]), TypeError, /forward: input must be a Tensor, got \[1, 2\]/],
      [() => mlp.train('yes'), TypeError, /train: on must be a boolean/],
      [() => mlp.load([1, 2]), TypeError, /load: bytes must be a Uint8Array, got \[1, 2\]/],
      // Losses.
      [() => nn.functional.crossEntropy(logits, [0, 1.5]), RangeError, /crossEntropy targets: element 1 is not an integer: 1.5/],
      [() => nn.functional.crossEntropy(logits, ['0', '1']), TypeError, /crossEntropy targets: element 0 must be a number, got "0"/],
      [() => nn.functional.crossEntropy(logits, 3), TypeError, /crossEntropy: targets must be an int64 Tensor or an array of class indices, got 3/],
      [() => nn.functional.crossEntropy(logits, [[0], [1]]), TypeError, /targets must be a flat array/],
      [() => nn.functional.crossEntropy(logits, [0, 1], { labelSmoothing: 2 }), RangeError, /crossEntropy: labelSmoothing must be a finite number in \[0, 1\], got 2/],
      [() => nn.functional.crossEntropy(logits, [0, 1], { label_smoothing: 0.1 }), TypeError, /unknown option 'label_smoothing' for crossEntropy; accepted: labelSmoothing, ignoreIndex \(did you mean 'labelSmoothing'\?\)/],
      [() => nn.functional.crossEntropy(logits, [0, 1], { ignoreIndex: 0.5 }), RangeError, /crossEntropy: ignoreIndex must be an integer/],
      [() => nn.functional.crossEntropy([0, 1], [0, 1]), TypeError, /crossEntropy: logits must be a Tensor/],
      [() => nn.functional.nllLoss(logits, 'ab'), TypeError, /nllLoss: targets must be/],
      [() => nn.functional.mseLoss(logits, [1]), TypeError, /mseLoss: target must be a Tensor, got \[1\]/],
      // Reference models.
      [() => ls.models.create(5), TypeError, /models.create: arch must be a string \(lenet5 or mlp\), got 5/],
      [() => ls.models.create('resnet'), RangeError, /models.create: unknown model 'resnet'; expected one of lenet5, mlp/],
      [() => ls.models.mlp({ seed: 1.5 }), RangeError, /models.mlp: seed must be an integer in \[0, 2\^53\), got 1.5/],
      [() => ls.models.lenet5({ seeds: 1 }), TypeError, /unknown option 'seeds' for models.lenet5; accepted: seed/],
      [() => ls.models.fromCheckpoint(mlp.save(), { arch: 'vgg' }), RangeError, /models.fromCheckpoint: unknown model 'vgg'/],
      [() => ls.models.fromCheckpoint('bytes'), TypeError, /models.fromCheckpoint: bytes must be a Uint8Array/],
      // Optimizers (PyTorch's checks: lr, momentum, weightDecay, eps >= 0; betas in [0, 1)).
      [() => new optim.SGD(mlp, { weight_decay: 1 }), TypeError,
       /^lockstep: unknown option 'weight_decay' for SGD; accepted: lr, momentum, dampening, weightDecay, nesterov/],
      [() => new optim.SGD(mlp, { momentum: -1 }), RangeError, /SGD: momentum must be a finite number >= 0, got -1/],
      [() => new optim.SGD(mlp, { weightDecay: -5 }), RangeError, /SGD: weightDecay must be a finite number >= 0, got -5/],
      [() => new optim.SGD(mlp, { lr: NaN }), RangeError, /SGD: lr must be a finite number >= 0, got NaN/],
      [() => new optim.SGD(mlp, { lr: -0.1 }), RangeError, /SGD: lr must be a finite number >= 0, got -0.1/],
      [() => new optim.SGD(mlp, { lr: '0.1' }), TypeError, /SGD: lr must be a finite number >= 0, got "0.1"/],
      [() => new optim.SGD(mlp, { lr: 1e39 }), RangeError, /SGD: lr must be a finite number >= 0 in float32/],
      [() => new optim.SGD(mlp, { dampening: Infinity }), RangeError, /SGD: dampening must be a finite number, got Infinity/],
      [() => new optim.SGD(mlp, { nesterov: 1 }), TypeError, /SGD: nesterov must be a boolean/],
      [() => new optim.SGD(mlp, { nesterov: true }), RangeError, /SGD: nesterov needs a momentum > 0 and a dampening of 0/],
      [() => new optim.SGD(mlp, 0.1), TypeError, /SGD: options must be an object such as \{ lr: \.\.\. \}, got 0.1/],
      [() => new optim.SGD([ls.ones(1), 'w']), TypeError, /SGD: params must be a Module or an array of parameter Tensors/],
      [() => new optim.Adam(mlp, { betas: [0.9] }), TypeError, /Adam: betas must be an array of two numbers \[beta1, beta2\], got \[0.9\]/],
      [() => new optim.Adam(mlp, { betas: [0.9, 1] }), RangeError, /Adam: betas must be in \[0, 1\)/],
      [() => new optim.Adam(mlp, { betas: [0.9, 1 - 1e-10] }), RangeError, /Adam: betas must be in \[0, 1\) \(in float32 too\)/],
      [() => new optim.Adam(mlp, { eps: -1 }), RangeError, /Adam: eps must be a finite number >= 0, got -1/],
      [() => new optim.AdamW(mlp, { amsgrad: true }), TypeError, /unknown option 'amsgrad' for AdamW; accepted: lr, betas, eps, weightDecay/],
      [() => new optim.AdamW(mlp, { weightDecay: -0.01 }), RangeError, /AdamW: weightDecay must be a finite number >= 0/],
      // Data sets and evaluation.
      [() => ls.Dataset.fromIdx(idx, idx, { normalise: true }), TypeError, /unknown option 'normalise' for Dataset.fromIdx; accepted: normalize/],
      [() => ls.Dataset.fromIdx(idx, idx, { normalize: 1 }), TypeError, /Dataset.fromIdx: normalize must be a boolean/],
      [() => ls.Dataset.fromIdx([0, 0, 8, 3], idx), TypeError, /Dataset.fromIdx: images must be a Uint8Array/],
      [() => ls.Dataset.fromIdx(idx, 'labels'), TypeError, /Dataset.fromIdx: labels must be a Uint8Array/],
      [() => ls.Dataset.fromTensors(logits, [1, 2]), TypeError, /Dataset.fromTensors: labels must be a Tensor/],
      [() => data.slice(0.5, 1), RangeError, /Dataset.slice: start must be an integer >= 0, got 0.5/],
      [() => data.slice(0, 0), RangeError, /Dataset.slice: count must be an integer >= 1, got 0/],
      [() => data.slice('0', 1), TypeError, /Dataset.slice: start must be an integer/],
      [() => ls.evaluate(mlp, data, { batchSize: 0 }), RangeError, /evaluate: batchSize must be an integer >= 1, got 0/],
      [() => ls.evaluate(mlp, data, { limit: 1.5 }), RangeError, /evaluate: limit must be an integer >= 1, got 1.5/],
      [() => ls.evaluate(mlp, data, { batch_size: 10 }), TypeError, /unknown option 'batch_size' for evaluate; accepted: batchSize, limit/],
      [() => ls.evaluate(mlp, 'data'), TypeError, /evaluate: dataset must be a Dataset, got "data"/],
      [() => ls.evaluate('model', data), TypeError, /evaluate: model must be a Module/],
      // The GPT example.
      [() => new ls.gpt.CharCorpus(5), TypeError, /CharCorpus: text must be a string, got 5/],
      [() => new ls.gpt.CharCorpus(TEXT, { trainFraction: 1 }), RangeError, /CharCorpus: trainFraction must be a finite number in \(0, 1\), got 1/],
      [() => new ls.gpt.CharCorpus(TEXT, { split: 0.9 }), TypeError, /unknown option 'split' for CharCorpus; accepted: trainFraction/],
      [() => corpus.decode([1.5]), RangeError, /CharCorpus.decode: element 0 is not an integer: 1.5/],
      [() => corpus.decode('ab'), TypeError, /CharCorpus.decode: ids must be an array or typed array of token ids/],
      [() => corpus.encode(5), TypeError, /CharCorpus.encode: text must be a string/],
      [() => ls.gpt.model(corpus, { preset: 'huge' }), RangeError, /gpt.model: unknown preset 'huge'; preset must be 'small' or 'tiny'/],
      [() => ls.gpt.model(corpus, { preset: 3 }), TypeError, /gpt.model: preset must be 'small' or 'tiny', got 3/],
      [() => ls.gpt.model(corpus, { steps: 5 }), TypeError, /unknown option 'steps' for gpt.model; accepted: preset, seed, dropout/],
      [() => ls.gpt.model(corpus, { dropout: 1 }), RangeError, /gpt.model: dropout must be a finite number in \[0, 1\), got 1/],
      [() => ls.gpt.model(TEXT), TypeError, /gpt.model: corpus must be a CharCorpus/],
      [() => ls.gpt.sample(gptModel, corpus, '\n', { temperature: 0 }), RangeError, /gpt.sample: temperature must be a finite number > 0, got 0/],
      [() => ls.gpt.sample(gptModel, corpus, '\n', { temperature: -1 }), RangeError, /gpt.sample: temperature must be a finite number > 0/],
      [() => ls.gpt.sample(gptModel, corpus, '\n', { temperature: 1e-50 }), RangeError, /temperature must be a finite number > 0 in float32 .*rounds to 0/],
      [() => ls.gpt.sample(gptModel, corpus, '\n', { temperature: '1' }), TypeError, /gpt.sample: temperature must be a finite number > 0, got "1"/],
      [() => ls.gpt.sample(gptModel, corpus, '\n', { topK: 1.5 }), RangeError, /gpt.sample: topK must be an integer >= 0, got 1.5/],
      [() => ls.gpt.sample(gptModel, corpus, '\n', { max_new_tokens: 5 }), TypeError, /unknown option 'max_new_tokens' for gpt.sample; accepted: maxNewTokens, temperature, topK, seed \(did you mean 'maxNewTokens'\?\)/],
      [() => ls.gpt.sample(gptModel, corpus, ''), RangeError, /gpt.sample: prompt must be a non-empty string/],
      [() => ls.gpt.sample(gptModel, corpus, 5), TypeError, /gpt.sample: prompt must be a string, got 5/],
      [() => ls.gpt.sample(gptModel, 'corpus'), TypeError, /gpt.sample: corpus must be a CharCorpus/],
    ];
    for (const [fn, Type, pattern] of cases) throwsLike(fn, Type, pattern);
    // The checked forms work.
    ls.scope(() => {
      assert.equal(new nn.GELU({ approximate: 'tanh' }).name, new nn.GELU().name);
      assert.equal(new nn.MaxPool2d(2, { stride: 2, padding: 0 }).forward(ls.ones(1, 1, 4, 4)).shape.join(), '1,1,2,2');
      new optim.SGD(mlp, { lr: 0.1, momentum: 0.9, nesterov: true, weightDecay: 1e-4 }).dispose();
      new optim.AdamW(mlp.parameters(), { lr: 1e-3, betas: [0.9, 0.95], eps: 1e-8 }).dispose();
      assert.equal(ls.gpt.sample(gptModel, corpus, 'the', { maxNewTokens: 5, temperature: 1, topK: 0 }).length, 5);
    });
    [mlp, logits, data, gptModel, corpus].forEach((o) => o.dispose());
    assertStillWorks(ls, earlier, earlierHash);
  });

  test(`${build}: load, fit, mnistReferenceRun and gpt.train reject bad options`, async () => {
    const { ls, earlier, earlierHash } = await setup(build);
    await rejectsLike(loadLockstep({ build: 5 }), TypeError, /load: build must be 'auto', 'threads', 'simd' or 'scalar', got 5/);
    await rejectsLike(loadLockstep({ builds: 'simd' }), TypeError, /unknown option 'builds' for load; accepted: build, threads, baseUrl, workerPorts/);
    await rejectsLike(loadLockstep({ workerPorts: [] }), TypeError, /load: workerPorts must be a function, got/);
    await rejectsLike(loadLockstep('simd'), TypeError, /load: options must be an object/);
    await rejectsLike(loadLockstep({ baseUrl: 5 }), TypeError, /load: baseUrl must be a string or a URL, got 5/);
    const model = ls.models.mlp({ seed: 1 });
    const optimizer = new ls.optim.SGD(model);
    const data = randomData(ls, 20);
    const hash = model.hash();
    const fitCases = [
      [{ epochs: -1 }, RangeError, /^lockstep: fit: epochs must be an integer >= 1, got -1$/],
      [{ epochs: NaN }, RangeError, /fit: epochs must be an integer >= 1, got NaN/],
      [{ epochs: 0 }, RangeError, /fit: epochs must be an integer >= 1, got 0/],
      [{ epochs: '2' }, TypeError, /fit: epochs must be an integer >= 1, got "2"/],
      [{ maxSteps: 1.5 }, RangeError, /fit: maxSteps must be an integer >= 0, got 1.5/],
      [{ maxSteps: -1 }, RangeError, /fit: maxSteps must be an integer >= 0, got -1/],
      [{ batchSize: 0 }, RangeError, /fit: batchSize must be an integer >= 1, got 0/],
      [{ batchSize: 2.5 }, RangeError, /fit: batchSize must be an integer >= 1, got 2.5/],
      [{ seed: -1 }, RangeError, /fit: seed must be an integer in \[0, 2\^53\), got -1/],
      [{ yieldEvery: 0 }, RangeError, /fit: yieldEvery must be an integer >= 1, got 0/],
      [{ onProgress: 'log' }, TypeError, /fit: onProgress must be a function, got "log"/],
      [{ signal: { aborted: false } }, TypeError, /fit: signal must be an AbortSignal, got an object/],
      [{ checkpointEvery: 2 }, TypeError, /fit: checkpointEvery needs onCheckpoint\(bytes, step\)/],
      [{ onCheckpoint: () => {} }, TypeError, /fit: onCheckpoint needs checkpointEvery/],
      [{ checkpointEvery: 0, onCheckpoint: () => {} }, RangeError, /fit: checkpointEvery must be an integer >= 1, got 0/],
      [{ checkpointEvery: 2, onCheckpoint: 'save' }, TypeError, /fit: onCheckpoint must be a function/],
      [{ resume: [1, 2] }, TypeError, /fit: resume must be a Uint8Array, got \[1, 2\]/],
      [{ allowNonFinite: 'yes' }, TypeError, /fit: allowNonFinite must be a boolean/],
      [{ epoch: 2 }, TypeError, /unknown option 'epoch' for fit; accepted: epochs, batchSize, seed, maxSteps, onProgress, signal, yieldEvery, checkpointEvery, onCheckpoint, resume, allowNonFinite/],
      [{ batch_size: 10 }, TypeError, /unknown option 'batch_size' for fit; .*\(did you mean 'batchSize'\?\)/],
    ];
    for (const [options, Type, pattern] of fitCases) {
      await rejectsLike(ls.fit(model, optimizer, data, { batchSize: 10, ...options }), Type, pattern);
    }
    await rejectsLike(ls.fit('model', optimizer, data), TypeError, /fit: model must be a Module, got "model"/);
    await rejectsLike(ls.fit(model, model, data), TypeError, /fit: optimizer must be an Optimizer, got a Module/);
    await rejectsLike(ls.fit(model, optimizer, [data]), TypeError, /fit: dataset must be a Dataset/);
    assert.equal(model.hash(), hash, 'no bad fit() trained a step');
    assert.equal(optimizer.stepCount, 0);
    // The checked options still work (maxSteps 0 runs no step).
    assert.deepEqual(await ls.fit(model, optimizer, data, { batchSize: 10, maxSteps: 0 }),
                     { steps: 0, resumedFrom: 0, losses: [], finalLoss: NaN });

    const test = randomData(ls, 10, { seed: 2 });
    const mnistCases = [
      [{ train: data, test, epochs: 0 }, RangeError, /mnistReferenceRun: epochs must be an integer >= 1, got 0/],
      [{ train: data, test, lr: -1 }, RangeError, /mnistReferenceRun: lr must be a finite number >= 0, got -1/],
      [{ train: data, test, maxTest: 0 }, RangeError, /mnistReferenceRun: maxTest must be an integer >= 1, got 0/],
      [{ train: data, test, maxSteps: 'all' }, TypeError, /mnistReferenceRun: maxSteps must be an integer >= 0/],
      [{ train: data, test, learningRate: 1 }, TypeError, /unknown option 'learningRate' for mnistReferenceRun/],
      [{ train: 'train.idx', test }, TypeError, /mnistReferenceRun needs \{ train, test \} Datasets/],
    ];
    for (const [options, Type, pattern] of mnistCases) await rejectsLike(ls.mnistReferenceRun(options), Type, pattern);
    await rejectsLike(ls.mnistReferenceRun(), TypeError, /mnistReferenceRun needs \{ train, test \} Datasets/);

    const corpus = new ls.gpt.CharCorpus(TEXT);
    const gptCases = [
      [{ preset: 'huge' }, RangeError, /gpt.train: unknown preset 'huge'/],
      [{ steps: -1 }, RangeError, /gpt.train: steps must be an integer >= 0, got -1/],
      [{ steps: 2.5 }, RangeError, /gpt.train: steps must be an integer >= 0, got 2.5/],
      [{ batchSize: 0 }, RangeError, /gpt.train: batchSize must be an integer >= 1, got 0/],
      [{ gradAccum: '2' }, TypeError, /gpt.train: gradAccum must be an integer >= 1, got "2"/],
      [{ evalIters: 1.5 }, RangeError, /gpt.train: evalIters must be an integer >= 0/],
      [{ lr: NaN }, RangeError, /gpt.train: lr must be a finite number >= 0, got NaN/],
      [{ minLr: -1 }, RangeError, /gpt.train: minLr must be a finite number >= 0/],
      [{ dropout: 1 }, RangeError, /gpt.train: dropout must be a finite number in \[0, 1\)/],
      [{ seed: 2 ** 53 }, RangeError, /gpt.train: seed must be an integer in \[0, 2\^53\)/],
      [{ allowNonFinite: 1 }, TypeError, /gpt.train: allowNonFinite must be a boolean/],
      [{ yieldEvery: 0 }, RangeError, /gpt.train: yieldEvery must be an integer >= 1, got 0/],
      [{ onProgress: {} }, TypeError, /gpt.train: onProgress must be a function/],
      [{ signal: 'stop' }, TypeError, /gpt.train: signal must be an AbortSignal/],
      [{ eval_interval: 10 }, TypeError, /unknown option 'eval_interval' for gpt.train; .*\(did you mean 'evalInterval'\?\)/],
    ];
    for (const [options, Type, pattern] of gptCases) await rejectsLike(ls.gpt.train(corpus, options), Type, pattern);
    await rejectsLike(ls.gpt.train(TEXT), TypeError, /gpt.train: corpus must be a CharCorpus/);
    [model, optimizer, data, test, corpus].forEach((o) => o.dispose());
    assertStillWorks(ls, earlier, earlierHash);
  });

  test(`${build}: engine errors carry their kind: sizes, pow, backward, max, view`, async () => {
    const { ls, earlier, earlierHash } = await setup(build);
    // Sizes checked in 64-bit arithmetic: refused before anything is allocated.
    const heap = ls.heapInUse();
    throwsLike(() => ls.zeros([2 ** 29, 2]), Error, /shape \[536870912, 2\] .* is larger than this platform can address/, 'resource');
    throwsLike(() => ls.full([1e5, 1e5], 3), Error, /shape \[100000, 100000\] .* is larger than this platform can address/, 'resource');
    throwsLike(() => ls.ones(2 ** 16, 2 ** 16, 2 ** 16), Error, /larger than this platform can address/, 'resource');
    assert.ok(ls.heapInUse() - heap < 4 * 1024 * 1024, `the heap grew by ${ls.heapInUse() - heap} bytes`);

    ls.scope(() => {
      // pow: correctly rounded square roots, integer powers, and a clear refusal of the others.
      const values = [0, 0.25, 2, 3, 10, 1e-3, 12345.678];
      const roots = ls.tensor(values).pow(0.5).toArray();
      values.forEach((v, i) => assert.equal(roots[i], Math.fround(Math.sqrt(Math.fround(v))), `sqrt(${v})`));
      assert.deepEqual([...ls.tensor([3, 4]).pow(2).toArray()], [9, 16]);
      assert.deepEqual([...ls.tensor([4, 2]).pow(-1).toArray()], [0.25, 0.5]);
      assert.deepEqual([...ls.tensor([2]).pow(-4).toArray()], [0.0625]);
      throwsLike(() => ls.ones(2).pow(2.9), Error, /pow: exponent 2.9 is not supported/, 'argument');
      throwsLike(() => ls.ones(2).pow(5), Error, /pow: exponent 5 is not supported/, 'argument');

      // A second backward through a freed graph; retainGraph keeps it for one more.
      const x = ls.tensor([1, -2, 3]).requiresGrad_();
      const y = x.mul(x).sum();
      y.backward();
      throwsLike(() => y.backward(), Error, /backward through the graph a second time/, 'state');
      x.zeroGrad();
      const z = x.mul(x).sum();
      z.backward({ retainGraph: true });
      z.backward();
      assert.deepEqual([...x.grad.toArray()], [4, -8, 12]);
      throwsLike(() => z.backward(), Error, /a second time/, 'state');

      // max over an empty dimension; view where the strides do not allow one.
      throwsLike(() => ls.zeros(0, 3).max(0), Error, /max: dimension 0 of \[0, 3\] is empty/, 'argument');
      assert.deepEqual(ls.zeros(0, 3).max(1).shape, [0]);
      const m = ls.tensor([[1, 2, 3], [4, 5, 6]]);
      throwsLike(() => m.transpose(0, 1).view(6), Error, /view: shape \[6\] is not compatible .* use reshape\(\)/, 'argument');
      assert.deepEqual([...m.transpose(0, 1).reshape(6).toArray()], [1, 4, 2, 5, 3, 6]);
      // view shares memory: a write through the original shows in the view.
      const v = m.view(3, 2);
      m.copy_(ls.tensor([[6, 5, 4], [3, 2, 1]]));
      assert.deepEqual([...v.toArray()], [6, 5, 4, 3, 2, 1]);
      assert.deepEqual(m.view(-1).shape, [6]);
    });
    assertStillWorks(ls, earlier, earlierHash);
  });

  test(`${build}: default Dropout layers draw from streams of their own, reproducibly`, async () => {
    const { ls, earlier, earlierHash } = await setup(build);
    const masks = (seed) => ls.scope(() => {
      ls.manualSeed(seed);
      const input = ls.ones(256);
      const a = new ls.nn.Dropout(0.5);
      const b = new ls.nn.Dropout(0.5);
      return [a.forward(input).toArray(), b.forward(input).toArray(), a.forward(input).toArray()];
    });
    const [a, b, a2] = masks(11);
    assert.ok(a.some((v) => v === 0) && a.some((v) => v === 2), 'a mask drops some and scales the rest');
    assert.notDeepEqual(a, b, 'two default Dropouts draw different masks');
    assert.notDeepEqual(a, a2, 'a Dropout draws a new mask every call');
    assert.deepEqual(masks(11), [a, b, a2], 'the same program after manualSeed draws the same masks');
    assert.notDeepEqual(masks(12)[0], a, 'another seed draws other masks');
    // The k-th default Dropout since manualSeed(s) draws from the stream "dropout/k" of s.
    ls.scope(() => {
      ls.manualSeed(11);
      new ls.nn.Dropout(0.5);
      const second = new ls.nn.Dropout(0.5);
      const explicit = new ls.nn.Dropout(0.5, { generator: new ls.Generator(11, 'dropout/1') });
      assert.deepEqual(second.forward(ls.ones(256)).toArray(), b);
      assert.deepEqual(explicit.forward(ls.ones(256)).toArray(), b);
      // Evaluation mode is the identity.
      assert.deepEqual([...second.eval().forward(ls.ones(3)).toArray()], [1, 1, 1]);
    });
    // The default generators outlive a scope that first used them.
    ls.manualSeed(5);
    const first = ls.scope(() => new ls.nn.Linear(2, 2).hash());
    const next = new ls.nn.Linear(2, 2);
    assert.notEqual(next.hash(), first, 'the "init" stream went on');
    ls.manualSeed(5);
    assert.equal(new ls.nn.Linear(2, 2).hash(), first);
    next.dispose();
    assertStillWorks(ls, earlier, earlierHash);
  });

  test(`${build}: fit refuses another model's optimizer and stops at a NaN loss; evaluate refuses bad labels`, async () => {
    const { ls, earlier, earlierHash } = await setup(build);
    const data = randomData(ls, 20);
    const model = ls.models.mlp({ seed: 1 });
    const other = ls.models.mlp({ seed: 2 });
    const foreign = new ls.optim.Adam(other);
    await rejectsLike(ls.fit(model, foreign, data, { batchSize: 10 }), Error,
                      /the optimizer does not update the model's parameter/, 'state');
    assert.equal(foreign.stepCount, 0);

    // NaN in the data: the first step's loss is NaN and fit stops there, the model unchanged.
    const nanData = ls.scope(() => ls.Dataset.fromTensors(ls.full([20, 784], NaN),
                                                          ls.tensor(Array(20).fill(1), undefined, { dtype: 'int64' })));
    const optimizer = new ls.optim.SGD(model, { lr: 0.1 });
    const before = model.hash();
    await rejectsLike(ls.fit(model, optimizer, nanData, { batchSize: 10 }), Error,
                      /training stopped at step 1 \(epoch 0, batch 0\): the loss is nan/, 'state');
    assert.equal(model.hash(), before, 'the failed step changed nothing');
    assert.equal(optimizer.stepCount, 0);
    const r = await ls.fit(model, optimizer, nanData, { batchSize: 10, epochs: 2, allowNonFinite: true });
    assert.equal(r.steps, 4);
    assert.ok(r.losses.every(Number.isNaN), 'allowNonFinite trains on through NaN losses');

    // evaluate: labels the model cannot predict, and nothing to evaluate.
    const badLabels = randomData(ls, 4, { labels: [1, 2, 200, 3] });
    throwsLike(() => ls.evaluate(other, badLabels), Error,
               /evaluate: the label of example 2 is 200, outside the model's 10 classes \[0, 10\)/, 'argument');
    const empty = ls.scope(() => ls.Dataset.fromTensors(ls.zeros(0, 784), ls.tensor([], [0], { dtype: 'int64' })));
    assert.equal(empty.size, 0);
    throwsLike(() => ls.evaluate(other, empty), Error, /evaluate: the data set is empty/, 'argument');
    const e = ls.evaluate(other, data, { batchSize: 7, limit: 15 });
    assert.equal(e.examples, 15);
    [data, model, other, foreign, nanData, optimizer, badLabels, empty].forEach((o) => o.dispose());
    assertStillWorks(ls, earlier, earlierHash);
  });

  test(`${build}: fit checkpoints and resumes to the bits of an uninterrupted run; another run's state is refused`, async () => {
    const { ls, earlier, earlierHash } = await setup(build);
    const data = randomData(ls, 40, { seed: 9 });
    // A model with dropout, so the resumed run must also restore the dropout stream's offset.
    const make = () => {
      ls.manualSeed(21);
      const model = new ls.nn.Sequential(new ls.nn.Flatten(), new ls.nn.Linear(784, 32), new ls.nn.ReLU(),
                                         new ls.nn.Dropout(0.2), new ls.nn.Linear(32, 10));
      return { model, optimizer: new ls.optim.Adam(model, { lr: 1e-2 }) };
    };
    const options = { epochs: 5, batchSize: 10, seed: 3 };  // 4 steps per epoch, 20 steps
    const full = make();
    const states = new Map();
    const progress = [];
    const r = await ls.fit(full.model, full.optimizer, data, {
      ...options, checkpointEvery: 3, onCheckpoint: (bytes, step) => { states.set(step, bytes); },
      onProgress: (p) => progress.push(p.step),
    });
    assert.deepEqual([...states.keys()], [3, 6, 9, 12, 15, 18]);
    assert.ok(states.get(6) instanceof Uint8Array);
    assert.equal(r.steps, 20);
    assert.equal(r.resumedFrom, 0);
    assert.equal(r.losses.length, 20);
    assert.deepEqual(progress, Array.from({ length: 20 }, (_, i) => i + 1));
    const fullHash = full.model.hash();

    // A fresh identical model and optimizer resumed from step 6 end on the same bits.
    const resumed = make();
    const progress2 = [];
    const states2 = [];
    const r2 = await ls.fit(resumed.model, resumed.optimizer, data, {
      ...options, resume: states.get(6), onProgress: (p) => progress2.push([p.step, p.epoch, p.totalSteps]),
      checkpointEvery: 5, onCheckpoint: async (bytes, step) => { await Promise.resolve(); states2.push(step); },
    });
    assert.equal(resumed.model.hash(), fullHash, 'a resumed fit ends on the uninterrupted run\'s model');
    assert.equal(r2.steps, 20);
    assert.equal(r2.resumedFrom, 6);
    assert.deepEqual(r2.losses, r.losses.slice(6), 'the losses of the steps this call ran');
    assert.equal(r2.finalLoss, r.finalLoss);
    assert.deepEqual(progress2.map(([s]) => s), Array.from({ length: 14 }, (_, i) => i + 7));
    assert.deepEqual(progress2[0], [7, 1, 20]);
    assert.deepEqual(states2, [10, 15, 20]);

    // A state at the run's end resumes to no step at all.
    const done = make();
    const r3 = await ls.fit(done.model, done.optimizer, data, { ...options, resume: states.get(18), maxSteps: 18 });
    assert.deepEqual([r3.steps, r3.resumedFrom, r3.losses.length], [18, 18, 0]);
    await rejectsLike(ls.fit(done.model, done.optimizer, data, { ...options, resume: states.get(18), maxSteps: 12 }),
                      Error, /the training state to resume is at step 18, past the 12 steps of this fit/, 'state');

    // Another run's state: other seed, batch size, optimizer (learning rate) or model.
    const fresh = make();
    const freshHash = fresh.model.hash();
    await rejectsLike(ls.fit(fresh.model, fresh.optimizer, data, { ...options, seed: 4, resume: states.get(6) }),
                      Error, /fit resume: the training state belongs to another run: its seed is 3, this run's is 4/, 'state');
    await rejectsLike(ls.fit(fresh.model, fresh.optimizer, data, { ...options, batchSize: 20, resume: states.get(6) }),
                      Error, /belongs to another run: its batch_size is 10, this run's is 20/, 'state');
    const otherData = randomData(ls, 40, { seed: 10 });
    await rejectsLike(ls.fit(fresh.model, fresh.optimizer, otherData, { ...options, resume: states.get(6) }),
                      Error, /belongs to another run: its data is [0-9a-f]{64}, this run's is [0-9a-f]{64}/, 'state');
    const otherLr = new ls.optim.Adam(fresh.model, { lr: 1e-3 });
    await rejectsLike(ls.fit(fresh.model, otherLr, data, { ...options, resume: states.get(6) }), Error,
                      /belongs to another run: its optimizer is adam .* lr=0x3c23d70a .*, this run's is adam .* lr=0x3a83126f/, 'state');
    const mlp = ls.models.mlp({ seed: 1 });
    const mlpOptimizer = new ls.optim.Adam(mlp, { lr: 1e-2 });
    await rejectsLike(ls.fit(mlp, mlpOptimizer, data, { ...options, resume: states.get(6) }), Error,
                      /belongs to another run: its model is/, 'state');
    await rejectsLike(ls.fit(fresh.model, fresh.optimizer, data, { ...options, resume: new Uint8Array(16) }), Error,
                      /fit resume: invalid safetensors header/, 'format');
    await rejectsLike(ls.fit(fresh.model, fresh.optimizer, data, { ...options, resume: fresh.model.save() }), Error,
                      /fit resume: not a lockstep training state/, 'format');
    assert.equal(fresh.model.hash(), freshHash, 'a refused resume changed nothing');
    assert.equal(fresh.optimizer.stepCount, 0);

    [full, resumed, done, fresh].forEach(({ model, optimizer }) => { model.dispose(); optimizer.dispose(); });
    [data, otherData, otherLr, mlp, mlpOptimizer].forEach((o) => o.dispose());
    assertStillWorks(ls, earlier, earlierHash);
  });

  test(`${build}: sampling refuses non-finite logits`, async () => {
    const { ls, earlier, earlierHash } = await setup(build);
    const corpus = new ls.gpt.CharCorpus(TEXT);
    const model = ls.gpt.model(corpus, { preset: 'tiny', seed: 3 });
    throwsLike(() => ls.gpt.sample(model, corpus, 'the', { temperature: 1e-42, maxNewTokens: 3 }), Error,
               /sample: the logits for token 1 are not finite/, 'state');
    assert.equal(ls.gpt.sample(model, corpus, 'the', { temperature: 0.8, maxNewTokens: 3 }).length, 3);
    throwsLike(() => ls.gpt.sample(model, corpus, '\u00e9'), Error, /not in the vocabulary/, 'argument');
    model.dispose();
    corpus.dispose();
    assertStillWorks(ls, earlier, earlierHash);
  });
}
