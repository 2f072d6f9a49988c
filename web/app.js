// The page: controls, progress, loss chart, the verdict against the native build's golden hashes,
// the verification panel, checkpoint hashing and the digit pad. The engine itself runs in worker.js.
import { LossChart } from './loss-chart.js';
import { DigitPad } from './digit-pad.js';
import { OnnxPanel } from './onnx-panel.js';
import { VerifyPanel } from './verify-panel.js';
import { startWorkerPorts } from './lockstep/index.js';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
const chart = new LossChart($('loss-chart'));
let golden = null;
let downloadUrl = null;

// tests/golden/mnist.txt: "<run> <key> <value>" lines written from the native build.
async function loadGolden() {
  const text = await (await fetch('./golden/mnist.txt')).text();
  const table = {};
  for (const line of text.split('\n')) {
    const [run, key, value] = line.trim().split(/\s+/);
    if (!run || run.startsWith('#')) continue;
    (table[run] ??= {})[key] = value;
  }
  return table;
}

function formatSeconds(s) {
  if (!Number.isFinite(s)) return '–';
  return s >= 60 ? `${Math.floor(s / 60)} min ${Math.round(s % 60)} s` : `${s.toFixed(0)} s`;
}

function setRunning(running) {
  $('start').disabled = running;
  $('stop').disabled = !running;
  $('run').disabled = running;
  $('build').disabled = running;
  $('threads').disabled = running;
  $('record-receipt').disabled = running;
}

// What the worker is asked to load: the build, and the thread count for the threads build.
const engineChoice = () => ({ build: $('build').value, threads: $('threads').value ? Number($('threads').value) : undefined });

function showGolden(run) {
  for (const row of document.querySelectorAll('#results tbody tr')) {
    row.querySelector('.golden').textContent = golden?.[run]?.[row.dataset.key] ?? '(not in the golden file)';
    row.querySelector('.mine').textContent = '';
    row.querySelector('.mark').textContent = '';
    row.className = '';
  }
  const verdict = $('verdict');
  verdict.className = 'verdict pending';
  verdict.textContent = 'training…';
  delete verdict.dataset.verdict;
}

function showResult({ run, build, hashes, bytes }) {
  let all = true;
  for (const row of document.querySelectorAll('#results tbody tr')) {
    const key = row.dataset.key;
    const same = hashes[key] === golden?.[run]?.[key];
    all &&= same;
    row.querySelector('.mine').textContent = hashes[key];
    row.querySelector('.mark').textContent = same ? '✓' : '✗';
    row.className = same ? 'match' : 'mismatch';
  }
  const verdict = $('verdict');
  verdict.className = `verdict ${all ? 'match' : 'mismatch'}`;
  verdict.dataset.verdict = all ? 'match' : 'mismatch';
  verdict.textContent = all
    ? `MATCH: this browser (WebAssembly ${build}) produced bit-identical models to the native build.`
    : `MISMATCH: the hashes differ from the native build's (WebAssembly ${build}). Please report it.`;
  if (downloadUrl) URL.revokeObjectURL(downloadUrl);
  downloadUrl = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
  $('download').href = downloadUrl;
  $('download').classList.remove('hidden');
  $('model-source').textContent = 'Classifying with the model trained above.';
}

