// Receipts in the npm package (docs/verifiable-training.md): mnistReferenceRun({ receipt }) writes,
// with every WebAssembly build, the same receipt and kept training states, byte for byte, as the
// native `lockstep train mnist --receipt` of the same run; ls.verifyRun checks the native receipt
// (the whole run, a range, a sample), finds a fault planted natively at step 37 and gives each
// step's verdict; a tampered chain, a state that is not the receipt's and other training data are
// refused with errors that say which. fit({ receipt }) of any model writes the same receipt from
// every build, verified on a model and optimizer made as the run's were.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { builds, dataDir, loadLockstep, mnistDatasets, root } from './helpers.mjs';

const cli = path.join(root, 'build/native/bindings/native/cli/lockstep');
const work = mkdtempSync(path.join(tmpdir(), 'lockstep-receipt-'));
const run = ['--steps', '40', '--test', '100', '--data', dataDir, '--receipt-every', '10'];

// The receipt in `folder` and the states beside it, as verifyRun takes them.
function readReceipt(folder) {
  const states = {};
  for (const name of readdirSync(folder)) {
    if (name.endsWith('.state')) states[name] = new Uint8Array(readFileSync(path.join(folder, name)));
  }
  return { text: readFileSync(path.join(folder, 'run.receipt'), 'utf8'), states };
}

function nativeRun(name, env = {}, extra = []) {
  const folder = path.join(work, name);
  mkdirSync(folder);
  execFileSync(cli, ['train', 'mnist', ...run, '--receipt', path.join(folder, 'run.receipt'), ...extra],
               { env: { ...process.env, ...env } });
  return readReceipt(folder);
}

let honest, faulty;
test('the native build writes the receipts (an honest run, and one with a fault at step 37)', () => {
  assert.ok(existsSync(cli), `the native CLI ${cli} is needed (build the native preset)`);
  honest = nativeRun('honest');
  faulty = nativeRun('faulty', { LOCKSTEP_TRACE_FAULT: '37:3:conv2d' }, ['--trace', path.join(work, 'faulty.trace')]);
  assert.deepEqual(Object.keys(honest.states).sort(), [0, 10, 20, 30, 40].map((k) => `run.receipt.${k}.state`).sort());
  assert.notEqual(faulty.text, honest.text);
});

for (const build of builds) {
  test(`${build}: mnistReferenceRun writes the native receipt and states, byte for byte`, async () => {
    const ls = await loadLockstep({ build });
    const { train, test: testSet } = mnistDatasets(ls);
    const result = await ls.mnistReferenceRun({ train, test: testSet, maxSteps: 40, maxTest: 100, receipt: { every: 10 } });
    assert.equal(result.receipt.text, honest.text);
    assert.deepEqual(Object.keys(result.receipt.states).sort(), Object.keys(honest.states).sort());
    for (const [name, bytes] of Object.entries(honest.states)) {
      assert.ok(Buffer.from(result.receipt.states[name]).equals(Buffer.from(bytes)), `${name} differs from the native one`);
    }
    // The native verify-run checks what the package wrote.
    const folder = path.join(work, `npm-${build}`);
    mkdirSync(folder);
    writeFileSync(path.join(folder, 'run.receipt'), result.receipt.text);
    for (const [name, bytes] of Object.entries(result.receipt.states)) writeFileSync(path.join(folder, name), bytes);
    const native = spawnSync(cli, ['verify-run', path.join(folder, 'run.receipt'), '--data', dataDir], { encoding: 'utf8' });
    assert.equal(native.status, 0, native.stdout + native.stderr);
    [result.model, train, testSet].forEach((o) => o.dispose());
  });
}

