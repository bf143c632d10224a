import { Worker } from 'node:worker_threads';
import { errorFromData } from '../errors.js';

/**
 * The command line's pass, on a thread of its own (compress-thread-worker.js) with a young
 * generation of YOUNG_MB: on the main thread V8 sizes it from the machine's memory (128 MB
 * committed on a machine of 24 GiB), and a pass over 10^5 files grows it to the full size. The
 * thread also paces its collections (heap-pace.js). Progress comes back as messages; the report,
 * or the error (its class, code and path kept), once.
 */

/** The pass thread's young generation, in MB (the pool's workers have 12). */
const YOUNG_MB = 16;

/**
 * precompress() on the pass thread.
 * @param {string} dir
 * @param {import('../types.js').PrecompressOptions} options plain data (what the command line sets)
 * @param {((p: import('../format.js').Progress) => void) | undefined} onProgress
 * @param {{ changes?: boolean }} [want] changes: the report's list of changes (one object per file
 *   changed: on a big first build, a copy of 10^5 objects made for this thread); else it comes empty
 * @returns {Promise<import('../types.js').Report>}
 */
export function precompressInThread(dir, options, onProgress, { changes = true } = {}) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./compress-thread-worker.js', import.meta.url), {
      workerData: { dir, options, progress: onProgress !== undefined, changes },
      resourceLimits: { maxYoungGenerationSizeMb: YOUNG_MB },
    });
    worker.on('message', (/** @type {{ type: string, progress?: any, report?: any, error?: any }} */ m) => {
      if (m.type === 'progress') onProgress?.(m.progress);
      else if (m.type === 'done') resolve(m.report);
      else reject(errorFromData(m.error));
    });
    worker.once('error', reject);
    // After a settled promise this does nothing; before, the thread died without a word.
    worker.once('exit', (code) => reject(new Error(`the compression thread exited (code ${code}) without a report`)));
  });
}
