import fs from 'node:fs';
import path from 'node:path';
import pLimit from 'p-limit';
import { normalizeOptions, settingsOf } from '../options.js';
import { walk } from './walk.js';
import { classify, decide, eligibility, brotliModeFor, estimatedCost, sameSettings } from './plan.js';
import { readManifest, buildManifest, writeManifest, entryOf } from '../manifest.js';
import { variantPath } from '../encodings.js';
import { compressFile, hashFile } from './compress-file.js';
import { makeTempDir, removeIfPresent, removeTemp, tempOwnerGone } from '../fs-atomic.js';
import { checkEncoders } from './encode.js';
import { createPool } from './pool.js';
import { createReport } from './report.js';
import { addDeltas } from './deltas.js';
import { addSiteDictionary } from './site-deltas.js';
import { findOwners } from './same-content.js';
import { userFileWarnings } from './ownership.js';
import { relInside, absPath } from '../paths.js';
import { createCacheRun } from './cache-run.js';
import { assertManifestTarget, assertNotSystemDir } from './guards.js';
import { retryWhileChanged } from '../flow.js';

export const VERSION = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
const TOOL = `precompressor@${VERSION}`;
const MAX_ATTEMPTS = 3;
/** Files under way at once (their tasks submitted to the pool, or about to be). */
const ADMITTED = 512;

/** The pool's batching, in estimatedCost() units: what shares a message, and what goes ahead to a busy worker. */
const POOL_LIMITS = { batchCost: 32 * 1024, aheadCost: 64 * 1024 };

/** A job of at least this cost (a long one) is announced to onProgress as it starts. */
const LONG_JOB_COST = 256 * 1024;

/** Files below this size are compressed to all encodings in one task (one read, one hash). */
const SPLIT_THRESHOLD = 256 * 1024;

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
 * Would writing `next` change nothing but the date? Then the manifest is left as it is.
 * @param {Manifest | null} previous
 * @param {Manifest} next
 */
function sameContent(previous, next) {
  if (previous === null) return false;
  const head = (/** @type {Manifest} */ { generatedAt: _g, files: _f, ...rest }) => JSON.stringify(rest);
  if (head(previous) !== head(next)) return false;
  // Entry by entry, in order: never the whole document as one string (two of them at 10^6 files).
  const before = Object.keys(previous.files);
  let i = 0;
  for (const rel in next.files) {
    if (before[i++] !== rel || JSON.stringify(previous.files[rel]) !== JSON.stringify(next.files[rel])) return false;
  }
  return i === before.length;
}

/**
 * @param {string} rel
 * @param {unknown} err
 */
function failureOf(rel, err) {
  const e = /** @type {any} */ (err);
  return { path: rel, code: e.code ?? 'ERR_PRECOMPRESSOR_FILE', message: e.message ?? String(err) };
}

/**
 * Compress every eligible file under `dir` to `.br` and `.gz`, remove stale variants and write
 * the manifest. Per-file failures are collected in the report (never thrown); a bad option or a
 * missing folder throws a PrecompressorError.
 * @param {string} dir
 * @param {import('../types.js').PrecompressOptions} [options]
 * @returns {Promise<import('../types.js').Report>}
 */
export async function precompress(dir, options = {}) {
  return (await pass(dir, options, new Set())).report;
}

/**
 * One incremental pass that leaves the files in `holdOut` (POSIX paths relative to `dir`) as the
 * previous pass left them: see the `hold` decision in lib/compress/plan.js. Watch mode's files still
 * being written; internal, not exported from the package. `held` lists the files held.
 * @param {string} dir
 * @param {object} options
 * @param {{ has(rel: string): boolean }} holdOut read once, while deciding (after the walk)
 * @param {PassHooks} [hooks]
 */
export async function pass(dir, options, holdOut, hooks = {}) {
  const opts = normalizeOptions(dir, options);
  checkEncoders(opts);
  if (!opts.allowSystemDir) assertNotSystemDir(opts.root);
  assertManifestTarget(opts.manifest);
  const run = new Pass(opts, hooks);
  try {
    await run.plan(holdOut);
    return await run.execute();
  } finally {
    await run.close();
  }
}

