// The package as users get it: `npm pack`'s tarball installed into a fresh project, imported by
// name, type-checked with TypeScript against its .d.ts, and training with the golden hashes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dataDir, goldenMnist, packageDir, root } from './helpers.mjs';

const tarballDir = path.dirname(packageDir);

test('the tarball installs into a fresh project and trains with the golden hashes', () => {
  const tarballs = readdirSync(tarballDir).filter((f) => /^lockstep-.*\.tgz$/.test(f));
  assert.equal(tarballs.length, 1, `expected one lockstep-*.tgz in ${tarballDir}, found ${tarballs}`);
  const project = mkdtempSync(path.join(os.tmpdir(), 'lockstep-consumer-'));
  try {
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', path.join(tarballDir, tarballs[0])],
                 { cwd: project, stdio: 'inherit' });
    const golden = goldenMnist().short;
    writeFileSync(path.join(project, 'consumer.mjs'), `
      import { load } from 'lockstep';
      import { readFileSync } from 'node:fs';
      const read = (f) => new Uint8Array(readFileSync(${JSON.stringify(dataDir)} + '/' + f));
      for (const build of ['simd', 'scalar', 'threads']) {
        const ls = await load(build === 'threads' ? { build, threads: 2 } : { build });
        const train = ls.Dataset.fromIdx(read('train-images.idx'), read('train-labels.idx'), { normalize: true });
        const test = ls.Dataset.fromIdx(read('test-images.idx'), read('test-labels.idx'), { normalize: true });
        const r = await ls.mnistReferenceRun({ train, test, maxSteps: 3, maxTest: 100 });
        console.log(JSON.stringify({ build, initial: r.initialHash, trained: r.trainedHash, logits: r.logitsHash }));
      }
    `);
    const lines = execFileSync('node', ['consumer.mjs'], { cwd: project, encoding: 'utf8' }).trim().split('\n');
    assert.equal(lines.length, 3);
    for (const line of lines) {
      const r = JSON.parse(line);
      assert.deepEqual([r.initial, r.trained, r.logits], [golden.initial, golden.trained, golden.logits], r.build);
    }

    // The types: a TypeScript consumer compiles under --strict against the installed .d.ts.
    writeFileSync(path.join(project, 'consumer.ts'), `
      import { load, scope, type Lockstep, type Tensor, type Progress } from 'lockstep';
      async function main(): Promise<string> {
        const ls: Lockstep = await load({ build: 'auto' });
        const model = ls.models.lenet5({ seed: 2 });
        const opt = new ls.optim.Adam(model, { lr: 1e-3 });
        const logits: Tensor = scope(() => model.forward(ls.zeros(1, 1, 28, 28)));
        const onProgress = (p: Progress): void => { console.log(p.step, p.loss); };
        void onProgress;
        opt.dispose();
        logits.dispose();
        return model.hash();
      }
      void main();
    `);
    const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
    execFileSync('node', [tsc, '--strict', '--noEmit', '--module', 'nodenext', '--moduleResolution', 'nodenext',
                          '--target', 'es2022', '--lib', 'es2022,dom,esnext.disposable', 'consumer.ts'],
                 { cwd: project, stdio: 'inherit' });
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
});

// 1.3 MB: the engine took about 0.8 MB; the ONNX importer (protobuf reader, graph checks, 97
// operators; docs/onnx.md) adds about 0.25 MB (about 100 KB gzipped); the threads build's pthread
// runtime about 40 KB more than the others; the modules of torchvision's models (ReLU6, SiLU,
// Hardswish, AdaptiveAvgPool2d, StochasticDepth, ...; issue 31) about 25 KB; 1.4 MB since the
// eleven correctly rounded trigonometric and hyperbolic functions (their float64 evaluation built
// for EMU128, about 50 KB) and floor, ceil and round with their bindings (issue 32) took the threads
// module past 1.3 MB. (-Oz for them made the module larger: Highway's emulated vectors then stay out
// of line.) 1.7 MB since ONNX's element types, ConvTranspose, the recurrent layers, the index,
// resizing, quantisation, signal and detection operators and their bindings (issue 32: the
// importer's 38 new operators, compiled with -Oz, about 200 KB) took the threads module past 1.4 MB.
// 1.9 MB since receipts and their verification (docs/verifiable-training.md: the state tree, the
// receipt's writer and reader, re-execution and verifyRun; about 135 KB, 46 KB gzipped) took the
// threads module past 1.7 MB. 2.0 MB since inference's fused convolution blocks (the convolution's
// epilogue in the direct and GEMM kernels with SiLU's pass, core's Conv2dNormActivation and the
// importer's fused blocks; about 12 KB) took the threads module past 1.9 MB. 2.1 MB since the
// training kernels for EfficientNet-like models (SiLU's one-pass gradient, batch normalisation's
// variance pass, its small-plane arithmetic and sums; about 40 KB, 11 KB gzipped) took the threads
// module past 2.0 MB. ONNX Runtime Web's module is 14 MB.
test('each .wasm is at most 2.1 MB', () => {
  for (const flavour of ['simd', 'scalar', 'threads']) {
    const file = path.join(packageDir, `lockstep-${flavour}.wasm`);
    const bytes = statSync(file).size;
    const gzipped = gzipSync(readFileSync(file), { level: 9 }).length;
    console.log(`  lockstep-${flavour}.wasm: ${bytes} bytes, ${gzipped} gzipped`);
    assert.ok(bytes <= 2.1 * 1024 * 1024, `${file} is ${bytes} bytes, over 2.1 MB`);
  }
});
