import { performance } from 'node:perf_hooks';
import { canDecode } from '../encoders/index.js';
import { compressBuffered } from '../variants/index.js';
import { SPLIT_THRESHOLD, costOf, joinResults } from './file-tasks.js';

/**
 * Small files whose variants are in the cache are taken on this thread, so that a pass that only
 * takes from the cache starts no worker (that costs more CPU than the take); after a few misses every
 * file goes to the pool, which also takes a share when this thread turns out slow.
 */

/**
 * @typedef {import('../variants/index.js').CompressTask} CompressTask
 * @typedef {import('../variants/index.js').TaskResult} TaskResult
 * @typedef {{ task: CompressTask, cost?: number,
 *   resolve: (r: TaskResult) => void, reject: (err: unknown) => void }} Queued
 */

/** Passes with more files to compress than this are not done on this thread whole (SMALL_PASS_COST). */
const MAX_FILES = 2000;

/**
 * A pass whose work is estimated below this (estimatedCost() units, about a microsecond of CPU each)
 * is done on this thread whole, encodings included: starting the workers costs more.
 */
export const SMALL_PASS_COST = 200_000;

/**
 * What starting the workers costs a pass's wall time (estimatedCost() units): a pass that would
 * not end sooner by this much on the pool (its largest file, or its share per core, bounds it
 * there) is done on this thread, as one big bundle with a few small files is; up to HERE_MAX_COST,
 * and only a whole folder's pass (a build), never a watch batch in a process that may serve.
 */
export const POOL_START_COST = 150_000;
const HERE_MAX_COST = 1_000_000;

/**
 * Is a pass done on this thread, encodings included (pure)? Yes when small, or (`build`) when its
 * work is no more than its wall time on `cores` workers plus their start-up.
 * @param {{ cost: number, largest: number, cores: number, build: boolean }} work estimated cost
 *   of all, of the largest file
 */
export function onThisThread({ cost, largest, cores, build }) {
  if (cost <= SMALL_PASS_COST) return true;
  return build && cost <= HERE_MAX_COST && cost <= Math.max(largest, cost / cores) + POOL_START_COST;
}

/** Files whose variants were not all in the cache before trying here stops (with one in eight hits more). */
const MISSES_ALLOWED = 8;

/**
 * Work done here between two turns of the event loop (ms); less while the pool shares the files, so
 * that its workers, kept POOL_AHEAD tasks ahead (a few ms of takes from the cache), are fed again in time.
 */
const SLICE_MS = 8;
const SHARED_SLICE_MS = 2;

/**
 * When the files left would take this thread longer than this (ms) at its pace so far, the pool
 * shares them (creating a file can cost the kernel a millisecond on ext4 after many deletions).
 */
const SHARE_AFTER_MS = 300;

/** Files measured here before the pace is trusted. */
const PACE_SAMPLE = 16;

/**
 * Tasks kept queued on the pool while it shares the files with this thread: half of the files under
 * way at once (ADMITTED in compressions.js), so that the other half is this thread's to take.
 */
const POOL_AHEAD = 32;

/**
 * CPU time of this thread (ms): the pace is measured in CPU time, which other processes do not stretch.
 */
