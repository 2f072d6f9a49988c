// Traces from the npm package (ls.traced): the shortened MNIST run traced in JavaScript with each
// WebAssembly build is identical, record for record, to the native build's trace of the same run
// (compared with the native `lockstep diff`), and a trace is well-formed JSON lines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { builds, dataDir, loadLockstep, mnistDatasets, root } from './helpers.mjs';

const native = path.join(root, 'build/native');
const cli = path.join(native, 'bindings/native/cli/lockstep');
const work = mkdtempSync(path.join(tmpdir(), 'lockstep-trace-'));
const nativeTrace = path.join(work, 'native.trace');

test('the native build traces the shortened run (30 steps, 200 test images)', () => {
  assert.ok(existsSync(cli), `the native CLI ${cli} is needed to compare traces (build the native preset)`);
  execFileSync(path.join(native, 'examples/mnist/lockstep_mnist'),
               ['--steps', '30', '--test', '200', '--quiet', '--data', dataDir, '--trace', nativeTrace]);
});

for (const build of builds) {
  test(`${build}: ls.traced records the same trace as the native build`, async () => {
    const ls = await loadLockstep({ build });
    const { train, test: testSet } = mnistDatasets(ls);
    const model = ls.models.lenet5({ seed: 2 });
    const optimizer = new ls.optim.Adam(model, { lr: 1e-3 });
    const { result, trace, values, records } = await ls.traced(model, async () => {
      await ls.fit(model, optimizer, train, { epochs: 1, batchSize: 100, seed: 2, maxSteps: 30 });
      return ls.evaluate(model, testSet, { batchSize: 100, limit: 200 });
    }, { valuesFrom: 1, valuesTo: 1, valuesMatch: 'grad', source: `npm ${build}` });
    assert.equal(result.examples, 200);
    const lines = new TextDecoder().decode(trace).trimEnd().split('\n').map((l) => JSON.parse(l));
    assert.equal(lines[0].lockstep_trace, 1);
    assert.deepEqual(lines.at(-1), { end: true, records });
    assert.ok(records > 2000, `${records} records`);
    assert.ok(values.length > 0, 'the chosen gradients were kept in the values sidecar');
    assert.ok(lines.some((r) => r.phase === 'backward' && r.module === '0' && r.op === 'conv2d_backward'));
    const file = path.join(work, `${build}.trace`);
    writeFileSync(file, trace);
    const diff = spawnSync(cli, ['diff', nativeTrace, file], { encoding: 'utf8' });
    assert.equal(diff.status, 0, diff.stdout + diff.stderr);
    assert.match(diff.stdout, new RegExp(`compared ${records} aligned records: ${records} identical`));
    // A second trace while one records is refused; the module keeps working.
    await assert.rejects(ls.traced(model, () => ls.traced(null, () => 1)), (e) => e.kind === 'state');
    [model, optimizer, train, testSet].forEach((o) => o.dispose());
  });
}

test('clean up', () => rmSync(work, { recursive: true, force: true }));
