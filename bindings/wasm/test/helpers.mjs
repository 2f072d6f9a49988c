// Shared by the package's tests: where the package and the data are, and the golden hashes.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
// The assembled package (tools/build-npm-package); LOCKSTEP_NPM_PACKAGE points elsewhere.
export const packageDir = process.env.LOCKSTEP_NPM_PACKAGE ?? path.join(root, 'build/npm/package');
export const dataDir = process.env.LOCKSTEP_MNIST_DATA ?? path.join(root, '.deps/data/mnist');

export async function loadLockstep(options) {
  const { load } = await import(path.join(packageDir, 'index.js'));
  return load(options);
}

// tests/golden/mnist.txt as { short: {initial, trained, logits, accuracy}, full: {...} }.
export function goldenMnist() {
  const golden = {};
  for (const line of readFileSync(path.join(root, 'tests/golden/mnist.txt'), 'utf8').split('\n')) {
    const [run, key, value] = line.trim().split(/\s+/);
    if (!run || run.startsWith('#')) continue;
    golden[run] ??= {};
    golden[run][key] = value;
  }
  return golden;
}

export function mnistDatasets(ls) {
  const read = (name) => new Uint8Array(readFileSync(path.join(dataDir, name)));
  return {
    train: ls.Dataset.fromIdx(read('train-images.idx'), read('train-labels.idx'), { normalize: true }),
    test: ls.Dataset.fromIdx(read('test-images.idx'), read('test-labels.idx'), { normalize: true }),
  };
}

// The package's three builds; 'threads' runs with load()'s default thread count (one per core;
// threads.test.mjs runs 1, 2 and 4 threads explicitly).
export const builds = ['simd', 'scalar', 'threads'];
