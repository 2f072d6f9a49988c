// The first script of each pthread worker in a browser (browser-workers.js): it tells the loader it
// runs, then becomes Emscripten's worker script.
postMessage({ cmd: 'lockstep-started' });
importScripts('./lockstep-threads.worker.js');
