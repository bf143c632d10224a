import fs from 'node:fs';
import path from 'node:path';
import pLimit from 'p-limit';
import { normalizeOptions, settingsOf } from '../../options.js';
import { entryOf } from '../../manifest/manifest.js';
import { variantPath } from '../../encodings.js';
import { hashFile } from '../variants/index.js';
import { checkEncoders } from '../encoders/index.js';
import { createReport } from './report.js';
import { absPath, relInside } from '../../paths.js';
import { createCacheRun } from '../cache/index.js';
import { reidentify } from '../variants/index.js';
import { retryWhileChanged } from '../../util/flow.js';
import { assertManifestTarget, assertNotSystemDir } from '../plan/index.js';
import { Compressions } from './compressions.js';
import { planPass } from './plan-step.js';
import { beginOutputs, failureOf, finishIndexed, finishOutputs, finishShard } from './outputs.js';
import { warmRun } from './warm-run.js';
import { releaseHeldFolders } from '../../held-folder.js';
import { sliceOf } from '../plan/index.js';
import { costOf } from './file-tasks.js';

export const VERSION = JSON.parse(fs.readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')).version;
const TOOL = `precompressor@${VERSION}`;

/**
 * Compress every eligible file under `dir` to `.br` and `.gz`, remove stale variants and write
 * the manifest. Per-file failures are collected in the report (never thrown); a bad option or a
 * missing folder throws a PrecompressorError.
 * @param {string} dir
 * @param {import('../../types.js').PrecompressOptions} [options]
 * @returns {Promise<import('../../types.js').Report>}
 */
export async function precompress(dir, options = {}) {
  const opts = prepared(dir, options);
  return await warmRun(opts, TOOL, settingsOf(opts)) ?? (await passOf(opts, new Set(), {}, INDEXED)).report;
}

/**
 * precompress() on a folder where nothing changed (lib/compress/pass/warm-run.js): its report, or null
 * when something did (the command line then runs the whole pass on a thread: precompressWhole()).
 * @param {string} dir
 * @param {import('../../types.js').PrecompressOptions} options
 */
export async function precompressWarm(dir, options) {
  const opts = prepared(dir, options);
  return warmRun(opts, TOOL, settingsOf(opts));
}

/**
 * precompress() without trying a warm run first (precompressWarm() said it is not one).
 * @param {string} dir
 * @param {import('../../types.js').PrecompressOptions} options
 */
export async function precompressWhole(dir, options) {
  return (await passOf(prepared(dir, options), new Set(), {}, INDEXED)).report;
}

/**
 * The options of a pass, checked, with the root on its real path.
 * @param {string} dir
 * @param {object} options
 */
function prepared(dir, options) {
  const opts = normalizeOptions(dir, options);
  checkEncoders(opts);
  if (!opts.allowSystemDir) assertNotSystemDir(opts.root);
  assertManifestTarget(opts.manifest);
  return inRealRoot(opts);
}

/**
 * One pass that leaves the files in `holdOut` (watch mode's, still being written) as the previous pass
 * left them; internal. `steps`: the first and last steps (watch mode's batches have their own).
 * @param {string} dir
 * @param {object} options
 * @param {{ has(rel: string): boolean }} holdOut read once, while deciding (after the walk)
 * @param {PassHooks} [hooks]
 * @param {PassSteps} [steps]
 */
export async function pass(dir, options, holdOut, hooks = {}, steps = WHOLE) {
  return passOf(prepared(dir, options), holdOut, hooks, steps);
}

/**
 * pass() with its options prepared.
 * @param {import('../../options.js').Options} opts
 * @param {{ has(rel: string): boolean }} holdOut
 * @param {PassHooks} hooks
 * @param {PassSteps} steps
 */
async function passOf(opts, holdOut, hooks, steps) {
  const run = new Pass(opts, hooks, opts.shard ? { ...steps, finish: finishShard } : steps);
  try {
    await run.plan(holdOut);
    return await run.execute();
  } finally {
    await run.close();
  }
}

/**
 * The options with `root` on the folder's real path, so that a symlink met later on a file's path is
 * a folder swapped since, not the way the root was named.
 * @param {import('../../options.js').Options} opts
 * @returns {import('../../options.js').Options}
 */
function inRealRoot(opts) {
  let real;
  try {
    real = fs.realpathSync.native(opts.root);
  } catch {
    return opts; // missing: the walk says so
  }
  if (real === opts.root) return opts;
  const rel = relInside(opts.root, opts.manifest);
  return Object.freeze({ ...opts, root: real, manifest: rel === null ? opts.manifest : path.join(real, rel) });
}

/**
 * @typedef {{ plan: typeof planPass, begin?: (pass: Pass) => void,
 *   finish: (pass: Pass) => ReturnType<typeof finishOutputs> }} PassSteps
 *   plan: find the files and decide (planPass() walks the folder); begin: what finish can make ready while
 *   the files are compressed; finish: removals, deltas, manifest
 */
/** @type {PassSteps} */
const WHOLE = { plan: planPass, begin: beginOutputs, finish: finishOutputs };
/** @type {PassSteps} a whole pass that leaves the warm index of its manifest (precompress()'s) */
const INDEXED = { plan: planPass, begin: beginOutputs, finish: finishIndexed };

/**
 * @typedef {{ onJobStart?: (task: import('../variants/index.js').CompressTask) => void,
 *   afterWalk?: () => void | Promise<void> }} PassHooks
 *   `onJobStart` sees each compression task as a CPU slot takes it (tests observe the scheduling order with it);
 *   `afterWalk` runs once the folder is walked, before anything is read or written (tests change the tree there)
 * @typedef {import('../plan/index.js').WalkEntry} WalkedFile
 * @typedef {import('../../options.js').Encoding} Encoding
 * @typedef {import('../../manifest/manifest.js').Manifest} Manifest
 * @typedef {import('../plan/index.js').Decision} Decision
 * @typedef {import('../variants/index.js').TaskResult} TaskResult
 */

/**
 * The state of one pass: what was found and decided, the work in flight, and what it produced.
 */
export class Pass {
  /** @type {Map<string, import('../../manifest/manifest.js').FileEntry>} */ entries = new Map();
  /** @type {Set<string>} */ failed = new Set();
  /** @type {Map<string, WalkedFile>} what the walk found at each path that may be removed */
  found = new Map();
  /** @type {{ rel: string, why: string }[]} */
  removals = [];
  /** @type {Promise<void>[]} hashing jobs (skipped files, changed-stat files to verify) */
  hashJobs = [];
  /** @type {Manifest | null} */ previous = null;
  /** @type {Decision[]} every decision but `fresh` (those are in `entries` as the walk finds them); from
   * execute() on, the held ones */
  decisions = [];
  /** number of fresh files */ fresh = 0;
  /** number of decisions made (all but `fresh`), once execute() has kept only the held ones */ decided = 0;
  /** @type {Map<string, number>} delta files found by the walk (path → size) */
  deltasOnDisk = new Map();
  /** @type {{ user: Set<string>, blocked: Map<string, Set<string>> }} files of the user's at our output paths */
  owners = { user: new Set(), blocked: new Map() };
  /** @type {import('../../types.js').ShardSummary | null} a shard's slice (`--shard`) */
  shard = null;
  /** @type {import('./warm-index.js').Identity | null} the previous manifest's file, as read */
  manifestIdentity = null;
  /** this pass wrote the manifest */ written = false;
  /** @type {import('./remote-run.js').RemoteRun | null} the remote cache's side, made by plan() */ remote = null;

  /**
   * @param {import('../../options.js').Options} opts
   * @param {PassHooks} hooks
   * @param {PassSteps} steps
   */
  constructor(opts, hooks, steps) {
    this.opts = opts;
    this.hooks = hooks;
    this.steps = steps;
    this.build = steps.plan === planPass;
    this.report = createReport(opts);
    this.settings = settingsOf(opts);
    this.tool = TOOL;
    this.io = pLimit(Math.max(4, opts.concurrency * 2));
    this.cache = createCacheRun(opts);
    this.work = new Compressions(this, hooks);
  }

  /**
   * @param {{ has(rel: string): boolean }} holdOut
   */
  async plan(holdOut) {
    // The remote cache's side of the pass, loaded only when there is a remote (#31).
    if (this.opts.cacheUrl !== null) this.remote = (await import('./remote-run.js')).createRemoteRun(this.opts);
    const ctx = {
      opts: this.opts, report: this.report, settings: this.settings, tool: TOOL,
      warm: () => this.work.warm(), afterWalk: this.hooks.afterWalk,
      onFresh: (/** @type {string} */ rel, /** @type {import('../../manifest/manifest.js').FileEntry} */ prev) => {
        this.entries.set(rel, prev);
        this.report.count('unchanged');
      },
    };
    Object.assign(this, await this.steps.plan(ctx, holdOut));
  }

  /** @param {string} rel */
  abs(rel) {
    return absPath(this.opts.root, rel);
  }

  async execute() {
    /** @type {WalkedFile[]} */
    let toCompress = [];
    for (const d of this.decisions) {
      if (d.action === 'compress') toCompress.push(d.file);
      else if (!this.opts.shard) settle(this, d); // a shard records nothing: no skips to hash
    }
    if (this.opts.shard) toCompress = this.slice(toCompress, this.opts.shard);
    // Only the held ones are read again (by finish): the others, a walk entry each, are let go.
    this.decided = this.decisions.length;
    this.decisions = this.decisions.filter((d) => d.action === 'hold');
    // Largest (most expensive) work first, so that one big bundle does not finish last.
    this.report.plan(toCompress, (rel) => this.encodingsOf(rel));
    const fetched = await this.remote?.prefetch(toCompress, (rel) => this.encodingsOf(rel)) ?? 0;
    this.cache.add({ hits: 0, misses: 0, rejected: 0, written: fetched, cpuSavedMs: 0, error: null });
    for (const file of toCompress) this.work.schedule(file);
    this.work.flush();
    this.steps.begin?.(this);
    await Promise.all(this.hashJobs);
    await this.work.drain();
    await this.remote?.upload();
    // The workers' memory is given back before the manifest is built, the peak of a big pass.
    await this.work.close();
    return this.steps.finish(this);
  }

  /**
   * @param {WalkedFile[]} files
   * @param {import('../../options.js').Shard} shard
   */
  slice(files, shard) {
    const cost = (/** @type {WalkedFile} */ f) => costOf(f.size, this.encodingsOf(f.rel), this.opts);
    const mine = sliceOf(files, cost, shard);
    this.shard = { ...shard, files: mine.files.length, of: files.length, share: mine.share };
    return mine.files;
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

  async close() {
    this.remote?.close();
    await this.work.close();
    releaseHeldFolders();
  }
}

/**
 * A decision other than `compress` and `fresh`: hold the file, record a skip, or verify.
 * @param {Pass} pass
 * @param {Decision} d
 */
function settle(pass, d) {
  const { file } = d;
  if (d.action === 'hold') {
    if (d.prev) pass.entries.set(file.rel, d.prev);
    else pass.removals.push(...staleVariants(d));
  } else if (d.action === 'skip') {
    pass.removals.push(...staleVariants(d));
    recordSkip(pass, d);
  } else if (d.action === 'verify') {
    pass.hashJobs.push(pass.io(() => verify(pass, d)).catch((err) => pass.fail(file.rel, err)));
  }
}

/**
 * A skipped file is recorded with its hash (reused when its stat did not change).
 * @param {Pass} pass
 * @param {Extract<Decision, { action: 'skip' }>} d
 */
function recordSkip(pass, d) {
  const { file } = d;
  const record = (/** @type {string} */ hash) => {
    pass.entries.set(file.rel, { size: file.size, mtimeMs: file.mtimeMs, hash, variants: {}, skipped: d.reason });
    pass.report.count(d.reason);
  };
  const prev = entryOf(pass.previous, file.rel);
  if (prev && prev.size === file.size && prev.mtimeMs === file.mtimeMs) return record(prev.hash);
  const job = pass.io(() => hashWalked(pass.opts, file).then((h) => record(h.hash)));
  pass.hashJobs.push(job.catch((err) => pass.fail(file.rel, err)));
}

/**
 * A file whose stat changed: unchanged if its content hash is the recorded one, else compressed.
 * @param {Pass} pass
 * @param {Extract<Decision, { action: 'verify' }>} d
 */
async function verify(pass, d) {
  const { file } = d;
  const h = await hashWalked(pass.opts, file);
  if (h.hash === d.prev.hash) {
    pass.entries.set(file.rel, { ...d.prev, size: h.size, mtimeMs: h.mtimeMs });
    pass.report.count('unchanged');
  } else {
    pass.work.schedule(file);
    pass.work.flush();
  }
}

/**
 * The content hash of a walked file, the very file the walk found (one renamed over it is read again).
 * @param {import('../../options.js').Options} opts
 * @param {WalkedFile} file
 */
function hashWalked(opts, file) {
  const at = { abs: absPath(opts.root, file.rel), dev: file.dev, ino: file.ino, link: file.link };
  const hashOnce = (/** @type {number} */ attempt) =>
    hashFile(at.abs, opts.streamThreshold, attempt > 1 ? reidentify(at) : at);
  return retryWhileChanged(hashOnce, 2);
}

/**
 * The removals of the variants on disk of a file that gets none now (pure).
 * @param {Decision} d
 */
const staleVariants = (d) => [...(d.onDisk?.keys() ?? [])]
  .map((enc) => ({ rel: variantPath(d.file.rel, enc), why: 'stale' }));
