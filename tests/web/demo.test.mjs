// The web demo in Debian's Chromium (headless, driven by playwright-core): a shortened training
// run in the page's Web Worker must show the golden hashes with a match verdict, a drawn digit
// must get a prediction, a dropped checkpoint must get its hash, and the ONNX panel must show the
// native output hashes of the four sample models (and run LeNet-5 on the drawn digit); with each
// build, the threads build on 4 threads (the page is served cross-origin isolated). Served
// without isolation, the page falls back to the single-thread build and says why. Saves
// screenshots to build/web/demo-*.png. Needs the npm package (tools/build-npm-package), the MNIST
// files and the ONNX models (.deps/onnx).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { golden, goldenOnnx, outDir, startServer } from './demo_server.mjs';

const launch = () => chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
         '--disable-sync', '--no-first-run'],
});

for (const build of ['simd', 'scalar', 'threads']) {
  test(`web demo in headless Chromium (${build}): golden hashes, match verdict, digit, checkpoint`, async () => {
    const expected = golden().short;
    const { server, url } = await startServer();
    const browser = await launch();
    const problems = [];
    try {
      const page = await browser.newPage({ viewport: { width: 1000, height: 2400 } });
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
      page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()} for ${r.url()}`); });
      const threads = build === 'threads' ? 4 : 1;
      await page.goto(`${url}?run=short&build=${build}${build === 'threads' ? `&threads=${threads}` : ''}&autostart=1`);

      await page.waitForSelector('#verdict[data-verdict]', { timeout: 120_000 });
      assert.equal(await page.getAttribute('#verdict', 'data-verdict'), 'match', await page.textContent('#verdict'));
      for (const key of ['initial', 'trained', 'logits', 'accuracy']) {
        assert.equal((await page.textContent(`tr[data-key="${key}"] td.mine`)).trim(), expected[key], key);
      }
      assert.match(await page.textContent('#engine'), new RegExp(`WebAssembly ${build} .*, ${threads} threads?$`));
      assert.equal(await page.getAttribute('#engine', 'data-threads'), String(threads));

      // Draw a "1": a vertical stroke down the middle of the pad.
      const box = await page.locator('#pad').boundingBox();
      await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.15);
      await page.mouse.down();
      for (let i = 1; i <= 10; ++i) await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * (0.15 + 0.07 * i));
      await page.mouse.up();
      await page.waitForFunction(() => /^\d$/.test(document.getElementById('prediction').textContent), null,
                                 { timeout: 10_000 });
      assert.equal(await page.locator('#probabilities li').count(), 10);

      // The trained model's checkpoint, downloaded from the page and given back as a file.
      const download = await page.getAttribute('#download', 'href');
      const bytes = await page.evaluate(async (href) => Array.from(new Uint8Array(await (await fetch(href)).arrayBuffer())),
                                        download);
      await page.setInputFiles('#checkpoint-file', { name: 'trained.safetensors', mimeType: 'application/octet-stream',
                                                      buffer: Buffer.from(bytes) });
      await page.waitForFunction(() => document.getElementById('checkpoint-result').dataset.hash, null, { timeout: 10_000 });
      assert.equal(await page.getAttribute('#checkpoint-result', 'data-hash'), expected.trained);
      assert.match(await page.textContent('#checkpoint-note'), /Golden: this is the short run's trained model/);

      // The ONNX panel: sample models on their sample inputs give the native `lockstep run` hashes.
      const onnxGolden = goldenOnnx();
      for (const model of ['lenet5', 'mlp_bn', 'resnet_small', 'transformer']) {
        await page.selectOption('#onnx-sample', model);
        await page.waitForSelector(`#onnx-model[data-loaded="${model}.onnx"]`, { timeout: 30_000 });
        await page.selectOption('#onnx-input', 'sample');
        await page.click('#onnx-run');
        await page.waitForSelector('#onnx-verdict[data-verdict]', { timeout: 30_000 });
        assert.equal(await page.getAttribute('#onnx-verdict', 'data-verdict'), 'match', await page.textContent('#onnx-verdict'));
        assert.equal(await page.getAttribute('#onnx-outputs tr', 'data-hash'), onnxGolden[`${model} output`], model);
      }
      // The drawn digit through the imported LeNet-5: a hash, and the command that reproduces it.
      await page.selectOption('#onnx-sample', 'lenet5');
      await page.waitForSelector('#onnx-model[data-loaded="lenet5.onnx"]', { timeout: 30_000 });
      await page.selectOption('#onnx-input', 'pad');
      await page.click('#onnx-run');
      await page.waitForSelector('#onnx-verdict[data-verdict]', { timeout: 30_000 });
      assert.equal(await page.getAttribute('#onnx-verdict', 'data-verdict'), 'computed', await page.textContent('#onnx-verdict'));
      assert.match(await page.textContent('#onnx-command'), /lockstep run lenet5\.onnx --input images=images\.npy \(this digit: class \d\)/);

      mkdirSync(outDir, { recursive: true });
      writeFileSync(path.join(outDir, `demo-${build}.png`), await page.screenshot({ fullPage: true }));
      assert.deepEqual(problems, []);
    } finally {
      await browser.close();
      server.kill();
    }
  });
}

// Without the cross-origin isolation headers a page cannot share memory with workers: 'auto' runs
// the single-thread SIMD128 build, gives the same golden hashes and says why it did not take the
// threads build; asking for the threads build there is an error the page shows.
test('web demo in headless Chromium, not cross-origin isolated: the fallback to one thread', async () => {
  const expected = golden().short;
  const { server, url } = await startServer({ isolated: false });
  const browser = await launch();
  const problems = [];
  try {
    const page = await browser.newPage();
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    await page.goto(`${url}?run=short&build=auto&autostart=1`);
    await page.waitForSelector('#verdict[data-verdict]', { timeout: 120_000 });
    assert.equal(await page.evaluate(() => crossOriginIsolated), false);
    assert.equal(await page.getAttribute('#verdict', 'data-verdict'), 'match', await page.textContent('#verdict'));
    assert.equal((await page.textContent('tr[data-key="trained"] td.mine')).trim(), expected.trained);
    assert.equal(await page.getAttribute('#engine', 'data-build'), 'simd');
    assert.equal(await page.getAttribute('#engine', 'data-threads'), '1');
    assert.match(await page.textContent('#threads-note'),
                 /Threads unavailable, so the single-thread simd build runs: the page is not cross-origin isolated/);

    await page.selectOption('#build', 'threads');
    await page.waitForFunction(() => /^error: /.test(document.getElementById('progress-text').textContent), null,
                               { timeout: 30_000 });
    assert.match(await page.textContent('#progress-text'), /build 'threads' was asked for, but the page is not cross-origin isolated/);
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
    server.kill();
  }
});
