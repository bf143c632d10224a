import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { tempOwnerGone, writeAtomic, writeAtomicSync } from '../../fs-atomic.js';
import { PrecompressorError } from '../../errors.js';
import { ENTRY_NAME, LAST_RUN, SHARD_NAME, entryRecordAt } from './entry-files.js';
import { storeDescriptor } from './variant-store.js';

/**
 * The variant cache as a whole: one pass's use of it (counters, the last-run record, eviction) and
 * `precompressor cache` info, prune (least recently used first) and clear.
 */

/**
 * The tag that marks a folder as a cache (https://bford.info/cachedir/), required before anything is
 * removed: a `--cache-dir` naming another folder by mistake removes nothing.
 */
export const CACHEDIR_TAG = 'CACHEDIR.TAG';
const TAG_SIGNATURE = 'Signature: 8a477f597d28d172789f06886806bc55';
const TAG_TEXT = `${TAG_SIGNATURE}\n` +
  '# This file is a cache directory tag created by precompressor (its variant cache).\n' +
  '# For information about cache directory tags, see https://bford.info/cachedir/\n';

/**
 * Mark `dir` as a cache (once).
 * @param {string} dir
 * @returns {Promise<boolean>} whether this call marked it (a cache begun by this run)
 */
export async function markCache(dir) {
  const tag = path.join(dir, CACHEDIR_TAG);
  if ((await fsp.lstat(tag).catch(() => null)) !== null) return false;
  await fsp.mkdir(dir, { recursive: true });
  await writeAtomic(tag, TAG_TEXT);
  return true;
}

/** The last run of a cache that this run began: it holds what the run wrote, with no scan to learn it. */
const BEGUN = Object.freeze({ bytes: 0, runsSinceScan: 0 });

/**
 * Throw unless `dir` carries our tag (or does not exist).
 * @param {string} dir
 * @returns {Promise<boolean>} false when `dir` does not exist
 */
async function assertCache(dir) {
  if ((await fsp.stat(dir).catch(() => null)) === null) return false;
  const tag = path.join(dir, CACHEDIR_TAG);
  const st = await fsp.lstat(tag).catch(() => null);
  const text = st?.isFile() ? await fsp.readFile(tag, 'utf8').catch(() => '') : '';
  if (text.startsWith(TAG_SIGNATURE)) return true;
  throw new PrecompressorError('ERR_PRECOMPRESSOR_DIR',
    `${dir} is not marked as a cache (no ${CACHEDIR_TAG}): nothing removed. ` +
    'Check --cache-dir; a build that uses the cache marks its folder', { path: dir });
}

/** Our temps in a shard: `.<key>.<pid>-<12 hex>.pctmp` (tempPathFor()); no other file is swept. */
const SHARD_TEMP = /^\.[0-9a-f]{64}\.\d+-[0-9a-f]{12}\.pctmp$/;

/**
 * Visit every whole entry of the cache with its size and mtime, removing the temps of processes gone;
 * anything else (another tool's blobs, a symlink) is neither visited nor removed.
 * @param {string} dir
 * @param {(file: string, size: number, mtimeMs: number) => void} visit
 */
async function scan(dir, visit) {
  const shards = await fsp.readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const shard of shards) {
    if (!SHARD_NAME.test(shard.name) || !shard.isDirectory()) continue; // a symlink is not entered
    const sub = path.join(dir, shard.name);
    for (const name of await fsp.readdir(sub).catch(() => [])) {
      const file = path.join(sub, name);
      if (SHARD_TEMP.test(name)) {
        if (tempOwnerGone(name)) await fsp.rm(file, { force: true });
        continue;
      }
      if (!ENTRY_NAME.test(name) || !name.startsWith(shard.name)) continue;
      const st = await fsp.lstat(file).catch(() => null);
      if (st?.isFile() && entryRecordAt(file, name) !== null) visit(file, st.size, st.mtimeMs);
    }
  }
}

/**
 * @param {string} dir
 */
async function measure(dir) {
  let entries = 0;
  let bytes = 0;
  await scan(dir, (file, size) => {
    entries++;
    bytes += size;
  });
  return { entries, bytes };
}

/**
 * Remove the least recently used entries until the cache holds at most `maxSize` bytes; the list of
 * every entry is made only when some must go.
 * @param {string} dir
 * @param {number} maxSize
 * @returns {Promise<{ entries: number, bytes: number, removed: number, freed: number }>} what is left, and what went
 */
export async function prune(dir, maxSize) {
  if (!(await assertCache(dir))) return { entries: 0, bytes: 0, removed: 0, freed: 0 };
  const sum = await measure(dir);
  if (sum.bytes <= maxSize) return { ...sum, removed: 0, freed: 0 };
  /** @type {{ file: string, size: number, mtimeMs: number }[]} */
  const entries = [];
  await scan(dir, (file, size, mtimeMs) => entries.push({ file, size, mtimeMs }));
  let bytes = entries.reduce((n, e) => n + e.size, 0);
  let removed = 0;
  let freed = 0;
  entries.sort((a, b) => a.mtimeMs - b.mtimeMs);
  for (const e of entries) {
    if (bytes <= maxSize) break;
    await fsp.rm(e.file, { force: true });
    bytes -= e.size;
    freed += e.size;
    removed++;
  }
  return { entries: entries.length - removed, bytes, removed, freed };
}

