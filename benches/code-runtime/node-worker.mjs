// The Node.js side of the Code Mode runtime comparison (run by
// tools-runtime/benches/code_runtime.rs, or by hand:
// `node benches/code-runtime/node-worker.mjs [iterations]`).
//
// For every run it starts a fresh `worker_threads` Worker, runs the program in it as the body
// of an async function, bridges each `tools.name(args)` call to the main thread over
// `postMessage`, where a host answers at once with the arguments, and stops the worker when
// the program settles. A run is timed from `new Worker` until the worker has terminated, like
// a fresh TypeScript run in the Rust bench (which also creates and frees its engine).
// The programs are the bench's programs with their type annotations removed by hand (Node 20
// does not strip types), so Node is not charged for type stripping.
//
// Prints one JSON object: {"node": version, "iterations": n, "median_ms": {scenario: ms}}.
import { Worker } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
let next = 0;
const pending = new Map();
parentPort.on('message', (m) => {
  const p = pending.get(m.id);
  pending.delete(m.id);
  if (m.ok) p.resolve(m.value); else p.reject(new Error(m.message));
});
const tools = new Proxy({}, {
  get: (_, name) => (args) => new Promise((resolve, reject) => {
    const id = ++next;
    pending.set(id, { resolve, reject });
    parentPort.postMessage({ t: 'call', id, name, args: JSON.parse(JSON.stringify(args)) });
  }),
});
const AsyncFunction = (async () => {}).constructor;
new AsyncFunction('tools', workerData.program)(tools).then(
  (result) => parentPort.postMessage({ t: 'done', result }),
  (error) => parentPort.postMessage({ t: 'error', message: String(error) }),
);
`;

export const SCENARIOS = {
  one_call: 'const r = await tools.echo({ n: 1 });\nreturn r;',
  sequential_100:
    'let s = 0;\nfor (let i = 0; i < 100; i++) {\n  const r = await tools.echo({ n: i });\n  s += r.n;\n}\nreturn s;',
  concurrent_1000:
    'const r = await Promise.all(Array.from({ length: 1000 }, (_, i) => tools.echo({ n: i })));\nreturn r.length;',
};

function runOnce(program) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { program } });
    worker.on('message', (m) => {
      if (m.t === 'call') {
        worker.postMessage({ id: m.id, ok: true, value: m.args });
      } else if (m.t === 'done') {
        worker.terminate().then(() => resolve(m.result), reject);
      } else {
        worker.terminate().then(() => reject(new Error(m.message)), reject);
      }
    });
    worker.on('error', reject);
  });
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function main() {
  const iterations = Number(process.argv[2] ?? 30);
  const medianMs = {};
  for (const [name, program] of Object.entries(SCENARIOS)) {
    await runOnce(program); // warm-up
    const times = [];
    for (let i = 0; i < iterations; i++) {
      const start = performance.now();
      await runOnce(program);
      times.push(performance.now() - start);
    }
    medianMs[name] = median(times);
  }
  console.log(JSON.stringify({ node: process.version, iterations, median_ms: medianMs }));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
