// The web demo's verification panel in headless Chromium (docs/verifiable-training.md): the page's
// own shortened run, recorded with a receipt, has a sample of its steps re-executed in the Web
// Worker and verified, with a verdict beside each step; a receipt written natively with a one-ulp
// fault planted at step 37 (and its kept states, chosen as files) fails at step 37 with steps 31-36
// shown as matching; a receipt whose chain was altered is refused, saying so. Needs the native
// CLI (build/native), the npm package and the MNIST files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { outDir, root, startServer } from './demo_server.mjs';

const cli = path.join(root, 'build/native/bindings/native/cli/lockstep');

test('web demo verification panel in headless Chromium: the page\'s run verified, a native fault found', async () => {
  assert.ok(existsSync(cli), `the native CLI ${cli} is needed to write the receipts (build the native preset)`);
  const work = mkdtempSync(path.join(tmpdir(), 'lockstep-verify-panel-'));
  const folder = path.join(work, 'faulty');
  mkdirSync(folder);
  execFileSync(cli, ['train', 'mnist', '--steps', '40', '--test', '100', '--data', path.join(root, '.deps/data/mnist'),
                     '--receipt-every', '10', '--receipt', path.join(folder, 'run.receipt'),
                     '--trace', path.join(work, 'faulty.trace')],
               { env: { ...process.env, LOCKSTEP_TRACE_FAULT: '37:3:conv2d' } });
  const files = readdirSync(folder).map((name) => path.join(folder, name));
  const text = readFileSync(path.join(folder, 'run.receipt'), 'utf8');
  const tampered = path.join(work, 'tampered');
  mkdirSync(tampered);
  writeFileSync(path.join(tampered, 'run.receipt'), text.replace(/("step":5,"batch":")(.)/, (m, a, c) => a + (c === '0' ? '1' : '0')));

  const { server, url } = await startServer();
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
  const problems = [];
  try {
    const page = await browser.newPage({ viewport: { width: 1000, height: 1800 } });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
    await page.goto(`${url}?run=short&build=simd&autostart=1`);
    await page.waitForSelector('#verdict[data-verdict]', { timeout: 120_000 });
    assert.equal(await page.getAttribute('#verdict', 'data-verdict'), 'match', await page.textContent('#verdict'));

    // The page's own run (3 steps, a state kept after each): every step sampled.
    await page.waitForSelector('#verify-page-run:not([disabled])', { timeout: 10_000 });
    assert.match(await page.textContent('#verify-source'), /the run above \(3 steps, 4 kept states\)/);
    await page.fill('#verify-sample', '3');
    await page.fill('#verify-seed', '1');
    await page.click('#verify-start');
    await page.waitForSelector('#verify-verdict[data-verdict]', { timeout: 60_000 });
    assert.equal(await page.getAttribute('#verify-verdict', 'data-verdict'), 'match', await page.textContent('#verify-verdict'));
    assert.deepEqual(await page.$$eval('#verify-steps li', (items) => items.map((li) => [li.dataset.step, li.dataset.ok])),
                     [['1', 'true'], ['2', 'true'], ['3', 'true']]);

    // The native run with the fault: all 40 steps sampled, each re-executed from its nearest kept
    // state; the first that differs is 37.
    await page.setInputFiles('#verify-files', files);
    await page.waitForFunction(() => /with 5 kept states/.test(document.getElementById('verify-source').textContent), null,
                               { timeout: 10_000 });
    await page.fill('#verify-sample', '40');
    await page.click('#verify-start');
    await page.waitForSelector('#verify-verdict[data-verdict]', { timeout: 120_000 });
    assert.equal(await page.getAttribute('#verify-verdict', 'data-verdict'), 'mismatch');
    assert.match(await page.textContent('#verify-verdict'), /^FAILED at step 37: step 37: the state after it differs/);
    const verdicts = await page.$$eval('#verify-steps li', (items) => items.map((li) => [Number(li.dataset.step), li.dataset.ok]));
    assert.deepEqual(verdicts.at(-1), [37, 'false']);
    assert.deepEqual(verdicts.slice(0, -1), Array.from({ length: 36 }, (_, i) => [i + 1, 'true']));
    assert.match(await page.textContent('#verify-command'), /lockstep verify-run run\.receipt --sample 40 --seed 1/);

    // An altered chain: refused by line, nothing re-executed.
    await page.setInputFiles('#verify-files', [path.join(tampered, 'run.receipt'), ...files.filter((f) => f.endsWith('.state'))]);
    await page.waitForFunction(() => /with 5 kept states/.test(document.getElementById('verify-source').textContent), null,
                               { timeout: 10_000 });
    await page.click('#verify-start');
    await page.waitForSelector('#verify-verdict[data-verdict]', { timeout: 30_000 });
    assert.equal(await page.getAttribute('#verify-verdict', 'data-verdict'), 'error');
    assert.match(await page.textContent('#verify-verdict'), /refused: .*the chain hash of step 5 does not follow .*tampered chain/);
    mkdirSync(outDir, { recursive: true });
    writeFileSync(path.join(outDir, 'demo-verify.png'), await page.screenshot({ fullPage: true }));
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
    server.kill();
    rmSync(work, { recursive: true, force: true });
  }
});