function cpuMs() {
  const u = typeof process.threadCpuUsage === 'function' ? process.threadCpuUsage() : process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * @param {{ left: number, tried: number, spentMs: number }} pace files left, files tried here and their CPU time
 */
export function poolShares({ left, tried, spentMs }) {
  return tried >= PACE_SAMPLE && (left * spentMs) / tried > SHARE_AFTER_MS;
}

/**
 * The task of the encodings the cache could not give here, for the pool: it does not read the cache again.
 * @param {CompressTask} task
 * @param {Array<import('../../encodings.js').Encoding>} missing
 * @returns {CompressTask}
 */
function rest(task, missing) {
  return { ...task, encodings: missing, cache: task.cache && { ...task.cache, read: false } };
}

export class CacheFirst {
  /** still trying files here */
  on;
  /** the whole pass is done here, encodings included (see SMALL_PASS_COST) */
  small = false;
  hits = 0;
  misses = 0;
  /** files to compress in the pass (plan()), and the CPU time this thread spent on those it measured */
  total = 0;
  spentMs = 0;
  /** @type {number | undefined} this thread's CPU time (ms) once the first sample of files was tried here */
  paceFrom;
  /** whether the pool shares the files (see poolShares()), and its tasks in flight */
  sharing = false;
  inPool = 0;
  /** @type {Queued[]} files waiting to be tried here */
  queue = [];
  /**
   * drain() loops running: one, or on a pass done here one per core and one more (their encodes run on
   * libuv's pool): while this thread writes a file's variants (creating a file blocks it), the other
   * files' encodes keep the cores busy, and libuv keeps a thread for file I/O (bin/precompressor.js) (#31)
   */
  draining = 0;
  sliceStart = performance.now();

  /**
   * @param {import('../../options.js').Options} opts
   * @param {{ read: boolean } | null} cache the pass's use of the cache (null: off)
   * @param {{ run(task: CompressTask, cost?: number): Promise<TaskResult>, readonly spawned: boolean,
   *   limit(n: number): void }} pool limit: how many workers get work (this thread takes a core's share)
   * @param {{ onStart?: (task: CompressTask) => void, build?: boolean }} [how] onStart: a task starts
   *   here on a pass done on this thread; build: a whole folder's pass (see onThisThread())
   */
  constructor(opts, cache, pool, how = {}) {
    this.opts = opts;
    this.pool = pool;
    this.onStart = how.onStart ?? (() => {});
    this.build = how.build === true;
    this.on = cache?.read === true && opts.encodings.every(canDecode);
  }

  /**
   * The pass has `count` files to compress, of estimated `cost` (`largest` the largest file's): so
   * little that the workers are not worth starting?
   * @param {number} count
   * @param {number} cost
   * @param {number} [largest]
   */
  plan(count, cost, largest = cost) {
    this.total = count;
    this.small = !this.pool.spawned && count <= MAX_FILES &&
      onThisThread({ cost, largest, cores: this.opts.concurrency, build: this.build });
  }

  /**
   * Run `task`: what the cache holds of it here, the rest on the pool. drain() lets the event loop
   * turn between slices (the pool's replies come in).
   * @param {CompressTask} task
   * @param {number} [cost]
   * @returns {Promise<TaskResult>}
   */
  run(task, cost) {
    if (!this.wants(task)) return this.onPool(task, cost);
    return new Promise((resolve, reject) => {
      this.queue.push({ task, cost, resolve, reject });
      if (this.draining < (this.small ? Math.max(1, this.opts.concurrency) + 1 : 1)) void this.drain();
    });
  }

  /** Take the queued files here (or hand them to the pool), a slice at a time. */
  async drain() {
    this.draining++;
    while (this.queue.length > 0) {
      const job = /** @type {Queued} */ (this.queue.shift());
      if (!this.wants(job.task) || (this.sharing && this.inPool < POOL_AHEAD)) {
        this.onPool(job.task, job.cost).then(job.resolve, job.reject);
        continue;
      }
      try {
        const here = await this.take(job.task);
        const { missing } = here;
        if (missing === undefined) job.resolve(here);
        else this.onPool(rest(job.task, missing), costOf(job.task.sizeHint, missing, this.opts))
          .then((r) => joinResults(here, r)).then(job.resolve, job.reject);
      } catch (err) {
        job.reject(err);
      }
      await this.pause();
    }
    this.draining--;
  }

  /**
   * @param {CompressTask} task
   * @param {number} [cost]
   */
  async onPool(task, cost) {
    this.inPool++;
    try {
      return await this.pool.run(task, cost);
    } finally {
      this.inPool--;
    }
  }

  /**
   * Is `task` one to try here: a small file while no file has missed, or any file read whole of a
   * pass done here?
   * @param {CompressTask} task
   */
  wants(task) {
    if (task.sizeHint >= task.streamThreshold) return false;
    return this.small || (this.on && task.sizeHint < SPLIT_THRESHOLD);
  }

  /**
   * What the cache holds of `task`, written; `missing` lists the encodings left to encode.
   * Throws as a worker's task would (a file changed meanwhile).
   * @param {CompressTask} task
   */
  async take(task) {
    if (this.small) this.onStart(task);
    const r = await compressBuffered(task, { cachedOnly: !this.small, offThread: this.small });
    if (r.missing) this.misses++;
    else this.hits++;
    const tried = this.hits + this.misses;
    // The clock (a system call) is read once per sample of files, after the first (which warms up).
    if (tried === PACE_SAMPLE) this.paceFrom = cpuMs();
    else if (tried % PACE_SAMPLE === 0 && this.paceFrom !== undefined) {
      this.spentMs = cpuMs() - this.paceFrom;
      const shares = poolShares({ left: this.total - tried, tried: tried - PACE_SAMPLE, spentMs: this.spentMs });
      // This thread goes on taking: a core's share, so the pool uses one worker fewer.
      if (shares && !this.sharing) this.pool.limit(this.opts.concurrency - 1);
      this.sharing ||= shares;
    }
    // A cold cache: stop reading files twice (here, then in a worker) after a few.
    if (this.on && this.misses > MISSES_ALLOWED + this.hits / 8) {
      this.on = false;
      this.pool.limit(Infinity);
    }
    return r;
  }

  /** Let the event loop turn when this thread has worked here for a slice. */
  async pause() {
    if (performance.now() - this.sliceStart < (this.sharing ? SHARED_SLICE_MS : SLICE_MS)) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.sliceStart = performance.now();
  }
}
