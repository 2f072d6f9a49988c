#!/usr/bin/env node
// Runs the MNIST reference run in a real browser, headless, through the web demo (its Web Worker
// and the npm package), and prints the hashes the page computed in the format of the native
// example (`initial model hash`, `trained model hash`, `test logits hash`, `test accuracy`), so
// tools/check-matrix compares them with the golden file like any other platform.
//
// Usage: node tools/browser-run.mjs --browser chromium|firefox [--build simd|scalar|threads|auto]
//                                   [--threads 1|2|4|8] [--run short|full]
// The page is served cross-origin isolated, so the threads build can run (--threads: its kernel
// threads; the page's "engine" line, printed first, says which build ran with how many).
// Chromium is Debian's /usr/bin/chromium, Firefox is Debian's /usr/bin/firefox-esr; both are driven
// by puppeteer-core (Chromium over the DevTools protocol, Firefox over WebDriver BiDi). Needs the npm
// package (tools/build-npm-package) and the MNIST files. Exit status: 0 when the page finished,
// 1 when it failed or timed out (then it prints where the page stood), 2 for bad arguments.
// BROWSER_RUN_MINUTES overrides the time the page is given (3 minutes for short, 30 for full).
import puppeteer from 'puppeteer-core';
import { startServer } from '../tests/web/demo_server.mjs';

const browsers = {
  chromium: {
    browser: 'chrome',
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
           '--disable-sync', '--no-first-run'],
  },
  firefox: {
    browser: 'firefox',
    executablePath: '/usr/bin/firefox-esr',
    // No updates, telemetry or default-browser prompt: the machine may have no network.
    extraPrefsFirefox: { 'app.update.enabled': false, 'datareporting.policy.dataSubmissionEnabled': false,
                         'toolkit.telemetry.enabled': false, 'browser.shell.checkDefaultBrowser': false },
  },
};
const choices = { '--browser': Object.keys(browsers), '--build': ['simd', 'scalar', 'threads', 'auto'],
                  '--threads': ['1', '2', '4', '8'], '--run': ['short', 'full'] };

function parse(argv) {
  const options = { '--build': 'simd', '--run': 'short' };
  for (let i = 0; i < argv.length; i += 2) {
    const [name, value] = [argv[i], argv[i + 1]];
    if (!(name in choices)) throw new Error(`unknown argument ${name} (expected ${Object.keys(choices).join(', ')})`);
    if (!choices[name].includes(value)) {
      throw new Error(`${name} must be one of ${choices[name].join(', ')}, got ${value === undefined ? 'nothing' : value}`);
    }
    options[name] = value;
  }
  if (!options['--browser']) throw new Error(`--browser is required (${choices['--browser'].join(' or ')})`);
  if (options['--threads'] && !['threads', 'auto'].includes(options['--build'])) {
    throw new Error(`--threads needs --build threads or auto, got --build ${options['--build']}`);
  }
  return options;
}

async function main() {
  let options;
  try {
    options = parse(process.argv.slice(2));
  } catch (e) {
    console.error(`browser-run: ${e.message}`);
    return 2;
  }
  const { server, url } = await startServer();
  let browser = null;
  let page = null;
  const problems = [];
  const consoleLines = [];
  const threads = options['--threads'] ? `&threads=${options['--threads']}` : '';
  const address = `${url}?run=${options['--run']}&build=${options['--build']}${threads}&autostart=1`;
  const minutes = Number(process.env.BROWSER_RUN_MINUTES) || (options['--run'] === 'full' ? 30 : 3);
  try {
    browser = await puppeteer.launch({ headless: true, ...browsers[options['--browser']] });
    page = await browser.newPage();
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => consoleLines.push(`console ${m.type()}: ${m.text()}`));
    await page.goto(address);
    await page.waitForSelector('#verdict[data-verdict]', { timeout: minutes * 60_000 });
    const mine = (key) => page.$eval(`tr[data-key="${key}"] td.mine`, (e) => e.textContent.trim());
    const agent = await page.evaluate(() => navigator.userAgent);
    console.log(`browser             ${agent}`);
    console.log(`engine              ${await page.$eval('#engine', (e) => e.textContent.trim())}`);
    console.log(`initial model hash  ${await mine('initial')}`);
    console.log(`trained model hash  ${await mine('trained')}`);
    console.log(`test accuracy       ${await mine('accuracy')}`);
    console.log(`test logits hash    ${await mine('logits')}`);
    // The page must have run what was asked for: a fallback to another build is a failure here.
    const ran = await page.$eval('#engine', (e) => ({ build: e.dataset.build, threads: e.dataset.threads }));
    if (options['--build'] !== 'auto' && ran.build !== options['--build']) {
      problems.push(`the page ran the ${ran.build} build, not ${options['--build']}`);
    }
    if (options['--threads'] && ran.build === 'threads' && ran.threads !== options['--threads']) {
      problems.push(`the page ran ${ran.threads} threads, not ${options['--threads']}`);
    }
    for (const p of problems) console.error(`browser-run: ${p}`);
    return problems.length ? 1 : 0;
  } catch (e) {
    console.error(`browser-run: ${e.message}`);
    // Where the page stood: the engine line, the progress text and the verdict, for a timeout.
    for (const id of ['engine', 'threads-note', 'progress-text', 'verdict']) {
      const text = await page?.$eval(`#${id}`, (el) => el.textContent.trim()).catch(() => null);
      if (text) console.error(`browser-run: the page's #${id}: ${text}`);
    }
    for (const p of problems) console.error(`browser-run: ${p}`);
    for (const line of consoleLines.slice(-20)) console.error(`browser-run: ${line}`);
    return 1;
  } finally {
    await browser?.close();
    server.kill();
  }
}

process.exitCode = await main();
