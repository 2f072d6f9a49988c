// The web demo's threads build loaded again and again in Debian's Firefox ESR (headless, puppeteer-core
// over WebDriver BiDi). Firefox under automation used to block for good, about one load in 25 on a
// busy machine, when the demo's engine worker started its workers itself (a `new Worker` inside a
// worker); the page now starts them and hands them over (docs/wasm-threads.md). Every load must
// report its engine in time, with nothing retried; the last one also trains the short run to the
// golden hashes, so the handed-over workers are shown to compute.
// FIREFOX_THREADS_LOADS sets the number of loads (default 40).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import puppeteer from 'puppeteer-core';
import { golden, startServer } from './demo_server.mjs';

const loads = Number(process.env.FIREFOX_THREADS_LOADS) || 40;
const threads = 4;  // 3 workers per load: the setting that blocked most often
const loadSeconds = 30;  // a load takes 1-3 s here; the hang never ended

test(`web demo in headless Firefox: the threads build (${threads} threads) loads ${loads} times in a row`, async () => {
  const { server, url } = await startServer();
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: '/usr/bin/firefox-esr',
    headless: true,
    // No updates, telemetry or default-browser prompt: the test machine may have no network.
    extraPrefsFirefox: { 'app.update.enabled': false, 'datareporting.policy.dataSubmissionEnabled': false,
                         'toolkit.telemetry.enabled': false, 'browser.shell.checkDefaultBrowser': false },
  });
  const problems = [];
  try {
    for (let i = 1; i <= loads; ++i) {
      const last = i === loads;
      const page = await browser.newPage();
      page.on('pageerror', (e) => problems.push(`load ${i}: page error: ${e.message}`));
      page.on('console', (m) => { if (m.type() === 'error') problems.push(`load ${i}: console error: ${m.text()}`); });
      await page.goto(`${url}?build=threads&threads=${threads}${last ? '&run=short&autostart=1' : ''}`);
      try {
        await page.waitForSelector('#engine[data-build]', { timeout: loadSeconds * 1000 });
      } catch {
        const stage = await page.$eval('#progress-text', (e) => e.textContent.trim()).catch(() => '?');
        assert.fail(`load ${i} of ${loads}: no engine within ${loadSeconds} s (the page: ${stage}); ${problems.join('; ')}`);
      }
      const engine = await page.$eval('#engine', (e) => ({ build: e.dataset.build, threads: e.dataset.threads }));
      assert.deepEqual(engine, { build: 'threads', threads: String(threads) }, `load ${i}`);
      if (last) {
        await page.waitForSelector('#verdict[data-verdict]', { timeout: 180_000 });
        const expected = golden().short;
        for (const key of ['initial', 'trained', 'logits', 'accuracy']) {
          assert.equal(await page.$eval(`tr[data-key="${key}"] td.mine`, (e) => e.textContent.trim()), expected[key], key);
        }
      }
      await page.close();
    }
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
    server.kill();
  }
});
