// The entry point of one pthread of the threads build in Node (started by node-workers.js). It
// gives Emscripten's worker script (lockstep-threads.worker.js) the Web Worker globals it uses:
// self, postMessage and the messages from the engine's thread; then runs it.
import { parentPort, workerData } from 'node:worker_threads';

globalThis.self = globalThis;
globalThis.postMessage = (message, transfer) => parentPort.postMessage(message, transfer);
await import(workerData.script);
// The port holds messages until a listener is attached, so none is lost while the script loads.
parentPort.on('message', (data) => globalThis.onmessage({ data }));
