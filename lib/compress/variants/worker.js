import { parentPort } from 'node:worker_threads';
import { compressBuffered } from './buffered.js';
import { claimBatch } from '../pool/index.js';
import { collector, paceCollections } from '../../util/heap-pace.js';

/**
 * Worker thread: compress a batch of files per message, one after another (buffered.js).
 * Sync zlib in a worker avoids the main-thread round trip per output chunk that async zlib makes,
 * and is not capped by libuv's shared 4-thread pool.
 */

// Paced where the process exposes gc() (the command line's pass does: lib/util/heap-pace.js), and in
// a big pass also every `collectEvery` files (workerCollectEvery()).
const gc = collector({ expose: false });
paceCollections(gc);
let sinceCollected = 0;

/** One batch of tasks (see lib/compress/pool/pool.js), one reply with a result or an error per task. */
parentPort?.on('message', async ({ id, tasks, claim, collectEvery }) => {
  if (!claimBatch(claim)) return; // taken back by the pool for an idle worker
  const results = [];
  for (const task of tasks) {
    try {
      results.push({ result: await compressBuffered(task) });
      if (gc !== null && collectEvery > 0 && ++sinceCollected >= collectEvery) {
        sinceCollected = 0;
        gc();
      }
    } catch (err) {
      const e = /** @type {any} */ (err);
      results.push({ error: { message: e.message, code: e.code, changed: !!e.changed } });
    }
  }
  parentPort?.postMessage({ id, results });
});
