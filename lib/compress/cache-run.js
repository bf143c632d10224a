import fsp from 'node:fs/promises';
import path from 'node:path';
import { tempOwnerGone, writeAtomic, TEMP_SUFFIX } from '../fs-atomic.js';
import { ENTRY_NAME, LAST_RUN, SHARD_NAME } from './cache.js';

/**
 * The variant cache (lib/compress/cache.js) as a whole: one pass's use of it (counters, the
 * last-run record, eviction at the end) and the maintenance of `precompressor cache`: info,
 * prune (least recently used first: oldest mtime, which a hit refreshes), clear.
 */

/**
 * Every entry of the cache with its size and mtime; temps of processes that are gone are removed.
 * @param {string} dir
 */
async function scan(dir) {
  const entries = [];
  const shards = await fsp.readdir(dir).catch(() => []);
  for (const shard of shards) {
    if (!SHARD_NAME.test(shard)) continue;
    const sub = path.join(dir, shard);
    for (const name of await fsp.readdir(sub).catch(() => [])) {
      const file = path.join(sub, name);
      if (name.endsWith(TEMP_SUFFIX)) {
        if (tempOwnerGone(name)) await fsp.rm(file, { force: true });
        continue;
      }
      if (!ENTRY_NAME.test(name)) continue;
      const st = await fsp.stat(file).catch(() => null);
      if (st) entries.push({ file, size: st.size, mtimeMs: st.mtimeMs });
    }
  }
  return entries;
}

/**
 * Remove the least recently used entries until the cache holds at most `maxSize` bytes.
 * @param {string} dir
 * @param {number} maxSize
 * @returns {Promise<{ entries: number, bytes: number, removed: number, freed: number }>} what is left, and what went
 */
export async function prune(dir, maxSize) {
  const entries = await scan(dir);
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
 * What `precompressor cache info` shows: entries, bytes, the last run's hits and misses.
 * @param {string} dir
 */
export async function info(dir) {
  const entries = await scan(dir);
  const lastRun = await fsp.readFile(path.join(dir, LAST_RUN), 'utf8').then(JSON.parse, () => null);
  return { dir, entries: entries.length, bytes: entries.reduce((n, e) => n + e.size, 0), lastRun };
}

/**
 * Remove every entry (and temp) of the cache, and its last-run record; other files in `dir` stay.
 * @param {string} dir
 * @returns {Promise<{ removed: number, freed: number }>}
 */
export async function clear(dir) {
  const { removed, freed } = await prune(dir, 0);
  for (const shard of await fsp.readdir(dir).catch(() => [])) {
    if (SHARD_NAME.test(shard)) await fsp.rmdir(path.join(dir, shard)).catch(() => {});
  }
  await fsp.rm(path.join(dir, LAST_RUN), { force: true });
  return { removed, freed };
}

/** Runs that may estimate the cache's size from the last record before one scans it again. */
const SCAN_EVERY = 20;

/**
 * The cache's size after a run that wrote `written` bytes, evicting down to the cap when needed.
 * The whole cache is scanned (a stat per entry) only when the size recorded by the last run plus
 * this run's additions could exceed the cap, or every SCAN_EVERY runs (other processes' additions
 * are not in the record): a watch batch that changed one file does not stat every entry.
 * @param {{ bytes?: number, runsSinceScan?: number } | null} last the last run's record
 * @param {number} written
 * @param {{ cacheDir: string, cacheMaxSize: number }} opts
 * @returns {Promise<{ bytes: number | undefined, runsSinceScan: number }>}
 */
async function sizeAfter(last, written, opts) {
  const bytes = last?.bytes;
  const runs = last?.runsSinceScan;
  const known = typeof bytes === 'number' && typeof runs === 'number' && runs < SCAN_EVERY;
  if (known && bytes + written <= opts.cacheMaxSize) return { bytes: bytes + written, runsSinceScan: runs + 1 };
  if (written === 0 && !known) return { bytes, runsSinceScan: (runs ?? 0) + 1 };
  const { bytes: now } = await prune(opts.cacheDir, opts.cacheMaxSize);
  return { bytes: now, runsSinceScan: 0 };
}

/**
 * The cache side of one pass: what its tasks take (`task`: null when the cache is off or in a
 * dry run), its counters, and at the end the last-run record and eviction.
 * @param {{ cache: boolean, cacheDir: string, cacheMaxSize: number, dryRun: boolean, force: boolean }} opts
 */
export function createCacheRun(opts) {
  const on = opts.cache && !opts.dryRun;
  const stats = { hits: 0, misses: 0, rejected: 0, written: 0, cpuSavedMs: 0 };
  /** @type {string | null} */
  let error = null;
  return {
    task: on ? { dir: opts.cacheDir, read: !opts.force } : null,
    /** @param {ReturnType<typeof import('./cache.js').taskStats> | undefined} s a task's counters */
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
     * Record this run's figures and evict down to the cap if it added entries. The cache is
     * never a reason to fail a build: its errors are one warning.
     * @param {{ warn(path: string, message: string): void }} report
     */
    async finish(report) {
      if (!on || stats.hits + stats.misses === 0) return;
      try {
        const file = path.join(opts.cacheDir, LAST_RUN);
        const last = await fsp.readFile(file, 'utf8').then(JSON.parse, () => null);
        const size = await sizeAfter(last, stats.written, opts);
        const record = { at: new Date().toISOString(), ...stats, cpuSavedMs: Math.round(stats.cpuSavedMs), ...size };
        await fsp.mkdir(opts.cacheDir, { recursive: true });
        await writeAtomic(file, JSON.stringify(record) + '\n');
      } catch (err) {
        error ??= /** @type {Error} */ (err).message;
      }
      if (stats.rejected > 0) {
        report.warn(opts.cacheDir, `${stats.rejected} cache entries did not decode to their source: removed and encoded again (is the cache folder written by someone else?)`);
      }
      if (error !== null) report.warn(opts.cacheDir, `cache not fully written (${error}); the next build encodes those files again`);
    },
    /** For the report: variants (and deltas) taken from the cache, encoded, and the encode time saved. */
    summary() {
      return { enabled: on, dir: opts.cacheDir, hits: stats.hits, misses: stats.misses, rejected: stats.rejected, cpuSavedMs: Math.round(stats.cpuSavedMs) };
    },
  };
}
