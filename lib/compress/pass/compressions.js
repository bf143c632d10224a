import { brotliModeFor } from '../plan/index.js';
import { compressFile } from '../variants/index.js';
import { WORKER_URL } from '../variants/index.js';
import { makeTempDir, removeTemp } from '../../fs-atomic.js';
import { absPath } from '../../paths.js';
import { retryWhileChanged } from '../../util/flow.js';
import { Admission } from './admission.js';
import { CacheFirst } from './cache-first.js';
import { changedError, costOf, entryFrom, sameSource, splitTasks } from './file-tasks.js';

/** The pool's batching, in estimatedCost() units: what shares a message, and what goes ahead to a busy worker. */
const POOL_LIMITS = { batchCost: 32 * 1024, aheadCost: 64 * 1024 };

/** A job of at least this cost (a long one) is announced to onProgress as it starts. */
const LONG_JOB_COST = 256 * 1024;

const MAX_ATTEMPTS = 3;

/** Trees of fewer files than this, compressed on the planning thread, get their temps beside the targets. */
const TEMPS_BESIDE_BELOW = 1000;

/** Files under way at once (their tasks submitted to the pool, or about to be): see Admission. */
const ADMITTED = 64;

/**
 * @typedef {import('../../options.js').Encoding} Encoding
 * @typedef {import('../variants/index.js').TaskResult} TaskResult
 * @typedef {import('../variants/index.js').CompressTask} CompressTask
 * @typedef {import('../plan/index.js').WalkEntry} WalkedFile
 * @typedef {{ opts: import('../../options.js').Options, report: import('./report.js').Report,
 *   cache: ReturnType<typeof import('../cache/index.js').createCacheRun>,
 *   entries: Map<string, import('../../manifest/manifest.js').FileEntry>, failed: Set<string>,
 *   fail(rel: string, err: unknown): void, encodingsOf(rel: string): readonly Encoding[], build: boolean,
 *   fresh: number, decided: number }} PassState
 *   what the compression of a pass reads and records (lib/compress/pass/precompress.js); build: a whole
 *   folder's pass, not a watch batch (cache-first.js onThisThread()); fresh, decided: the files the walk
 *   found unchanged, and the others (precompress.js)
 */

/**
 * The compression work of a pass: each file's tasks, most expensive first, from the cache here or on
 * the pool, done again while the file changes between its encodings.
 */
export class Compressions {
  /** @type {{ cost: number, submit: () => void }[]} prepared tasks that submit() sends */
  queued = [];
  /** @type {Promise<string> | null} made on the first compression (see makeTempDir) */
  tempDir = null;
  /** the estimated cost of the files planned (flush()): a file's share of it may split it (splitTasks()) */
  plannedCost = Infinity;

  /**
   * @param {PassState} pass
   * @param {{ onJobStart?: (task: CompressTask) => void }} hooks
   */
  constructor(pass, hooks) {
    this.pass = pass;
    const { opts, report, cache } = pass;
    this.opts = opts;
    this.report = report;
    this.cache = cache;
    const onStart = jobStarts(pass, hooks);
    this.pool = new LazyPool(opts.concurrency, { ...POOL_LIMITS, onStart });
    // A new (or emptied) cache holds nothing: every file goes to the pool, started during the walk.
    // A long job on this thread is announced as on a worker (hooks.onJobStart is the pool's alone).
    const how = { onStart: jobStarts(pass, {}), build: pass.build };
    this.first = new CacheFirst(opts, cache.holdsAny() ? cache.task : null, this.pool, how);
    /** tasks go to the pool through `first`; streamed ones hold a pool slot on this thread */
    this.runner = { run: this.first.run.bind(this.first), exclusive: this.pool.exclusive.bind(this.pool) };
    /** @type {Admission<WalkedFile>} */
    this.files = new Admission(ADMITTED, (file, done) => this.start(file, () => {
      done();
      this.submit();
    }));
  }

  /** Start the workers now, unless the cache may serve the pass on this thread. */
  warm() {
    if (!this.first.on) this.pool.warm();
  }

