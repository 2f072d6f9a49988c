// The MNIST reference run in Node through the npm package gives the golden hashes (the ones the
// native build produced) with every WebAssembly build: the shortened run, then the full 20 epochs.
// LOCKSTEP_SKIP_FULL_MNIST=1 runs the shortened run only (for quick local iterations).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builds, goldenMnist, loadLockstep, mnistDatasets } from './helpers.mjs';

const golden = goldenMnist();
const runs = [['short', { maxSteps: 3, maxTest: 100 }]];
if (process.env.LOCKSTEP_SKIP_FULL_MNIST !== '1') runs.push(['full', {}]);

for (const [run, options] of runs) {
  for (const build of builds) {
    test(`${build}: MNIST reference run (${run}) gives the golden hashes`, async () => {
      const ls = await loadLockstep({ build });
      const { train, test: testSet } = mnistDatasets(ls);
      let last = 0;
      const result = await ls.mnistReferenceRun({
        train, test: testSet, ...options,
        onProgress: (p) => {
          if (p.step === p.totalSteps || p.step - last >= 400) {
            last = p.step;
            console.log(`  ${build} ${run}: step ${p.step}/${p.totalSteps} loss ${p.loss.toFixed(4)} ` +
                        `${p.stepsPerSecond.toFixed(1)} steps/s`);
          }
        },
      });
      assert.equal(result.initialHash, golden[run].initial, 'initial model hash');
      assert.equal(result.trainedHash, golden[run].trained, 'trained model hash');
      assert.equal(result.logitsHash, golden[run].logits, 'test logits hash');
      assert.equal(result.testAccuracy.toFixed(4), golden[run].accuracy, 'test accuracy');
      assert.equal(ls.sha256(result.model.save()), result.trainedHash);
      [result.model, train, testSet].forEach((o) => o.dispose());
    });
  }
}
