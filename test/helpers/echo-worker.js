// Worker for test/compress/pool.test.js: answers a batch with one result per task (see lib/compress/pool/pool.js).
import { parentPort, threadId } from 'node:worker_threads';
import { claimBatch } from '../../lib/compress/pool/pool.js';

parentPort?.on('message', ({ id, tasks, claim }) => {
  if (!claimBatch(claim)) return;
  if (tasks.some((t) => t.crash)) throw new Error('worker crashed');
  if (tasks.some((t) => t.exit)) process.exit(3);
  // a gate (Int32Array on shared memory) holds the batch until the test opens it
  for (const t of tasks) while (t.gate && Atomics.load(t.gate, 0) === 0) Atomics.wait(t.gate, 0, 0);
  const end = Date.now() + Math.max(0, ...tasks.map((t) => t.ms ?? 0));
  while (Date.now() < end); // busy, like a sync encoder
  parentPort?.postMessage({
    id,
    results: tasks.map((t) => (t.fail ? { error: { message: `task ${t.n} failed`, code: 'E_TASK' } } : { result: { n: t.n, batch: tasks.length, thread: threadId } })),
  });
});
