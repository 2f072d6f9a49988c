// The ONNX panel of the page: a dropped or sample .onnx model, run in the worker on its sample
// input (or the drawing pad), each output's hash shown beside the native `lockstep run` hash from
// tests/golden/onnx.txt (sample models) or with the command that reproduces it (any model).
const $ = (id) => document.getElementById(id);

export class OnnxPanel {
  constructor(worker, pad) {
    this.worker = worker;
    this.pad = pad;
    this.golden = {};
    this.model = null;   // { name, sample, inputs, outputs }
    this.inputUrl = null;
    const drop = $('onnx-drop');
    drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
    drop.addEventListener('dragleave', () => drop.classList.remove('over'));
    drop.addEventListener('drop', (e) => {
      e.preventDefault();
      drop.classList.remove('over');
      if (e.dataTransfer.files.length) this.loadFile(e.dataTransfer.files[0]);
    });
    $('onnx-file').addEventListener('change', (e) => { if (e.target.files.length) this.loadFile(e.target.files[0]); });
    $('onnx-sample').addEventListener('change', (e) => { if (e.target.value) this.loadSample(e.target.value); });
    $('onnx-controls').addEventListener('submit', (e) => { e.preventDefault(); this.run(); });
  }

  // tests/golden/onnx.txt: "<model> <kind> <hash>" lines written from the native build.
  async loadGolden() {
    const text = await (await fetch('./golden/onnx.txt')).text();
    for (const line of text.split('\n')) {
      const [model, kind, hash] = line.trim().split(/\s+/);
      if (model && !model.startsWith('#')) this.golden[`${model} ${kind}`] = hash;
    }
  }

  loadFile(file) {
    $('onnx-sample').value = '';
    file.arrayBuffer().then((buffer) => this.load(file.name, null, new Uint8Array(buffer)));
  }

  async loadSample(name) {
    const bytes = new Uint8Array(await (await fetch(`./models/onnx/${name}.onnx`)).arrayBuffer());
    this.load(`${name}.onnx`, name, bytes);
  }

  load(name, sample, bytes) {
    this.model = null;
    $('onnx-run').disabled = true;
    $('onnx-model').textContent = `importing ${name}…`;
    delete $('onnx-model').dataset.loaded;
    $('onnx-outputs').replaceChildren();
    this.setVerdict('pending', 'no result yet');
    this.worker.postMessage({ type: 'onnx-load', name, sample, bytes }, [bytes.buffer]);
  }

  async run() {
    if (!this.model) return;
    const source = $('onnx-input').value;
    const message = { type: 'onnx-run', source };
    if (source === 'pad') {
      const pixels = this.pad.pixels();
      if (!pixels) {
        this.setVerdict('pending', 'draw a digit on the pad first');
        return;
      }
      message.pixels = pixels;
    } else if (this.model.sample) {
      message.npy = new Uint8Array(await (await fetch(`./models/onnx/${this.model.sample}.input.npy`)).arrayBuffer());
    }
    $('onnx-run').disabled = true;
    this.setVerdict('pending', 'running…');
    this.worker.postMessage(message);
  }

  setVerdict(kind, text) {
    const verdict = $('onnx-verdict');
    verdict.className = `verdict ${kind}`;
    verdict.textContent = text;
    if (kind === 'pending') delete verdict.dataset.verdict;
    else verdict.dataset.verdict = kind;
  }

  // Messages from the worker: onnx-model, onnx-result, or an error during either.
  handle(data) {
    if (data.type === 'onnx-model') {
      this.model = data;
      const describe = (io) => `${io.name} ${io.dtype}[${io.shape ? io.shape.join(', ') : '?'}]`;
      $('onnx-model').textContent = `${data.name}: opset ${data.opset}${data.producer ? `, from ${data.producer}` : ''}; ` +
          `inputs ${data.inputs.map(describe).join(', ')}; outputs ${data.outputs.map(describe).join(', ')}; ` +
          `${data.parameters} parameters`;
      $('onnx-model').dataset.loaded = data.name;
      $('onnx-run').disabled = false;
      return true;
    }
    if (data.type === 'onnx-result') {
      $('onnx-run').disabled = false;
      const golden = data.source === 'sample' && this.model.sample;
      let all = true;
      $('onnx-outputs').replaceChildren(...data.outputs.map((o) => {
        const row = document.createElement('tr');
        const want = golden ? this.golden[`${this.model.sample} ${o.name === this.model.outputs[0].name ? 'output' : o.name}`] : undefined;
        const same = want === o.hash;
        all &&= same;
        const cells = [`${o.name} ${o.dtype}[${o.shape.join(', ')}]`, o.hash, want ?? '(run the command below)', want ? (same ? '✓' : '✗') : ''];
        row.replaceChildren(...cells.map((text) => { const td = document.createElement('td'); td.textContent = text; return td; }));
        row.dataset.hash = o.hash;
        if (want) row.className = same ? 'match' : 'mismatch';
        return row;
      }));
      if (this.inputUrl) URL.revokeObjectURL(this.inputUrl);
      this.inputUrl = URL.createObjectURL(new Blob([data.inputNpy], { type: 'application/octet-stream' }));
      const link = $('onnx-input-download');
      link.href = this.inputUrl;
      link.download = `${data.inputName}.npy`;
      link.classList.remove('hidden');
      $('onnx-command').textContent = `Natively: lockstep run ${this.model.name} --input ${data.inputName}=${data.inputName}.npy` +
          (data.prediction !== undefined ? ` (this digit: class ${data.prediction})` : '');
      if (golden) {
        this.setVerdict(all ? 'match' : 'mismatch', all
          ? `MATCH: WebAssembly ${data.build} computed the native build's output bits.`
          : `MISMATCH: the output differs from the native build's (WebAssembly ${data.build}). Please report it.`);
      } else {
        this.setVerdict('computed', `Computed in WebAssembly ${data.build}: compare with the native command below ` +
                                    'on the downloaded input.');
      }
      return true;
    }
    if (data.type === 'error' && (data.during === 'onnx-load' || data.during === 'onnx-run')) {
      $('onnx-run').disabled = !this.model;
      if (data.during === 'onnx-load') $('onnx-model').textContent = `cannot import: ${data.message}`;
      this.setVerdict('error', `error: ${data.message}`);
      return true;
    }
    return false;
  }
}
