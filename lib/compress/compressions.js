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
  /** @type {Promise<void>[]} one per scheduled file; grows while files are verified or retried */
  jobs = [];
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
    this.taskBase = { brotliQuality, gzipLevel, zstdLevel, zopfli, minRatio, streamThreshold, tempDir: null, cache: cache.task };
    const onStart = (/** @type {CompressTask} */ task) => {
      // A task queued before its file failed may still start: it is not shown as running.
      if (task.rel !== undefined && !pass.failed.has(task.rel)) report.started(task.rel, (task.cost ?? 0) >= LONG_JOB_COST);
      hooks.onJobStart?.(task);
    };
    this.pool = createPool(opts.concurrency, new URL('./worker.js', import.meta.url), { ...POOL_LIMITS, onStart });
  }

  /**
   * Compress one file: its tasks are prepared now and submitted by flush(). Its results are checked
   * together, and it is done again while it changes between its encodings (all variants must match).
   * @param {WalkedFile} file
   */
  schedule(file) {
    if (this.opts.dryRun) {
      this.report.change(file.rel, 'compress');
      return;
    }
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
    this.jobs.push(job.catch((err) => this.pass.fail(file.rel, err)));
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
        const submit = () => this.runTask(file, t.encodings, cost, results).catch((err) => this.pass.fail(file.rel, err)).then(resolve);
        this.queued.push({ cost, submit });
      });
    });
    if (now) this.flush();
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
      ...this.taskBase, tempDir: await this.tempDir, abs: absPath(this.opts.root, file.rel), rel: file.rel, cost, encodings, mode: brotliModeFor(file.rel), sizeHint: file.size,
      dev: file.dev, ino: file.ino, link: file.link, // the file the walk found: the only one read (source.js)
    };
    const r = await compressFile(task, this.pool, cost);
    results.push(r);
    this.cache.add(r.cache);
    for (const enc of encodings) this.report.progress(r.size, enc);
  }

  /** Submit the prepared tasks, most expensive first (the pool runs them in submission order). */
  flush() {
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

  /** Wait for every file scheduled, including those scheduled meanwhile (verified, retried). */
  async drain() {
    for (let done = 0; done < this.jobs.length; ) {
      const batch = this.jobs.slice(done);
      done = this.jobs.length;
      await Promise.all(batch);
    }
  }

  async close() {
    await this.pool.close();
    if (this.tempDir) await this.tempDir.then(removeTemp, () => {});
  }
}