/**
 * @typedef {{ onJobStart?: (task: import('./compress-file.js').CompressTask) => void }} PassHooks
 *   `onJobStart` sees each compression task as a CPU slot takes it (tests observe the scheduling order with it)
 * @typedef {{ rel: string, size: number, mtimeMs: number }} WalkedFile
 * @typedef {import('../options.js').Encoding} Encoding
 * @typedef {import('../manifest.js').Manifest} Manifest
 * @typedef {import('./plan.js').Decision} Decision
 * @typedef {import('./compress-file.js').TaskResult} TaskResult
 */

/**
 * The state of one pass: what was found and decided (plan), the work in flight, what it produced
 * (entries, failures, removals) and the pool it runs on. Each step is a method.
 */
class Pass {
  /** @type {Map<string, import('../manifest.js').FileEntry>} */
  entries = new Map();
  /** @type {Set<string>} */
  failed = new Set();
  /** @type {{ rel: string, why: string }[]} */
  removals = [];
  /** @type {Promise<void>[]} hashing jobs (skipped files, changed-stat files to verify) */
  hashJobs = [];
  /** @type {(() => void) | null} resolves idle(): no file waiting or under way */
  onIdle = null;
  /** @type {{ cost: number, submit: () => void }[]} prepared tasks that flush() submits */
  queued = [];
  /** @type {{ file: WalkedFile, cost: number }[]} files not started yet, cheapest first (taken from the end) */
  waiting = [];
  /** files started and not finished (at most ADMITTED: see admit()) */
  active = 0;
  /** @type {Promise<string> | null} made on the first compression (see makeTempDir) */
  tempDir = null;
  /** @type {Manifest | null} */
  previous = null;
  /** @type {Decision[]} */
  decisions = [];
  /** @type {ReturnType<typeof classify>} */
  classified = { sources: [], variants: new Map(), orphans: [], deltas: new Map() };
  /** @type {{ user: Set<string>, blocked: Map<string, Set<string>> }} files of the user's at our output paths (see ownership.js) */
  owners = { user: new Set(), blocked: new Map() };

  /**
   * @param {import('../options.js').Options} opts
   * @param {PassHooks} hooks
   */
  constructor(opts, hooks) {
    this.opts = opts;
    this.hooks = hooks;
    this.report = createReport(opts);
    this.settings = settingsOf(opts);
    this.io = pLimit(Math.max(4, opts.concurrency * 2));
    const { brotliQuality, gzipLevel, zstdLevel, zopfli, minRatio, streamThreshold } = opts;
    this.cache = createCacheRun(opts);
    this.taskBase = { brotliQuality, gzipLevel, zstdLevel, zopfli, minRatio, streamThreshold, tempDir: null, cache: this.cache.task };
    const onStart = (/** @type {import('./compress-file.js').CompressTask} */ task) => {
      // A task queued before its file failed may still start: it is not shown as running.
      if (task.rel !== undefined && !this.failed.has(task.rel)) this.report.started(task.rel, (task.cost ?? 0) >= LONG_JOB_COST);
      hooks.onJobStart?.(task);
    };
    this.pool = createPool(opts.concurrency, new URL('./worker.js', import.meta.url), { ...POOL_LIMITS, onStart });
  }

  /** @param {string} rel */
  abs(rel) {
    return absPath(this.opts.root, rel);
  }

