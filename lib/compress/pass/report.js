import { performance } from 'node:perf_hooks';
import { estimatedCost } from '../plan/index.js';
import { entryOf } from '../../manifest/manifest.js';
import { ENCODINGS } from '../../encodings.js';

/** @type {Record<string, 'notSmaller' | 'compressedFormat' | 'excluded' | 'empty' | 'unchanged'>} */
const KEY = {
  'not-smaller': 'notSmaller', 'compressed-format': 'compressedFormat', excluded: 'excluded', empty: 'empty',
  unchanged: 'unchanged',
};

/** Milliseconds between two progress events (a forced one, such as a long job starting, comes at once). */
const PROGRESS_INTERVAL = 100;

/** @param {{ path: string }} a @param {{ path: string }} b */
const byPath = (a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/**
 * Collects what a run did (counts, bytes, failures, changes) and feeds progress events.
 * The result of finish() is the report `precompress()` returns and `--json` prints.
 */
export class Report {
  startedAt = performance.now();
  counts = {
    scanned: 0, compressed: 0, fromCache: 0, unchanged: 0, notSmaller: 0, excluded: 0, compressedFormat: 0,
    empty: 0, failed: 0,
  };
  /** @type {{ path: string, code: string, message: string }[]} */
  failures = [];
  /** @type {{ path: string, message: string }[]} */
  warnings = [];
  /** @type {{ path: string, action: string, skipped?: 'not-smaller' }[]} */
  changes = [];
  progressState = { filesDone: 0, filesTotal: 0, bytesDone: 0, bytesTotal: 0, workDone: 0, workTotal: 0 };
  /** @type {Set<string>} files with work on a CPU slot, in the order it started */
  running = new Set();
  lastEmit = 0;

  /** @param {import('../../options.js').Options} opts */
  constructor(opts) {
    this.opts = opts;
  }

  /** @param {boolean} force */
  emit(force) {
    if (!this.opts.onProgress) return;
    const now = performance.now();
    if (!force && now - this.lastEmit < PROGRESS_INTERVAL) return;
    this.lastEmit = now;
    this.opts.onProgress({ ...this.progressState, running: [...this.running], elapsedMs: now - this.startedAt });
  }

  /**
   * @param {string} path
   * @param {string} message
   */
  warn(path, message) {
    this.warnings.push({ path, message });
  }

  /** @param {string} reason */
  count(reason) {
    this.counts[KEY[reason]]++;
  }

  /** @param {{ path: string, code: string, message: string }} failure */
  fail(failure) {
    this.failures.push(failure);
  }

  /**
   * @param {string} path
   * @param {string} action
   */
  change(path, action) {
    this.changes.push({ path, action });
  }

  /** @param {{ rel: string, size: number }[]} files @param {(rel: string) => readonly string[]} encodingsOf */
  plan(files, encodingsOf) {
    const p = this.progressState;
    p.filesTotal += files.length;
    for (const f of files) {
      p.bytesTotal += f.size;
      for (const e of encodingsOf(f.rel)) p.workTotal += estimatedCost(f.size, e, this.opts);
    }
    this.emit(true);
  }

  /**
   * Work on `path` started on a CPU slot; a long job is announced at once (else at most every 100 ms).
   * @param {string} path
   * @param {boolean} long
   */
  started(path, long) {
    if (this.running.has(path)) return;
    this.running.add(path);
    this.emit(long);
  }

  /**
   * `path` is done (compressed, failed, or to be redone).
   * @param {string} path
   */
  ended(path) {
    this.running.delete(path);
  }

  /**
   * @param {number} size
   * @param {string} encoding
   */
  progress(size, encoding) {
    this.progressState.workDone += estimatedCost(size, encoding, this.opts);
    this.emit(false);
  }

  /**
   * A file's variants are in place; `fromCache`: all of them were taken from the cache.
   * @param {string} path
   * @param {import('../../manifest/manifest.js').FileEntry} entry
   * @param {boolean} [fromCache]
   */
  compressed(path, entry, fromCache = false) {
    this.progressState.filesDone++;
    this.progressState.bytesDone += entry.size;
    if (entry.skipped) this.counts.notSmaller++;
    else if (fromCache) this.counts.fromCache++;
    else this.counts.compressed++;
    // A file that got no variant says so (watch mode's log, --json).
    const action = fromCache ? 'from cache' : 'compress';
    // finish() marks only 'not-smaller' on a compressed file
    const skipped = /** @type {'not-smaller' | undefined} */ (entry.skipped);
    this.changes.push(skipped ? { path, action, skipped } : { path, action });
    this.emit(false);
  }

  /** @param {import('../../manifest/manifest.js').Manifest} manifest */
  finish(manifest) {
    const unlisted = this.failures.filter((f) => entryOf(manifest, f.path) === undefined).length;
    const entries = Object.values(manifest.files);
    return this.finishWith(entries.length + unlisted, bytesOf(entries, this.opts.encodings));
  }

  /**
   * The report, from the number of files scanned and the bytes of the manifest's entries (bytesOf()).
   * @param {number} scanned
   * @param {ReturnType<typeof bytesOf>} bytes
   */
  finishWith(scanned, bytes) {
    this.emit(true);
    const { opts, counts, failures } = this;
    counts.scanned = scanned;
    counts.failed = failures.length;
    return {
      ok: failures.length === 0,
      root: opts.root,
      manifest: opts.manifest,
      dryRun: opts.dryRun,
      encodings: [...opts.encodings],
      durationMs: Math.round(performance.now() - this.startedAt),
      files: counts,
      bytes,
      failures,
      warnings: this.warnings,
      changes: this.changes.sort(byPath),
    };
  }
}

/**
 * Bytes of the sources and of each encoding's variants over the manifest's entries.
 * @param {Iterable<import("../../manifest/manifest.js").FileEntry>} entries
 * @param {readonly string[]} encodings
 */
export function bytesOf(entries, encodings) {
  /** @type {Record<string, number> & { original: number, compressible: number }} */
  const bytes = { original: 0, compressible: 0 };
  // The default encodings always have a figure; others when asked for.
  for (const e of ENCODINGS) if (e.byDefault || encodings.includes(e.name)) bytes[e.name] = 0;
  for (const e of entries) {
    bytes.original += e.size;
    if (Object.keys(e.variants).length) bytes.compressible += e.size;
    for (const [enc, v] of Object.entries(e.variants)) bytes[enc] = (bytes[enc] ?? 0) + v.size;
  }
  return bytes;
}

/** @param {import('../../options.js').Options} opts */
export function createReport(opts) {
  return new Report(opts);
}
