// The web demo in Debian's Firefox ESR (headless, SpiderMonkey; driven by puppeteer-core over
// WebDriver BiDi, since playwright cannot drive Debian's Firefox): the shortened training run in
// the page's Web Worker must show the golden hashes with a match verdict, with both WebAssembly
// builds, a drawn digit must get a prediction, a dropped checkpoint must get its hash, and the ONNX
// panel must show the native output hashes of the four sample models. Saves
// screenshots to build/web/demo-firefox-*.png. Needs the npm package and the MNIST files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import { golden, goldenOnnx, outDir, startServer } from './demo_server.mjs';

const firefox = '/usr/bin/firefox-esr';

const text = (page, selector) => page.$eval(selector, (e) => e.textContent.trim());
const attribute = (page, selector, name) => page.$eval(selector, (e, n) => e.getAttribute(n), name);

for (const build of ['simd', 'scalar']) {
  test(`web demo in headless Firefox (${build}): golden hashes, match verdict, digit, checkpoint`, async () => {
    const expected = golden().short;
    const { server, url } = await startServer();
    const scratch = mkdtempSync(path.join(os.tmpdir(), 'lockstep-firefox-'));
    const browser = await puppeteer.launch({
      browser: 'firefox',
      executablePath: firefox,
      headless: true,
      // No updates, telemetry or remote settings: the test machine may have no network.
      extraPrefsFirefox: { 'app.update.enabled': false, 'datareporting.policy.dataSubmissionEnabled': false,
                           'toolkit.telemetry.enabled': false, 'browser.shell.checkDefaultBrowser': false },
    });
    const problems = [];
    try {
      const page = await browser.newPage();
      await page.setViewport({ width: 1000, height: 2400 });
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
      page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()} for ${r.url()}`); });
      await page.goto(`${url}?run=short&build=${build}&autostart=1`);

      await page.waitForSelector('#verdict[data-verdict]', { timeout: 180_000 });
      assert.equal(await attribute(page, '#verdict', 'data-verdict'), 'match', await text(page, '#verdict'));
      for (const key of ['initial', 'trained', 'logits', 'accuracy']) {
        assert.equal(await text(page, `tr[data-key="${key}"] td.mine`), expected[key], key);
      }
      assert.match(await text(page, '#engine'), new RegExp(`WebAssembly ${build}`));
      assert.match(await page.evaluate(() => navigator.userAgent), /Firefox\//);

      // Draw a "1": a vertical stroke down the middle of the pad.
      const box = await (await page.$('#pad')).boundingBox();
      await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.15);
      await page.mouse.down();
      for (let i = 1; i <= 10; ++i) await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * (0.15 + 0.07 * i));
      await page.mouse.up();
      await page.waitForFunction(() => /^\d$/.test(document.getElementById('prediction').textContent), { timeout: 10_000 });
      assert.equal(await page.$$eval('#probabilities li', (items) => items.length), 10);

      // The trained model's checkpoint, downloaded from the page and given back as a file.
      const download = await attribute(page, '#download', 'href');
      const bytes = await page.evaluate(async (href) => Array.from(new Uint8Array(await (await fetch(href)).arrayBuffer())),
                                        download);
      const file = path.join(scratch, 'trained.safetensors');
      writeFileSync(file, Buffer.from(bytes));
      await (await page.$('#checkpoint-file')).uploadFile(file);
      await page.waitForFunction(() => document.getElementById('checkpoint-result').dataset.hash, { timeout: 10_000 });
      assert.equal(await attribute(page, '#checkpoint-result', 'data-hash'), expected.trained);
      assert.match(await text(page, '#checkpoint-note'), /Golden: this is the short run's trained model/);

      // The ONNX panel: sample models on their sample inputs give the native `lockstep run` hashes.
      const onnxGolden = goldenOnnx();
      for (const model of ['lenet5', 'mlp_bn', 'resnet_small', 'transformer']) {
        await page.select('#onnx-sample', model);
        await page.waitForSelector(`#onnx-model[data-loaded="${model}.onnx"]`, { timeout: 30_000 });
        await page.select('#onnx-input', 'sample');
        await page.click('#onnx-run');
        await page.waitForSelector('#onnx-verdict[data-verdict]', { timeout: 30_000 });
        assert.equal(await attribute(page, '#onnx-verdict', 'data-verdict'), 'match', await text(page, '#onnx-verdict'));
        assert.equal(await attribute(page, '#onnx-outputs tr', 'data-hash'), onnxGolden[`${model} output`], model);
      }

      mkdirSync(outDir, { recursive: true });
      writeFileSync(path.join(outDir, `demo-firefox-${build}.png`), await page.screenshot({ fullPage: true }));
      assert.deepEqual(problems, []);
    } finally {
      await browser.close();
      server.kill();
      rmSync(scratch, { recursive: true, force: true });
    }
  });
}
