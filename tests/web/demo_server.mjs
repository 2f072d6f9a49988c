// What the browser tests of the web demo share: the golden hashes of the MNIST reference runs and
// the demo's server (tools/serve-web.mjs on a free port).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const outDir = path.join(root, 'build/web');

// tests/golden/mnist.txt as { run: { key: value } }.
export function golden() {
  const table = {};
  for (const line of readFileSync(path.join(root, 'tests/golden/mnist.txt'), 'utf8').split('\n')) {
    const [run, key, value] = line.trim().split(/\s+/);
    if (run && !run.startsWith('#')) (table[run] ??= {})[key] = value;
  }
  return table;
}

// tests/golden/onnx.txt as { 'model kind': hash }.
export function goldenOnnx() {
  const table = {};
  for (const line of readFileSync(path.join(root, 'tests/golden/onnx.txt'), 'utf8').split('\n')) {
    const [model, kind, hash] = line.trim().split(/\s+/);
    if (model && !model.startsWith('#')) table[`${model} ${kind}`] = hash;
  }
  return table;
}

// options.isolated: false serves without the cross-origin isolation headers (the page then falls
// back to a single-thread build).
export function startServer({ isolated = true } = {}) {
  const server = spawn(process.execPath, [path.join(root, 'tools/serve-web.mjs'), '--port', '0',
                                          ...(isolated ? [] : ['--no-isolation'])],
                       { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (chunk) => {
      out += chunk;
      const m = out.match(/http:\/\/[\d.]+:\d+\//);
      if (m) resolve({ server, url: m[0] });
    });
    server.on('exit', (code) => reject(new Error(`serve-web exited with ${code}: ${out}`)));
  });
}