  /**
   * Read the previous manifest, walk the folder, classify and decide.
   * @param {{ has(rel: string): boolean }} holdOut
   */
  async plan(holdOut) {
    const { opts, report } = this;
    // The previous manifest first: without one this is a cold run, and the workers start (load
    // their modules) while the folder is walked instead of after.
    let unreadable = null;
    try {
      this.previous = await readManifest(opts.manifest);
    } catch (err) {
      unreadable = err;
    }
    if (this.previous === null && !opts.dryRun) this.pool.warm();
    const walked = await walk(opts.root, { dotfiles: opts.dotfiles });
    for (const rel of walked.outside) report.warn(rel, 'symlink resolves outside the folder (or is dangling): not taken');
    for (const { rel, why } of walked.leftOut) report.warn(rel, why);
    // A folder or file the walk could not read fails like a file that cannot be compressed; the rest goes on.
    for (const f of walked.failed) report.fail({ path: f.rel, code: f.code, message: f.message });
    if (unreadable) report.warn(relInside(opts.root, opts.manifest) ?? opts.manifest, `${/** @type {Error} */ (unreadable).message}; starting afresh`);
    const manifestRel = relInside(opts.root, opts.manifest);
    const eligible = eligibility(opts);
    // A copy of our variant found where this pass writes one is adopted; anything else there is the user's.
    const adoptable = (/** @type {{ rel: string, size: number }} */ stem, /** @type {string} */ enc) => /** @type {readonly string[]} */ (opts.encodings).includes(enc) && eligible(stem.rel, stem.size) === null && !holdOut.has(stem.rel);
    this.owners = await findOwners(walked.files, manifestRel, this.previous, { abs: (rel) => this.abs(rel), streamThreshold: opts.streamThreshold, adoptable });
    this.classified = classify(walked.files, manifestRel, this.previous, this.owners.user);
    this.decisions = decide(this.classified, this.previous, {
      settings: this.settings, tool: TOOL, force: opts.force, eligible, holdOut, encodings: opts.encodings, blocked: this.owners.blocked,
    });
    for (const w of userFileWarnings(this.decisions)) report.warn(w.path, w.message);
    // Leftovers of killed runs; a temp of a run still going (same folder, another process) stays.
    for (const rel of walked.temps) if (tempOwnerGone(path.posix.basename(rel))) this.removals.push({ rel, why: 'temp' });
    for (const rel of this.classified.orphans) this.removals.push({ rel, why: 'orphan' });
  }

  /** Carry out the decisions, then the removals, deltas and manifest. */
  async execute() {
    /** @type {WalkedFile[]} */
    const toCompress = [];
    for (const d of this.decisions) {
      if (d.action === 'compress') toCompress.push(d.file);
      else this.act(d);
    }
    // Largest (most expensive) work first, so that one big bundle does not finish last.
    this.report.plan(toCompress, (rel) => this.encodingsOf(rel));
    for (const file of toCompress) this.waiting.push({ file, cost: this.costOf(file) });
    this.waiting.sort((a, b) => a.cost - b.cost);
    this.admit();
    await Promise.all(this.hashJobs);
    await this.idle();
    await this.remove();
    const input = { opts: this.opts, entries: this.entries, previous: this.previous, onDisk: this.classified.deltas, report: this.report, userFiles: this.owners.user, cache: this.cache };
    const site = await addSiteDictionary(input);
    // The pages' variants against the site dictionary are delta files that addDeltas() must leave.
    const deltas = await addDeltas({ ...input, onDisk: new Map([...input.onDisk].filter(([rel]) => !site.keep.has(rel))) });
    site.apply(this.entries);
    const siteDictionary = site.path === null ? null : { path: site.path, hash: /** @type {string} */ (site.hash) };
    const manifest = buildManifest({ tool: TOOL, settings: this.settings, files: this.entries, siteDictionary });
    await this.writeManifest(manifest, deltas.changed || site.changed);
    await this.cache.finish(this.report);
    const held = this.decisions.filter((d) => d.action === 'hold').map((d) => d.file.rel);
    return { report: { ...this.report.finish(manifest), deltas: deltas.summary, siteDictionary: site.summary, cache: this.cache.summary() }, held, manifest };
  }

