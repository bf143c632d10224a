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
 */

/**
 * The entry of `key`, handled up to its bytes: null on a miss; `taken` when its record says the
 * output is not small enough for this run (the target is removed: nothing of the entry reaches the
 * output); else the open entry, whose `fd` the caller closes.
 * @param {string} dir
 * @param {string} key
 * @param {Placement} at
 */
function open(dir, key, at) {
  const entry = openEntrySync(dir, key);
  if (entry === null) return null;
  if (entry.size < at.keepBelow && entry.bytes > 0) return { entry };
  fs.closeSync(entry.fd);
  if (entry.size < at.keepBelow) return null; // a record without bytes that this run would keep: encode it
  try {
    removeIfPresentSync(at.target);
  } catch {
    return null; // the caller meets and reports it
  }
  touch(entry.file);
  return { taken: /** @type {Taken} */ ({ kept: null, encodeMs: entry.encodeMs }) };
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
 * @param {string} dir
 * @param {string} key
 * @param {Placement & { proves: (bytes: Buffer) => boolean }} at
 * @param {ReturnType<typeof import('./cache.js').taskStats>} stats
 * @returns {Taken | null}
 */
export function takeVariantSync(dir, key, at, stats) {
  const s = open(dir, key, at);
  if (s === null || s.taken) return s?.taken ?? null;
  const { entry } = s;
  let bytes = entry.data;
  try {
    bytes ??= preadSync(entry.fd, entry.size, 0);
    if (bytes.length !== entry.size) throw new Error('entry cut short');
  } catch {
    return reject(entry, stats);
  } finally {
    fs.closeSync(entry.fd);
  }
  if (!at.proves(bytes)) return reject(entry, stats);
  try {
    writeAtomicSync(at.target, bytes, { mtime: at.mtime, tempDir: at.tempDir, checkParent: true });
  } catch {
    return null; // an output that cannot be written: the caller encodes, and meets and reports the error itself
  }
  touch(entry.file);
  return { kept: entry.size, encodeMs: entry.encodeMs };
}

/**
 * takeVariantSync() for a streamed file: the entry's bytes are copied to the target's temp file
 * and decoded on the way by `proves(stream, out)`, which resolves true only when they decode to
 * the source; the temp file is renamed into place only then.
 * @param {string} dir
 * @param {string} key
 * @param {Placement & {
 *   proves: (bytes: NodeJS.ReadableStream, out: import('node:fs/promises').FileHandle) => Promise<boolean> }} at
 * @param {ReturnType<typeof import('./cache.js').taskStats>} stats
 * @returns {Promise<Taken | null>}
 */
export async function takeVariant(dir, key, at, stats) {
  const s = open(dir, key, at);
  if (s === null || s.taken) return s?.taken ?? null;
  const { entry } = s;
  let proven = false;
  let written = false;
  try {
    const bytes = createReadStream('', {
      fd: entry.fd, autoClose: false, start: 0, end: entry.size - 1, highWaterMark: 1 << 20,
    });
    const prove = async (/** @type {import('node:fs/promises').FileHandle} */ out) =>
      (proven = await at.proves(bytes, out).catch(() => false));
    written = await writeAtomicWith(at.target, prove, { mtime: at.mtime, checkParent: true });
  } catch {
    // an output that cannot be written: as above
  } finally {
    fs.closeSync(entry.fd);
  }
  if (!proven) return reject(entry, stats);
  if (!written) return null;
  touch(entry.file);
  return { kept: entry.size, encodeMs: entry.encodeMs };
}