/**
 * @param {string} dir
 */
export async function info(dir) {
  const { entries, bytes } = await measure(dir);
  const lastRun = await fsp.readFile(path.join(dir, LAST_RUN), 'utf8').then(JSON.parse, () => null);
  return { dir, entries, bytes, lastRun };
}

/**
 * Remove every entry (and temp) of the cache, and its last-run record; other files in `dir` stay.
 * @param {string} dir
 * @returns {Promise<{ removed: number, freed: number }>}
 */
export async function clear(dir) {
  const { removed, freed } = await prune(dir, 0);
  for (const shard of await fsp.readdir(dir, { withFileTypes: true }).catch(() => [])) {
    // rmdir removes only an empty shard
    if (SHARD_NAME.test(shard.name) && shard.isDirectory()) await fsp.rmdir(path.join(dir, shard.name)).catch(() => {});
  }
  const last = path.join(dir, LAST_RUN);
  if ((await fsp.lstat(last).catch(() => null))?.isFile()) await fsp.rm(last, { force: true });
  return { removed, freed };
}

/**
 * Who else can write a cache folder with this stat, in words, or null (pure): entries are proven before
 * use, but such a writer can still slow builds down or fill the disk.
 * @param {{ uid: number, gid: number, mode: number }} st
 * @param {{ uid: number, gid: number }} me
 */
export function exposure(st, me) {
  if (st.uid !== me.uid) return `is owned by another user (uid ${st.uid})`;
  if (st.mode & 0o002) return `is writable by every user (mode ${(st.mode & 0o7777).toString(8)})`;
  if (st.mode & 0o020 && st.gid !== me.gid) {
    return `is writable by group ${st.gid} (mode ${(st.mode & 0o7777).toString(8)})`;
  }
  return null;
}

/** The warning for a cache folder others can write, or null (POSIX only). @param {string} dir */
async function exposureWarning(dir) {
  if (typeof process.getuid !== 'function' || typeof process.getgid !== 'function') return null;
  const st = await fsp.stat(dir).catch(() => null);
  const why = st === null ? null : exposure(st, { uid: process.getuid(), gid: process.getgid() });
  if (why === null) return null;
  return `the cache folder ${why}: its entries are checked before use, but whoever can write it ` +
    'can slow builds down or fill the disk; use a folder only you can write';
}

/** Runs that may estimate the cache's size from the last record before one scans it again. */
const SCAN_EVERY = 20;

/**
 * How a run learns the cache's size (pure): `scan` (a stat per entry) or the last run's record plus
 * this run's additions. It scans when the estimate could exceed the cap or is unknown, or every
 * SCAN_EVERY runs (other processes' additions are not recorded); a watch batch never scans.
 * @param {{ bytes?: unknown, runsSinceScan?: unknown } | null} last the last run's record
 * @param {number} written bytes this run added
 * @param {number} cap cacheMaxSize
 * @param {boolean} mayScan
 * @returns {{ scan: true } | { scan: false, bytes: number | undefined, runsSinceScan: number }}
 */
export function sizeStep(last, written, cap, mayScan) {
  const bytes = typeof last?.bytes === 'number' ? last.bytes : undefined;
  const runs = typeof last?.runsSinceScan === 'number' ? last.runsSinceScan : undefined;
  const estimate = bytes === undefined ? undefined : bytes + written;
  const next = { scan: /** @type {false} */ (false), bytes: estimate, runsSinceScan: (runs ?? 0) + 1 };
  if (!mayScan) return next;
  const known = estimate !== undefined && runs !== undefined && runs < SCAN_EVERY;
  if (known && estimate <= cap) return next;
  if (written === 0 && !known) return { ...next, bytes };
  return { scan: true };
}

/**
 * The cache's size after a run that wrote `written` bytes, evicting down to the cap when sizeStep() says.
 * @param {{ bytes?: unknown, runsSinceScan?: unknown } | null} last the last run's record
 * @param {number} written
 * @param {{ cacheDir: string, cacheMaxSize: number }} opts
 * @param {boolean} mayScan
 * @returns {Promise<{ bytes: number | undefined, runsSinceScan: number }>}
 */
async function sizeAfter(last, written, opts, mayScan) {
  const step = sizeStep(last, written, opts.cacheMaxSize, mayScan);
  if (!step.scan) return { bytes: step.bytes, runsSinceScan: step.runsSinceScan };
  const { bytes: now } = await prune(opts.cacheDir, opts.cacheMaxSize);
  return { bytes: now, runsSinceScan: 0 };
}

