#!/usr/bin/env node
// Serves the web demo: web/ at /, the npm package (build/npm/package, or $LOCKSTEP_NPM_PACKAGE) at
// /lockstep/, the MNIST files at /data/mnist/, the sample ONNX models at /models/onnx/ and the
// golden hashes at /golden/. Only GET and HEAD, only those folders; nothing else on the machine is
// reachable through it. Every response carries the cross-origin isolation headers, so the page
// may share memory with Web Workers and the engine runs its threads build; --no-isolation leaves
// them out, to see the fallback to the single-thread build (docs/wasm-threads.md).
// Usage: node tools/serve-web.mjs [--port N] [--host H] [--no-isolation]   (port 0 picks a free one)
import { createServer } from 'node:http';
import { createReadStream, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
};
const port = Number(option('--port', '8080'));
const host = option('--host', '127.0.0.1');
const isolated = !args.includes('--no-isolation');
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`serve-web: --port must be an integer in [0, 65535], got ${option('--port')}`);
  process.exit(2);
}

const mounts = [
  ['/lockstep/', process.env.LOCKSTEP_NPM_PACKAGE ?? path.join(root, 'build/npm/package')],
  ['/data/mnist/', path.join(root, '.deps/data/mnist')],
  ['/models/onnx/', path.join(root, '.deps/onnx')],
  ['/golden/', path.join(root, 'tests/golden')],
  ['/', path.join(root, 'web')],
];
for (const [, dir] of mounts) {
  if (!existsSync(dir)) {
    console.error(`serve-web: ${path.relative(root, dir)} is missing; run \`make web\` (it builds what the demo needs)`);
    process.exit(1);
  }
}

const types = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.wasm': 'application/wasm', '.txt': 'text/plain; charset=utf-8',
  '.json': 'application/json', '.svg': 'image/svg+xml', '.png': 'image/png', '.idx': 'application/octet-stream',
  '.onnx': 'application/octet-stream', '.npy': 'application/octet-stream',
};

function resolve(urlPath) {
  for (const [prefix, dir] of mounts) {
    if (!urlPath.startsWith(prefix)) continue;
    const relative = decodeURIComponent(urlPath.slice(prefix.length)) || 'index.html';
    const file = path.resolve(dir, relative);
    if (file !== dir && !file.startsWith(dir + path.sep)) return null;  // no way out of the folder
    return file;
  }
  return null;
}

// Cross-origin isolation: the page opens no window of another origin (COOP) and loads nothing
// that did not consent (COEP; everything here is same-origin), which lets it use SharedArrayBuffer.
const isolation = isolated ? {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
} : {};

const server = createServer((request, response) => {
  const url = new URL(request.url, 'http://localhost');
  const file = resolve(url.pathname);
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.writeHead(405, { Allow: 'GET, HEAD', ...isolation }).end();
    return;
  }
  if (!file || !existsSync(file) || !statSync(file).isFile()) {
    response.writeHead(404, { 'Content-Type': 'text/plain', ...isolation }).end(`not found: ${url.pathname}\n`);
    return;
  }
  response.writeHead(200, {
    'Content-Type': types[path.extname(file)] ?? 'application/octet-stream',
    'Content-Length': statSync(file).size,
    'Cache-Control': 'no-cache',
    ...isolation,
  });
  if (request.method === 'HEAD') response.end();
  else createReadStream(file).pipe(response);
});

server.listen(port, host, () => {
  const { port: actual } = server.address();
  console.log(`lockstep web demo: http://${host}:${actual}/  (${isolated ? 'cross-origin isolated' : 'not isolated'}; Ctrl-C stops it)`);
});
