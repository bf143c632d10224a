import { estimatedCost, brotliModeFor } from './plan.js';
import { compressFile } from './compress-file.js';
import { makeTempDir, removeTemp } from '../fs-atomic.js';
import { createPool } from './pool.js';
import { absPath } from '../paths.js';
import { retryWhileChanged } from '../flow.js';

/** Files below this size are compressed to all encodings in one task (one read, one hash). */
const SPLIT_THRESHOLD = 256 * 1024;

/** The pool's batching, in estimatedCost() units: what shares a message, and what goes ahead to a busy worker. */
const POOL_LIMITS = { batchCost: 32 * 1024, aheadCost: 64 * 1024 };

/** A job of at least this cost (a long one) is announced to onProgress as it starts. */
const LONG_JOB_COST = 256 * 1024;

const MAX_ATTEMPTS = 3;

/** Files under way at once (their tasks submitted to the pool, or about to be). */
const ADMITTED = 512;

/**
 * @typedef {import('../options.js').Encoding} Encoding
 * @typedef {import('./compress-file.js').TaskResult} TaskResult
 * @typedef {import('./compress-file.js').CompressTask} CompressTask
 * @typedef {import('./walk.js').WalkEntry} WalkedFile
 * @typedef {{ opts: import('../options.js').Options, report: import('./report.js').Report,
 *   cache: ReturnType<typeof import('./cache-run.js').createCacheRun>,
 *   entries: Map<string, import('../manifest.js').FileEntry>, failed: Set<string>,
 *   fail(rel: string, err: unknown): void, encodingsOf(rel: string): readonly Encoding[] }} PassState
 *   what the compression of a pass reads and records (lib/compress/precompress.js)
 */

/**
 * The tasks of one file: one for all encodings when the file is small, else one per encoding
 * so that a big file's encodings run in parallel.
 * @param {number} size
 * @param {{ encodings: readonly Encoding[] }} opts
 */
export function splitTasks(size, opts) {
  if (size < SPLIT_THRESHOLD) return [{ encodings: [...opts.encodings] }];
  return opts.encodings.map((e) => ({ encodings: [e] }));
}

/**
 * The compression work of a pass: each file's tasks on the pool (most expensive first), checked
 * together, and done again while the file changes between its encodings.
 */
