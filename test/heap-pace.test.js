import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { collector, paceCollections, shouldCollect, workerCollectEvery } from '../lib/util/heap-pace.js';

const MB = 1024 * 1024;
const paceModule = fileURLToPath(new URL('../lib/util/heap-pace.js', import.meta.url));

test('a collection is due once the heap holds 1.5 × what was live after the last one, plus 8 MB', () => {
  expect(shouldCollect(8 * MB, 0)).toBe(false);
  expect(shouldCollect(8 * MB + 1, 0)).toBe(true);
  expect(shouldCollect(158 * MB, 100 * MB)).toBe(false);
  expect(shouldCollect(158 * MB + 1, 100 * MB)).toBe(true);
});

test('workers collect every 512 files in a pass of 20,000 files or more, never by count below', () => {
  expect(workerCollectEvery(0)).toBe(0);
  expect(workerCollectEvery(19_999)).toBe(0);
  expect(workerCollectEvery(20_000)).toBe(512);
  expect(workerCollectEvery(1_000_000)).toBe(512);
});

test('paceCollections() calls gc once the heap has grown, and not at all without one', async () => {
  expect(paceCollections(null)()).toBeUndefined();
  let calls = 0;
  /** @type {object[][]} */
  let held = [];
  const stop = paceCollections(() => {
    calls++;
    held = [];
  });
  try {
    // Keep allocating (and letting the timer run) until the pacer acts: no clock in the test.
    while (calls === 0) {
      held.push(Array.from({ length: 1e5 }, () => ({})));
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    stop();
  }
  expect(calls).toBe(1);
});

test('without the flag, collector() takes only a gc() the context already has', () => {
  expect(collector({ expose: false })).toBe(/** @type {any} */ (globalThis).gc ?? null);
});

test('collector({ expose: true }) gives a gc() to this thread and to the threads started after it', () => {
  // What a pool worker does (lib/compress/variants/worker.js): take the gc() the process exposed, if any.
  const inWorker = 'import { parentPort } from "node:worker_threads"; ' +
    `const { collector } = await import(${JSON.stringify(paceModule)}); ` +
    'parentPort.postMessage([typeof gc, typeof collector({ expose: false })]);';
  // In a process of its own: the flag is process-wide.
  const script = `
    const { collector } = await import(${JSON.stringify(paceModule)});
    const { Worker } = await import('node:worker_threads');
    const before = [typeof globalThis.gc, collector({ expose: false })];
    const gc = collector({ expose: true });
    gc();
    const w = new Worker(${JSON.stringify(inWorker)}, { eval: true });
    w.once('message', (seen) => { console.log(JSON.stringify([...before, typeof gc, ...seen])); w.terminate(); });`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(JSON.parse(out)).toEqual(['undefined', null, 'function', 'function', 'function']);
});
