import fs from 'node:fs';
import { createReadStream } from 'node:fs';
import { discard, openEntrySync, preadSync, touch } from './cache.js';
import { removeIfPresentSync, writeAtomicSync, writeAtomicWith } from '../fs-atomic.js';

/**
 * Taking a variant from the variant cache (lib/compress/cache.js) into the output: its bytes are
 * read through the descriptor the lookup opened (never by path again, so nothing swapped in
 * meanwhile is read) and must be proven to decode to the source before they are written. The
 * record's size and SHA-256 only catch damage: whoever can write the cache folder can recompute
 * them, so only the decode proves a variant.
 *
 * @typedef {{ target: string, keepBelow: number, mtime: Date, tempDir?: string | null }} Placement
 *   tempDir: a folder on the target's file system for the temp file
 * @typedef {{ kept: number | null, encodeMs: number }} Taken kept: the variant's size, or null when not kept
 * @typedef {{ dir: string, markedSince?: number }} From the cache's folder; markedSince: when the
 *   previous run started (ms): an entry used since is not marked again (markUsed())
 * @typedef {import('./cache.js').Entry & { fd: number, data?: Buffer, mtimeMs: number }} OpenEntry
 */

/**
 * Mark a taken entry as used, through the descriptor it was read through (touch()), unless it was
 * marked (or written) since the previous run started: eviction then orders entries by the runs that
 * used them, and a rebuild run again and again marks nothing.
 * @param {OpenEntry} entry
 * @param {From} from
 */
function markUsed(entry, from) {
  if (!(entry.mtimeMs >= (from.markedSince ?? Infinity))) touch(entry.file, entry.fd);
}

/**
 * The entry of `key`, handled up to its bytes: null on a miss; `taken` when its record says the
 * output is not small enough for this run (the target is removed: nothing of the entry reaches the
 * output); else the open entry, whose `fd` the caller closes.
 * @param {From} from
 * @param {string} key
 * @param {Placement} at
 * @returns {{ entry: OpenEntry, taken?: undefined } | { taken: Taken } | null}
 */
function open(from, key, at) {
  const entry = openEntrySync(from.dir, key);
  if (entry === null) return null;
  if (entry.size < at.keepBelow && entry.bytes > 0) return { entry };
  try {
    if (entry.size < at.keepBelow) return null; // a record without bytes that this run would keep: encode it
    removeIfPresentSync(at.target);
    markUsed(entry, from);
    return { taken: { kept: null, encodeMs: entry.encodeMs } };
  } catch {
    return null; // the caller meets and reports it
  } finally {
    fs.closeSync(entry.fd);
  }
}

/**
 * An unproven entry is dropped (whoever wrote it, it is not a variant of this source) and counted.
 * @param {import('./cache.js').Entry} entry
 * @param {ReturnType<typeof import('./cache.js').taskStats>} stats
 * @returns {null}
 */
function reject(entry, stats) {
  discard(entry.file);
  stats.rejected++;
  return null;
}

/**
 * Put the cached variant of `key` in place: written to `target` when smaller than `keepBelow`
 * bytes and `proves(bytes)` (they decode to the source), else `target` removed. Null on a miss
 * (nothing usable: encode it). For the workers: synchronous, the bytes in memory.
 * @param {From} from
 * @param {string} key
 * @param {Placement & { proves: (bytes: Buffer) => boolean }} at
 * @param {ReturnType<typeof import('./cache.js').taskStats>} stats
 * @returns {Taken | null}
 */
export function takeVariantSync(from, key, at, stats) {
  const s = open(from, key, at);
  if (s === null || s.taken) return s?.taken ?? null;
  const { entry } = s;
  try {
    let bytes = entry.data;
    try {
      bytes ??= preadSync(entry.fd, entry.size, 0);
      if (bytes.length !== entry.size) throw new Error('entry cut short');
    } catch {
      return reject(entry, stats);
    }
    if (!at.proves(bytes)) return reject(entry, stats);
    try {
      writeAtomicSync(at.target, bytes, { mtime: at.mtime, tempDir: at.tempDir, checkParent: true });
    } catch {
      return null; // an output that cannot be written: the caller encodes, and meets and reports the error itself
    }
    markUsed(entry, from);
    return { kept: entry.size, encodeMs: entry.encodeMs };
  } finally {
    fs.closeSync(entry.fd);
  }
}

/**
 * takeVariantSync() for a streamed file: the entry's bytes are copied to the target's temp file
 * and decoded on the way by `proves(stream, out)`, which resolves true only when they decode to
 * the source; the temp file is renamed into place only then.
 * @param {From} from
 * @param {string} key
 * @param {Placement & {
 *   proves: (bytes: NodeJS.ReadableStream, out: import('node:fs/promises').FileHandle) => Promise<boolean> }} at
 * @param {ReturnType<typeof import('./cache.js').taskStats>} stats
 * @returns {Promise<Taken | null>}
 */
export async function takeVariant(from, key, at, stats) {
  const s = open(from, key, at);
  if (s === null || s.taken) return s?.taken ?? null;
  const { entry } = s;
  let proven = false;
  try {
    const bytes = createReadStream('', {
      fd: entry.fd, autoClose: false, start: 0, end: entry.size - 1, highWaterMark: 1 << 20,
    });
    const prove = async (/** @type {import('node:fs/promises').FileHandle} */ out) =>
      (proven = await at.proves(bytes, out).catch(() => false));
    const written = await writeAtomicWith(at.target, prove, { mtime: at.mtime, checkParent: true });
    if (!proven) return reject(entry, stats);
    if (!written) return null;
    markUsed(entry, from);
    return { kept: entry.size, encodeMs: entry.encodeMs };
  } catch {
    return proven ? null : reject(entry, stats); // an output that cannot be written: as above
  } finally {
    fs.closeSync(entry.fd);
  }
}