  /**
   * @param {WalkedFile} file
   */
  schedule(file) {
    if (this.opts.dryRun) {
      this.report.change(file.rel, 'compress');
      return;
    }
    this.files.add(file, costOf(file.size, this.pass.encodingsOf(file.rel), this.opts));
  }

  /**
   * A file's tasks, done again while it changes between its encodings; `done` runs once it has ended.
   * @param {WalkedFile} file
   * @param {() => void} done
   */
  start(file, done) {
    let current = file;
    const job = retryWhileChanged(async (attempt) => {
      const results = await this.compressOnce(current, attempt > 1);
      if (results === null) return;
      this.report.ended(file.rel);
      if (!sameSource(results)) {
        current = { ...current, size: results[0].size };
        throw changedError();
      }
      const { entry, fromCache } = entryFrom(results, this.pass.encodingsOf(file.rel));
      this.pass.entries.set(file.rel, entry);
      this.report.compressed(file.rel, entry, fromCache);
    }, MAX_ATTEMPTS);
    void job.catch((err) => this.pass.fail(file.rel, err)).finally(done);
  }

  /**
   * Run the tasks of `file` (submitted by the next submit(), or at once on a retry); null when one failed.
   * @param {WalkedFile} file
   * @param {boolean} now
   * @returns {Promise<TaskResult[] | null>}
   */
  async compressOnce(file, now) {
    /** @type {TaskResult[]} */
    const results = [];
    const encodings = this.pass.encodingsOf(file.rel);
    const share = (costOf(file.size, encodings, this.opts) / this.plannedCost) * Math.max(1, this.opts.concurrency);
    const done = splitTasks(file.size, { encodings }, share).map((t) => {
      const cost = costOf(file.size, t.encodings, this.opts);
      return new Promise((resolve) => {
        const submit = () => this.runTask(file, t.encodings, cost, results)
          .catch((err) => this.pass.fail(file.rel, err))
          .then(resolve);
        this.queued.push({ cost, submit });
      });
    });
    if (now) this.submit();
    await Promise.all(done);
    return this.pass.failed.has(file.rel) ? null : results;
  }

  /**
   * @param {WalkedFile} file
   * @param {Encoding[]} encodings
   * @param {number} cost
   * @param {TaskResult[]} results
   */
  async runTask(file, encodings, cost, results) {
    if (this.pass.failed.has(file.rel)) return;
    // No run temp folder (see makeTempDir) for a small build done here: two folders made and removed for nothing.
    const { build, fresh, decided } = this.pass;
    const beside = build && this.first.small && fresh + decided < TEMPS_BESIDE_BELOW;
    const tempDir = beside ? null : await (this.tempDir ??= makeTempDir(this.opts.root));
    const task = taskOf(this.opts, this.cache.task, tempDir, file, { encodings, cost });
    const r = await compressFile(task, this.runner, cost);
    results.push(r);
    this.cache.add(r.cache);
    for (const enc of encodings) this.report.progress(r.size, enc);
  }

  flush() {
    if (!this.files.ordered) {
      const w = this.files.waiting;
      this.plannedCost = w.reduce((n, x) => n + x.cost, 0);
      this.first.plan(w.length, this.plannedCost, w.reduce((n, x) => Math.max(n, x.cost), 0));
      this.pool.files = this.files.waiting.length;
    }
    this.files.admit();
    this.submit();
  }

  /** Submit the prepared tasks, most expensive first (the pool runs them in submission order). */
  submit() {
    const batch = this.queued.sort((a, b) => b.cost - a.cost);
    this.queued = [];
    for (const t of batch) t.submit();
  }

  /** Resolves once every file scheduled has ended, including those scheduled meanwhile (verified, retried). */
  drain() {
    return this.files.drain();
  }

  async close() {
    await this.pool.close();
    const { tempDir } = this;
    this.tempDir = null;
    if (tempDir) await tempDir.then(removeTemp, () => {});
  }
}

/** @typedef {ReturnType<typeof import('../pool/index.js').createPool>} Pool */

/**
 * The worker pool, loaded and made on first use: a pass done on this thread (cache-first.js), most
 * small builds, never loads its modules (#31). Tasks keep their order: each waits on the one load.
 */
