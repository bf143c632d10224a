import { Worker } from 'node:worker_threads';
import { errorFromData } from '../errors.js';

/**
 * The command line's pass, on a thread of its own (compress-thread-worker.js) with a young
 * generation of YOUNG_MB: on the main thread V8 sizes it from the machine's memory, and a long
 * pass grows it to the full size (docs/benchmarks.md, "The CLI's cold run"). The
 * thread also paces its collections (lib/heap-pace.js). bin/precompressor.js starts it ahead,
 * before it loads the argument parser, so that its start and module loading run on another core
 * meanwhile. Progress comes back as messages; the report, or the error (its class, code and path
 * kept), once.
 */

/** The pass thread's young generation, in MB (the pool's workers have 4). */
const YOUNG_MB = 16;

/** @type {Worker | null} a thread started ahead and not yet given its pass */
let ahead = null;

const spawn = () => new Worker(new URL('./compress-thread-worker.js', import.meta.url), {
  resourceLimits: { maxYoungGenerationSizeMb: YOUNG_MB },
});

/**
 * Do these arguments ask for a compression (pure)? What the pass thread is started ahead for:
 * not the `serve` and `cache` commands, nor `--help` or `--version`.
 * @param {readonly string[]} args
 */
export function asksForCompression(args) {
  const first = args.find((a) => !a.startsWith('-'));
  if (first === 'serve' || first === 'cache' || first === 'config') return false;
  return !args.some((a) => a === '--help' || a === '-h' || a === '--version');
}

/** Start the pass thread now, for the next precompressInThread(). */
export function startPassThread() {
  ahead ??= spawn();
}

/** End a thread started ahead that no pass came for (another command, a usage error). */
export async function endPassThread() {
  const w = ahead;
  ahead = null;
  await w?.terminate();
}

/**
 * precompress() on the pass thread (the one started ahead, or a new one).
 * @param {string} dir
 * @param {import('../types.js').PrecompressOptions} options plain data (what the command line sets)
 * @param {((p: import('../format.js').Progress) => void) | undefined} onProgress
 * @param {{ changes?: boolean }} [want] changes: the report's list of changes (one object per file
 *   changed: on a big first build, a copy of 10^5 objects made for this thread); else it comes empty
 * @returns {Promise<import('../types.js').Report>}
 */
export function precompressInThread(dir, options, onProgress, { changes = true } = {}) {
  const worker = ahead ?? spawn();
  ahead = null;
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