  /**
   * A decision other than `compress`: keep the entry, hold the file, record a skip, or verify.
   * @param {Decision} d
   */
  act(d) {
    const { file } = d;
    if (d.action === 'fresh') {
      this.entries.set(file.rel, d.prev);
      this.report.count('unchanged');
    } else if (d.action === 'hold') {
      if (d.prev) this.entries.set(file.rel, d.prev);
      else this.removeStale(d);
    } else if (d.action === 'skip') {
      this.removeStale(d);
      this.recordSkip(d);
    } else if (d.action === 'verify') {
      this.hashJobs.push(this.io(() => this.verify(d)).catch((err) => this.fail(file.rel, err)));
    }
  }

  /**
   * A skipped file is recorded with its hash (reused when its stat did not change).
   * @param {Extract<Decision, { action: 'skip' }>} d
   */
  recordSkip(d) {
    const { file } = d;
    const record = (/** @type {string} */ hash) => {
      this.entries.set(file.rel, { size: file.size, mtimeMs: file.mtimeMs, hash, variants: {}, skipped: d.reason });
      this.report.count(d.reason);
    };
    const prev = entryOf(this.previous, file.rel);
    if (prev && prev.size === file.size && prev.mtimeMs === file.mtimeMs) return record(prev.hash);
    const job = this.io(() => hashFile(this.abs(file.rel), this.opts.streamThreshold).then((h) => record(h.hash)));
    this.hashJobs.push(job.catch((err) => this.fail(file.rel, err)));
  }

  /**
   * A file whose stat changed: unchanged if its content hash is the recorded one, else compressed.
   * @param {Extract<Decision, { action: 'verify' }>} d
   */
  async verify(d) {
    const { file } = d;
    const h = await hashFile(this.abs(file.rel), this.opts.streamThreshold);
    if (h.hash === d.prev.hash) {
      this.entries.set(file.rel, { ...d.prev, size: h.size, mtimeMs: h.mtimeMs });
      this.report.count('unchanged');
    } else {
      this.waiting.push({ file, cost: this.costOf(file) });
      this.admit();
    }
  }

  /**
   * The variants on disk of a file that gets none now.
   * @param {Decision} d
   */
  removeStale(d) {
    for (const enc of d.onDisk?.keys() ?? []) this.removals.push({ rel: variantPath(d.file.rel, enc), why: 'stale' });
  }

  /**
   * The encodings `rel` gets variants of: all but those where a file of the user's is.
   * @param {string} rel
   * @returns {readonly Encoding[]}
   */
  encodingsOf(rel) {
    const blocked = this.owners.blocked.get(rel);
    return blocked ? this.opts.encodings.filter((e) => !blocked.has(e)) : this.opts.encodings;
  }

  /**
   * @param {string} rel
   * @param {unknown} err
   */
  fail(rel, err) {
    // One failure per file: its encodings run apart and usually fail the same way (EACCES, ENOSPC).
    if (this.failed.has(rel)) return;
    this.failed.add(rel);
    this.entries.delete(rel);
    this.report.ended(rel);
    this.report.fail(failureOf(rel, err));
  }

  /**
   * The estimated cost of all of a file's encodings.
   * @param {WalkedFile} file
   */
  costOf(file) {
    return this.encodingsOf(file.rel).reduce((n, e) => n + estimatedCost(file.size, e, this.opts), 0);
  }

  /**
   * Start the waiting files, most expensive first, while fewer than ADMITTED are under way: a file
   * under way holds its promises, closures and task objects, so on a tree of 10^5 files starting
   * them all at once held hundreds of MB; the pool still gets work ahead (see lib/compress/pool.js).
   */
  admit() {
    while (this.waiting.length > 0 && (this.active < ADMITTED || this.opts.dryRun)) {
      const { file } = /** @type {{ file: WalkedFile }} */ (this.waiting.pop());
      this.active++;
      this.schedule(file, () => {
        this.active--;
        this.admit();
        if (this.active === 0 && this.waiting.length === 0) this.onIdle?.();
      });
    }
    this.flush();
  }

