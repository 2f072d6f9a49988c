// The verification panel of the page: a receipt (docs/verifiable-training.md) of the MNIST
// reference run, from this page's run or from files (the receipt and the .state files beside it,
// as `lockstep train mnist --receipt run.receipt` writes them), has a random sample of its steps
// re-executed in the worker; each sampled step's verdict is shown beside it as it comes.
const $ = (id) => document.getElementById(id);

export class VerifyPanel {
  constructor(worker) {
    this.worker = worker;
    this.files = null;  // { text, states, names } chosen by the user
    this.source = null; // 'page' or 'files'
    $('verify-files').addEventListener('change', (e) => this.readFiles(Array.from(e.target.files)));
    $('verify-page-run').addEventListener('click', () => this.use('page'));
    $('verify-controls').addEventListener('submit', (e) => { e.preventDefault(); this.start(); });
  }

  // The receipt is the file that starts as one; the other files are its states, by name.
  async readFiles(files) {
    $('verify-source').textContent = 'reading the files…';
    $('verify-start').disabled = true;
    let text = null;
    const states = {};
    for (const file of files) {
      const bytes = new Uint8Array(await file.arrayBuffer());
      const head = new TextDecoder().decode(bytes.subarray(0, 20));
      if (head === '{"lockstep_receipt":') text = new TextDecoder().decode(bytes);
      else states[file.name] = bytes;
    }
    if (text === null) {
      this.setVerdict('error', 'none of the chosen files is a lockstep receipt (choose run.receipt with its .state files)');
      return;
    }
    this.files = { text, states };
    this.use('files', `${files.find((f) => !(f.name in states))?.name ?? 'the receipt'} with ${Object.keys(states).length} kept states`);
  }

  use(source, what) {
    this.source = source;
    $('verify-source').textContent = source === 'page' ? `the run above (${this.pageRun})` : what;
    $('verify-start').disabled = false;
  }

  setVerdict(kind, text) {
    const verdict = $('verify-verdict');
    verdict.className = `verdict ${kind}`;
    verdict.textContent = text;
    if (kind === 'pending') delete verdict.dataset.verdict;
    else verdict.dataset.verdict = kind;
  }

  start() {
    const sample = Number($('verify-sample').value);
    const seed = $('verify-seed').value === '' ? crypto.getRandomValues(new Uint32Array(1))[0] : Number($('verify-seed').value);
    $('verify-steps').replaceChildren();
    $('verify-command').textContent = '';
    $('verify-start').disabled = true;
    this.setVerdict('pending', `re-executing ${sample} sampled steps (seed ${seed})…`);
    const message = { type: 'verify', source: this.source, sample, seed };
    if (this.source === 'files') Object.assign(message, this.files);
    this.worker.postMessage(message);
  }

  // Messages from the worker; true when handled here.
  handle(data) {
    switch (data.type) {
      case 'page-receipt':
        $('verify-page-run').disabled = data.steps === 0;
        this.pageRun = `${data.steps} steps, ${data.kept} kept states`;
        if (data.steps > 0 && this.source !== 'files') this.use('page');
        return true;
      case 'verify-step': {
        const li = document.createElement('li');
        li.dataset.step = data.step;
        li.dataset.ok = data.ok;
        li.className = data.ok ? 'match' : 'mismatch';
        li.textContent = `step ${data.step} ${data.ok ? '✓ matches the receipt' : '✗ does not match the receipt'}`;
        $('verify-steps').append(li);
        return true;
      }
      case 'verify-result':
        $('verify-start').disabled = false;
        if (data.verified) {
          this.setVerdict('match', `VERIFIED: ${data.checkedSteps} sampled steps re-executed here (WebAssembly ${
            data.build}, ${data.executedSteps} steps run) give the states the receipt records.`);
        } else {
          this.setVerdict('mismatch', `FAILED at step ${data.firstMismatch}: ${data.mismatch}`);
        }
        $('verify-command').textContent = `The same check natively: lockstep verify-run run.receipt --sample ${
          data.sample} --seed ${data.seed}`;
        return true;
      case 'error':
        if (data.during !== 'verify') return false;
        $('verify-start').disabled = false;
        this.setVerdict('error', `refused: ${data.message}`);
        return true;
      default:
        return false;
    }
  }
}