class LazyPool {
  /** @type {Promise<Pool> | null} */
  made = null;
  /** @type {Pool | null} */
  pool = null;
  /** @type {((files: number) => number) | null} heap-pace.js's workerCollectEvery(), once loaded */
  collectFor = null;
  fileCount = 0;
  warming = false;
  closed = false;
  /** @type {number | undefined} workers given small jobs (Pool's limit()), once the pool is made */
  limited;

  /**
   * @param {number} size
   * @param {Parameters<typeof import('../pool/index.js').createPool>[2]} limits
   */
  constructor(size, limits) {
    this.size = size;
    this.limits = limits;
  }

  /** @param {number} n files to compress in the pass (the workers' full collections are paced by it) */
  set files(n) {
    this.fileCount = n;
    if (this.pool && this.collectFor) this.pool.collectEvery = this.collectFor(n);
  }

  load() {
    this.made ??= Promise.all([import('../pool/index.js'), import('../../util/heap-pace.js')])
      .then(([{ createPool }, { workerCollectEvery }]) => {
        const pool = createPool(this.size, WORKER_URL, this.limits);
        this.collectFor = workerCollectEvery;
        pool.collectEvery = workerCollectEvery(this.fileCount);
        if (this.limited !== undefined) pool.limit(this.limited);
        if (this.closed) void pool.close();
        this.pool = pool;
        return pool;
      });
    return this.made;
  }

  /** Has a worker been started (or asked to start)? */
  get spawned() {
    return this.pool?.spawned ?? this.warming;
  }

  /** Start every worker soon (they load their modules while the caller prepares the work). */
  warm() {
    if (this.closed) return;
    this.warming = true;
    void this.load().then((p) => p.warm(), () => {}); // a failure is reported to the tasks
  }

  /**
   * @param {CompressTask} task
   * @param {number} [cost]
   * @returns {Promise<TaskResult>}
   */
  run(task, cost) {
    return this.load().then((p) => p.run(task, cost));
  }

  /** @param {number} n workers given small jobs (Pool's limit()) */
  limit(n) {
    this.limited = n;
    this.pool?.limit(n);
  }

  /**
   * @template T
   * @param {() => Promise<T>} fn
   * @param {CompressTask} [task]
   * @returns {Promise<T>}
   */
  exclusive(fn, task) {
    return this.load().then((p) => p.exclusive(fn, task));
  }

  async close() {
    this.closed = true;
    const pool = await this.made?.catch(() => null);
    await pool?.close();
  }
}

/**
 * What the pool's onStart does with a task as a CPU slot takes it: the report shows its file as running.
 * @param {PassState} pass
 * @param {{ onJobStart?: (task: CompressTask) => void }} hooks
 */
function jobStarts(pass, hooks) {
  return (/** @type {CompressTask} */ task) => {
    // A task queued before its file failed may still start: it is not shown as running.
    if (task.rel !== undefined && !pass.failed.has(task.rel)) {
      pass.report.started(task.rel, (task.cost ?? 0) >= LONG_JOB_COST);
    }
    hooks.onJobStart?.(task);
  };
}

/**
 * The task that compresses `file` to `encodings` (pure).
 * @param {import('../../options.js').Options} opts
 * @param {CompressTask['cache']} cache
 * @param {string | null} tempDir
 * @param {WalkedFile} file
 * @param {{ encodings: Encoding[], cost: number }} work
 * @returns {CompressTask}
 */
function taskOf(opts, cache, tempDir, file, { encodings, cost }) {
  const { brotliQuality, gzipLevel, zstdLevel, zopfli, minRatio, streamThreshold } = opts;
  return {
    brotliQuality, gzipLevel, zstdLevel, zopfli, minRatio, streamThreshold, cache, tempDir,
    abs: absPath(opts.root, file.rel), rel: file.rel, cost, encodings,
    mode: brotliModeFor(file.rel), sizeHint: file.size,
    dev: file.dev, ino: file.ino, link: file.link, // the file the walk found: the only one read (source.js)
  };
}
