// The GPT example through the npm package: 50 steps of the "tiny" configuration with dropout give
// the golden losses, loss estimates, hashes and sample (tests/golden/gpt.txt) with every build.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { builds, loadLockstep, root } from './helpers.mjs';

const text = readFileSync(path.join(root, '.deps/data/fortunes/input.txt'), 'latin1');
const golden = readFileSync(path.join(root, 'tests/golden/gpt.txt'), 'utf8').split('\n')
  .filter((l) => l.startsWith('tiny ')).map((l) => l.split(' '));
const value = (key) => golden.find((g) => g[1] === key)[2];
const goldenLosses = golden.filter((g) => g[1] === 'loss').map((g) => Math.fround(Number(g[3])));

for (const build of builds) {
  test(`${build}: GPT tiny, 50 steps with dropout, gives the golden losses, hashes and sample`, async () => {
    const ls = await loadLockstep({ build });
    const corpus = new ls.gpt.CharCorpus(text);
    assert.equal(corpus.vocabSize, 96);
    let progressed = 0;
    const r = await ls.gpt.train(corpus, { preset: 'tiny', steps: 50, onProgress: (p) => { progressed = p.step; } });
    assert.equal(progressed, 50);
    assert.deepEqual(r.losses.map(Math.fround), goldenLosses);
    assert.equal(Math.fround(r.estimates.at(-1).train), Math.fround(Number(value('estimate-train'))));
    assert.equal(Math.fround(r.estimates.at(-1).val), Math.fround(Number(value('estimate-val'))));
    assert.equal(r.initialHash, value('initial'));
    assert.equal(r.trainedHash, value('trained'));
    assert.equal(r.model.hash(), r.trainedHash);
    const sample = ls.gpt.sample(r.model, corpus, '\n', { maxNewTokens: 200 });
    assert.equal(sample.length, 200);
    assert.equal(ls.sha256(new TextEncoder().encode(sample)), value('sample'));
    assert.throws(() => ls.gpt.sample(r.model, corpus, '\u00e9'), /not in the vocabulary/);
    await assert.rejects(ls.gpt.train(corpus, { preset: 'huge' }), /unknown preset 'huge'/);
    r.model.dispose();
    corpus.dispose();
  });
}

test('a GPT forward pass takes token ids and gives logits per position', async () => {
  const ls = await loadLockstep();
  const corpus = new ls.gpt.CharCorpus(text.slice(0, 5000));
  const model = ls.gpt.model(corpus, { preset: 'tiny', seed: 3 });
  ls.scope(() => {
    const ids = ls.tensor([corpus.encode('Hello, wo')], undefined, { dtype: 'int64' });
    assert.deepEqual(model.eval().forward(ids).shape, [1, 9, corpus.vocabSize]);
    assert.throws(() => model.forward(ls.zeros(1, 17)), /token indices/);
  });
});
