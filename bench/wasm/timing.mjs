// The benchmarks' timing: `warmup` calls, then `samples` samples of `steps` calls each; returns
// `ms median=M min=A max=B` over the samples' mean milliseconds per call.
export async function timeCalls(run, { warmup, samples, steps }) {
  for (let i = 0; i < warmup; ++i) await run();
  const times = [];
  for (let s = 0; s < samples; ++s) {
    const start = performance.now();
    for (let i = 0; i < steps; ++i) await run();
    times.push((performance.now() - start) / steps);
  }
  times.sort((a, b) => a - b);
  return `ms median=${times[Math.floor(times.length / 2)].toFixed(3)} min=${times[0].toFixed(3)} ` +
         `max=${times.at(-1).toFixed(3)}`;
}