  /** Resolves once no file is waiting or under way (files verified or retried meanwhile included). */
  idle() {
    if (this.active === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.onIdle = () => {
        this.onIdle = null;
        resolve(undefined);
      };
    });
  }

  /**
   * Compress one file: its tasks are prepared now and submitted by flush(). Its results are checked
   * together, and it is done again while it changes between its encodings (all variants must match).
   * `done` runs once it has ended, whatever the outcome.
   * @param {WalkedFile} file
   * @param {() => void} done
   */
  schedule(file, done) {
    if (this.opts.dryRun) {
      this.report.change(file.rel, 'compress');
      return done();
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
    void job.catch((err) => this.fail(file.rel, err)).finally(done);
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
    const done = splitTasks(file.size, { encodings: this.encodingsOf(file.rel) }).map((t) => {
      const cost = t.encodings.reduce((n, e) => n + estimatedCost(file.size, e, this.opts), 0);
      return new Promise((resolve) => {
        const submit = () => this.runTask(file, t.encodings, cost, results).catch((err) => this.fail(file.rel, err)).then(resolve);
        this.queued.push({ cost, submit });
      });
    });
    if (now) this.flush();
    await Promise.all(done);
    return this.failed.has(file.rel) ? null : results;
  }

  /**
   * Compress `file` to `encodings` on the pool; its result joins `results`.
   * @param {WalkedFile} file
   * @param {Encoding[]} encodings
   * @param {number} cost
   * @param {TaskResult[]} results
   */
  async runTask(file, encodings, cost, results) {
    if (this.failed.has(file.rel)) return;
    this.tempDir ??= makeTempDir(this.opts.root);
    const task = { ...this.taskBase, tempDir: await this.tempDir, abs: this.abs(file.rel), rel: file.rel, cost, encodings, mode: brotliModeFor(file.rel), sizeHint: file.size };
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
    for (const enc of this.encodingsOf(file.rel)) if (typeof out[enc] === 'number') entry.variants[enc] = { size: out[enc] };
    if (Object.keys(entry.variants).length === 0) entry.skipped = 'not-smaller';
    this.entries.set(file.rel, entry);
    this.report.compressed(file.rel, entry, results.every((r) => (r.cache?.hits ?? 0) > 0 && r.cache?.misses === 0));
  }

  /** Temps of killed runs, orphans, stale variants, and the variants of failed files. */
  async remove() {
    const { opts, report } = this;
    for (const rel of this.failed) {
      for (const enc of this.encodingsOf(rel)) this.removals.push({ rel: variantPath(rel, enc), why: 'failed' });
    }
    for (const r of this.removals) {
      if (r.why !== 'failed') report.change(r.rel, `remove (${r.why})`);
      if (opts.dryRun) continue;
      const remove = r.why === 'temp' ? removeTemp : removeIfPresent;
      // Cleaning up after a failed file is best effort: its failure is already reported.
      await remove(this.abs(r.rel)).catch((err) => r.why !== 'failed' && report.fail(failureOf(r.rel, err)));
    }
  }

  /**
   * Write the manifest unless nothing but its date would change.
   * @param {import("../manifest.js").Manifest} manifest
   * @param {boolean} deltasChanged
   */
  async writeManifest(manifest, deltasChanged) {
    const { opts, previous } = this;
    // Every file fresh and nothing removed: the previous manifest's entries were kept as they are.
    const untouched = !deltasChanged && previous !== null && previous.tool === TOOL && sameSettings(previous.settings, this.settings) &&
      this.removals.length === 0 && this.failed.size === 0 && this.decisions.every((d) => d.action === 'fresh') &&
      this.decisions.length === Object.keys(previous.files).length;
    // A delta written again (it was missing) is newer than the previous manifest: write a new one, or
    // the ownership rule (outputs are older than the manifest that lists them) takes it for the user's.
    if (opts.dryRun || untouched || (!deltasChanged && sameContent(previous, manifest))) return;
    try {
      await writeManifest(opts.manifest, manifest);
    } catch (err) {
      this.report.fail(failureOf(opts.manifest, err));
    }
  }

  async close() {
    await this.pool.close();
    if (this.tempDir) await this.tempDir.then(removeTemp, () => {});
  }
}