/**
 * Evict down to the cap when the last record's size is over it (left there by batches that may not scan).
 * @param {{ cacheDir: string, cacheMaxSize: number }} opts
 */
async function evictOverdue(opts) {
  const file = path.join(opts.cacheDir, LAST_RUN);
  const last = await fsp.readFile(file, 'utf8').then(JSON.parse, () => null);
  if (typeof last?.bytes !== 'number' || last.bytes <= opts.cacheMaxSize) return;
  const { bytes } = await prune(opts.cacheDir, opts.cacheMaxSize);
  writeAtomicSync(file, Buffer.from(JSON.stringify({ ...last, bytes, runsSinceScan: 0 }) + '\n'));
}

/**
 * The last-run record of the cache in `dir`: null when there is none, `{}` when it cannot be read.
 * @param {string} dir
 * @returns {Record<string, unknown> | null}
 */
function lastRunSync(dir) {
  let text;
  try {
    text = fs.readFileSync(path.join(dir, LAST_RUN), 'utf8');
  } catch {
    return null; // none (or not readable: as none, the cache is then written afresh)
  }
  try {
    return JSON.parse(text) ?? {};
  } catch {
    return {};
  }
}

/**
 * Since when an entry counts as marked used: since the last run started, so that a take marks it once
 * per run (Infinity without a record).
 * @param {Record<string, unknown> | null} last
 */
export function markedSince(last) {
  const t = typeof last?.started === 'string' ? Date.parse(last.started) : NaN;
  return Number.isFinite(t) ? t : Infinity;
}

/**
 * The cache side of one pass: what its tasks take (`task`: null when off), its counters, and at the end
 * the last-run record and eviction.
 * @param {{ cache: boolean, cacheDir: string, cacheMaxSize: number, dryRun: boolean, force: boolean }} opts
 */
export function createCacheRun(opts) {
  const on = opts.cache && !opts.dryRun;
  const started = new Date();
  const stats = { hits: 0, misses: 0, rejected: 0, written: 0, cpuSavedMs: 0 };
  /** @type {string | null} */
  let error = null;
  const last = on && !opts.force ? lastRunSync(opts.cacheDir) : null;
  return {
    task: on ? { store: storeDescriptor(opts), read: !opts.force, markedSince: markedSince(last) } : null,
    /** Can the cache hold anything yet (a run has recorded its use)? A new or emptied one cannot. */
    holdsAny() {
      return last !== null;
    },
    /** @param {ReturnType<typeof import('./entry-files.js').taskStats> | undefined} s a task's counters */
    add(s) {
      if (!s) return;
      stats.hits += s.hits;
      stats.misses += s.misses;
      stats.rejected += s.rejected;
      stats.written += s.written;
      stats.cpuSavedMs += s.cpuSavedMs;
      error ??= s.error;
    },
    /**
     * Record this run's figures and evict down to the cap if it added entries; the cache never fails a
     * build: its errors are one warning.
     * @param {{ warn(path: string, message: string): void }} report
     * @param {{ scan?: boolean }} [how]
     */
    async finish(report, { scan = true } = {}) {
      if (!on) return;
      if (stats.hits + stats.misses === 0) {
        const warn = (/** @type {Error} */ err) => report.warn(opts.cacheDir, `cache not evicted (${err.message})`);
        if (scan) await evictOverdue(opts).catch(warn);
        return;
      }
      try {
        const begun = await markCache(opts.cacheDir);
        const file = path.join(opts.cacheDir, LAST_RUN);
        const last = await fsp.readFile(file, 'utf8').then(JSON.parse, () => (begun ? BEGUN : null));
        const size = await sizeAfter(last, stats.written, opts, scan);
        const record = {
          at: new Date().toISOString(), started: started.toISOString(), ...stats,
          cpuSavedMs: Math.round(stats.cpuSavedMs), ...size,
        };
        // Not fsync'd (writeAtomicSync): figures for `cache info` and the size estimate, whole or the last ones.
        writeAtomicSync(file, Buffer.from(JSON.stringify(record) + '\n'));
      } catch (err) {
        error ??= /** @type {Error} */ (err).message;
      }
      const exposed = await exposureWarning(opts.cacheDir);
      if (exposed !== null) report.warn(opts.cacheDir, exposed);
      if (stats.rejected > 0) {
        report.warn(opts.cacheDir, `${stats.rejected} cache entries did not decode to their source: ` +
          'removed and encoded again (is the cache folder written by someone else?)');
      }
      if (error !== null) {
        report.warn(opts.cacheDir, `cache not fully written (${error}); the next build encodes those files again`);
      }
    },
    /** For the report: variants (and deltas) taken from the cache, encoded, and the encode time saved. */
    summary() {
      const { hits, misses, rejected } = stats;
      return { enabled: on, dir: opts.cacheDir, hits, misses, rejected, cpuSavedMs: Math.round(stats.cpuSavedMs) };
    },
  };
}