export class Compressions {
  /** @type {{ cost: number, submit: () => void }[]} prepared tasks that flush() submits */
  queued = [];
  /** @type {{ file: WalkedFile, cost: number }[]} files not started yet (taken from the end) */
  waiting = [];
  /** whether `waiting` has been put in order (once, on the first flush: files scheduled later go next) */
  ordered = false;
  /** files started and not finished (at most ADMITTED: see admit()) */
  active = 0;
  /** @type {(() => void) | null} resolves drain() */
  onIdle = null;
  /** @type {Promise<string> | null} made on the first compression (see makeTempDir) */
  tempDir = null;

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
    const { brotliQuality, gzipLevel, zstdLevel, zopfli, minRatio, streamThreshold } = opts;
    this.taskBase = {
      brotliQuality, gzipLevel, zstdLevel, zopfli, minRatio, streamThreshold, tempDir: null, cache: cache.task,
    };
    const onStart = (/** @type {CompressTask} */ task) => {
      // A task queued before its file failed may still start: it is not shown as running.
      if (task.rel === undefined || pass.failed.has(task.rel)) return hooks.onJobStart?.(task);
      report.started(task.rel, (task.cost ?? 0) >= LONG_JOB_COST);
      hooks.onJobStart?.(task);
    };
    this.pool = createPool(opts.concurrency, new URL('./worker.js', import.meta.url), { ...POOL_LIMITS, onStart });
  }

  /**
   * Compress one file: it waits for flush(), which starts the most expensive files first, at most
   * ADMITTED at a time: a file under way holds its promises, closures and task objects, and on a
   * tree of 10^5 files starting them all at once held hundreds of MB (the pool still gets its work
   * ahead, see lib/compress/pool.js).
   * @param {WalkedFile} file
   */
  schedule(file) {
    if (this.opts.dryRun) {
      this.report.change(file.rel, 'compress');
      return;
    }
    const cost = this.pass.encodingsOf(file.rel).reduce((n, e) => n + estimatedCost(file.size, e, this.opts), 0);
    this.waiting.push({ file, cost });
  }

  /** Start waiting files while fewer than ADMITTED are under way. */
  admit() {
    if (!this.ordered) {
      this.waiting.sort((a, b) => a.cost - b.cost);
      this.ordered = true;
    }
    while (this.waiting.length > 0 && this.active < ADMITTED) {
      const { file } = /** @type {{ file: WalkedFile }} */ (this.waiting.pop());
      this.active++;
      this.start(file, () => {
        this.active--;
        this.admit();
        this.submit();
        if (this.active === 0 && this.waiting.length === 0) this.onIdle?.();
      });
    }
  }

  /**
   * A file's tasks, prepared now and submitted by submit(); its results are checked together, and
   * it is done again while it changes between its encodings (all variants must match). `done`
   * runs once it has ended, whatever the outcome.
   * @param {WalkedFile} file
   * @param {() => void} done
   */
  start(file, done) {
    let current = file;
    const job = retryWhileChanged(async (attempt) => {
      const results = await this.compressOnce(current, attempt > 1);
      if (results === null) return;
      this.report.ended(file.rel);
      const [first] = results;
      if (results.some((r) => r.hash !== first.hash || r.mtimeMs !== first.mtimeMs)) {
        current = { ...current, size: first.size };
        throw Object.assign(new Error('kept changing while it was being compressed'), { changed: true });
      }
      this.record(current, results);
    }, MAX_ATTEMPTS);
    void job.catch((err) => this.pass.fail(file.rel, err)).finally(done);
  }

  /**
   * Run the tasks of `file` (submitted by the next flush(), or at once on a retry); null when one failed.
   * @param {WalkedFile} file
   * @param {boolean} now
   * @returns {Promise<TaskResult[] | null>}
   */
  async compressOnce(file, now) {
    /** @type {TaskResult[]} */
    const results = [];
    const done = splitTasks(file.size, { encodings: this.pass.encodingsOf(file.rel) }).map((t) => {
      const cost = t.encodings.reduce((n, e) => n + estimatedCost(file.size, e, this.opts), 0);
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
   * Compress `file` to `encodings` on the pool; its result joins `results`.
   * @param {WalkedFile} file
   * @param {Encoding[]} encodings
   * @param {number} cost
   * @param {TaskResult[]} results
   */
  async runTask(file, encodings, cost, results) {
    if (this.pass.failed.has(file.rel)) return;
    this.tempDir ??= makeTempDir(this.opts.root);
    const task = {
      ...this.taskBase, tempDir: await this.tempDir, abs: absPath(this.opts.root, file.rel), rel: file.rel,
      cost, encodings,
      mode: brotliModeFor(file.rel), sizeHint: file.size,
      dev: file.dev, ino: file.ino, link: file.link, // the file the walk found: the only one read (source.js)
    };
    const r = await compressFile(task, this.pool, cost);
    results.push(r);
    this.cache.add(r.cache);
    for (const enc of encodings) this.report.progress(r.size, enc);
  }

  /** Start the files scheduled (most expensive first) and submit their tasks. */
  flush() {
    this.admit();
    this.submit();
  }

  /** Submit the prepared tasks, most expensive first (the pool runs them in submission order). */
  submit() {
    const batch = this.queued.sort((a, b) => b.cost - a.cost);
    this.queued = [];
    for (const t of batch) t.submit();
  }

  /**
   * All tasks of a file saw the same content: its entry and variants.
   * @param {WalkedFile} file
   * @param {TaskResult[]} results
   */
  record(file, results) {
    const [first] = results;
    const out = Object.assign({}, ...results.map((r) => r.out));
    /** @type {import('../manifest.js').FileEntry} */
    const entry = { size: first.size, mtimeMs: first.mtimeMs, hash: first.hash, variants: {} };
    for (const enc of this.pass.encodingsOf(file.rel)) if (typeof out[enc] === 'number') entry.variants[enc] = { size: out[enc] };
    if (Object.keys(entry.variants).length === 0) entry.skipped = 'not-smaller';
    this.pass.entries.set(file.rel, entry);
    this.report.compressed(file.rel, entry, results.every((r) => (r.cache?.hits ?? 0) > 0 && r.cache?.misses === 0));
  }

  /** Resolves once every file scheduled has ended, including those scheduled meanwhile (verified, retried). */
  drain() {
    if (this.active === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.onIdle = () => {
        this.onIdle = null;
        resolve(undefined);
      };
    });
  }

  async close() {
    await this.pool.close();
    if (this.tempDir) await this.tempDir.then(removeTemp, () => {});
  }
}