test('verifyRun checks the native receipt: whole, a range, a sample; the fault at step 37 is found', async () => {
  const ls = await loadLockstep({ build: 'simd' });
  const { train, test: testSet } = mnistDatasets(ls);
  const whole = ls.verifyRun(honest, { train });
  assert.equal(whole.verified, true, whole.report.join('\n'));
  assert.equal(whole.checkedSteps, 40);
  const sample = ls.verifyRun(honest.text, { states: honest.states, train, sample: 3, seed: 5 });
  assert.equal(sample.verified, true);
  assert.equal(sample.checkedSteps, 3);
  // The native draw of the same sample.
  const folder = path.join(work, 'honest');
  const nativeSample = execFileSync(cli, ['verify-run', path.join(folder, 'run.receipt'), '--data', dataDir,
                                          '--sample', '3', '--seed', '5'], { encoding: 'utf8' });
  const drawn = sample.report.find((line) => line.startsWith('sampled steps'));
  assert.ok(drawn && nativeSample.includes(drawn), `${drawn} is not the native draw:\n${nativeSample}`);

  const verdicts = [];
  const bad = ls.verifyRun(faulty, { train, steps: [31, 40], onStep: (step, ok) => verdicts.push([step, ok]) });
  assert.equal(bad.verified, false);
  assert.equal(bad.firstMismatch, 37);
  assert.match(bad.mismatch, /^step 37: the state after it differs/);
  assert.deepEqual(verdicts, [[31, true], [32, true], [33, true], [34, true], [35, true], [36, true], [37, false]]);

  // Refused, saying which: a tampered chain, a state that is not the receipt's, other training data.
  const lines = honest.text.split('\n');
  const at = lines.findIndex((line) => line.startsWith('{"step":5,'));
  lines[at] = lines[at].replace(/"state":"(.)/, (m, c) => `"state":"${c === '0' ? '1' : '0'}`);
  assert.throws(() => ls.verifyRun({ text: lines.join('\n'), states: honest.states }, { train }),
                (e) => e.kind === 'format' && /line \d+: the chain hash of step 5 does not follow/.test(e.message));
  const swapped = { ...honest.states, 'run.receipt.20.state': faulty.states['run.receipt.40.state'] };
  assert.throws(() => ls.verifyRun({ text: honest.text, states: swapped }, { train, steps: [25, 25] }),
                (e) => e.kind === 'state' && /run\.receipt\.20\.state does not match its receipt/.test(e.message));
  const other = train.slice(0, 5000);
  assert.throws(() => ls.verifyRun(honest, { train: other }),
                (e) => /is not the receipt's \(fingerprint/.test(e.message));
  assert.throws(() => ls.verifyRun(honest, { train, steps: [3, 2] }), /steps\[1\] must be/);
  assert.throws(() => ls.verifyRun(42, { train }), /expected the receipt's text or \{ text, states \}, got 42/);
  // A receipt covers a run from its first step.
  await assert.rejects(ls.mnistReferenceRun({ train, test: testSet, maxSteps: 40, maxTest: 100, receipt: true,
                                              resume: honest.states['run.receipt.20.state'] }),
                       (e) => e.kind === 'state' && /a receipt covers a run from its first step/.test(e.message));
  [train, testSet, other].forEach((o) => o.dispose());
});

// fit() of any model: the receipt is the same from every build, and verifyRun re-executes it on a
// model and optimizer made as the run's were, refusing others.
const fitRun = (ls) => {
  const model = ls.models.lenet5({ seed: 3 });
  return { model, optimizer: new ls.optim.SGD(model, { lr: 0.05, momentum: 0.9 }) };
};
const fitTexts = {};
for (const build of builds) {
  test(`${build}: fit({ receipt }) writes a receipt that verifyRun checks with a model made the same way`, async () => {
    const ls = await loadLockstep({ build });
    const { train: all, test: testSet } = mnistDatasets(ls);
    const train = all.slice(0, 800);
    const { model, optimizer } = fitRun(ls);
    const fitted = await ls.fit(model, optimizer, train, { batchSize: 100, seed: 4, receipt: { every: 3 } });
    assert.equal(fitted.steps, 8);
    assert.deepEqual(Object.keys(fitted.receipt.states).sort(),
                     [0, 3, 6, 8].map((k) => `run.receipt.${k}.state`).sort());
    assert.match(fitted.receipt.text, /"task":"fit"/);
    fitTexts[build] = fitted.receipt.text;
    assert.equal(fitted.receipt.text, fitTexts[builds[0]], `${build}'s receipt differs from ${builds[0]}'s`);
    if (build === 'simd') {
      const again = fitRun(ls);
      const whole = ls.verifyRun(fitted.receipt, { train, ...again });
      assert.equal(whole.verified, true, whole.report.join('\n'));
      assert.equal(whole.checkedSteps, 8);
      assert.equal(again.model.hash(), model.hash());
      const sample = ls.verifyRun(fitted.receipt, { train, ...fitRun(ls), sample: 2, seed: 9 });
      assert.equal(sample.verified, true);
      assert.equal(sample.checkedSteps, 2);
      const faster = ls.models.lenet5({ seed: 3 });
      assert.throws(() => ls.verifyRun(fitted.receipt, { train, model: faster, optimizer: new ls.optim.SGD(faster, { lr: 0.1, momentum: 0.9 }) }),
                    (e) => /the optimizer given is not the receipt's: it is sgd/.test(e.message));
      const mlp = ls.models.create('mlp', { seed: 3 });
      assert.throws(() => ls.verifyRun(fitted.receipt, { train, model: mlp, optimizer: new ls.optim.SGD(mlp, { lr: 0.05, momentum: 0.9 }) }),
                    (e) => /the model given is not the receipt's: it is arch:/.test(e.message));
      assert.throws(() => ls.verifyRun(fitted.receipt, { train }),
                    (e) => /a fit\(\) run's receipt is re-executed on a model and optimizer made as the run's were/.test(e.message));
      assert.throws(() => ls.verifyRun(fitted.receipt, { train, model }), /optimizer/);
    }
    await assert.rejects(ls.fit(model, optimizer, train, { receipt: { every: 0 } }), /receipt\.every must be/);
    [all, train, testSet].forEach((o) => o.dispose());
  });
}

test('clean up', () => rmSync(work, { recursive: true, force: true }));
