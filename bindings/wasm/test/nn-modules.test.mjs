// The modules of issue 31 in the package (ReLU6, Hardtanh, SiLU, Hardsigmoid, Hardswish,
// MaxPool2d with ceilMode, AdaptiveAvgPool2d, ChannelShuffle, StochasticDepth, the mean over
// several dimensions, cat): on a fixed input, the outputs and input gradients of every one give the
// SHA-256 that the native library gives (tests/python/test_nn_modules_more.py pins the same value),
// on every build; and each module's arguments are checked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builds, loadLockstep } from './helpers.mjs';

// tests/python/test_nn_modules_more.py: DIGEST and the per-case digests it prints.
const DIGEST = '37fe38f6218eb2823c808535b00df5b156935c786c8ec9f60ac09c97e036a858';
const CASES = {
  relu6: 'bdfe17a8443f1c11083f26312a0ed207d627bc249d614b21edc1f99bba314281',
  hardtanh: 'e72afd3725bf2fc83bb7e030e88180e5aeee8157e259cef62b130dafd9c89cc2',
  silu: 'e091a727052b60648598b5e2322a664a1e44a3ca59437ff05003ce85b63f69de',
  hardsigmoid: 'c0a7f596a73eb757c776e615b5ce7cc733c5ae71a59574f50b72e0dbfefeda63',
  hardswish: '4134f0ef21a9a6c29c68c1bd6625577d4d3a38af27a10290e612cd247d90eda0',
  maxpool_ceil: 'a5f7c1769f241ff313716404def0cef15fd2331cd97aec46d71706c577a966be',
  maxpool_ceil_pad: 'bc2fe7492a4b2766cbb2d63d7761b396b62af183afeb592a8256daa0ece4aee4',
  adaptive_1: 'dda79ffd7b2207a926ecf851551211672af94a72671dd82478a8d00be33e53b0',
  adaptive_3x4: 'ba7e7687c3750971911d306aa1a086784fbd66e5c75055649459b707a7c80c2c',
  adaptive_7x3: '89b9c0e0e3a29163a0234d6942ada9a0c392663b6beca61c190d34e328756da8',
  channel_shuffle: 'b96c4522df5bfaabd07711dd4e541e6d27cd04db1d35f4793b1430a851234e0d',
  stochastic_row: '14a54805bb27a7319c2635a0023ae9ba59c5bfae5e897ef9fb07b1520a077597',
  stochastic_batch: '4d8fe1670c968b1d29eb48137ce1db1ab6f270bcb568c9a1bf594897fe1f7fc0',
  mean_1_3: '2ad25d38cc8291b0c1c53d8bb727769b7052f271fd5c6dab9db2ff2b6efb12a3',
  cat: '87fb0827380fd5e7d0e8d0643aa7f3a2251280a9d008329acfb33a1a00726316',
};

const count = (shape) => shape.reduce((a, b) => a * b, 1);
// x[i] = ((37 i) mod 113 - 56) / 8 and w[i] = ((11 i) mod 7 - 3) / 4, as the Python test's.
const fixedInput = (shape) => Float32Array.from({ length: count(shape) }, (_, i) => (((i * 37) % 113) - 56) / 8);
const fixedWeight = (shape) => Float32Array.from({ length: count(shape) }, (_, i) => (((i * 11) % 7) - 3) / 4);
const bytesOf = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

function cases(ls) {
  const { nn } = ls;
  const F = nn.functional;
  const g = () => new ls.Generator(7, 'dropout/0');
  const m = (module) => (x) => module.forward(x);
  return [
    ['relu6', m(new nn.ReLU6())], ['hardtanh', m(new nn.Hardtanh(-2, 2.5))], ['silu', m(new nn.SiLU())],
    ['hardsigmoid', m(new nn.Hardsigmoid())], ['hardswish', m(new nn.Hardswish())],
    ['maxpool_ceil', m(new nn.MaxPool2d(3, { stride: 2, ceilMode: true }))],
    ['maxpool_ceil_pad', m(new nn.MaxPool2d(3, { stride: 2, padding: 1, ceilMode: true }))],
    ['adaptive_1', m(new nn.AdaptiveAvgPool2d(1))], ['adaptive_3x4', m(new nn.AdaptiveAvgPool2d([3, 4]))],
    ['adaptive_7x3', m(new nn.AdaptiveAvgPool2d([7, 3]))], ['channel_shuffle', m(new nn.ChannelShuffle(2))],
    ['stochastic_row', m(new nn.StochasticDepth(0.5, 'row', { generator: g() }))],
    ['stochastic_batch', m(new nn.StochasticDepth(0.5, 'batch', { generator: g() }))],
    ['mean_1_3', (x) => F.mean(x, [1, 3], true)], ['cat', (x) => F.cat([x, x.mul(2)], 1)],
  ];
}

for (const build of builds) {
  test(`${build}: the new modules give the native library's bits (outputs and gradients)`, async () => {
    const ls = await loadLockstep({ build });
    ls.scope(() => {
      const parts = [];
      const got = {};
      for (const [name, fn] of cases(ls)) {
        const x = ls.tensor(fixedInput([2, 4, 7, 6]), [2, 4, 7, 6]).requiresGrad_();
        const y = fn(x);
        y.mul(ls.tensor(fixedWeight(y.shape), y.shape)).sum().backward();
        const part = new Uint8Array([...bytesOf(y.detach().toArray()), ...bytesOf(x.grad.toArray())]);
        got[name] = ls.sha256(part);
        parts.push(part);
      }
      assert.deepEqual(got, CASES);
      const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
      parts.reduce((at, p) => { all.set(p, at); return at + p.length; }, 0);
      assert.equal(ls.sha256(all), DIGEST);
    });
  });
}

