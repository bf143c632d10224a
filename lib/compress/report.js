import { performance } from 'node:perf_hooks';
import { estimatedCost } from './plan.js';
import { entryOf } from '../manifest.js';

/**
 * Collects what a run did (counts, bytes, failures, changes) and feeds progress events.
 * The result of finish() is the report `precompress()` returns and `--json` prints.
 */
export function createReport(opts) {
  const started = performance.now();
  const counts = { scanned: 0, compressed: 0, fromCache: 0, unchanged: 0, notSmaller: 0, excluded: 0, compressedFormat: 0, empty: 0, failed: 0 };
  const KEY = { 'not-smaller': 'notSmaller', 'compressed-format': 'compressedFormat', excluded: 'excluded', empty: 'empty', unchanged: 'unchanged' };
  const failures = [];
  const warnings = [];
  const changes = [];
  const progress = { filesDone: 0, filesTotal: 0, bytesDone: 0, bytesTotal: 0, workDone: 0, workTotal: 0 };
  /** @type {Set<string>} files with work on a CPU slot, in the order it started */
  const running = new Set();
  let lastEmit = 0;

  function emit(force) {
    if (!opts.onProgress) return;
    const now = performance.now();
    if (!force && now - lastEmit < 100) return;
    lastEmit = now;
    opts.onProgress({ ...progress, running: [...running], elapsedMs: now - started });
  }

  return {
    warn(path, message) {
      warnings.push({ path, message });
    },
    count(reason) {
      counts[KEY[reason]]++;
    },
    fail(failure) {
      failures.push(failure);
    },
    change(path, action) {
      changes.push({ path, action });
    },
    /** @param {{ rel: string, size: number }[]} files @param {(rel: string) => readonly string[]} encodingsOf */
    plan(files, encodingsOf) {
      progress.filesTotal += files.length;
      for (const f of files) {
        progress.bytesTotal += f.size;
        for (const e of encodingsOf(f.rel)) progress.workTotal += estimatedCost(f.size, e, opts);
      }
      emit(true);
    },
    /** Work on `path` started on a CPU slot; a long job is announced at once (else at most every 100 ms). */
    started(path, long) {
      if (running.has(path)) return;
      running.add(path);
      emit(long);
    },
    /** `path` is done (compressed, failed, or to be redone). */
    ended(path) {
      running.delete(path);
    },
    progress(size, encoding) {
      progress.workDone += estimatedCost(size, encoding, opts);
      emit(false);
    },
    /** A file's variants are in place; `fromCache`: all of them were taken from the cache. */
    compressed(path, entry, fromCache = false) {
      progress.filesDone++;
      progress.bytesDone += entry.size;
      if (entry.skipped) counts.notSmaller++;
      else if (fromCache) counts.fromCache++;
      else counts.compressed++;
      // A file that got no variant says so (watch mode's log, --json).
      const action = fromCache ? 'from cache' : 'compress';
      changes.push(entry.skipped ? { path, action, skipped: entry.skipped } : { path, action });
      emit(false);
    },
    /** @param {import('../manifest.js').Manifest} manifest */
    finish(manifest) {
      emit(true);
      /** @type {Record<string, number>} */
      const bytes = { original: 0, compressible: 0, br: 0, gzip: 0 };
      if (opts.encodings.includes('zstd')) bytes.zstd = 0;
      const files = Object.values(manifest.files);
      for (const e of files) {
        bytes.original += e.size;
        if (Object.keys(e.variants).length) bytes.compressible += e.size;
        for (const enc of Object.keys(e.variants)) bytes[enc] = (bytes[enc] ?? 0) + e.variants[enc].size;
      }
      counts.scanned = files.length + failures.filter((f) => entryOf(manifest, f.path) === undefined).length;
      counts.failed = failures.length;
      return {
        ok: failures.length === 0,
        root: opts.root,
        manifest: opts.manifest,
        dryRun: opts.dryRun,
        encodings: [...opts.encodings],
        durationMs: Math.round(performance.now() - started),
        files: counts,
        bytes,
        failures,
        warnings,
        changes: changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
      };
    },
  };
}
