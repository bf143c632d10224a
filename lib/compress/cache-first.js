import { performance } from 'node:perf_hooks';
import { canDecode } from './decode-check.js';
import { compressBufferedSync } from './compress-buffered.js';
import { SPLIT_THRESHOLD, costOf, joinResults } from './file-tasks.js';

/**
 * Small files whose variants are in the variant cache are taken on this thread (read, proven by
 * decoding, written: compress-buffered.js), so that a pass that only takes from the cache starts
 * no worker: starting them costs more CPU than the whole take. A file with a variant to encode
 * sends those encodings to the pool; once such misses are more than a few, every later file goes
 * to the pool, as do all the files of a pass with many (MAX_FILES).
 */

/**
 * @typedef {import('./compress-file.js').CompressTask} CompressTask
 * @typedef {import('./compress-file.js').TaskResult} TaskResult
 */

/**
 * Passes with more files to compress than this use the pool at once: one thread taking them all
 * would take longer than the workers take to start and share them.
 */
const MAX_FILES = 2000;

/** Files whose variants were not all in the cache before trying here stops (with one in eight hits more). */
const MISSES_ALLOWED = 8;

/** Work done here between two turns of the event loop (ms). */
const SLICE_MS = 8;

export class CacheFirst {
  /** still trying files here */
  on;
  hits = 0;
  misses = 0;
  sliceStart = performance.now();

  /**
   * @param {import('../options.js').Options} opts
   * @param {{ read: boolean } | null} cache the pass's use of the cache (null: off)
   * @param {{ run(task: CompressTask, cost?: number): Promise<TaskResult> }} pool
   */
  constructor(opts, cache, pool) {
    this.opts = opts;
    this.pool = pool;
    this.on = cache?.read === true && opts.encodings.every(canDecode);
  }

  /**
   * The pass has `count` files to compress: too many for this thread alone?
   * @param {number} count
   */
  plan(count) {
    if (count > MAX_FILES) this.on = false;
  }

  /**
   * Run `task`: what the cache holds of it here, the rest on the pool.
   * @param {CompressTask} task
   * @param {number} [cost]
   * @returns {Promise<TaskResult>}
   */
  async run(task, cost) {
    if (!this.wants(task)) return this.pool.run(task, cost);
    const here = this.take(task);
    if (here.missing === undefined) {
      await this.pause();
      return here;
    }
    const { missing } = here;
    const rest = await this.pool.run({ ...task, encodings: missing }, costOf(task.sizeHint, missing, this.opts));
    return joinResults(here, rest);
  }

  /**
   * Is `task` one to try here: a small file, while no file has missed?
   * @param {CompressTask} task
   */
  wants(task) {
    return this.on && task.sizeHint < SPLIT_THRESHOLD && task.sizeHint < task.streamThreshold;
  }

  /**
   * What the cache holds of `task`, written; `missing` lists the encodings left to encode.
   * Throws as a worker's task would (a file changed meanwhile).
   * @param {CompressTask} task
   */
  take(task) {
    const r = compressBufferedSync(task, { cachedOnly: true });
    if (r.missing) this.misses++;
    else this.hits++;
    // A cold cache: stop reading files twice (here, then in a worker) after a few.
    if (this.misses > MISSES_ALLOWED + this.hits / 8) this.on = false;
    return r;
  }

  /** Let the event loop turn when this thread has worked here for a slice. */
  async pause() {
    if (performance.now() - this.sliceStart < SLICE_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.sliceStart = performance.now();
  }
}
