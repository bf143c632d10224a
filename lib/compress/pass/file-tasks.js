import { estimatedCost } from '../plan/index.js';

/**
 * A file's compression as tasks, and its manifest entry from their results (pure).
 *
 * @typedef {import('../../options.js').Encoding} Encoding
 * @typedef {import('../variants/index.js').TaskResult} TaskResult
 */

/** Files below this size are compressed to all encodings in one task (one read, one hash). */
export const SPLIT_THRESHOLD = 256 * 1024;

/** A file of at least this size is split too when it is a core's share of the pass or more. */
export const SPLIT_SHARE_MIN = 32 * 1024;

/**
 * The tasks of one file: one for all encodings when the file is small, else one per encoding
 * so that a big file's encodings run in parallel. A smaller file that holds a core's share of the
 * pass's work is split as well: it would finish last, its gzip waiting behind its Brotli.
 * @param {number} size
 * @param {{ encodings: readonly Encoding[] }} opts
 * @param {number} [share] the file's part of the pass's estimated cost, times the cores
 * @returns {{ encodings: Encoding[] }[]}
 */
export function splitTasks(size, opts, share = 0) {
  const split = size >= SPLIT_THRESHOLD || (size >= SPLIT_SHARE_MIN && share >= 1);
  if (!split) return [{ encodings: [...opts.encodings] }];
  return opts.encodings.map((e) => ({ encodings: [e] }));
}

/**
 * The estimated cost (estimatedCost() units) of encoding a file of `size` bytes to `encodings`.
 * @param {number} size
 * @param {readonly Encoding[]} encodings
 * @param {import('../../options.js').Options} opts
 */
export function costOf(size, encodings, opts) {
  return encodings.reduce((n, e) => n + estimatedCost(size, e, opts), 0);
}

/**
 * Did every task of a file see the same content (hash and mtime)? Else it changed between them.
 * @param {readonly TaskResult[]} results
 */
export function sameSource(results) {
  const [first] = results;
  return results.every((r) => r.hash === first.hash && r.mtimeMs === first.mtimeMs);
}

/**
 * The manifest entry of a file from its tasks' results (which saw the same content), and whether
 * all its variants came from the cache.
 * @param {readonly TaskResult[]} results
 * @param {readonly Encoding[]} encodings
 */
export function entryFrom(results, encodings) {
  const [first] = results;
  /** @type {Record<string, number | null>} */
  const out = Object.assign({}, ...results.map((r) => r.out));
  /** @type {import('../../manifest/manifest.js').FileEntry} */
  const entry = { size: first.size, mtimeMs: first.mtimeMs, hash: first.hash, variants: {} };
  for (const enc of encodings) {
    const size = out[enc];
    if (typeof size === 'number') entry.variants[enc] = { size };
  }
  if (Object.keys(entry.variants).length === 0) entry.skipped = 'not-smaller';
  const fromCache = results.every((r) => (r.cache?.hits ?? 0) > 0 && r.cache?.misses === 0);
  return { entry, fromCache };
}

/**
 * One result from two tasks of a file that did different encodings (the cache's part here, the
 * rest in a worker); a file that changed between them throws a retryable error.
 * @param {TaskResult} a
 * @param {TaskResult} b
 * @returns {TaskResult}
 */
export function joinResults(a, b) {
  if (!sameSource([a, b])) throw changedError();
  const cache = a.cache && b.cache ? { ...a.cache } : a.cache ?? b.cache;
  if (a.cache && b.cache && cache) {
    for (const k of /** @type {const} */ (['hits', 'misses', 'rejected', 'written', 'cpuSavedMs'])) {
      cache[k] = a.cache[k] + b.cache[k];
    }
    cache.error = a.cache.error ?? b.cache.error;
  }
  return { hash: a.hash, size: a.size, mtimeMs: a.mtimeMs, out: { ...a.out, ...b.out }, cache };
}

/** The error of a file whose tasks saw different contents (retried: see retryWhileChanged()). */
export function changedError() {
  return Object.assign(new Error('kept changing while it was being compressed'), { changed: true });
}