worker.onmessage = ({ data }) => {
  if (onnxPanel?.handle(data) || verifyPanel?.handle(data)) return;
  switch (data.type) {
    case 'engine': {
      const { info } = data;
      $('engine').textContent = `engine ${info.version}, contract v${info.contractVersion}, ` +
          `WebAssembly ${info.build} (${info.simdTarget}), ${info.threads} ${info.threads === 1 ? 'thread' : 'threads'}`;
      $('engine').dataset.build = info.build;
      $('engine').dataset.threads = info.threads;
      // The fallback, said plainly: which build runs instead, and why.
      $('threads-note').textContent = info.threadsUnavailable
        ? `Threads unavailable, so the single-thread ${info.build} build runs: ${info.threadsUnavailable}.`
        : info.build === 'threads' ? `The kernels run on ${info.threads} threads (Web Workers sharing memory); the bits do not depend on how many.` : '';
      $('start').disabled = false;
      break;
    }
    case 'need-workers':  // the threads build's workers, started on this thread (worker.js says why)
      startWorkerPorts(data.count, { baseUrl: new URL('./lockstep/', location.href) }).then(
          (ports) => worker.postMessage({ type: 'workers', ports }, ports),
          (error) => worker.postMessage({ type: 'workers', error: error.message }));
      break;
    case 'progress':
      if (data.step === 1) chart.reset(data.totalSteps);
      chart.push(data.loss);
      $('progress-bar').value = data.step / data.totalSteps;
      $('progress-text').textContent = `step ${data.step} / ${data.totalSteps} · epoch ${data.epoch + 1} · ` +
          `loss ${data.loss.toFixed(4)} · ${data.stepsPerSecond.toFixed(1)} steps/s · ETA ${formatSeconds(data.etaSeconds)}`;
      break;
    case 'result':
      setRunning(false);
      showResult(data);
      break;
    case 'checkpoint': {
      const matches = Object.entries(golden ?? {}).filter(([, g]) => g.trained === data.hash || g.initial === data.hash)
          .map(([run, g]) => `the ${run} run's ${g.trained === data.hash ? 'trained' : 'initial'} model`);
      $('checkpoint-hash').textContent = data.hash;
      $('checkpoint-result').dataset.hash = data.hash;
      $('checkpoint-note').textContent = (matches.length ? `Golden: this is ${matches.join(' and ')}. ` : '') +
          (data.arch ? `Loaded as ${data.arch}; draw a digit to try it.` : `Not a model this demo can run (${data.loadError}).`);
      if (data.arch) $('model-source').textContent = `Classifying with ${data.name}.`;
      break;
    }
    case 'prediction': {
      const p = Array.from(data.probabilities);
      const best = p.indexOf(Math.max(...p));
      $('prediction').textContent = String(best);
      $('probabilities').replaceChildren(...p.map((v) => {
        const li = document.createElement('li');
        li.textContent = `${(100 * v).toFixed(1)}%`;
        const bar = document.createElement('span');
        bar.style.width = `${Math.round(120 * v)}px`;
        li.append(bar);
        return li;
      }));
      break;
    }
    case 'error':
      setRunning(false);
      if (data.during === 'train' && data.message === 'stopped') {
        $('progress-text').textContent = 'stopped';
        $('verdict').textContent = 'stopped before the end: no hashes to compare';
      } else {
        $('progress-text').textContent = `error: ${data.message}`;
        if (data.during === 'checkpoint') $('checkpoint-note').textContent = `error: ${data.message}`;
      }
      break;
  }
};

function start() {
  const run = $('run').value;
  setRunning(true);
  showGolden(run);
  $('progress-text').textContent = 'loading the data…';
  worker.postMessage({ type: 'train', run, receipt: $('record-receipt').checked, ...engineChoice() });
}

function hashFile(file) {
  $('checkpoint-hash').textContent = 'hashing…';
  $('checkpoint-note').textContent = '';
  file.arrayBuffer().then((buffer) => {
    worker.postMessage({ type: 'checkpoint', name: file.name, bytes: new Uint8Array(buffer) }, [buffer]);
  });
}

$('controls').addEventListener('submit', (e) => { e.preventDefault(); start(); });
$('stop').addEventListener('click', () => worker.postMessage({ type: 'stop' }));
const drop = $('drop-zone');
drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', (e) => {
  e.preventDefault();
  drop.classList.remove('over');
  if (e.dataTransfer.files.length) hashFile(e.dataTransfer.files[0]);
});
$('checkpoint-file').addEventListener('change', (e) => { if (e.target.files.length) hashFile(e.target.files[0]); });
const pad = new DigitPad($('pad'), (pixels) => { if (pixels) worker.postMessage({ type: 'classify', pixels }); });
const onnxPanel = new OnnxPanel(worker, pad);
const verifyPanel = new VerifyPanel(worker);
$('clear').addEventListener('click', () => {
  pad.clear();
  $('prediction').textContent = '–';
  $('probabilities').replaceChildren();
});

// ?run=short&build=scalar&threads=2&autostart=1 preselects (the browser test uses them);
// ?onnx=NAME loads that sample ONNX model.
if (params.get('run')) $('run').value = params.get('run');
if (params.get('build')) $('build').value = params.get('build');
if (params.get('threads')) $('threads').value = params.get('threads');
golden = await loadGolden();
await onnxPanel.loadGolden();
showGolden($('run').value);
$('verdict').textContent = 'no result yet';
worker.postMessage({ type: 'init', ...engineChoice() });
for (const id of ['build', 'threads']) $(id).addEventListener('change', () => worker.postMessage({ type: 'init', ...engineChoice() }));
if (params.get('onnx')) {
  $('onnx-sample').value = params.get('onnx');
  onnxPanel.loadSample(params.get('onnx'));
}
if (params.get('autostart') === '1') {
  const begin = () => ($('start').disabled ? setTimeout(begin, 50) : start());
  begin();
}