test('the new modules: PyTorch semantics in small cases, and their arguments checked', async () => {
  const ls = await loadLockstep({ build: 'simd' });
  const { nn } = ls;
  const F = nn.functional;
  ls.scope(() => {
    const x = ls.tensor([-4, -3, 0, 1.5, 3, 4, 6, 7], [8]);
    assert.deepEqual([...new nn.ReLU6().forward(x).toArray()], [0, 0, 0, 1.5, 3, 4, 6, 6]);
    assert.deepEqual([...F.relu6(x).toArray()], [0, 0, 0, 1.5, 3, 4, 6, 6]);
    assert.deepEqual([...new nn.Hardtanh().forward(x).toArray()], [-1, -1, 0, 1, 1, 1, 1, 1]);
    assert.deepEqual([...new nn.Hardsigmoid().forward(x).toArray()], [0, 0, 0.5, 0.75, 1, 1, 1, 1]);
    assert.deepEqual([...new nn.Hardswish().forward(x).toArray()], [-0, -0, 0, 1.125, 3, 4, 6, 7]);  // -4 * 0 / 6, as torch's
    // The gradient at the bounds is PyTorch's: relu6 0 at 0 and 6.
    const r = ls.tensor([0, 3, 6], [3]).requiresGrad_();
    F.relu6(r).sum().backward();
    assert.deepEqual([...r.grad.toArray()], [0, 1, 0]);

    const img = ls.tensor(fixedInput([1, 2, 5, 5]), [1, 2, 5, 5]);
    assert.deepEqual(new nn.MaxPool2d(2, { ceilMode: true }).forward(img).shape, [1, 2, 3, 3]);
    assert.deepEqual(new nn.MaxPool2d(2).forward(img).shape, [1, 2, 2, 2]);
    assert.deepEqual(F.maxPool2d(img, 2, { ceilMode: true }).shape, [1, 2, 3, 3]);
    assert.deepEqual(new nn.AdaptiveAvgPool2d([null, 2]).forward(img).shape, [1, 2, 5, 2]);
    assert.deepEqual(F.adaptiveAvgPool2d(img, 1).toArray(), F.mean(img, [2, 3], true).toArray());
    const c = ls.tensor([0, 1, 2, 3, 4, 5], [1, 6, 1, 1]);
    assert.deepEqual([...new nn.ChannelShuffle(3).forward(c).toArray()], [0, 2, 4, 1, 3, 5]);
    assert.deepEqual([...F.channelShuffle(c, 2).toArray()], [0, 3, 1, 4, 2, 5]);
    assert.deepEqual(F.cat([c, c], 1).shape, [1, 12, 1, 1]);

    // StochasticDepth: identity in eval mode; from the default streams 'dropout/k' as a Dropout.
    ls.manualSeed(3);
    const sd = new nn.StochasticDepth(0.5, 'row');
    const ones = ls.ones([16, 3]);
    const y = sd.forward(ones).toArray();
    for (let i = 0; i < 16; i += 1) assert.ok(y[3 * i] === y[3 * i + 1] && (y[3 * i] === 0 || y[3 * i] === 2));
    const same = new nn.StochasticDepth(0.5, 'row', { generator: new ls.Generator(3, 'dropout/0') });
    assert.deepEqual(same.forward(ones).toArray(), y);
    sd.eval();
    assert.deepEqual(sd.forward(ones).toArray(), ones.toArray());

    // seedDropoutStreams: every Dropout and StochasticDepth draws "dropout/<module path>" (the
    // path rule of Python's from_torch_module) from offset 0.
    const tree = new nn.Sequential(new nn.Dropout(0.5), new nn.Sequential(new nn.StochasticDepth(0.5, 'row')));
    nn.seedDropoutStreams(tree, 11);
    const masked = tree.forward(ones).toArray();
    const expected = new nn.Sequential(new nn.Dropout(0.5, { generator: new ls.Generator(11, 'dropout/0') }),
      new nn.StochasticDepth(0.5, 'row', { generator: new ls.Generator(11, 'dropout/1.0') })).forward(ones).toArray();
    assert.deepEqual(masked, expected);
    assert.notDeepEqual(masked, y);
    nn.seedDropoutStreams(tree, 11);
    assert.deepEqual(tree.forward(ones).toArray(), masked);
    assert.throws(() => nn.seedDropoutStreams(ones, 1), /model/);
    assert.throws(() => nn.seedDropoutStreams(tree, -1), /seed/);

    assert.throws(() => new nn.StochasticDepth(0.5, 'rows'), /mode/);
    assert.throws(() => new nn.StochasticDepth(1.5, 'row'), /p must be/);
    assert.throws(() => new nn.ChannelShuffle(4).forward(c), /divide/);
    assert.throws(() => new nn.AdaptiveAvgPool2d(0), /outputSize/);
    assert.throws(() => new nn.Hardtanh(2, 1), /maxVal/);
    assert.throws(() => new nn.MaxPool2d(2, { ceil_mode: true }), /ceilMode/);
    assert.throws(() => F.mean(img, 2), /array/);
  });
});
