import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { errorFromData } from '../errors.js';

/**
 * The command line's pass, on a thread of its own for a big tree: there the young generation is
 * YOUNG_MB, where the main thread's grows to the machine's size (docs/benchmarks.md, "The CLI's cold run").
 */

/** The pass thread's young generation, in MB (the pool's workers have 4). */
const YOUNG_MB = 16;

/** Trees with fewer entries than this run their pass on this thread: the pass thread costs more to start. */
const SMALL_TREE = 5000;

/**
 * Does the tree under `dir` hold fewer than `limit` entries? Counted breadth first, up to the limit.
 * @param {string} dir
 * @param {number} [limit]
 */
export function fewEntries(dir, limit = SMALL_TREE) {
  let count = 0;
  const folders = [dir];
  while (folders.length > 0) {
    let entries;
    try {
      entries = fs.readdirSync(/** @type {string} */ (folders.pop()), { withFileTypes: true });
    } catch {
      continue; // the pass reports it
    }
    count += entries.length;
    if (count >= limit) return false;
    for (const e of entries) if (e.isDirectory()) folders.push(path.join(e.parentPath, e.name));
  }
  return true;
}

/**
 * precompress() for the command line: here for a small tree or a warm run, on the pass thread for
 * a large one's whole pass.
 * @param {string} dir
 * @param {import('../types.js').PrecompressOptions} options plain data (what the command line sets)
 * @param {((p: import('../util/format.js').Progress) => void) | undefined} onProgress
 * @param {{ changes?: boolean }} [want] changes: the report's list of changes (one object per file
 *   changed: on a big first build, a copy of 10^5 objects made for the thread); else it comes empty
 * @returns {Promise<import('../types.js').Report>}
 */
export async function precompressForCli(dir, options, onProgress, { changes = true } = {}) {
  if (fewEntries(dir)) {
    const { precompress } = await import('../compress/index.js');
    const report = await precompress(dir, { ...options, onProgress });
    return changes ? report : { ...report, changes: [] };
  }
  // A warm run (nothing changed: lib/compress/pass/warm-run.js) needs no thread; else the pass thread
  // runs the whole pass.
  const { precompressWarm } = await import('../compress/index.js');
  const warm = await precompressWarm(dir, { ...options, onProgress });
  if (warm !== null) return warm;
  const worker = new Worker(new URL('./compress-thread-worker.js', import.meta.url), {
    resourceLimits: { maxYoungGenerationSizeMb: YOUNG_MB },
  });
  return new Promise((resolve, reject) => {
    worker.on('message', (/** @type {{ type: string, progress?: any, report?: any, error?: any }} */ m) => {
      if (m.type === 'progress') onProgress?.(m.progress);
      else if (m.type === 'done') resolve(m.report);
      else reject(errorFromData(m.error));
    });
    worker.once('error', reject);
    // After a settled promise this does nothing; before, the thread died without a word.
    worker.once('exit', (code) => reject(new Error(`the compression thread exited (code ${code}) without a report`)));
    worker.postMessage({ dir, options, progress: onProgress !== undefined, changes });
  });
}
